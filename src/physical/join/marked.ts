// A semi or anti join whose right side is too large to broadcast but whose left side fits: the left side is built
// once and the right side's map tasks mark the left rows they match (physical/join/mark.ts); the left rows marked
// (semi) or not (anti) then go on to the operators above. Neither side is shuffled, and the large side is never
// built (TPC-H q04 at SF 10: 575K orders of one quarter built, 38M late line items probing them, instead of both
// shuffled and the line items built per partition).
import { type Batch, batchBytes, concatBatches, gatherSelected, rowCount } from '../../kernels/column.js';
import { keyBits } from '../../kernels/key-bits.js';
import { type Keys, buildKeys } from '../../kernels/keys.js';
import { type Pipeline, pipelineOf } from '../pipeline.js';
import type { Downstream, ExecContext } from '../operator.js';
import type { TaskResult } from '../task.js';
import { runFromRead } from '../shuffle.js';
import { type Collect, type JoinStrategy, buildBroadcast, collectReserved, tableBytes } from './broadcast.js';
import { type MarkOp, type MarkTarget, markedRows } from './mark.js';
import type { JoinNode } from './tasks.js';
import { trace } from '../../trace.js';

/** A marking plan: the right side's pipeline ending in the mark, the left rows and what is marked. */
export interface Marked {
  pipeline: Pipeline;
  /** the left side's rows (in shared memory) and their keys */
  rows: Batch;
  keys: Keys;
  target: MarkTarget;
  /** the right side's rows read to measure it (probed as they are from `probeAt` on), if any */
  read?: JoinStrategy['read'];
  probeAt: number;
  heldBytes: number;
}

const marking = (node: JoinNode) => node.type === 'semi' || node.type === 'anti';

/** Rows of the output a task of its own gets. */
const OUTPUT_BATCH_ROWS = 1 << 16;

/**
 * When a semi or anti join is to be shuffled, the right side not fitting: its left side read after its filters up
 * to broadcastBytes (a scan's tasks stop at that cap) and, when it fits, made ready to be marked. Null otherwise;
 * the left rows read are then added to `how` for the shuffle, which does not read them again.
 */
export async function tryMarked(
  ex: ExecContext,
  node: JoinNode,
  how: JoinStrategy,
  collect: Collect,
): Promise<Marked | null> {
  const threshold = ex.settings.broadcastBytes;
  if (!marking(node) || how.decision.strategy !== 'shuffle' || threshold <= 0 || how.read?.left) return null;
  if (pipelineOf(node.left).source.kind !== 'scan') return null; // a side that cannot stop at the cap
  // the rows read are held from the start: the cap reserved first, no more than the budget has left
  const cap = Math.min(threshold, ex.memory.free());
  if (cap <= 0) return null;
  trace(`marked ${node.id}: reading the left side up to ${cap} bytes`);
  const { c, bytes } = await collectReserved(ex.memory, cap, () => collect(node.left, cap));
  const n = rowCount(c.batches);
  // over the cap, or its table more than the memory budget left (the rows read counted already): the shuffle
  // takes the rows read
  const over = c.rest !== null || bytes > threshold || tableBytes(n, bytes) > ex.memory.free() + bytes;
  if (over) {
    how.read = { ...how.read, left: { ...c, bytes, rows: n } };
    how.heldBytes += bytes;
    return null;
  }
  trace(`marked ${node.id}: left side read, ${bytes} bytes`);
  const rows = concatBatches(node.left.schema, c.batches, true);
  const keys = buildKeys(rows, node.leftKeys, node.leftNorms, undefined, false);
  const target = markTarget(node, rows, keys);
  const held = target.kind === 'rows' ? tableBytes(n, bytes) : bytes + 2 * target.bits.bits.byteLength;
  ex.memory.reserve(held - bytes);
  trace(`marked ${node.id}: ${target.kind === 'rows' ? 'table built' : 'keys bitmap built'}`);
  const op: MarkOp = { kind: 'mark', id: node.id, keys: node.rightKeys, norms: node.rightNorms, target };
  const base = keepFirst(pipelineOf(node.right), op),
    right = how.read?.right;
  how.decision = {
    strategy: 'broadcast',
    side: 'left',
    reason:
      `${how.decision.reason}; the left side ${bytes} bytes <= broadcastBytes ${threshold}: built, the right ` +
      `side's map tasks mark the rows they match`,
  };
  return {
    pipeline: { ...base, ops: [...base.ops, op], fused: [...base.fused, node.id], schema: [] },
    rows,
    keys,
    target,
    // the right side's rest (the splits not read to measure it) drops the rows with unknown keys first too
    read: right ? { right: { ...right, rest: right.rest && keepFirst(right.rest, op) } } : undefined,
    probeAt: base.ops.length,
    heldBytes: how.heldBytes + held,
  };
}

