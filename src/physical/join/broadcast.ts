// Broadcast joins on the coordinator: measure the sides that may be broadcast
// (read after their own filters and projections, up to a byte cap), decide
// with physical/join/decide.ts, build the table once into SharedArrayBuffers, and turn
// the other side's pipeline into one whose map tasks probe it in place. Rows
// read to measure are never read again: the probe or the shuffle starts from them.
import { type Batch, type Schema, batchBytes, concatBatches, rowCount, shareArray } from '../../kernels/column.js';
import { keyBits } from '../../kernels/key-bits.js';
import { type KeyPart, buildKeys } from '../../kernels/keys.js';
import { KeyTable, directTable, int32s } from '../../kernels/table.js';
import type { BoundNode, KeyNorm } from '../../plan/bound.js';
import { type BroadcastDecision, type Side, decideJoin, sideBounds, sidesToMeasure } from './decide.js';
import { checked, worthReadingOn } from './broadcast-check.js';
import { type BroadcastTable, type ProbeOp, fusedTableGroupColumns } from './probe.js';
import { groupsOf } from '../../agg/aggregate.js';
import type { Groups } from '../../agg/groups.js';
import { mergeChunkGroups } from './table-groups.js';
import { type Pipeline, pipelineOf, scanBytes } from '../pipeline.js';
import type { Combine } from '../task.js';
import type { Collected } from '../shuffle.js';
import { trace } from '../../trace.js';
import { type FilterMode, filterBytes, filterKinds } from '../../kernels/runtime-filter.js';
import { type Placed, type RtFilterOp, budgeted, filterable, placeAgain, placeFilter, tableFilter } from './filters.js';

type JoinNode = Extract<BoundNode, { kind: 'join' }>;

export interface JoinStrategy {
  decision: BroadcastDecision;
  /** broadcast: the probing side's pipeline, ending in the probe */
  pipeline?: Pipeline;
  /** broadcast: the table's rows and bytes */
  rows?: number;
  bytes?: number;
  /**
   * The sides read to measure them, whose rows are not read again: broadcast, the probing side's (its rows
   * go through `pipeline.ops` from `probeAt` on, its `rest` through the whole pipeline); shuffle, either side's
   */
  read?: Partial<Record<Side, Measured>>;
  /** broadcast: where the probe starts in `pipeline.ops` (the ops before it made the probing side's rows read) */
  probeAt?: number;
  /** bytes held on the coordinator (the measured side, the table) while the join runs */
  heldBytes: number;
  /** broadcast: the runtime filter of the table's keys put into the probing side's pipeline (join/filters.ts) */
  filters?: Placed[];
}

/** Bytes a broadcast table takes beyond its rows: key words and hash, chain and heads, group ids (estimated high). */
export const tableBytes = (rows: number, bytes: number) => bytes + 32 * rows;

let built = 0;

/** The table over a side's rows, every array shared. */
export function buildBroadcast(schema: Schema, batches: Batch[], keys: number[], norms: KeyNorm[]): BroadcastTable {
  const batch = concatBatches(schema, batches, true);
  // keys hashed only for a table that is not direct (whose probes need no hashes)
  const unhashed = buildKeys(batch, keys, norms, undefined, false);
  const direct = directTable(unhashed, true);
  const k = direct ? unhashed : buildKeys(batch, keys, norms);
  const t = direct ?? new KeyTable(k, true, undefined, true);
  const share = <T extends Int32Array | Uint8Array>(a: T | null) => (a === null ? null : shareArray(a));
  const parts: KeyPart[] = k.parts.map((p) =>
    p.kind === 'w'
      ? { kind: 'w', w: shareArray(p.w), nulls: share(p.nulls) }
      : { kind: 's', bytes: shareArray(p.bytes), offs: shareArray(p.offs), nulls: share(p.nulls) },
  );
  return {
    id: `${process.pid}.${++built}.${Date.now()}`,
    batch,
    keys: { n: k.n, parts, hash: shareArray(k.hash), anyNull: share(k.anyNull) },
    heads: shareArray(t.heads),
    next: shareArray(t.next),
    mask: t.mask,
    slots: t.slots && shareArray(t.slots),
    direct: t.direct && shareArray(t.direct),
    base: t.base,
    unique: t.unique,
    bits: t.slots && keyBits(k, true),
  };
}

