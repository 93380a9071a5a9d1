// Group ids by value, without hashing: one or two 32-bit integer columns without nulls (keys, dates, short codes)
// whose values lie in a narrow range. A group's slot is its value's offset in the range; with two columns, the
// narrower column's values are first numbered by their offsets (a flag's three codes), so the slots are the wider
// column's range times the other's distinct values. The slots live in one table a thread, kept across calls and
// cleared through the groups' first rows (no fresh array whose pages fault a call). Groups are numbered in order of
// first appearance, as the hash table numbers them (agg/groups.ts).
import type { Column } from '../kernels/column.js';
import { int32s } from '../kernels/table.js';
import { type Groups, fillUnselected } from './groups.js';

/** At most this many slots, or twice the rows grouped when more: past it, hashing costs less than a sparse table. */
const MIN_SLOTS = 1 << 16;
const MAX_SLOTS = 1 << 22;

/** The thread's slot table (-1: empty) and the narrower column's numbering table (at most MIN_SLOTS), grown as needed. */
let slotTable: Int32Array = new Int32Array(0);
let codeTable: Int32Array = new Int32Array(0);

function tableOf(t: Int32Array, n: number): Int32Array {
  if (t.length >= n) return t;
  return new Int32Array(Math.max(n, 2 * t.length)).fill(-1);
}

/**
 * Group ids of `rows` (the first m; null: every row) by `cols` when they take the dense path, else null.
 * `gid`: where the ids go (every row of a selection not in it gets nGroups).
 */
export function denseGroups(
  cols: Column[],
  gid: Int32Array | undefined,
  shared: boolean,
  rows: Int32Array | null,
  m: number,
): Groups | null {
  if (cols.length === 0 || cols.length > 2 || m === 0) return null;
  for (const c of cols) if (!(c.values instanceof Int32Array) || c.valid !== null) return null;
  const limit = Math.min(MAX_SLOTS, Math.max(MIN_SLOTS, 2 * m));
  const a = cols[0].values as Int32Array;
  spanOf(a, rows, m);
  const minA = lo,
    rangeA = hi - lo + 1;
  if (rangeA > limit) return null;
  let b: Int32Array | null = null,
    minB = 0,
    rangeB = 1;
  if (cols.length === 2) {
    b = cols[1].values as Int32Array;
    spanOf(b, rows, m);
    minB = lo;
    rangeB = hi - lo + 1;
    if (rangeB > limit) return null;
  }
  // the ids and first rows made once the path is sure (two columns may still decline below)
  let first = new Int32Array(0);
  const ids = (): Int32Array => {
    first = new Int32Array(Math.min(m, limit));
    const g = gid ?? int32s(cols[0].length, shared);
    if (rows !== null) g.fill(-1);
    return (gid = g);
  };
  let nGroups: number;
  if (b === null) {
    slotTable = tableOf(slotTable, rangeA);
    const g = ids();
    nGroups = oneColumn(a, minA, slotTable, rows, m, g, first);
    clearOne(a, minA, slotTable, first, nGroups);
  } else {
    // the wider column's offsets times the narrower one's values numbered (its codes in order of first sight); when
    // that numbers too many values (a flag's codes may span a wider range than a key), the other way round
    const ranges = [rangeA, rangeB],
      mins = [minA, minB],
      vals = [a, b as Int32Array];
    const order = rangeB <= rangeA ? [1, 0] : [0, 1];
    let done = -1;
    for (const k of order) {
      const w = 1 - k;
      if (ranges[k] > MIN_SLOTS) continue;
      codeTable = tableOf(codeTable, ranges[k]);
      const distinct = numberValues(vals[k], mins[k], codeTable, rows, m);
      if (ranges[w] * distinct <= limit) {
        slotTable = tableOf(slotTable, ranges[w] * distinct);
        const args = [vals[w], vals[k], mins[w], mins[k], distinct, codeTable, slotTable] as const;
        const g = ids();
        done = twoColumns(...args, rows, m, g, first);
        clearTwo(...args, first, done);
      }
      clearCodes(codeTable, ranges[k]);
      if (done >= 0) break;
    }
    if (done < 0) return null;
    nGroups = done;
  }
  if (rows !== null) fillUnselected(gid!, nGroups);
  return { gid: gid!, nGroups, first: first.subarray(0, nGroups) };
}

// Each loop a function of its own with nothing after it but a return (see groupIdsOfRows in agg/joinagg.ts).

let lo = 0,
  hi = 0;
/** The least and greatest of the rows' values, into lo and hi. */
function spanOf(v: Int32Array, rows: Int32Array | null, m: number): void {
  let a = 2147483647,
    z = -2147483648;
  if (rows === null)
    for (let i = 0; i < m; i++) {
      const x = v[i];
      if (x < a) a = x;
      if (x > z) z = x;
    }
  else
    for (let k = 0; k < m; k++) {
      const x = v[rows[k]];
      if (x < a) a = x;
      if (x > z) z = x;
    }
  lo = a;
  hi = z;
}

function oneColumn(
  v: Int32Array,
  min: number,
  slots: Int32Array,
  rows: Int32Array | null,
  m: number,
  gid: Int32Array,
  first: Int32Array,
): number {
  let g = 0;
  for (let k = 0; k < m; k++) {
    const i = rows !== null ? rows[k] : k;
    const s = v[i] - min;
    let id = slots[s];
    if (id < 0) {
      id = slots[s] = g;
      first[g++] = i;
    }
    gid[i] = id;
  }
  return g;
}

function clearOne(v: Int32Array, min: number, slots: Int32Array, first: Int32Array, nGroups: number): void {
  for (let g = 0; g < nGroups; g++) slots[v[first[g]] - min] = -1;
}

/** The narrower column's values numbered 0, 1, ... in order of first sight (codes[value - min]); their count. */
function numberValues(v: Int32Array, min: number, codes: Int32Array, rows: Int32Array | null, m: number): number {
  let d = 0;
  for (let k = 0; k < m; k++) {
    const s = v[rows !== null ? rows[k] : k] - min;
    if (codes[s] < 0) codes[s] = d++;
  }
  return d;
}

function clearCodes(codes: Int32Array, range: number): void {
  codes.fill(-1, 0, range);
}

function twoColumns(
  wide: Int32Array,
  narrow: Int32Array,
  minW: number,
  minN: number,
  distinct: number,
  codes: Int32Array,
  slots: Int32Array,
  rows: Int32Array | null,
  m: number,
  gid: Int32Array,
  first: Int32Array,
): number {
  let g = 0;
  for (let k = 0; k < m; k++) {
    const i = rows !== null ? rows[k] : k;
    const s = (wide[i] - minW) * distinct + codes[narrow[i] - minN];
    let id = slots[s];
    if (id < 0) {
      id = slots[s] = g;
      first[g++] = i;
    }
    gid[i] = id;
  }
  return g;
}

function clearTwo(
  wide: Int32Array,
  narrow: Int32Array,
  minW: number,
  minN: number,
  distinct: number,
  codes: Int32Array,
  slots: Int32Array,
  first: Int32Array,
  nGroups: number,
): void {
  for (let g = 0; g < nGroups; g++) {
    const i = first[g];
    slots[(wide[i] - minW) * distinct + codes[narrow[i] - minN]] = -1;
  }
}
