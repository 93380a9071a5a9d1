// Broadcast joins on the coordinator: measure the side that may be broadcast
// (collected after its own filters and projections), decide with
// joins/decide.ts, build the table once into SharedArrayBuffers, and turn the
// other side's pipeline into one whose map tasks probe it in place.
import { type Batch, type Schema, batchBytes, concatBatches, rowCount, shareArray, shareBatch } from '../kernels/column.js';
import { type KeyPart, buildKeys } from '../kernels/keys.js';
import { KeyTable, directTable } from '../kernels/table.js';
import type { BoundNode, KeyNorm } from '../plan/bound.js';
import { type BroadcastDecision, type Side, decideJoin, sideToMeasure } from '../joins/decide.js';
import type { BroadcastTable, ProbeOp } from '../joins/probe.js';
import { type Pipeline, pipelineOf, scanBytes } from './physical.js';

type JoinNode = Extract<BoundNode, { kind: 'join' }>;

export interface JoinStrategy {
  decision: BroadcastDecision;
  /** broadcast: the probing side's pipeline, ending in the probe */
  pipeline?: Pipeline;
  /** broadcast: the table's rows and bytes */
  rows?: number;
  bytes?: number;
  /** shuffle after measuring a side: its rows, to shuffle without reading them again, and their bytes */
  collected?: { side: Side; batches: Batch[]; bytes: number };
  /** bytes held on the coordinator (the measured side, the table) while the join runs */
  heldBytes: number;
}

/** Bytes a broadcast table takes beyond its rows: key words and hash, chain and heads (estimated high). */
export const tableBytes = (rows: number, bytes: number) => bytes + 32 * rows;

let built = 0;

/** The table over a side's rows, every array shared. */
export function buildBroadcast(schema: Schema, batches: Batch[], keys: number[], norms: KeyNorm[]): BroadcastTable {
  const batch = shareBatch(concatBatches(schema, batches));
  // keys hashed only for a table that is not direct (whose probes need no hashes)
  const unhashed = buildKeys(batch, keys, norms, undefined, false);
  const direct = directTable(unhashed);
  const k = direct ? unhashed : buildKeys(batch, keys, norms);
  const t = direct ?? new KeyTable(k, true);
  const share = <T extends Int32Array | Uint8Array>(a: T | null) => (a === null ? null : shareArray(a));
  const parts: KeyPart[] = k.parts.map((p) => (p.kind === 'w'
    ? { kind: 'w', w: shareArray(p.w), nulls: share(p.nulls) }
    : { kind: 's', bytes: shareArray(p.bytes), offs: shareArray(p.offs), nulls: share(p.nulls) }));
  return {
    id: `${process.pid}.${++built}.${Date.now()}`, batch, keys: { n: k.n, parts, hash: shareArray(k.hash), anyNull: share(k.anyNull) },
    heads: shareArray(t.heads), next: shareArray(t.next), mask: t.mask, slots: t.slots && shareArray(t.slots),
    direct: t.direct && shareArray(t.direct), base: t.base, unique: t.unique,
  };
}

/** The pipeline of the side that probes `table`, extended by the probe. */
export function probePipeline(node: JoinNode, side: Side, table: BroadcastTable): Pipeline {
  const probing = side === 'right' ? node.left : node.right;
  const op: ProbeOp = {
    kind: 'probe', id: node.id, table,
    keys: side === 'right' ? node.leftKeys : node.rightKeys,
    norms: side === 'right' ? node.leftNorms : node.rightNorms,
    buildKeys: side === 'right' ? node.rightKeys : node.leftKeys,
    // a right join probed by its right rows is a left join seen from them
    type: side === 'right' ? (node.type as ProbeOp['type']) : node.type === 'right' ? 'left' : 'inner',
    buildFirst: side === 'left',
    leftSchema: node.left.schema, rightSchema: node.right.schema,
  };
  const p = pipelineOf(probing);
  return { ...p, ops: [...p.ops, op], fused: [...p.fused, node.id], schema: node.schema };
}

/**
 * Decide how a join runs. `collect` runs a side to its rows (on the pool);
 * only the side worth measuring is collected, and only when its estimate from
 * the files is within reach of the threshold.
 */
export async function chooseStrategy(
  node: JoinNode, threshold: number, collect: (n: BoundNode) => Promise<Batch[]>, budget: MemoryBudget,
): Promise<JoinStrategy> {
  const side = sideToMeasure(node.type, { left: scanBytes(node.left), right: scanBytes(node.right) }, threshold);
  if (side === null) return { decision: decideJoin(node.type, {}, threshold), heldBytes: 0 };
  const sideNode = side === 'left' ? node.left : node.right;
  const batches = await collect(sideNode);
  const bytes = batches.reduce((a, b) => a + batchBytes(b), 0);
  const rows = rowCount(batches);
  let decision = decideJoin(node.type, { [side]: bytes }, threshold);
  // the table is held for the whole probe: it must fit what the budget has left
  const table = tableBytes(rows, bytes), left = budget.free();
  if (decision.strategy === 'broadcast' && table > left) {
    decision = {
      strategy: 'shuffle',
      reason: `${side} side ${bytes} bytes <= broadcastBytes ${threshold}, but its table (${table} bytes with the hash table) exceeds the memory budget left (${left} bytes)`,
    };
  }
  if (decision.strategy === 'shuffle') {
    budget.reserve(bytes);
    return { decision, collected: { side, batches, bytes }, heldBytes: bytes };
  }
  const keys = side === 'left' ? node.leftKeys : node.rightKeys, norms = side === 'left' ? node.leftNorms : node.rightNorms;
  budget.reserve(table);
  return { decision, pipeline: probePipeline(node, side, buildBroadcast(sideNode.schema, batches, keys, norms)), rows, bytes, heldBytes: table };
}

/** What chooseStrategy needs of the memory budget (spill/spiller.ts). */
export interface MemoryBudget { free(): number; reserve(bytes: number): void }

/** The strategy --explain expects, from the files' sizes (the run measures the side after its filters). */
export function expectedStrategy(node: JoinNode, threshold: number): BroadcastDecision {
  const est = { left: scanBytes(node.left), right: scanBytes(node.right) };
  const d = decideJoin(node.type, est, threshold);
  if (d.strategy === 'broadcast') return { ...d, reason: `${d.side} side estimated at ${est[d.side!]} bytes from its files <= broadcastBytes ${threshold}; measured at run time` };
  const side = sideToMeasure(node.type, est, threshold);
  return side ? { ...d, reason: `${d.reason}; the ${side} side is measured at run time after its filters, and broadcast if it fits` } : d;
}