/**
 * Group the table's rows for the aggregate fused with its probe (`combine`,
 * right after the join), once here: otherwise every thread would group them
 * again before its first probe. `chunks`: the groups the read tasks found in
 * their rows (see readGroupColumns), merged rather than grouping every row here.
 */
function groupTable(op: ProbeOp, combine: Combine, chunks?: { rows: number; groups: Groups }[]): void {
  const cols = fusedTableGroupColumns(op, combine.groupBy, combine.aggs);
  if (cols === null || cols.length === 0) return; // no group columns: every match is group 0
  if (op.table.groups?.cols.join() === cols.join()) return; // grouped already
  // a table of unique keys grouped by (at least) its key columns: each row is its own group, found with no hashing
  const t = op.table,
    n = t.batch.length;
  const g =
    t.unique && op.buildKeys.every((k) => cols.includes(k))
      ? { nGroups: n, gid: rowIds(n), first: rowIds(n) }
      : ((chunks && mergeChunkGroups(t.batch, chunks, cols)) ?? groupsOf(t.batch, cols, undefined, true));
  op.table.groups = { cols, nGroups: g.nGroups, gid: shareArray(g.gid), first: shareArray(g.first) };
}

/**
 * The columns the read tasks of a side to broadcast group their rows by (the
 * aggregate `combine` fused with the probe groups the table by them), or
 * undefined: none, or the table's key columns among them (a dimension's
 * unique keys need no grouping, see groupTable).
 */
function readGroupColumns(node: JoinNode, side: Side, combine?: Combine): number[] | undefined {
  if (!combine) return undefined;
  const op = probeShape(node, side);
  const cols = fusedTableGroupColumns(op, combine.groupBy, combine.aggs);
  if (cols === null || cols.length === 0 || op.buildKeys.every((k) => cols.includes(k))) return undefined;
  return cols;
}

/** The probe of a broadcast table, but the table. */
function probeShape(node: JoinNode, side: Side): Omit<ProbeOp, 'table'> {
  return {
    kind: 'probe',
    id: node.id,
    keys: side === 'right' ? node.leftKeys : node.rightKeys,
    norms: side === 'right' ? node.leftNorms : node.rightNorms,
    buildKeys: side === 'right' ? node.rightKeys : node.leftKeys,
    // a right join probed by its right rows is a left join seen from them
    type: side === 'right' ? (node.type as ProbeOp['type']) : node.type === 'right' ? 'left' : 'inner',
    buildFirst: side === 'left',
    leftSchema: node.left.schema,
    rightSchema: node.right.schema,
  };
}

/** The pipeline of the side that probes `table` (`base`: its pipeline, by default the whole side), and the probe. */
function probePipeline(node: JoinNode, side: Side, table: BroadcastTable, base?: Pipeline): Pipeline {
  const op: ProbeOp = { ...probeShape(node, side), table };
  const p = base ?? pipelineOf(side === 'right' ? node.left : node.right);
  return { ...p, ops: [...p.ops, op], fused: [...p.fused, node.id], schema: node.schema };
}

/**
 * Whether a side is measured whatever its files' sizes. A scan's map tasks
 * (filters and projections fused) stop at a byte cap: started in order, the
 * rest of the splits never touched. So do a join's when it is a broadcast
 * probe (a scan below it); a shuffle join's output, and an aggregate's, are
 * computed whole, but they are computed anyway and are often far smaller
 * than their inputs (q18's orders over 300 units, q17's average per part), so
 * they are collected when even their input's estimate fits the memory budget
 * left (their rows are then held as the shuffle would hold them).
 */
function measurable(n: BoundNode, free: number): boolean {
  const kind = pipelineOf(n).source.kind;
  return kind === 'scan' || ((kind === 'aggregate' || kind === 'join') && scanBytes(n) <= free);
}

/**
 * A side that fits in this many bytes is broadcast without reading the other
 * side to compare: its table builds in a few milliseconds on one thread and
 * stays in the caches, and reading the other side first would only delay its probes.
 * The other side is worth measuring when this one is big (q12 at SF 1: 1.5M
 * orders, 24.6 MB, against 31K filtered line items, 0.37 MB).
 */
const SMALL_TABLE_BYTES = 1024 * 1024;

