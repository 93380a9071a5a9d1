// The partitioned shared build (issue 41): a join side the shared build refuses (physical/join/broadcast-check.ts:
// over SHARED_BUILD_ROWS, or without SHARED_BUILD_RATIO times its rows on the other side, or over the shared-build
// bound: built on one thread, the workers waiting) but whose table fits the memory budget (join/decide.ts
// decidePartitioned) is built by all workers into one table in shared memory, and the other side's map tasks probe it
// as they probe a broadcast table: no shuffle of either side. The table's slots are cut into parts by their top bits
// (kernels/table-part.ts): tasks on the pool hash ranges of the side's rows and sort each range by part, then one
// task a part inserts that part's rows, each writing only its own range of slots. A probing row finds its key's part
// by its hash as it finds its slot, so the probe is the broadcast probe, unchanged (join/probe.ts).
//
// Skew: a hot key on the probing side is no cost here: its rows stay in the map tasks that read them (tasks are cut
// by the input, not by key), each probing one slot that stays in the cache, and its matches are gathered 64K pairs
// at a time; nothing is shuffled that a hot key could overload. A hot key on the built side is one part's rows:
// every row after its key's first finds the key in its first slot probed (one chain, in the cache), so that part's
// task costs about a row's copy per row; `--explain --analyze` reports each part's rows and build time.
import { type Batch, batchBytes, concatBatches, rowCount, shareArray } from '../../kernels/column.js';
import { keyBits } from '../../kernels/key-bits.js';
import { type KeyPart, type Keys, buildKeys } from '../../kernels/keys.js';
import { type PartRows, allocateTable, insertDeferred, tableCapacity } from '../../kernels/table-part.js';
import { type TableArrays, directTable, int32s } from '../../kernels/table.js';
import type { Settings } from '../../plan/load.js';
import type { ExecContext } from '../operator.js';
import { pipelineOf, scanBytes } from '../pipeline.js';
import type { JoinStats } from '../stats.js';
import type { TaskResult } from '../task.js';
import { trace } from '../../trace.js';
import { projectedRows } from './broadcast-check.js';
import { type Collect, type JoinStrategy, probePipeline } from './broadcast.js';
import {
  type BroadcastDecision,
  PARTITIONED_BUDGET_SHARE,
  SHARED_BUILD_RATIO,
  SHARED_BUILD_ROWS,
  type Side,
  broadcastable,
  decidePartitioned,
  partitionedTableBytes,
} from './decide.js';
import type { BroadcastTable } from './probe-op.js';
import type { JoinNode } from './tasks.js';

type Measured = NonNullable<NonNullable<JoinStrategy['read']>[Side]>;

/** A join's strategy with, when built partitioned, what each part's task did (JoinStats.parts, hashMs). */
export interface PartitionedStrategy extends JoinStrategy {
  built?: Pick<JoinStats, 'parts' | 'hashMs'>;
}

/** Rows per part and per hashing range a task is sized for (a part's slots then stay within a few MB). */
const PART_ROWS = 1 << 19;
/** At most this many parts. */
const MAX_PARTS = 64;

/** Whether a join may be built partitioned: shared builds are on (the default broadcastBytes) and broadcasts too. */
const partitionedOn = (s: Settings) => s.broadcastBytes > 0 && (s.sharedBuildBytes ?? 0) > 0;

const sideOf = (node: JoinNode, s: Side) => (s === 'left' ? node.left : node.right);

/**
 * A shuffle decided by the shared build's rules (`how`) turned into a partitioned build where decidePartitioned
 * allows: a side the join type allows to build, read whole, or else the scan stopped at a cap whose rows read
 * project the smallest table within the budget, read on from where it stopped. Null when neither applies (the
 * shuffle stands as it was); a shuffle with the rows read on added when the side read on did not fit after all.
 */
