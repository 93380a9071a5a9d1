// Aggregates without GROUP BY: one group, so no group ids. The grouped loops over an array of zeros made every row's
// add wait on the previous row's store into the one group's slot, and count(*) counted rows one at a time; here
// count(*) is the (selected) row count, count(x) the valid bytes counted, sums and min/max accumulate in local
// variables. The answers are the grouped path's, bit for bit: the same states (agg/partial.ts), integer and decimal
// sums exact with the same overflow errors (wordSumColumn, kernels/decimal.ts), float sums added in row order, ties
// of min/max keeping the first row. Types without a loop here (strings, bools, 128-bit decimals' min/max, uint64)
// take the grouped kernels over one group.
import { type Batch, type Column, allocValues, gather, isInteger, lanes, sliceColumn } from '../kernels/column.js';
import { MAX_PRECISION, decimalSumOne, decimalSumValue, decimalType, oneWords } from '../kernels/decimal.js';
import type { Selection } from '../expr/select.js';
import type { BoundAggregate } from '../plan/bound.js';
import {
  countColumn,
  float64Column,
  floatSums,
  intSumColumn,
  intSumFloats,
  minMax,
  wordSumColumn,
} from './aggregate.js';
import { type AggState, stateOf, unknownState } from './functions.js';
import type { Groups } from './groups.js';

const TWO32 = 4294967296;
const CHUNK = 1 << 20; // rows between carries: 2^20 x 2^32 stays below 2^53

/** The rows that count: a selection's (ascending), or all n of the batch (idx null). */
interface Rows {
  idx: Int32Array | null;
  n: number;
}

const rowsOf = (b: Batch, sel?: Selection): Rows => (sel ? { idx: sel.idx, n: sel.n } : { idx: null, n: b.length });

/** Whether every aggregate has a state other than count_distinct's (those the loops here serve). */
export const ungroupable = (aggs: BoundAggregate[]): boolean =>
  aggs.every((a) => {
    const st = stateOf(a);
    return st !== null && st.kind !== 'distinct';
  });

function mergeableState(a: BoundAggregate): Exclude<AggState, { kind: 'distinct' }> {
  const st = stateOf(a);
  if (st === null || st.kind === 'distinct') throw new Error(`internal: ${a.fn} has no mergeable partial state`);
  return st;
}

/**
 * The partial states (agg/partial.ts partialAggregate's columns, one row) of the rows `sel` (all when absent). A
 * column's sum state serves each sum and avg of it; counts of columns without nulls are the row count.
 */
export function ungroupedStates(b: Batch, aggs: BoundAggregate[], sel?: Selection): Batch {
  const rows = rowsOf(b, sel);
  const cols: Column[] = [];
  const sums = new Map<number, Column[]>();
  for (const a of aggs) {
    const st = mergeableState(a);
    const c = a.col < 0 ? null : b.columns[a.col];
    switch (st.kind) {
      case 'count':
        cols.push(countColumn(Float64Array.of(countOf(c, rows))));
        break;
      case 'extreme':
        cols.push(extremeOf(c!, rows, st.max));
        break;
      case 'sum': {
        let sc = sums.get(a.col);
        if (!sc) {
          const cnt = countOf(c, rows);
          const what = `partial sum of "${a.as}"`;
          const sum = isInteger(c!.type)
            ? intSum(c!, rows, cnt, what)
            : c!.type.id === 'decimal'
              ? decimalSumOne(c!, rows.idx, rows.n, cnt, decimalType(MAX_PRECISION, c!.type.scale!), what)
              : float64Column(Float64Array.of(floatSum(c!, rows)), Float64Array.of(cnt));
          sums.set(a.col, (sc = [sum, countColumn(Float64Array.of(cnt))]));
        }
        cols.push(...sc);
        break;
      }
      default:
        unknownState(st);
    }
  }
  return { length: 1, columns: cols };
}

/**
 * The final row of an aggregate without GROUP BY over a batch of its rows (functions.ts aggregateBatch's answer);
 * `ungroupable(aggs)` must hold.
 */
export function ungroupedAggregate(b: Batch, aggs: BoundAggregate[]): Batch {
  const rows = rowsOf(b);
  const cols = aggs.map((a): Column => {
    const st = mergeableState(a);
    const c = a.col < 0 ? null : b.columns[a.col];
    if (st.kind === 'count') return countColumn(Float64Array.of(countOf(c, rows)));
    if (st.kind === 'extreme') return extremeOf(c!, rows, st.max);
    if (st.kind !== 'sum') unknownState(st);
    const cnt = countOf(c, rows);
    if (c!.type.id === 'decimal') {
      if (st.avg) return decimalAverage(c!, rows, cnt);
      return decimalSumOne(c!, null, rows.n, cnt, decimalType(MAX_PRECISION, c!.type.scale!), `sum of "${a.as}"`);
    }
    if (isInteger(c!.type)) {
      if (!st.avg) return intSum(c!, rows, cnt, `sum of "${a.as}"`);
      return average(intSumNumber(c!, rows), cnt);
    }
    const s = floatSum(c!, rows);
    return st.avg ? average(s, cnt) : float64Column(Float64Array.of(s), Float64Array.of(cnt));
  });
  return { length: 1, columns: cols };
}

