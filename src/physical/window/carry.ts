// A hot window partition split by ranges of its (partition, order) keys (skew/window.ts): what a piece carries to the
// pieces after it. A piece reports, for its first and its last window partition, a summary row: the partition keys,
// its rows (R), its groups of peers (G) and each function's value at the partition's last row in the piece (a
// running count, sum, min or max; first_value's value; avg's running sum, its count in a column after the functions'). The coordinator folds them in piece order into what each
// piece's first partition carries from before it; the piece's second pass adds it to that partition's rows.
// Peers never straddle two pieces (rows with equal keys fall into one range), so the ranks are exact.
import { WINDOW_FNS } from '../../plan/window-fns.js';
import { type Batch, type Column, concatColumns, decimalAt, gather, isNull } from '../../kernels/column.js';
import { decimalColumn } from '../../kernels/decimal.js';
import { valueComparator } from '../../kernels/sort.js';
import type { BoundWindowFn } from '../../plan/bound.js';

/** Columns of a summary row: the partition keys, then R, G, then one per function. */
export const summaryR = (keys: number) => keys;
export const summaryG = (keys: number) => keys + 1;
export const summaryFn = (keys: number, k: number) => keys + 2 + k;
/** avg's running count of values (0 for the other functions), after the functions' columns */
export const summaryCount = (keys: number, fns: number, k: number) => keys + 2 + fns + k;

const float = (v: number): Column => ({
  type: { id: 'float64' },
  length: 1,
  values: Float64Array.of(v),
  valid: null,
});
const numberAt = (c: Column, i: number) => (c.values as Float64Array)[i];

/**
 * Column `b` with rows [0, upTo) merged with the one earlier value of `a` (a's row 0): a running count or sum
 * added, min or max compared, first_value replaced; `shift`: the rows or groups before, added to a rank.
 */
export function mergeEarlier(f: BoundWindowFn, a: Column, b: Column, upTo: number, shift: number): Column {
  const n = b.length;
  switch (f.fn) {
    case 'row_number':
    case 'rank':
    case 'dense_rank':
      return addInt(b, upTo, BigInt(shift));
    case 'count':
      return addInt(b, upTo, (a.values as BigInt64Array)[0]);
    case 'first_value': {
      const idx = new Int32Array(n);
      for (let i = 0; i < n; i++) idx[i] = i < upTo ? n : i;
      return gather(concatColumns(b.type, [b, a]), idx);
    }
    case 'min':
    case 'max': {
      if (isNull(a, 0)) return b;
      const both = concatColumns(b.type, [b, a]);
      const cmp = valueComparator(both);
      const idx = new Int32Array(n);
      for (let i = 0; i < n; i++) {
        const better = isNull(b, i) || (f.fn === 'min' ? cmp(n, i) < 0 : cmp(n, i) > 0);
        idx[i] = i < upTo && better ? n : i;
      }
      return gather(both, idx);
    }
    default:
      return addSum(b, a, upTo);
  }
}

function addInt(b: Column, upTo: number, x: bigint): Column {
  const v = (b.values as BigInt64Array).slice();
  for (let i = 0; i < upTo; i++) v[i] += x;
  return { ...b, values: v };
}

/** A running sum plus the one before it (null-aware: null plus x is x). */
function addSum(b: Column, a: Column, upTo: number): Column {
  if (isNull(a, 0)) return b;
  const n = b.length;
  const valid = b.valid ? b.valid.slice() : null;
  if (valid) valid.fill(1, 0, upTo);
  if (b.type.id === 'float64') {
    const v = (b.values as Float64Array).slice();
    const x = numberAt(a, 0);
    for (let i = 0; i < upTo; i++) v[i] = b.valid && b.valid[i] === 0 ? x : v[i] + x;
    return { ...b, values: v, valid };
  }
  if (b.type.id === 'decimal') {
    const x = decimalAt(a, 0);
    const vals: (bigint | null)[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const own = isNull(b, i) ? null : decimalAt(b, i);
      vals[i] = i < upTo ? (own ?? 0n) + x : own;
    }
    return decimalColumn(vals, b.type, 'window sum');
  }
  const v = (b.values as BigInt64Array).slice();
  const x = (a.values as BigInt64Array)[0];
  for (let i = 0; i < upTo; i++) v[i] = b.valid && b.valid[i] === 0 ? x : v[i] + x;
  return { ...b, values: v, valid };
}