export async function tryPartitioned(
  ex: ExecContext,
  node: JoinNode,
  how: JoinStrategy,
  collect: Collect,
): Promise<PartitionedStrategy | null> {
  if (how.decision.strategy !== 'shuffle' || !partitionedOn(ex.settings)) return null;
  const allowed = broadcastable(node.type);
  const read: Partial<Record<Side, Measured>> = { ...how.read };
  let held = how.heldBytes;
  const room = () => ex.memory.free() + held;
  let readOn = false;
  if (!allowed.some((s) => read[s]?.rest === null)) {
    const cap = PARTITIONED_BUDGET_SHARE * room();
    const projected = allowed
      .filter((s) => read[s]?.rest)
      .map((s) => {
        const m = read[s]!,
          rows = projectedRows(sideOf(node, s), m);
        const bytes = m.rows > 0 ? (m.bytes * rows) / m.rows : m.bytes;
        return { s, m, table: partitionedTableBytes(rows, bytes) };
      })
      .filter((x) => Number.isFinite(x.table) && x.table <= cap)
      .sort((a, b) => a.table - b.table);
    if (projected.length > 0) {
      const { s, m } = projected[0];
      // the bytes of rows whose table would fill the cap, at the bytes a row read so far
      const perRow = m.rows > 0 ? m.bytes / m.rows : 0;
      const upTo = perRow > 0 ? Math.floor((cap * perRow) / (perRow + 80)) : cap;
      trace(`partitioned ${node.id}: reading the ${s} side on, up to ${upTo} bytes`);
      const c = await collect(sideOf(node, s), Math.max(0, upTo - m.bytes), undefined, m.rest!);
      const bytes = c.batches.reduce((a, b) => a + batchBytes(b), 0);
      ex.memory.reserve(bytes);
      held += bytes;
      read[s] = {
        batches: [...m.batches, ...c.batches],
        rest: c.rest,
        bytes: m.bytes + bytes,
        rows: m.rows + rowCount(c.batches),
      };
      readOn = true;
    }
  }
  const whole: Partial<Record<Side, { rows: number; bytes: number }>> = {};
  for (const s of allowed) if (read[s]?.rest === null) whole[s] = { rows: read[s]!.rows, bytes: read[s]!.bytes };
  if (!readOn && Object.keys(whole).length === 0) return null;
  const decision = decidePartitioned(node.type, whole, room(), how.decision.reason);
  if (decision.strategy === 'shuffle') return { decision, read, heldBytes: held };
  const side = decision.side!,
    other: Side = side === 'left' ? 'right' : 'left';
  const m = read[side]!,
    probed = read[other];
  const built = await buildPartitioned(ex, node, side, m.batches);
  ex.memory.reserve(built.bytes);
  const base = pipelineOf(sideOf(node, other));
  return {
    decision,
    pipeline: probePipeline(node, side, built.table, base),
    rows: m.rows,
    bytes: m.bytes,
    heldBytes: held + built.bytes,
    ...(probed ? { read: { [other]: probed }, probeAt: base.ops.length } : {}),
    built: { parts: built.parts, hashMs: built.hashMs },
  };
}

let tables = 0;

/** Parts of a table over n rows: a power of two, at least two a worker, up to one per PART_ROWS rows. */
function partsFor(n: number, workers: number): number {
  let p = 1;
  while (p < Math.min(MAX_PARTS, Math.max(2 * workers, n / PART_ROWS))) p *= 2;
  return Math.max(1, Math.min(p, tableCapacity(n) / 16));
}

/**
 * The table over a side's rows (`batches`), every array shared: the rows concatenated and their key parts here, the
 * hashes and the parts on the pool (see the file's comment); the keys' bitmap is set here while the parts build. A
 * key column whose values are dense takes the direct layout (kernels/table.ts), one pass here.
 */
async function buildPartitioned(ex: ExecContext, node: JoinNode, side: Side, batches: Batch[]) {
  const sideNode = sideOf(node, side);
  const keys = side === 'left' ? node.leftKeys : node.rightKeys,
    norms = side === 'left' ? node.leftNorms : node.rightNorms;
  const batch = concatBatches(sideNode.schema, batches, true);
  const n = batch.length;
  trace(`partitioned ${node.id}: ${n} rows concatenated`);
  const unhashed = buildKeys(batch, keys, norms, undefined, false);
  const share = <T extends Int32Array | Uint8Array>(a: T | null) => (a === null ? null : shareArray(a));
  const parts: KeyPart[] = unhashed.parts.map((p) =>
    p.kind === 'w'
      ? { kind: 'w', w: shareArray(p.w), nulls: share(p.nulls) }
      : { kind: 's', bytes: shareArray(p.bytes), offs: shareArray(p.offs), nulls: share(p.nulls) },
  );
  const t0 = performance.now();
  const direct = directTable({ ...unhashed, parts }, true);
  if (direct) {
    const k: Keys = { n, parts, hash: int32s(0, true), anyNull: share(unhashed.anyNull) };
    const table = tableOf(batch, k, direct, null);
    return { table, bytes: arrayBytes(direct), parts: [{ rows: n, ms: performance.now() - t0 }], hashMs: [] };
  }
  const workers = ex.settings.workers;
  const P = partsFor(n, workers),
    mask = tableCapacity(n) - 1;
  const R = Math.max(1, Math.min(2 * workers, Math.ceil(n / PART_ROWS)));
  const hash = int32s(n, true);
  const rows: PartRows = { order: int32s(n, true), starts: int32s(R * (P + 1), true), ranges: R };
  const columns: Batch = { length: n, columns: keys.map((k) => batch.columns[k]) };
  const stage = `${node.id}.build`;
  const run = (source: Parameters<typeof ex.run>[0]['source'], kind: 'map' | 'reduce', partition: number) =>
    ex.run({ source, ops: [], sink: { kind: 'collect' } }, { stage, kind, partition });
  const hashed = await Promise.all(
    Array.from({ length: R }, (_, r) => {
      const from = Math.floor((r * n) / R),
        to = Math.floor(((r + 1) * n) / R);
      return run(
        { kind: 'tableBuild', step: 'hash', columns, norms, from, to, range: r, hash, mask, parts: P, rows },
        'map',
        r,
      );
    }),
  );
  const k: Keys = { n, parts, hash, anyNull: share(unhashed.anyNull) };
  const t = allocateTable(k);
  const unique = int32s(P, true);
  const building = Promise.all(
    Array.from({ length: P }, (_, p) =>
      run({ kind: 'tableBuild', step: 'part', keys: k, table: t, part: p, parts: P, rows, unique }, 'reduce', p),
    ),
  );
  // the keys' bitmap here while the pool builds the parts
  const bits = t.slots ? keyBits(k, true) : null;
  const built = await building;
  const deferred = built.map((r) => (r.batches[0]?.columns[0].values as Int32Array | undefined) ?? new Int32Array(0));
  let uniq = t.slots !== null && unique.every((u) => u === 1);
  if (t.slots !== null && deferred.some((d) => d.length > 0)) uniq = insertDeferred(t, k, deferred) && uniq;
  trace(`partitioned ${node.id}: ${P} parts built, ${deferred.reduce((a, d) => a + d.length, 0)} rows deferred`);
  const table = tableOf(batch, k, { ...t, unique: uniq }, bits);
  const bytes = arrayBytes(t) + 4 * (2 * n + rows.starts.length) + (bits ? 4 * bits.bits.length : 0);
  return {
    table,
    bytes,
    parts: built.map((r: TaskResult) => ({ rows: r.inputRows, ms: Math.round(r.ms * 10) / 10 })),
    hashMs: hashed.map((r) => Math.round(r.ms * 10) / 10),
  };
}

