// The worker side of a window partition split by ranges (window/carry.ts): a piece keeps the rows of its range of
// (partition, order) keys, and reports a summary of its first and last window partition; the second pass adds
// what the pieces before it carry.
import {
  type Batch,
  type Column,
  type Schema,
  concatBatches,
  concatColumns,
  decimalAt,
  gather,
  gatherSelected,
  isNull,
  sliceBatch,
} from '../../kernels/column.js';
import { type SortKey, valueComparator } from '../../kernels/sort.js';
import type { BoundWindowFn } from '../../plan/bound.js';
import { WINDOW_FNS } from '../../plan/window-fns.js';
import { type Shape, frameOf, shapeOf } from './bounds.js';
import {
  afterOnly,
  mergeEarlier,
  needsNeighbours,
  needsTotal,
  summaryCount,
  summaryFn,
  summaryG,
  summaryR,
  toEnd,
} from './carry.js';
import { windowColumn } from './functions.js';

/** A total order of rows on the keys alone (ties: 0). */
export function keyOrder(b: Batch, keys: SortKey[]): (i: number, j: number) => number {
  const cmps = keys.map((k) => {
    const c = b.columns[k.col];
    const cmp = valueComparator(c);
    const valid = c.valid;
    const dir = k.desc ? -1 : 1,
      nullDir = k.nullsFirst ? -1 : 1;
    return (i: number, j: number) => {
      if (valid !== null && (valid[i] === 0 || valid[j] === 0))
        return valid[i] === valid[j] ? 0 : valid[i] === 0 ? nullDir : -nullDir;
      return dir * cmp(i, j);
    };
  });
  return (i, j) => {
    for (const c of cmps) {
      const d = c(i, j);
      if (d !== 0) return d;
    }
    return 0;
  };
}

/**
 * The rows of `blocks` cut into the ranges of the sorted boundary rows (range k: above boundary k-1, not above
 * boundary k; rows with equal keys in one range), one batch per range (empty ones too). With `deal` (a window
 * without orderBy, whose rows of one partition may go to any piece), a row equal to boundaries lo..end-1 goes in turn
 * to ranges lo..end, as a sort deals a hot value (physical/sort/range.ts).
 */
export function cutByBounds(
  schema: Schema,
  blocks: Batch[],
  bounds: Batch,
  keys: SortKey[],
  deal?: { next: number },
): Batch[] {
  const B = bounds.length;
  const parts: Batch[][] = Array.from({ length: B + 1 }, () => []);
  for (const rows of blocks) {
    const n = rows.length;
    if (n === 0) continue;
    const cmp = keyOrder(concatBatches(schema, [rows, bounds]), keys);
    const id = new Int32Array(n),
      count = new Int32Array(B + 1);
    for (let i = 0; i < n; i++) {
      let lo = 0,
        hi = B; // the first boundary not below the row
      while (lo < hi) {
        const m = (lo + hi) >> 1;
        if (cmp(i, n + m) > 0) lo = m + 1;
        else hi = m;
      }
      if (deal && lo < B && cmp(i, n + lo) === 0) lo = dealt(cmp, i, n, lo, B, deal);
      id[i] = lo;
      count[lo]++;
    }
    for (let k = 0; k <= B; k++) {
      if (count[k] === 0) continue;
      const pick = new Int32Array(count[k]);
      let at = 0;
      for (let i = 0; i < n; i++) if (id[i] === k) pick[at++] = i;
      parts[k].push({ length: at, columns: rows.columns.map((c) => gatherSelected(c, pick, at)) });
    }
  }
  return parts.map((bs) => concatBatches(schema, bs));
}

/** A row equal to boundary lo: its turn among ranges lo..end, end the first boundary above it. */
function dealt(
  cmp: (i: number, j: number) => number,
  i: number,
  n: number,
  lo: number,
  B: number,
  deal: { next: number },
): number {
  let end = lo,
    hi = B;
  while (end < hi) {
    const m = (end + hi) >> 1;
    if (cmp(i, n + m) >= 0) end = m + 1;
    else hi = m;
  }
  return lo + (deal.next++ % (end - lo + 1));
}

/**
 * avg's running sum (exact: int64 for integers, decimal(38, s) for decimals, float64 for floats) and count of
 * values over its frame, each row: what a piece of a split partition carries for it.
 */
