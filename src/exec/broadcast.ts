// Broadcast joins on the coordinator: measure the side that may be broadcast
// (collected after its own filters and projections), decide with
// joins/decide.ts, build the table once into SharedArrayBuffers, and turn the
// other side's pipeline into one whose map tasks probe it in place.
import { type Batch, type Schema, batchBytes, concatBatches, rowCount, shareArray } from '../kernels/column.js';
import { type KeyPart, buildKeys } from '../kernels/keys.js';
import { KeyTable, directTable, int32s } from '../kernels/table.js';
import type { BoundNode, KeyNorm } from '../plan/bound.js';
import { type BroadcastDecision, type Side, decideJoin, sideToMeasure } from '../joins/decide.js';
import { type BroadcastTable, type ProbeOp, fusedTableGroupColumns } from '../joins/probe.js';
import { groupsOf } from '../agg/aggregate.js';
import type { Groups } from '../agg/groups.js';
import { mergeChunkGroups } from './table-groups.js';
import { type Pipeline, pipelineOf, scanBytes } from './physical.js';
import type { Combine } from './task.js';
import { trace } from './trace.js';

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
  const parts: KeyPart[] = k.parts.map((p) => (p.kind === 'w'
    ? { kind: 'w', w: shareArray(p.w), nulls: share(p.nulls) }
    : { kind: 's', bytes: shareArray(p.bytes), offs: shareArray(p.offs), nulls: share(p.nulls) }));
  return {
    id: `${process.pid}.${++built}.${Date.now()}`, batch, keys: { n: k.n, parts, hash: shareArray(k.hash), anyNull: share(k.anyNull) },
    heads: shareArray(t.heads), next: shareArray(t.next), mask: t.mask, slots: t.slots && shareArray(t.slots),
    direct: t.direct && shareArray(t.direct), base: t.base, unique: t.unique,
  };
}

/**
 * Group the table's rows for the aggregate fused with its probe (`combine`,
 * right after the join), once here: otherwise every thread would group them
 * again before its first probe. `chunks`: the groups the read tasks found in
 * their rows (see readGroupColumns), merged rather than grouping every row here.
 */
export function groupTable(op: ProbeOp, combine: Combine, chunks?: { rows: number; groups: Groups }[]): void {
  const cols = fusedTableGroupColumns(op, combine.groupBy, combine.aggs);
  if (cols === null || cols.length === 0) return; // no group columns: every match is group 0
  if (op.table.groups?.cols.join() === cols.join()) return; // grouped already
  // a table of unique keys grouped by (at least) its key columns: each row is its own group, found with no hashing
  const t = op.table, n = t.batch.length;
  const g = t.unique && op.buildKeys.every((k) => cols.includes(k)) ? { nGroups: n, gid: rowIds(n), first: rowIds(n) }
    : (chunks && mergeChunkGroups(t.batch, chunks, cols)) ?? groupsOf(t.batch, cols, undefined, true);
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
    kind: 'probe', id: node.id,
    keys: side === 'right' ? node.leftKeys : node.rightKeys,
    norms: side === 'right' ? node.leftNorms : node.rightNorms,
    buildKeys: side === 'right' ? node.rightKeys : node.leftKeys,
    // a right join probed by its right rows is a left join seen from them
    type: side === 'right' ? (node.type as ProbeOp['type']) : node.type === 'right' ? 'left' : 'inner',
    buildFirst: side === 'left',
    leftSchema: node.left.schema, rightSchema: node.right.schema,
  };
}

/** The pipeline of the side that probes `table`, extended by the probe. */
export function probePipeline(node: JoinNode, side: Side, table: BroadcastTable): Pipeline {
  const probing = side === 'right' ? node.left : node.right;
  const op: ProbeOp = { ...probeShape(node, side), table };
  const p = pipelineOf(probing);
  return { ...p, ops: [...p.ops, op], fused: [...p.fused, node.id], schema: node.schema };
}

/**
 * Decide how a join runs. `collect` runs a side to its rows (on the pool);
 * only the side worth measuring is collected, and only when its estimate from
 * the files is within reach of the threshold. `combine`: the aggregate right
 * after the join (no row operator between), whose grouping of a broadcast
 * table is done with the table.
 */
export async function chooseStrategy(
  node: JoinNode, threshold: number, collect: (n: BoundNode, groupBy?: number[]) => Promise<Collected>, budget: MemoryBudget, combine?: Combine,
): Promise<JoinStrategy> {
  const side = sideToMeasure(node.type, { left: scanBytes(node.left), right: scanBytes(node.right) }, threshold);
  if (side === null) return { decision: decideJoin(node.type, {}, threshold), heldBytes: 0 };
  const sideNode = side === 'left' ? node.left : node.right;
  trace(`broadcast ${node.id}: reading the ${side} side`);
  const { batches, groups } = await collect(sideNode, readGroupColumns(node, side, combine));
  trace(`broadcast ${node.id}: ${side} side read`);
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
  const pipeline = probePipeline(node, side, buildBroadcast(sideNode.schema, batches, keys, norms));
  trace(`broadcast ${node.id}: table built`);
  // the read tasks' groups, one per batch read (tasks that were skipped or read nothing give none)
  const chunks = groups?.length === batches.length ? batches.map((b, i) => ({ rows: b.length, groups: groups[i] })).filter((c) => c.rows > 0) : undefined;
  if (combine) groupTable(pipeline.ops[pipeline.ops.length - 1] as ProbeOp, combine, chunks);
  trace(`broadcast ${node.id}: table grouped`);
  return { decision, pipeline, rows, bytes, heldBytes: table };
}

/** A side read to measure: its batches and, when asked for, each batch's groups (see readGroupColumns). */
export interface Collected { batches: Batch[]; groups?: Groups[] }

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

/** 0, 1, ..., n - 1 in shared memory (a unique table's rows as their own groups). */
function rowIds(n: number): Int32Array {
  const a = int32s(n, true);
  for (let i = 0; i < n; i++) a[i] = i;
  return a;
}