/**
 * Partial states (`b`, partial.ts's schema without group columns, any number of rows) merged and finalized: the
 * answer of partial.ts finalAggregate with no group column. `ungroupable(aggs)` must hold.
 */
export function ungroupedFinal(b: Batch, aggs: BoundAggregate[]): Batch {
  const rows = rowsOf(b);
  let s = 0;
  const cols = aggs.map((a): Column => {
    const st = mergeableState(a);
    if (st.kind === 'count') return countColumn(Float64Array.of(countSum(b.columns[s++], rows)));
    if (st.kind === 'extreme') return extremeOf(b.columns[s++], rows, st.max);
    if (st.kind !== 'sum') unknownState(st);
    const sumCol = b.columns[s++],
      cnt = countSum(b.columns[s++], rows);
    if (sumCol.type.id === 'decimal') {
      if (st.avg) return decimalAverage(sumCol, rows, cnt);
      const type = decimalType(MAX_PRECISION, sumCol.type.scale!);
      return decimalSumOne(sumCol, null, rows.n, cnt, type, `sum of "${a.as}"`);
    }
    if (sumCol.type.id === 'int64') {
      if (!st.avg) return intSum(sumCol, rows, countOf(sumCol, rows), `sum of "${a.as}"`);
      return average(intSumNumber(sumCol, rows), cnt);
    }
    const x = floatSum(sumCol, rows);
    return st.avg ? average(x, cnt) : float64Column(Float64Array.of(x), Float64Array.of(cnt));
  });
  return { length: 1, columns: cols };
}

/** avg's row: sum / cnt, null when cnt is 0 (the grouped path's float64Column). */
const average = (sum: number, cnt: number): Column =>
  float64Column(Float64Array.of(cnt > 0 ? sum / cnt : 0), Float64Array.of(cnt));

/** avg of a decimal column: its exact sum divided once by count x 10^scale (aggregate.ts decimalAvg). */
function decimalAverage(c: Column, rows: Rows, cnt: number): Column {
  if (cnt === 0) return float64Column(new Float64Array(1), Float64Array.of(0));
  const sum = decimalSumValue(c, rows.idx, rows.n);
  return float64Column(Float64Array.of(Number(sum) / (10 ** c.type.scale! * cnt)), Float64Array.of(cnt));
}

/** The one group's ids (a selection's other rows in group 1), for the grouped kernels' fallback. */
function oneGroup(rows: Rows, length: number): Groups {
  const gid = new Int32Array(length);
  if (rows.idx !== null) {
    gid.fill(1);
    for (let k = 0; k < rows.n; k++) gid[rows.idx[k]] = 0;
  }
  return { gid, nGroups: rows.idx !== null ? 2 : 1, first: new Int32Array(1) };
}

/** A grouped kernel's column over oneGroup: its first row. */
const firstRow = (c: Column): Column => (c.length === 1 ? c : sliceColumn(c, 0, 1));

/** count(*) (c null) or count(c): the rows, or those where c is not null. */
function countOf(c: Column | null, rows: Rows): number {
  if (c === null || c.valid === null) return rows.n;
  return validCount(c.valid, rows.idx, rows.n);
}

function validCount(valid: Uint8Array, idx: Int32Array | null, n: number): number {
  let k = 0;
  if (idx === null) for (let i = 0; i < n; i++) k += valid[i] !== 0 ? 1 : 0;
  else for (let j = 0; j < n; j++) k += valid[idx[j]] !== 0 ? 1 : 0;
  return k;
}

/** The sum of an int64 column of counts (states: each below 2^53, their sum too), as floatSums reads them. */
function countSum(c: Column, rows: Rows): number {
  const [a0, a1] = oneWords(c, rows.idx, rows.n);
  return a1[0] * TWO32 + a0[0];
}

/** intWords' result: the carried halves of an exact sum. */
const SUMS = new Float64Array(2);