function avgParts(f: BoundWindowFn, b: Batch, s: Shape, orderBy: SortKey[]): { sum: Column; count: Column } {
  const t = b.columns[f.col].type;
  const type =
    t.id === 'decimal'
      ? { id: 'decimal' as const, precision: 38, scale: t.scale }
      : t.id === 'float32' || t.id === 'float64'
        ? { id: 'float64' as const }
        : { id: 'int64' as const };
  return {
    sum: windowColumn({ ...f, fn: 'sum', type }, b, s, orderBy),
    count: windowColumn({ ...f, fn: 'count', type: { id: 'int64' } }, b, s, orderBy),
  };
}

/** A sum column's value at row i as a number (0 when null). */
function sumAt(c: Column, i: number): number {
  if (isNull(c, i)) return 0;
  if (c.type.id === 'decimal') return Number(decimalAt(c, i)) / 10 ** c.type.scale!;
  return Number((c.values as Float64Array | BigInt64Array)[i]);
}

/**
 * The summary rows of a piece's sorted output (`w`: the input's width): its first and last window partition; avg's
 * column holds its running sum, and a count column per function follows the functions' (carry.ts summaryCount).
 */
export function summaryOf(
  out: Batch,
  w: number,
  partitionBy: number[],
  orderBy: SortKey[],
  fns: BoundWindowFn[],
  s: Shape,
): Batch {
  const n = out.length;
  const ends = Int32Array.of(s.partEnd[0] - 1, n - 1);
  // a frame from the current row to the end: its value at the partition's first row in the piece (carry.ts toEnd)
  const starts = Int32Array.of(0, s.partStart[n - 1]);
  const groups = (ps: number, pe: number) => {
    let g = 0;
    const peerStart = s.peerStart;
    for (let i = ps; i < pe; i++) if (peerStart[i] === i) g++;
    return g;
  };
  const R = Float64Array.of(s.partEnd[0], n - s.partStart[n - 1]);
  const G = Float64Array.of(groups(0, s.partEnd[0]), groups(s.partStart[n - 1], n));
  const f64 = (v: Float64Array) => ({ type: { id: 'float64' as const }, length: 2, values: v, valid: null });
  const cols = [...partitionBy.map((c) => gather(out.columns[c], ends)), f64(R), f64(G)];
  const counts: Column[] = [];
  fns.forEach((f, k) => {
    if (f.fn !== 'avg') {
      cols.push(gather(out.columns[w + k], afterOnly(f) ? starts : ends));
      counts.push(f64(new Float64Array(2)));
      return;
    }
    const { sum, count } = avgParts(f, out, s, orderBy);
    const at = afterOnly(f) ? starts : ends;
    cols.push(gather(sum, at));
    const c = count.values as BigInt64Array;
    counts.push(f64(Float64Array.of(Number(c[at[0]]), Number(c[at[1]]))));
  });
  return { length: 2, columns: [...cols, ...counts] };
}

/**
 * A piece's output with what its first window partition carries from before (`c`, one summary row) added; avg from
 * its running sum and count recomputed over the piece's rows, plus the carried ones.
 */
export function withCarry(
  out: Batch,
  w: number,
  partitionBy: number[],
  orderBy: SortKey[],
  fns: BoundWindowFn[],
  upTo: number,
  c: Batch,
): Batch {
  const keys = partitionBy.length;
  const R = (c.columns[summaryR(keys)].values as Float64Array)[0],
    G = (c.columns[summaryG(keys)].values as Float64Array)[0];
  const cols = out.columns.slice();
  let shape: Shape | null = null;
  fns.forEach((f, k) => {
    if (afterOnly(f)) return;
    if (f.fn === 'avg') {
      shape ??= shapeOf(out, partitionBy, orderBy);
      const { sum, count } = avgParts(f, out, shape, orderBy);
      const S = sumAt(c.columns[summaryFn(keys, k)], 0),
        C = (c.columns[summaryCount(keys, fns.length, k)].values as Float64Array)[0];
      cols[w + k] = avgCarried(out.columns[w + k], sum, count, upTo, S, C);
      return;
    }
    const arg = f.col >= 0 ? out.columns[f.col] : null;
    if (f.fn === 'sum' && arg?.type.id.startsWith('float') && f.frame.start === null && f.frame.end === 0) {
      shape ??= shapeOf(out, partitionBy, orderBy);
      cols[w + k] = floatCarried(f, out, shape, orderBy, upTo, c.columns[summaryFn(keys, k)], out.columns[w + k]);
      return;
    }
    cols[w + k] = mergeEarlier(
      f,
      c.columns[summaryFn(keys, k)],
      out.columns[w + k],
      upTo,
      f.fn === 'dense_rank' ? G : R,
    );
  });
  return { length: out.length, columns: cols };
}