/** The summary row at `row` of `s` as a one-row batch. */
const rowOf = (s: Batch, row: number): Batch => ({
  length: 1,
  columns: s.columns.map((c) => gather(c, Int32Array.of(row))),
});

/**
 * A frame to the partition's end (from the current row or the partition's start, ROWS or RANGE: peers never straddle
 * two pieces) of count, sum, min, max or last_value: what the pieces after a piece carry is added to its last
 * partition's rows.
 */
export const toEnd = (f: BoundWindowFn) =>
  f.frame.end === null &&
  (f.frame.start === 0 || (f.frame.start === null && WINDOW_FNS[f.fn].toEnd === 'start or current')) &&
  WINDOW_FNS[f.fn].toEnd !== null;

/** A function that takes nothing from the pieces before (a frame from the current row to the end, last_value). */
export const afterOnly = (f: BoundWindowFn) => toEnd(f) && (f.frame.start === 0 || f.fn === 'last_value');

/** `open` (the partition's rows before) followed by `next` (its rows in the next piece): their summary. */
function fold(fns: BoundWindowFn[], keys: number, open: Batch, next: Batch): Batch {
  const cols = next.columns.slice();
  const R = numberAt(open.columns[summaryR(keys)], 0),
    G = numberAt(open.columns[summaryG(keys)], 0);
  cols[summaryR(keys)] = float(R + numberAt(next.columns[summaryR(keys)], 0));
  cols[summaryG(keys)] = float(G + numberAt(next.columns[summaryG(keys)], 0));
  fns.forEach((f, k) => {
    const at = summaryFn(keys, k);
    // a frame from the current row to the end takes nothing from before: the later piece's value stands
    if (afterOnly(f)) return;
    cols[at] = mergeEarlier(f, open.columns[at], next.columns[at], 1, 0);
    const c = summaryCount(keys, fns.length, k);
    cols[c] = float(numberAt(open.columns[c], 0) + numberAt(next.columns[c], 0));
  });
  return { length: 1, columns: cols };
}

/** Whether two one-row batches hold equal partition keys (the first `keys` columns; nulls equal). */
function sameKeys(a: Batch, b: Batch, keys: number): boolean {
  for (let c = 0; c < keys; c++) {
    const x = a.columns[c],
      y = b.columns[c];
    if (isNull(x, 0) || isNull(y, 0)) {
      if (isNull(x, 0) !== isNull(y, 0)) return false;
      continue;
    }
    if (valueComparator(concatColumns(x.type, [x, y]))(0, 1) !== 0) return false;
  }
  return true;
}

/** What each piece's first partition carries from the pieces before it (null: nothing), from their summaries. */
export function carries(
  fns: BoundWindowFn[],
  keys: number,
  summaries: (Batch | null)[],
  rows: number[],
): (Batch | null)[] {
  let open: Batch | null = null;
  return summaries.map((s, k) => {
    if (!s || rows[k] === 0) return null;
    const first = rowOf(s, 0),
      last = rowOf(s, 1);
    const carry = open && sameKeys(open, first, keys) ? open : null;
    const whole = numberAt(s.columns[summaryR(keys)], 0) === rows[k];
    open = whole && carry ? fold(fns, keys, carry, last) : last;
    return carry;
  });
}

/**
 * A window without orderBy (skew/window.ts unsplittableWhole): each piece's first and last partition's summary row
 * folded over every piece the partition spans (null for an empty piece). Its rows may be dealt over several pieces in
 * any order: only a piece's first and last partition can span others, as with ranges of ordered keys.
 */
export function wholeTotals(
  fns: BoundWindowFn[],
  keys: number,
  summaries: (Batch | null)[],
  rows: number[],
): { first: Batch | null; last: Batch | null }[] {
  const seg: Batch[] = [];
  const add = (row: Batch) => {
    const prev = seg[seg.length - 1];
    if (prev && sameKeys(prev, row, keys)) seg[seg.length - 1] = fold(fns, keys, prev, row);
    else seg.push(row);
    return seg.length - 1;
  };
  const at = summaries.map((s, k): [number, number] => {
    if (!s || rows[k] === 0) return [-1, -1];
    const i = add(rowOf(s, 0));
    return [i, numberAt(s.columns[summaryR(keys)], 0) === rows[k] ? i : add(rowOf(s, 1))];
  });
  return at.map(([i, j]) => ({ first: i < 0 ? null : seg[i], last: j < 0 ? null : seg[j] }));
}