/** Exact sum of an integer column as its carried 32-bit halves into SUMS[0] (in [0, 2^32)) and SUMS[1]. */
function intWords(c: Column, rows: Rows): void {
  const v = c.values;
  if (v instanceof BigInt64Array || v instanceof BigUint64Array) {
    // two words a row, as a one-lane decimal's (kernels/decimal.ts)
    const [a0, a1] = oneWords(c, rows.idx, rows.n);
    SUMS[0] = a0[0];
    SUMS[1] = a1[0];
    return;
  }
  let lo = 0,
    hi = 0;
  for (let start = 0; start < rows.n; start += CHUNK) {
    lo += smallSum(v as SmallInts, c.valid, rows.idx, start, Math.min(rows.n, start + CHUNK));
    const carry = Math.floor(lo / TWO32);
    lo -= carry * TWO32;
    hi += carry;
  }
  SUMS[0] = lo;
  SUMS[1] = hi;
}

/** An integer column's exact sum as an int64 row (intSumColumn's: null when cnt is 0, an overflow naming `what`). */
function intSum(c: Column, rows: Rows, cnt: number, what: string): Column {
  if (c.type.id === 'uint64') return firstRow(intSumColumn(c, oneGroup(rows, c.length), what));
  intWords(c, rows);
  return wordSumColumn(Float64Array.of(SUMS[0]), Float64Array.of(SUMS[1]), Float64Array.of(cnt), what);
}

/** The float64 nearest an integer column's exact sum (intSumFloats' one rounding). */
function intSumNumber(c: Column, rows: Rows): number {
  if (c.type.id === 'uint64') return intSumFloats(c, oneGroup(rows, c.length))[0];
  intWords(c, rows);
  return SUMS[0] + SUMS[1] * TWO32;
}

type SmallInts = Int32Array | Uint32Array | Int16Array | Uint16Array | Int8Array | Uint8Array;

/** Rows start..end (positions in idx, or rows) of integers of up to 32 bits summed: at most 2^20, exact. */
function smallSum(v: SmallInts, valid: Uint8Array | null, idx: Int32Array | null, start: number, end: number): number {
  let s = 0,
    t = 0;
  if (idx === null && valid === null) {
    let i = start;
    for (; i + 1 < end; i += 2) {
      s += v[i];
      t += v[i + 1];
    }
    if (i < end) s += v[i];
  } else
    for (let k = start; k < end; k++) {
      const i = idx === null ? k : idx[k];
      if (valid === null || valid[i] !== 0) s += v[i];
    }
  return s + t;
}

/** A float column's sum, added in row order (as floatSums adds a group's rows: the same rounding). */
function floatSum(c: Column, rows: Rows): number {
  const v = c.values;
  if (v instanceof Float64Array) return floatSum64(v, c.valid, rows.idx, rows.n);
  if (v instanceof Float32Array) return floatSum32(v, c.valid, rows.idx, rows.n);
  return floatSums(c, oneGroup(rows, c.length))[0];
}

function floatSum64(v: Float64Array, valid: Uint8Array | null, idx: Int32Array | null, n: number): number {
  let s = 0;
  if (idx === null && valid === null) for (let i = 0; i < n; i++) s += v[i];
  else
    for (let k = 0; k < n; k++) {
      const i = idx === null ? k : idx[k];
      if (valid === null || valid[i] !== 0) s += v[i];
    }
  return s;
}

function floatSum32(v: Float32Array, valid: Uint8Array | null, idx: Int32Array | null, n: number): number {
  let s = 0;
  for (let k = 0; k < n; k++) {
    const i = idx === null ? k : idx[k];
    if (valid === null || valid[i] !== 0) s += v[i];
  }
  return s;
}

/**
 * min or max of a column's rows as one row (minMax's answer over one group: null when every row is null or there is
 * none; of equal values the first row's).
 */
function extremeOf(c: Column, rows: Rows, max: boolean): Column {
  const v = c.values;
  let best: number;
  if (v instanceof Float64Array || v instanceof Float32Array) best = bestFloat(v, c.valid, rows.idx, rows.n, max);
  else if (v instanceof BigInt64Array) {
    if (lanes(c.type) !== 1) return firstRow(minMax(c, oneGroup(rows, c.length), max));
    best = best64(new Int32Array(v.buffer, v.byteOffset, 2 * c.length), c.valid, rows.idx, rows.n, max);
  } else if (
    v instanceof Int32Array ||
    v instanceof Uint32Array ||
    v instanceof Int16Array ||
    v instanceof Uint16Array ||
    v instanceof Int8Array ||
    (v instanceof Uint8Array && c.type.id !== 'utf8' && c.type.id !== 'bool')
  )
    best = bestInt(v, c.valid, rows.idx, rows.n, max);
  else return firstRow(minMax(c, oneGroup(rows, c.length), max));
  if (best < 0) return { type: c.type, length: 1, values: allocValues(c.type, 1), valid: new Uint8Array(1) };
  return { ...gather(c, Int32Array.of(best), 1), valid: null };
}