/**
 * A float running sum over rows [0, upTo) summed again from the sum the pieces before carry, value by value, left to
 * right (as one task sums it: adding the piece's own running sum to the carried one would round otherwise).
 */
function floatCarried(
  f: BoundWindowFn,
  out: Batch,
  s: Shape,
  orderBy: SortKey[],
  upTo: number,
  carried: Column,
  own: Column,
): Column {
  if (isNull(carried, 0)) return own;
  const { end } = frameOf(s, f.frame, out, orderBy);
  const arg = out.columns[f.col];
  const v = arg.values as Float32Array | Float64Array,
    valid = arg.valid;
  const res = (own.values as Float64Array).slice();
  const ok = own.valid ? own.valid.slice() : null;
  let sum = (carried.values as Float64Array)[0],
    e = 0;
  for (let i = 0; i < upTo; i++) {
    for (; e < end[i]; e++) if (valid === null || valid[e] === 1) sum += v[e];
    res[i] = sum;
    if (ok) ok[i] = 1;
  }
  return { ...own, values: res, valid: ok };
}

/** avg over rows [0, upTo) with the sum S and count C of the values before the piece; the other rows as they were. */
function avgCarried(own: Column, sum: Column, count: Column, upTo: number, S: number, C: number): Column {
  if (C === 0) return own;
  const n = own.length;
  const v = (own.values as Float64Array).slice();
  const valid = own.valid ? own.valid.slice() : null;
  const cnt = count.values as BigInt64Array;
  for (let i = 0; i < upTo; i++) {
    v[i] = (S + sumAt(sum, i)) / (C + Number(cnt[i]));
    if (valid) valid[i] = 1;
  }
  return { type: own.type, length: n, values: v, valid };
}

/**
 * ntile, percent_rank and cume_dist of a piece recomputed as if its first window partition had `before` rows ahead
 * of it and `totals.first` in all, and its last one (when another) `totals.last` from its first row.
 */
export function withTotals(
  out: Batch,
  w: number,
  partitionBy: number[],
  orderBy: SortKey[],
  fns: BoundWindowFn[],
  upTo: number,
  before: number,
  totals: { first: number; last: number },
): Batch {
  const s = shapeOf(out, partitionBy, orderBy);
  const n = out.length;
  const partStart = s.partStart.slice(),
    partEnd = s.partEnd.slice();
  for (let i = 0; i < upTo; i++) {
    partStart[i] = -before;
    partEnd[i] = totals.first - before;
  }
  const last = n > 0 ? s.partStart[n - 1] : 0;
  if (last >= upTo)
    for (let i = last; i < n; i++) {
      partStart[i] = last;
      partEnd[i] = last + totals.last;
    }
  const shape: Shape = { n: s.n, partStart, partEnd, peerStart: s.peerStart, peerEnd: s.peerEnd };
  const cols = out.columns.slice();
  fns.forEach((f, k) => {
    if (needsTotal(f)) cols[w + k] = windowColumn(f, out, shape, orderBy);
  });
  return { length: n, columns: cols };
}

/**
 * A piece's last partition's rows ([from, n)) with what the pieces after it carry (`c`, one summary row) for the
 * frames to the partition's end: a count or sum added, min or max compared, last_value replaced.
 */
export function withAfter(
  out: Batch,
  w: number,
  src: { partitionBy: number[]; orderBy: SortKey[]; fns: BoundWindowFn[] },
  from: number,
  c: Batch,
): Batch {
  const n = out.length;
  const keys = src.partitionBy.length,
    fns = src.fns;
  const cols = out.columns.slice();
  let shape: Shape | null = null;
  fns.forEach((f, k) => {
    if (!toEnd(f)) return;
    const own = out.columns[w + k];
    if (f.fn === 'avg') {
      // avg from the current row to the end: the piece's sum and count from each row, plus those after the piece
      shape ??= shapeOf(out, src.partitionBy, src.orderBy);
      const { sum, count } = avgParts(f, out, shape, src.orderBy);
      const S = sumAt(c.columns[summaryFn(keys, k)], 0),
        C = (c.columns[summaryCount(keys, fns.length, k)].values as Float64Array)[0];
      cols[w + k] = avgAfter(own, sum, count, from, S, C);
      return;
    }
    const tail = sliceBatch({ length: n, columns: [own] }, from, n).columns[0];
    const as = f.fn === 'last_value' ? { ...f, fn: 'first_value' as const } : f;
    const merged = mergeEarlier(as, c.columns[summaryFn(keys, k)], tail, n - from, 0);
    const head = sliceBatch({ length: n, columns: [own] }, 0, from).columns[0];
    cols[w + k] = concatColumns(own.type, [head, merged]);
  });
  return { length: n, columns: cols };
}

