// The rows a window under a top-N filter still needs (plan/window-topn.ts): those that can still have row_number,
// rank or dense_rank at most N in their window partition. A row whose rank over all of its partition's rows is at
// most N has a rank at most N within any subset of them that holds it, so pruning a map task's rows, and a window
// task's before its sort, is exact: the window then computes over the rows kept and the filter above keeps its rows.
// One pass over the rows: each row's partition (read off the packed keys, window/packed.ts, or hashed,
// agg/group-ids.ts), a bounded max-heap of rows per partition in one Int32Array (its worst row at the top: the
// partition's cutoff), then the rows not past their cutoff. Ties are kept for rank and dense_rank; row_number keeps
// N rows a partition (any N of tied rows is a valid answer).
import { groupsOf } from '../../agg/group-ids.js';
import { type Batch, type Schema, concatColumns, gatherSelected, rowCount, sliceBatch } from '../../kernels/column.js';
import { estimatedGroups, sampleGroupsOf } from '../../agg/partial.js';
import type { SortKey } from '../../kernels/sort.js';
import { packKeys } from './packed.js';
import { keyOrder } from './split.js';

/** Keep the rows whose `fn` over (partition keys, order keys) may be at most `n`. */
export interface TopN {
  fn: 'row_number' | 'rank' | 'dense_rank';
  n: number;
}

/**
 * A map task prunes its rows only when it keeps at most this share of them: pruning costs about what shuffling a
 * row and pruning it again in the reduce task cost; measured on the latest order per customer (row_number = 1, 2.3
 * rows a customer in a map task of 166K orders: 43% kept), the map tasks' pruning cost more than it saved, on the
 * top 3 line items per supplier (6% kept) it saved most of the shuffle and of the reduce tasks' work.
 */
const MAP_KEEP = 0.25;

/** The row operator a window's map tasks end with before the shuffle (registered in physical/kernels.ts). */
export interface TopNOp extends TopN {
  kind: 'topn';
  partitionBy: number[];
  orderBy: SortKey[];
}

/** Rows of a map task's first batch whose partitions are counted before its keys are packed or hashed. */
const MAP_SAMPLE = 4096;

/**
 * Whether a map task's `rows` rows hold so many partitions that pruning would keep more than MAP_KEEP of them (each
 * partition keeps a row at least): the partitions estimated from its first MAP_SAMPLE rows as a combiner estimates
 * its groups (agg/partial.ts). The latest order per customer (JCC-H SF 1: 100K customers in a map task's 166K
 * orders) grouped every task's rows to find that, 80 ms of the map stage's 260 of CPU (SF 10: 1 s of 2.5).
 */
function keepsMost(b: Batch, rows: number, op: TopNOp): boolean {
  if (op.partitionBy.length === 0 || b.length < MAP_SAMPLE) return false;
  const s = sampleGroupsOf(groupsOf(sliceBatch(b, 0, MAP_SAMPLE), op.partitionBy), MAP_SAMPLE);
  return estimatedGroups(MAP_SAMPLE, s.groups, s.firstHalf, rows) > MAP_KEEP * rows;
}

/** A batch pruned to the rows that may be among the first N of their partition (the batch itself when all may). */
export function topNBatch(b: Batch, op: TopNOp): Batch[] {
  if (keepsMost(b, b.length, op)) return [b];
  const kept = topNRows(b, op.partitionBy, op.orderBy, op, MAP_KEEP);
  if (kept === null || kept.n === b.length) return [b];
  const { idx, n } = kept;
  return [{ length: n, columns: b.columns.map((c) => gatherSelected(c, idx, n)) }];
}

/**
 * A map task's output pruned as one (more is pruned than batch by batch: each partition's first N over all of the
 * task's rows): the keys packed from the batches in place (their columns concatenated only where they do not
 * pack), the rows kept gathered from each batch, one batch each.
 */
export function topNBatches(batches: Batch[], op: TopNOp): Batch[] {
  if (batches.length <= 1) return batches.flatMap((b) => topNBatch(b, op));
  const total = rowCount(batches);
  if (keepsMost(batches[0], total, op)) return batches;
  const kept = keptRows(orderOf(batches, op.partitionBy, op.orderBy), total, op, MAP_KEEP);
  if (kept === null || kept.n === total) return batches;
  return keptOf(batches, kept.idx, kept.n);
}

/** The rows `idx[0, n)` (ascending, over the batches one after another) of each batch that has any, its columns `read` (all: null). */
function keptOf(batches: Batch[], idx: Int32Array, n: number, read: Set<number> | null = null): Batch[] {
  const out: Batch[] = [];
  let k = 0,
    from = 0;
  for (const b of batches) {
    const to = from + b.length,
      k0 = k;
    while (k < n && idx[k] < to) k++;
    const m = k - k0;
    if (m > 0) {
      const local = new Int32Array(m);
      for (let j = 0; j < m; j++) local[j] = idx[k0 + j] - from;
      out.push(
        m === b.length
          ? b
          : { length: m, columns: b.columns.map((c, i) => (read && !read.has(i) ? c : gatherSelected(c, local, m))) },
      );
    }
    from = to;
  }
  return out;
}