/**
 * `own` (a piece's first partition) followed by `later` (the same partition's rows in the pieces after it): their
 * summary for the frames to the partition's end (a count or sum added, min or max compared, the later last_value).
 */
function foldLater(fns: BoundWindowFn[], keys: number, own: Batch, later: Batch): Batch {
  const cols = own.columns.slice();
  fns.forEach((f, k) => {
    if (!toEnd(f)) return;
    const at = summaryFn(keys, k);
    cols[at] = f.fn === 'last_value' ? later.columns[at] : mergeEarlier(f, later.columns[at], own.columns[at], 1, 0);
    // avg's count of values (0 for the other functions)
    const c = summaryCount(keys, fns.length, k);
    cols[c] = float(numberAt(own.columns[c], 0) + numberAt(later.columns[c], 0));
  });
  return { length: 1, columns: cols };
}

/**
 * The mirror of `carries`: what each piece's last partition takes from the pieces after it (null: nothing), for the
 * frames to the partition's end (toEnd), folded from the last piece back.
 */
export function carriesAfter(
  fns: BoundWindowFn[],
  keys: number,
  summaries: (Batch | null)[],
  rows: number[],
): (Batch | null)[] {
  const out: (Batch | null)[] = summaries.map(() => null);
  let open: Batch | null = null;
  for (let k = summaries.length - 1; k >= 0; k--) {
    const s = summaries[k];
    if (!s || rows[k] === 0) continue;
    const first = rowOf(s, 0),
      last = rowOf(s, 1);
    const carry: Batch | null = open && sameKeys(open, last, keys) ? open : null;
    out[k] = carry;
    const whole = numberAt(s.columns[summaryR(keys)], 0) === rows[k];
    open = whole && carry ? foldLater(fns, keys, first, carry) : first;
  }
  return out;
}

/** The functions that need their partition's total rows (a split piece's rows are not all of them). */
export const needsTotal = (f: BoundWindowFn) => f.fn === 'ntile' || f.fn === 'percent_rank' || f.fn === 'cume_dist';

/**
 * The total rows of each piece's first and last window partition (0 for an empty piece): the rows the summaries
 * count, added over the pieces a partition spans.
 */
export function partitionTotals(
  keys: number,
  summaries: (Batch | null)[],
  rows: number[],
): { first: number; last: number }[] {
  const seg: { key: Batch; r: number }[] = [];
  const add = (key: Batch, r: number) => {
    const prev = seg[seg.length - 1];
    if (prev && sameKeys(prev.key, key, keys)) prev.r += r;
    else seg.push({ key, r });
    return seg.length - 1;
  };
  const at = summaries.map((s, k): [number, number] => {
    if (!s || rows[k] === 0) return [-1, -1];
    const R = s.columns[summaryR(keys)];
    const i = add(rowOf(s, 0), numberAt(R, 0));
    return [i, numberAt(R, 0) === rows[k] ? i : add(rowOf(s, 1), numberAt(R, 1))];
  });
  return at.map(([i, j]) => ({ first: i < 0 ? 0 : seg[i].r, last: j < 0 ? 0 : seg[j].r }));
}

/** Whether a function is recomputed over a piece's rows with its neighbours' (lag/lead, bounded ROWS frames). */
export const needsNeighbours = (f: BoundWindowFn) =>
  f.fn === 'lag' ||
  f.fn === 'lead' ||
  (f.frame.unit === 'rows' && f.frame.start !== null && f.frame.end !== null && WINDOW_FNS[f.fn].framed);

/** How many rows before and after a row the functions read (lag/lead offsets, ROWS frames' bounds). */
export function reach(fns: BoundWindowFn[]): { before: number; after: number } {
  let before = 0,
    after = 0;
  for (const f of fns) {
    if (!needsNeighbours(f)) continue;
    if (f.fn === 'lag') before = Math.max(before, f.n);
    else if (f.fn === 'lead') after = Math.max(after, f.n);
    else {
      before = Math.max(before, -f.frame.start!, -f.frame.end!);
      after = Math.max(after, f.frame.start!, f.frame.end!);
    }
  }
  return { before, after };
}