/**
 * With a keys target, the right side's rows whose key the left side lacks are dropped right after the scan, before
 * its filters (when it has some, and only filters and projections: the key column is traced back through them).
 */
function keepFirst(p: Pipeline, op: MarkOp): Pipeline {
  if (op.target.kind !== 'keys' || !p.ops.some((o) => o.kind === 'filter') || op.keys.length !== 1) return p;
  let col = op.keys[0];
  for (let i = p.ops.length - 1; i >= 0; i--) {
    const o = p.ops[i];
    if (o.kind === 'project') col = o.indices[col];
    else if (o.kind !== 'filter') return p;
  }
  const keep: MarkOp = { ...op, keys: [col], keep: true };
  return { ...p, ops: [keep, ...p.ops], fused: [`${op.id}.keys`, ...p.fused] };
}

/** The bitmap of the left keys when they allow one (the marks a second bitmap), else the left rows' table. */
function markTarget(node: JoinNode, rows: Batch, keys: Keys): MarkTarget {
  const bits = keyBits(keys, true);
  if (bits) return { kind: 'keys', bits, keyMarks: new Int32Array(new SharedArrayBuffer(bits.bits.byteLength)) };
  const table = buildBroadcast(node.left.schema, [rows], node.leftKeys, node.leftNorms);
  return { kind: 'rows', table, marks: new Uint8Array(new SharedArrayBuffer(Math.max(1, rows.length))) };
}

/** Run a marking plan: the right side marks, then the left rows marked (semi) or not (anti) go on. */
export async function runMarked(
  ex: ExecContext,
  node: JoinNode,
  how: JoinStrategy,
  m: Marked,
  ops: Pipeline['ops'],
  d: Downstream,
): Promise<TaskResult[]> {
  ex.report('join', {
    id: node.id,
    type: node.type,
    strategy: 'marked',
    reason: how.decision.reason,
    broadcast: { side: 'left', rows: m.rows.length, bytes: batchBytes(m.rows) },
    targetBytes: 0,
    tasks: 0,
    splits: [],
  });
  try {
    const probe: Downstream = { stage: node.id, sink: { kind: 'collect' } };
    const probed = m.read?.right;
    if (probed) await runFromRead(ex, m.pipeline, probed, m.probeAt, node.right.schema, probe);
    else if (m.rows.length > 0) await ex.execute(m.pipeline, { ...probe, placement: false });
    trace(`marked ${node.id}: right side probed`);
    const t = m.target;
    const marks = t.kind === 'rows' ? t.marks : markedRows(m.keys, t.bits, t.keyMarks);
    const out = selected(m.rows, marks, node.type === 'semi' ? 1 : 0);
    const p: Pipeline = { source: node, ops, fused: [], schema: node.schema };
    return await runFromRead(ex, p, { batches: out, rest: null }, 0, node.schema, d);
  } finally {
    ex.memory.release(m.heldBytes);
  }
}

/** The table's rows whose mark is `want`, in batches of OUTPUT_BATCH_ROWS rows at most. */
function selected(table: Batch, marks: Uint8Array, want: number): Batch[] {
  const out: Batch[] = [];
  const idx = new Int32Array(Math.min(table.length, OUTPUT_BATCH_ROWS));
  for (let from = 0; from < table.length; from += OUTPUT_BATCH_ROWS) {
    const n = pick(marks, want, from, Math.min(table.length, from + OUTPUT_BATCH_ROWS), idx);
    if (n > 0) out.push({ length: n, columns: table.columns.map((c) => gatherSelected(c, idx, n)) });
  }
  return out;
}

function pick(marks: Uint8Array, want: number, from: number, to: number, idx: Int32Array): number {
  let n = 0;
  for (let i = from; i < to; i++) if (marks[i] === want) idx[n++] = i;
  return n;
}

/** The --explain line of the rule, for a semi or anti join that may be shuffled; null for other joins. */
export function markedRule(node: JoinNode, threshold: number): string | null {
  if (!marking(node) || threshold <= 0) return null;
  return (
    `if the right side does not fit: the left side is read after its filters up to broadcastBytes ${threshold}; ` +
    `if it fits, it is built once and the right side's map tasks mark the left rows they match (no shuffle)`
  );
}