/** The bytes of a table's own arrays. */
const arrayBytes = (t: TableArrays) =>
  4 * (t.heads.length + t.next.length + (t.slots?.length ?? 0) + (t.direct?.length ?? 0));

function tableOf(batch: Batch, keys: Keys, t: TableArrays, bits: TableArrays['bits']): BroadcastTable {
  return {
    id: `p${process.pid}.${++tables}.${Date.now()}`,
    batch,
    keys,
    heads: t.heads,
    next: t.next,
    mask: t.mask,
    slots: t.slots,
    direct: t.direct,
    base: t.base,
    unique: t.unique,
    bits: bits ?? null,
  };
}

/**
 * The strategy --explain expects (`d`, the shared build's, from the files' sizes) with the partitioned build's rule
 * applied to the same estimates, and the rule added to `rule`: a shared build over SHARED_BUILD_ROWS or without
 * SHARED_BUILD_RATIO times its rows on the other side, or a shuffle where a side's table would fit
 * PARTITIONED_BUDGET_SHARE of the memory budget, becomes a partitioned build of that side.
 */
export function expectedPartitioned<D extends BroadcastDecision & { rule?: string }>(
  node: JoinNode,
  d: D,
  s: Settings,
): D | (BroadcastDecision & { rule?: string }) {
  if (!partitionedOn(s) || node.leftKeys.length === 0 || broadcastable(node.type).length === 0) return d;
  const rule =
    `${d.rule ? `${d.rule}; ` : ''}a side the shared build refuses (over ${SHARED_BUILD_ROWS} rows, without ` +
    `${SHARED_BUILD_RATIO} times its rows on the other side, or over its bound) is built partitioned by all ` +
    `workers when read whole and its table fits ${PARTITIONED_BUDGET_SHARE} of the memory budget left ` +
    `(${s.memoryLimit} bytes in all), else the sides are shuffled`;
  const est = (x: Side) => ({ rows: Math.round(projectedRows(sideOf(node, x))), bytes: scanBytes(sideOf(node, x)) });
  const cap = PARTITIONED_BUDGET_SHARE * s.memoryLimit;
  const fits = (x: Side) => partitionedTableBytes(est(x).rows, est(x).bytes) <= cap;
  const other = (x: Side): Side => (x === 'left' ? 'right' : 'left');
  const as = (x: Side, why: string) => ({
    strategy: 'partitioned' as const,
    side: x,
    reason: `${x} side estimated at ${est(x).bytes} bytes, ${est(x).rows} rows from its files: ${why}`,
    rule,
  });
  if (d.strategy === 'broadcast' && d.side && est(d.side).bytes > s.broadcastBytes) {
    const x = d.side,
      r = est(x).rows,
      o = est(other(x)).rows;
    if (r > SHARED_BUILD_ROWS && fits(x)) return as(x, `over the ${SHARED_BUILD_ROWS} rows of a shared build`);
    if (o < SHARED_BUILD_RATIO * r && fits(x))
      return as(x, `the ${other(x)} side's ${o} rows are under ${SHARED_BUILD_RATIO} times its own`);
    return { ...d, rule };
  }
  if (d.strategy === 'shuffle') {
    const sides = broadcastable(node.type)
      .filter(fits)
      .sort((a, b) => est(a).bytes - est(b).bytes);
    if (sides.length > 0) return as(sides[0], `its table fits the memory budget`);
  }
  return { ...d, rule };
}