/**
 * Decide how a join runs. `collect` runs a side to its rows (on the pool),
 * up to a byte cap when the side can stop there. Every side the join type
 * allows to broadcast is read after its filters (an aggregate's output
 * first, then scans by their estimates, a join's output last and only when
 * nothing read fits):
 * up to broadcastBytes, the next one up to the bytes of the first when that
 * fitted (to win it must be smaller), unless the first is small
 * (SMALL_TABLE_BYTES). The smaller side that fits is built
 * once; the rows read of the other side are probed as they are, its rest by
 * its map tasks. When none fits, the rows read are shuffled and the rest read
 * by the shuffle's map tasks. `combine`: the aggregate right after the join
 * (no row operator between), whose grouping of a broadcast table is done with the table.
 */
export async function chooseStrategy(
  node: JoinNode,
  threshold: number,
  collect: Collect,
  budget: MemoryBudget,
  combine?: Combine,
  shared = 0,
  filters: FilterMode = 'off',
  repeated?: (source: BoundNode) => boolean,
): Promise<JoinStrategy> {
  const est = { left: scanBytes(node.left), right: scanBytes(node.right) };
  const free = budget.free();
  const can = { left: measurable(node.left, free), right: measurable(node.right, free) };
  const bounds = sideBounds(threshold, est, shared);
  const sides = sidesToMeasure(node.type, est, threshold, can, 2, bounds);
  if (sides.length === 0) return { decision: decideJoin(node.type, {}, threshold), heldBytes: 0 };
  // An aggregate's output first: it is computed anyway, and when small it spares reading the other side. A join's
  // output last, and only when no side read fits: read, its rows would be probed apart from the join below it,
  // whose probe merges with this one's otherwise (physical/join/merge.ts: q10's snowflake, the fused-probe tests).
  const rank = (s: Side) => {
    const kind = pipelineOf(s === 'left' ? node.left : node.right).source.kind;
    return kind === 'aggregate' ? 0 : kind === 'scan' ? 1 : 2;
  };
  sides.sort((a, b) => rank(a) - rank(b));
  const read: Partial<Record<Side, Measured>> = {};
  // The rows read are held from the start: a read reserves its cap first, no more than the budget has left (which
  // queries running at once share), and keeps what it read; a side the budget has no room for is not read.
  let reserved = 0;
  const readSide = async (side: Side, want: number, from?: Measured): Promise<Measured | undefined> => {
    const cap = Math.max(0, Math.min(want, budget.free()));
    if (cap === 0 && want > 0) return undefined;
    trace(`broadcast ${node.id}: reading the ${side} side up to ${cap} bytes${from ? ' more' : ''}`);
    const n = side === 'left' ? node.left : node.right;
    let got: { c: Collected; bytes: number };
    try {
      got = await collectReserved(budget, cap, () =>
        collect(n, cap, readGroupColumns(node, side, combine), from?.rest ?? undefined),
      );
    } catch (e) {
      budget.release(reserved);
      throw e;
    }
    const m = (read[side] = appendRead(got.c, from));
    reserved += got.bytes;
    trace(`broadcast ${node.id}: ${side} side read, ${m.bytes} bytes${m.rest ? ', stopped at the cap' : ''}`);
    return m;
  };
  // A scan is read up to broadcastBytes, a side computed whole (a join's or an aggregate's output) fits up to its
  // shared-build bound. wide: the side that fitted is over broadcastBytes, the other is read too, to be compared
  let cap = threshold,
    fits = false,
    wide = false;
  for (const side of sides) {
    if (rank(side) === 2 && fits && !wide) break;
    const m = await readSide(side, cap);
    if (!m) continue;
    if (m.rest === null && m.bytes <= (fits ? cap : bounds[side])) {
      cap = m.bytes;
      fits = true;
      wide = m.bytes > threshold;
    }
    // a small table is built in a few ms and probed from the caches: no other side could do much better
    if (m.rest === null && m.bytes <= SMALL_TABLE_BYTES) break;
  }
  // none fitted: a scan stopped at broadcastBytes is read on up to its shared-build bound, the smaller estimate first,
  // where what it read says it may fit
  const onward = (s: Side) =>
    read[s]?.rest &&
    bounds[s] > threshold &&
    worthReadingOn(s === 'left' ? node.left : node.right, read[s]!, bounds[s]);
  if (!fits)
    for (const side of sides.filter(onward).sort((a, b) => est[a] - est[b])) {
      const m = await readSide(side, bounds[side] - read[side]!.bytes, read[side]);
      if (m && m.rest === null && m.bytes <= bounds[side]) break;
    }
  const measured = sides.filter((s) => read[s] !== undefined);
  const whole: Partial<Record<Side, number>> = {},
    partial: Partial<Record<Side, number>> = {};
  for (const s of measured) (read[s]!.rest === null ? whole : partial)[s] = read[s]!.bytes;
  let decision = decideJoin(node.type, whole, threshold, partial, bounds);
  const held = measured.reduce((a, s) => a + read[s]!.bytes, 0);
  if (decision.strategy === 'broadcast') {
    const m = read[decision.side!]!;
    // the rows read are counted as held already: the table would take their place
    decision = checked(node, decision, read, threshold, tableBytes(m.rows, m.bytes), budget.free() + reserved);
  }
  // held until the shuffle's map tasks have partitioned them (reserved as they were read)
  if (decision.strategy === 'shuffle') return { decision, read, heldBytes: held };
  budget.release(reserved);
  return broadcastFrom(node, decision, read, budget, combine, filters, repeated);
}