/** avg over rows [from, n) with the sum S and count C of the values after the piece; the other rows as they were. */
function avgAfter(own: Column, sum: Column, count: Column, from: number, S: number, C: number): Column {
  if (C === 0) return own;
  const v = (own.values as Float64Array).slice();
  const valid = own.valid ? own.valid.slice() : null;
  const cnt = count.values as BigInt64Array;
  for (let i = from; i < own.length; i++) {
    v[i] = (S + sumAt(sum, i)) / (C + Number(cnt[i]));
    if (valid) valid[i] = 1;
  }
  return { type: own.type, length: own.length, values: v, valid };
}

/**
 * A piece of a window without orderBy (skew/window.ts unsplittableWhole): the rows of its first partition
 * ([0, upTo)) and of its last one ([lastFrom, n)) take each aggregate's value combined over every piece the partition
 * spans (a summary row, carry.ts wholeTotals; avg from its sum and count); the ranks are the same in every piece.
 */
export function withWhole(
  out: Batch,
  w: number,
  keys: number,
  fns: BoundWindowFn[],
  upTo: number,
  whole: { first: Batch | null; last: Batch | null; lastFrom: number },
): Batch {
  const n = out.length;
  const cols = out.columns.slice();
  const totals = [whole.first, whole.last].filter((t): t is Batch => t !== null);
  // the combined values are appended after the piece's own: the first partition's at n, the last one's after it
  const firstAt = whole.first ? n : -1,
    lastAt = whole.last ? n + totals.length - 1 : -1;
  const idx = new Int32Array(n);
  for (let i = 0; i < n; i++)
    idx[i] = i < upTo && firstAt >= 0 ? firstAt : i >= whole.lastFrom && lastAt >= 0 ? lastAt : i;
  fns.forEach((f, k) => {
    if (WINDOW_FNS[f.fn].kind !== 'aggregate') return;
    const own = out.columns[w + k];
    const value = (t: Batch): Column => {
      const c = t.columns[summaryFn(keys, k)];
      if (f.fn !== 'avg') return c;
      const C = (t.columns[summaryCount(keys, fns.length, k)].values as Float64Array)[0];
      return {
        type: own.type,
        length: 1,
        values: Float64Array.of(C === 0 ? 0 : sumAt(c, 0) / C),
        valid: C === 0 ? Uint8Array.of(0) : null,
      };
    };
    cols[w + k] = gather(concatColumns(own.type, [own, ...totals.map(value)]), idx);
  });
  return { length: n, columns: cols };
}

/**
 * lag/lead and functions over bounded ROWS frames of a piece recomputed over its rows with its neighbours' around
 * them (already in order: not sorted again, so every piece sees one order of the rows), kept for its own rows.
 */
export function withNeighbours(
  out: Batch,
  w: number,
  src: { schema: Schema; partitionBy: number[]; orderBy: SortKey[]; fns: BoundWindowFn[] },
  near: { before: Batch; after: Batch },
): Batch {
  const inputSchema = src.schema.slice(0, w);
  const own: Batch = { length: out.length, columns: out.columns.slice(0, w) };
  const ext = concatBatches(inputSchema, [near.before, own, near.after]);
  const shape = shapeOf(ext, src.partitionBy, src.orderBy);
  const keep = new Int32Array(out.length);
  for (let i = 0; i < out.length; i++) keep[i] = near.before.length + i;
  const cols = out.columns.slice();
  src.fns.forEach((f, k) => {
    if (needsNeighbours(f)) cols[w + k] = gather(windowColumn(f, ext, shape, src.orderBy), keep);
  });
  return { length: out.length, columns: cols };
}