/**
 * The rows of `b` (ascending indices, the first `n` of `idx`) that may have `top.fn` at most `top.n` in their window
 * partition: each partition's rows better than or peer to its N-th best row (rank), its N-th best distinct order
 * value (dense_rank), or N of its best rows (row_number). Null (keep them all) when none would be dropped, or when
 * more than the share `most` of them would be kept, which the count of rows in each partition tells before any row
 * is compared.
 */
export function topNRows(
  b: Batch,
  partitionBy: number[],
  orderBy: SortKey[],
  top: TopN,
  most = 1,
): { idx: Int32Array; n: number } | null {
  return keptRows(orderOf([b], partitionBy, orderBy), b.length, top, most);
}

/** Each row's group and the order within groups (see orderOf). */
interface Order {
  gid: Int32Array;
  nGroups: number;
  /** each row's packed number (within a group, its order), or else the rows compared */
  codes: Float64Array | null;
  cmp: ((i: number, j: number) => number) | null;
}

/** topNRows over rows whose groups and order are known. */
function keptRows(o: Order, rows: number, top: TopN, most: number): { idx: Int32Array; n: number } | null {
  const N = top.n;
  const { gid, nGroups, codes, cmp } = o;
  // each group's heap: at most min(N, its rows) slots, from start[g]
  const start = new Int32Array(nGroups + 1);
  for (let i = 0; i < rows; i++) start[gid[i] + 1]++;
  for (let g = 0; g < nGroups; g++) start[g + 1] = start[g] + Math.min(N, start[g + 1]);
  // as many rows at least are kept (ties add to it): none pruned, or too few to be worth it
  if (start[nGroups] >= rows || start[nGroups] > most * rows) return null;
  const heap = new Int32Array(start[nGroups]);
  const size = new Int32Array(nGroups);
  const distinct = top.fn === 'dense_rank';
  // the packed numbers of the heaps' rows beside them: a row is tested against its group's cutoff without
  // reading the cutoff row's number at random
  const worst = codes ? packedHeaps(codes, gid, start, size, heap, distinct) : null;
  if (!worst) comparedHeaps(cmp!, gid, start, size, heap, distinct, rows);
  const idx = new Int32Array(rows);
  let k = 0;
  if (top.fn === 'row_number') {
    // the heaps' rows, in input order
    const keep = new Uint8Array(rows);
    for (let j = 0; j < heap.length; j++) keep[heap[j]] = 1;
    for (let i = 0; i < rows; i++) if (keep[i] === 1) idx[k++] = i;
    return { idx, n: k };
  }
  // a group with fewer than N rows (or distinct values) keeps them all; else those up to its cutoff, peers too
  if (worst)
    for (let i = 0; i < rows; i++) {
      const g = gid[i];
      if (size[g] < N || codes![i] <= worst[start[g]]) idx[k++] = i;
    }
  else
    for (let i = 0; i < rows; i++) {
      const g = gid[i];
      if (size[g] < N || cmp!(i, heap[start[g]]) <= 0) idx[k++] = i;
    }
  return { idx, n: k };
}

/**
 * Each group's best rows by their packed numbers into its max-heap (`heap` from start[g], `size[g]` of them;
 * dense_rank: one row a number): returns the heaps' numbers, each beside its row.
 */
function packedHeaps(
  codes: Float64Array,
  gid: Int32Array,
  start: Int32Array,
  size: Int32Array,
  heap: Int32Array,
  distinct: boolean,
): Float64Array {
  const vals = new Float64Array(heap.length);
  for (let i = 0, n = gid.length; i < n; i++) {
    const g = gid[i],
      s = start[g],
      m = size[g],
      v = codes[i];
    let p: number;
    if (m < start[g + 1] - s) {
      if (distinct && holdsValue(vals, s, m, v)) continue;
      // sift up from the new leaf: the group's worst number stays at vals[s]
      size[g] = m + 1;
      for (p = m; p > 0; ) {
        const q = (p - 1) >> 1;
        if (vals[s + q] >= v) break;
        vals[s + p] = vals[s + q];
        heap[s + p] = heap[s + q];
        p = q;
      }
    } else if (v < vals[s] && !(distinct && holdsValue(vals, s, m, v))) {
      // the worst replaced: sift down from the root
      for (p = 0; ; ) {
        const l = 2 * p + 1;
        if (l >= m) break;
        const c = l + 1 < m && vals[s + l + 1] > vals[s + l] ? l + 1 : l;
        if (vals[s + c] <= v) break;
        vals[s + p] = vals[s + c];
        heap[s + p] = heap[s + c];
        p = c;
      }
    } else continue;
    vals[s + p] = v;
    heap[s + p] = i;
  }
  return vals;
}