/** The broadcast `decision` taken: the table built from the rows read of its side, the other side set to probe it. */
function broadcastFrom(
  node: JoinNode,
  decision: BroadcastDecision,
  read: Partial<Record<Side, Measured>>,
  budget: MemoryBudget,
  combine?: Combine,
  filters: FilterMode = 'off',
  repeated?: (source: BoundNode) => boolean,
): JoinStrategy {
  const side = decision.side!,
    m = read[side]!,
    other: Side = side === 'left' ? 'right' : 'left';
  const sideNode = side === 'left' ? node.left : node.right;
  const keys = side === 'left' ? node.leftKeys : node.rightKeys,
    norms = side === 'left' ? node.leftNorms : node.rightNorms;
  const table = tableBytes(m.rows, m.bytes);
  let probed = read[other],
    base = pipelineOf(side === 'left' ? node.right : node.left);
  budget.reserve(table + (probed?.bytes ?? 0));
  const built = buildBroadcast(sideNode.schema, m.batches, keys, norms);
  trace(`broadcast ${node.id}: table built`);
  // the runtime filter of the table's keys, first in the probing side's pipeline (and in its rest, read by its map
  // tasks; the rows read to measure it are probed as they are): none where the probing side was read whole (it would
  // test no row: TPC-H q12's and q14's built for nothing)
  const shape = probeShape(node, side);
  const f =
    filterable(shape.type) && probed?.rest !== null
      ? budgeted(budget, (max) => tableFilter(`${node.id}.${side}`, built, keys, norms, filters, max))
      : null;
  const placed: Placed[] = [];
  if (f) {
    const op: RtFilterOp = { kind: 'rtfilter', filter: f, keys: shape.keys, norms: shape.norms };
    const at = placeFilter(base, op, repeated);
    if (at) {
      base = at.pipeline;
      placed.push(at.placed);
      const rest = probed?.rest && placeAgain(probed.rest, at.placed);
      if (probed && rest) probed = { ...probed, rest };
      trace(`broadcast ${node.id}: runtime filter ${filterKinds(f)} into ${at.placed.into}`);
    }
  }
  const pipeline = probePipeline(node, side, built, base);
  // the read tasks' groups, one per batch read (tasks that were skipped or read nothing give none)
  const chunks =
    m.groups?.length === m.batches.length
      ? m.batches.map((b, i) => ({ rows: b.length, groups: m.groups![i] })).filter((c) => c.rows > 0)
      : undefined;
  if (combine) groupTable(pipeline.ops[base.ops.length] as ProbeOp, combine, chunks);
  trace(`broadcast ${node.id}: table grouped`);
  return {
    decision,
    pipeline,
    rows: m.rows,
    bytes: m.bytes,
    // the filter's words too, until the probing side's tasks are done
    heldBytes: table + (probed?.bytes ?? 0) + (f ? filterBytes(f) : 0),
    ...(placed.length ? { filters: placed } : {}),
    ...(probed ? { read: { [other]: probed }, probeAt: base.ops.length } : {}),
  };
}