/** The row of the smallest (largest) value not null, the first of equals; -1 when none. */
function bestInt(v: SmallInts, valid: Uint8Array | null, idx: Int32Array | null, n: number, max: boolean): number {
  if (idx === null && valid === null) return max ? maxInt(v, n) : minInt(v, n);
  let best = -1,
    b = 0;
  for (let k = 0; k < n; k++) {
    const i = idx === null ? k : idx[k];
    if (valid !== null && valid[i] === 0) continue;
    const x = v[i];
    if (best < 0 || (max ? x > b : x < b)) {
      best = i;
      b = x;
    }
  }
  return best;
}

// bestInt's loops over every row, max and min apart: half the time of the loop testing for a selection, nulls and
// the direction a row.

function maxInt(v: SmallInts, n: number): number {
  let best = -1,
    b = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < n; i++) {
    const x = v[i];
    if (x > b) {
      best = i;
      b = x;
    }
  }
  return best;
}

function minInt(v: SmallInts, n: number): number {
  let best = -1,
    b = Number.POSITIVE_INFINITY;
  for (let i = 0; i < n; i++) {
    const x = v[i];
    if (x < b) {
      best = i;
      b = x;
    }
  }
  return best;
}

/** bestInt of floats in DuckDB's order (NaN above every number: floatOrder). */
function bestFloat(
  v: Float64Array | Float32Array,
  valid: Uint8Array | null,
  idx: Int32Array | null,
  n: number,
  max: boolean,
): number {
  if (idx === null && valid === null) return max ? maxFloat(v, n) : minFloat(v, n);
  let best = -1,
    b = 0;
  for (let k = 0; k < n; k++) {
    const i = idx === null ? k : idx[k];
    if (valid !== null && valid[i] === 0) continue;
    const x = v[i];
    if (best < 0 || (max ? x > b || (x !== x && b === b) : x < b || (b !== b && x === x))) {
      best = i;
      b = x;
    }
  }
  return best;
}

/** The first NaN (above every number), else the first of the largest; -1 when n is 0. */
function maxFloat(v: Float64Array | Float32Array, n: number): number {
  let best = -1,
    b = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < n; i++) {
    const x = v[i];
    if (x > b) {
      best = i;
      b = x;
    } else if (x !== x) return i;
  }
  return best < 0 && n > 0 ? 0 : best; // every value -Infinity
}

/** The first of the smallest numbers; where every value is +Infinity or NaN, the first +Infinity, else row 0. */
function minFloat(v: Float64Array | Float32Array, n: number): number {
  let best = -1,
    b = Number.POSITIVE_INFINITY;
  for (let i = 0; i < n; i++) {
    const x = v[i];
    if (x < b) {
      best = i;
      b = x;
    }
  }
  if (best >= 0 || n === 0) return best;
  for (let i = 0; i < n; i++) if (v[i] === b) return i;
  return 0;
}

/** bestInt of signed 64-bit values as their words (the upper signed, the lower unsigned): no bigint a row. */
function best64(w: Int32Array, valid: Uint8Array | null, idx: Int32Array | null, n: number, max: boolean): number {
  if (idx === null && valid === null) return max ? max64(w, n) : min64(w, n);
  let best = -1,
    bh = 0,
    bl = 0;
  for (let k = 0; k < n; k++) {
    const i = idx === null ? k : idx[k];
    if (valid !== null && valid[i] === 0) continue;
    const h = w[2 * i + 1],
      l = w[2 * i] >>> 0;
    if (best < 0 || (max ? h > bh || (h === bh && l > bl) : h < bh || (h === bh && l < bl))) {
      best = i;
      bh = h;
      bl = l;
    }
  }
  return best;
}

function max64(w: Int32Array, n: number): number {
  let best = -1,
    bh = -2147483649, // below every upper word
    bl = 0;
  for (let i = 0; i < n; i++) {
    const h = w[2 * i + 1];
    if (h > bh || (h === bh && w[2 * i] >>> 0 > bl)) {
      best = i;
      bh = h;
      bl = w[2 * i] >>> 0;
    }
  }
  return best;
}

function min64(w: Int32Array, n: number): number {
  let best = -1,
    bh = 2147483648, // above every upper word
    bl = 0;
  for (let i = 0; i < n; i++) {
    const h = w[2 * i + 1];
    if (h < bh || (h === bh && w[2 * i] >>> 0 < bl)) {
      best = i;
      bh = h;
      bl = w[2 * i] >>> 0;
    }
  }
  return best;
}