function holdsValue(vals: Float64Array, s: number, m: number, v: number): boolean {
  for (let j = s; j < s + m; j++) if (vals[j] === v) return true;
  return false;
}

/** The same heaps by comparing rows (keys that do not pack, or partitions too many to count). */
function comparedHeaps(
  cmp: (i: number, j: number) => number,
  gid: Int32Array,
  start: Int32Array,
  size: Int32Array,
  heap: Int32Array,
  distinct: boolean,
  rows: number,
): void {
  for (let i = 0; i < rows; i++) {
    const g = gid[i],
      s = start[g],
      cap = start[g + 1] - s,
      m = size[g];
    if (m < cap) {
      if (distinct && holds(heap, s, m, i, cmp)) continue;
      // sift up: the worst row of the group stays at heap[s]
      let p = m;
      heap[s + p] = i;
      size[g] = m + 1;
      while (p > 0) {
        const q = (p - 1) >> 1;
        if (cmp(heap[s + q], heap[s + p]) >= 0) break;
        const t = heap[s + q];
        heap[s + q] = heap[s + p];
        heap[s + p] = t;
        p = q;
      }
    } else if (cmp(i, heap[s]) < 0 && !(distinct && holds(heap, s, m, i, cmp))) {
      heap[s] = i;
      for (let p = 0; ; ) {
        const l = 2 * p + 1,
          r = l + 1;
        let w = p;
        if (l < m && cmp(heap[s + l], heap[s + w]) > 0) w = l;
        if (r < m && cmp(heap[s + r], heap[s + w]) > 0) w = r;
        if (w === p) break;
        const t = heap[s + w];
        heap[s + w] = heap[s + p];
        heap[s + p] = t;
        p = w;
      }
    }
  }
}

/** Whether one of the m heap rows from s is a peer of row i. */
function holds(heap: Int32Array, s: number, m: number, i: number, cmp: (i: number, j: number) => number): boolean {
  for (let j = s; j < s + m; j++) if (cmp(heap[j], i) === 0) return true;
  return false;
}

/**
 * Each row's group (its partition) and the comparison of two rows of one group by the order keys: integer keys packed
 * into one number a row (window/packed.ts), the partition read off it when the partitions are few enough to count
 * (no hashing); else the groups hashed (agg/group-ids.ts) and the rows compared by their columns.
 */
function orderOf(batches: Batch[], partitionBy: number[], orderBy: SortKey[]): Order {
  const rows = rowCount(batches);
  // the keys packed from the batches in place
  // not the order keys apart from the partitions: on JCC-H SF 10's latest order per customer (2^57 together) that
  // took the reduce tasks 1.88 s of CPU against 1.52 with the partitions hashed and the columns compared
  const packed = rows > 0 ? packKeys(batches, partitionBy, orderBy, false) : null;
  if (packed !== null && (packed.part !== null || partitionBy.length === 0)) {
    // the thread's scratch (window/scratch.ts): read only until this task's sort packs its keys again
    const gid = packed.part ?? new Int32Array(rows);
    return { gid, nGroups: partitionBy.length ? packed.partSpan : 1, codes: packed.codes, cmp: null };
  }
  // the key columns as one batch (the other columns are not read: the first batch's stand in)
  const keyCols = new Set([...partitionBy, ...orderBy.map((k) => k.col)]);
  const b: Batch =
    batches.length === 1
      ? batches[0]
      : {
          length: rows,
          columns: batches[0].columns.map((c, i) =>
            keyCols.has(i)
              ? concatColumns(
                  c.type,
                  batches.map((x) => x.columns[i]),
                )
              : c,
          ),
        };
  const { gid, nGroups } = groupsOf(b, partitionBy);
  return { gid, nGroups, codes: null, cmp: orderBy.length === 0 ? () => 0 : keyOrder(b, orderBy) };
}

/**
 * A window task's input blocks pruned to the rows that may be among the first N of their partition, as one batch:
 * the keys packed from the blocks in place, only the columns `read` gathered (the others empty, not read). Null when
 * every row may be (the task reads its blocks as it would without a top-N).
 */
export function topNBlocks(
  schema: Schema,
  blocks: Batch[],
  partitionBy: number[],
  orderBy: SortKey[],
  top: TopN,
  read: Set<number>,
): Batch | null {
  const kept = keptRows(orderOf(blocks, partitionBy, orderBy), rowCount(blocks), top, 1);
  if (kept === null) return null;
  const parts = keptOf(blocks, kept.idx, kept.n, read);
  return {
    length: kept.n,
    columns: schema.map((f, c) => concatColumns(f.type, read.has(c) ? parts.map((b) => b.columns[c]) : [])),
  };
}
