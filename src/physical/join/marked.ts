// A semi or anti join whose right side is too large to broadcast but whose left side fits: the left side is built
// once and the right side's map tasks mark the left rows they match (physical/join/mark.ts); the left rows marked
// (semi) or not (anti) then go on to the operators above. Neither side is shuffled, and the large side is never
// built (TPC-H q04 at SF 10: 575K orders of one quarter built, 38M late line items probing them, instead of both
// shuffled and the line items built per partition).
import { type Batch, batchBytes, gatherSelected, rowCount } from '../../kernels/column.js';
import { type Pipeline, pipelineOf } from '../pipeline.js';
import type { Downstream, ExecContext } from '../operator.js';
import type { TaskResult } from '../task.js';
import { runFromRead } from '../exchange/shuffle.js';
import { type Collect, type JoinStrategy, buildBroadcast, tableBytes } from './broadcast.js';
import type { BroadcastTable } from './probe.js';
import { type MarkOp, markedRows } from './mark.js';
import type { JoinNode } from './tasks.js';

/** A marking plan: the right side's pipeline ending in the mark, the table and its marks. */
export interface Marked {
  pipeline: Pipeline;
  table: BroadcastTable;
  marks: Uint8Array;
  keyMarks: Int32Array | null;
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
 * to broadcastBytes (a scan's tasks stop at that cap) and, when it fits, built to be marked. Null otherwise; the
 * left rows read are then added to `how` for the shuffle, which does not read them again.
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
  const c = await collect(node.left, threshold);
  const bytes = c.batches.reduce((a, b) => a + batchBytes(b), 0),
    rows = rowCount(c.batches);
  ex.memory.reserve(bytes);
  if (c.rest !== null || bytes > threshold) {
    how.read = { ...how.read, left: { ...c, bytes, rows } };
    how.heldBytes += bytes;
    return null;
  }
  const table = buildBroadcast(node.left.schema, c.batches, node.leftKeys, node.leftNorms);
  const built = tableBytes(rows, bytes);
  ex.memory.reserve(built);
  ex.memory.release(bytes); // the rows are the table's now
  const marks = new Uint8Array(new SharedArrayBuffer(Math.max(1, rows)));
  const keyMarks = table.bits ? new Int32Array(new SharedArrayBuffer(table.bits.bits.byteLength)) : null;
  const op: MarkOp = {
    kind: 'mark',
    id: node.id,
    table,
    keys: node.rightKeys,
    norms: node.rightNorms,
    marks,
    keyMarks,
  };
  const base = pipelineOf(node.right);
  how.decision = {
    strategy: 'broadcast',
    side: 'left',
    reason:
      `${how.decision.reason}; the left side ${bytes} bytes <= broadcastBytes ${threshold}: built, the right ` +
      `side's map tasks mark the rows they match`,
  };
  return {
    pipeline: { ...base, ops: [...base.ops, op], fused: [...base.fused, node.id], schema: [] },
    table,
    marks,
    keyMarks,
    read: how.read?.right ? { right: how.read.right } : undefined,
    probeAt: base.ops.length,
    heldBytes: how.heldBytes + built,
  };
}

/** Run a marking plan: the right side marks the table, then the left rows marked (semi) or not (anti) go on. */
export async function runMarked(
  ex: ExecContext,
  node: JoinNode,
  how: JoinStrategy,
  m: Marked,
  ops: Pipeline['ops'],
  d: Downstream,
): Promise<TaskResult[]> {
  ex.stats.joins.push({
    id: node.id,
    type: node.type,
    strategy: 'broadcast',
    reason: how.decision.reason,
    broadcast: { side: 'left', rows: m.table.batch.length, bytes: batchBytes(m.table.batch) },
    targetBytes: 0,
    tasks: 0,
    splits: [],
  });
  try {
    const probe: Downstream = { stage: node.id, sink: { kind: 'collect' } };
    const probed = m.read?.right;
    if (probed) await runFromRead(ex, m.pipeline, probed, m.probeAt, node.right.schema, probe);
    else if (m.table.batch.length > 0) await ex.execute(m.pipeline, { ...probe, placement: false });
    if (m.keyMarks !== null && m.table.bits) markedRows(m.table, m.table.bits, m.keyMarks, m.marks);
    const out = selected(m.table.batch, m.marks, node.type === 'semi' ? 1 : 0);
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