/** A side read, with its bytes and rows. */
interface Measured extends Collected {
  bytes: number;
  rows: number;
}
/**
 * Runs a side to its rows on the pool, stopping once more than `cap` bytes were read where it can; `from`: the
 * pipeline of its rest (a side read on), else the whole side's.
 */
export type Collect = (n: BoundNode, cap: number, groupBy?: number[], from?: Pipeline) => Promise<Collected>;

/** A side's rows read, appended to those read before (`from`). */
function appendRead(c: Collected, from?: Measured): Measured {
  const bytes = c.batches.reduce((a, b) => a + batchBytes(b), 0),
    rows = rowCount(c.batches);
  if (!from) return { ...c, bytes, rows };
  const groups = from.groups && c.groups ? [...from.groups, ...c.groups] : undefined;
  return {
    batches: [...from.batches, ...c.batches],
    ...(groups ? { groups } : {}),
    rest: c.rest,
    bytes: from.bytes + bytes,
    rows: from.rows + rows,
  };
}

/**
 * A side read (`read`, up to `cap` bytes) with its rows held from the start: the cap reserved in the budget first,
 * then the reservation made the bytes read (more than the cap where the read stopped after the task that passed it:
 * that task's rows are held too); on an error, let go of. Returns the rows read and their bytes.
 */
export async function collectReserved(
  budget: MemoryBudget,
  cap: number,
  read: () => Promise<Collected>,
): Promise<{ c: Collected; bytes: number }> {
  budget.reserve(cap);
  let c: Collected;
  try {
    c = await read();
  } catch (e) {
    budget.release(cap);
    throw e;
  }
  const bytes = c.batches.reduce((a, b) => a + batchBytes(b), 0);
  if (bytes > cap) budget.reserve(bytes - cap);
  else budget.release(cap - bytes);
  return { c, bytes };
}

/** What chooseStrategy needs of the memory budget (spill/spiller.ts). */
export interface MemoryBudget {
  free(): number;
  reserve(bytes: number): void;
  release(bytes: number): void;
}

/**
 * The strategy --explain expects, from the files' sizes (the run measures the sides after their filters), and
 * `rule`: what the run then does, the same words for many joins (--explain prints it once, as a note).
 */
export function expectedStrategy(node: JoinNode, threshold: number, shared = 0): BroadcastDecision & { rule?: string } {
  const est = { left: scanBytes(node.left), right: scanBytes(node.right) };
  const bounds = sideBounds(threshold, est, shared);
  const d = decideJoin(node.type, est, threshold, {}, bounds);
  const can = { left: measurable(node.left, Infinity), right: measurable(node.right, Infinity) };
  const sides = sidesToMeasure(node.type, est, threshold, can, 2, bounds);
  if (sides.length === 0) return d; // off, a full join, or no side small enough to read whole
  const whole = sides.filter((s) => pipelineOf(s === 'left' ? node.left : node.right).source.kind !== 'scan');
  const many = sides.length > 1;
  const outputs =
    whole.length === 0
      ? ''
      : ` (the ${whole.join(' and ')}, a join's or an aggregate's output, only when its input's estimate fits ` +
        `the memory budget)`;
  const upTo = sides.map((s) => (bounds[s] > threshold ? `${s} ${bounds[s]}` : '')).filter((x) => x);
  const wide = upTo.length ? ` (the shared-build bound: ${upTo.join(', ')})` : '';
  const rule =
    `at run time the ${sides.join(' and ')} side${many ? 's are' : ' is'} read after ` +
    `${many ? 'their' : 'its'} filters, ` +
    `up to broadcastBytes ${threshold}${wide}${outputs}; the smaller that fits is broadcast, else the rows ` +
    `read are shuffled`;
  if (d.strategy === 'broadcast') {
    return {
      ...d,
      reason:
        `${d.side} side estimated at ${est[d.side!]} bytes from its files <= ` +
        `${bounds[d.side!] > threshold ? 'the shared-build bound' : 'broadcastBytes'} ${bounds[d.side!]}`,
      rule,
    };
  }
  return { ...d, reason: `${d.reason} (from the files, before filters)`, rule };
}

/** 0, 1, ..., n - 1 in shared memory (a unique table's rows as their own groups). */
function rowIds(n: number): Int32Array {
  const a = int32s(n, true);
  for (let i = 0; i < n; i++) a[i] = i;
  return a;
}
