// A window task's sort keys packed into one number a row when they are integers (ints, dates, int64 and one-lane
// decimals whose values stay below 2^53): each key as its rank within the task's [min, max] (descending: from the
// top; nulls one more value where the key puts them), mixed-radix, the product of the ranges below 2^53. The
// rows are grouped by partition by counting, each partition's rows sorted by the number (not at all when they
// arrive in order; by insertion when few; else radix), and the partitions and peers read off the sorted numbers: no
// comparison of columns, no key gathered to find them. Pure; window/source.ts sorts by the columns (kernels/sort.ts) when a key does not pack.
import { type Batch, type Column, lanes } from '../../kernels/column.js';
import type { SortKey } from '../../kernels/sort.js';
import { CutShape, type Shape } from './bounds.js';
import { scratchF64, scratchI32, scratchZeroU8 } from './scratch.js';

const TWO32 = 4294967296;
const LIMIT = 2 ** 53;

/** The packed keys of a task's rows: a number a row, below 2^53, whose order is the keys'. */
export interface Packed {
  codes: Float64Array;
  /** the order keys' part of a number: floor(number / orderSpan) is the row's partition, below partSpan */
  orderSpan: number;
  partSpan: number;
  /** each row's partition (floor(number / orderSpan)), when the partitions are few enough to group by counting */
  part: Int32Array | null;
}

/**
 * A column's values as numbers when each is an integer below 2^53 in magnitude (integers, dates, decimals of one
 * lane: their scaled integers; a view when they already are numbers, 64-bit ones read as 32-bit words without a
 * bigint a row), else null: a packed sort key, and a window sum that stays exact in a double (functions.ts).
 */
export function exactIntegers(c: Column): ArrayLike<number> | null {
  const v = c.values,
    n = c.length;
  if (c.type.id === 'float32' || c.type.id === 'float64' || c.type.id === 'utf8' || c.type.id === 'bool') return null;
  if (v instanceof BigInt64Array) {
    if (lanes(c.type) === 2) return null;
    const w = new Int32Array(v.buffer, v.byteOffset, 2 * n);
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const hi = w[2 * i + 1];
      if (hi >= 0x200000 || hi < -0x200000) return null;
      out[i] = hi * TWO32 + (w[2 * i] >>> 0);
    }
    return out;
  }
  if (
    v instanceof Int32Array ||
    v instanceof Int16Array ||
    v instanceof Int8Array ||
    v instanceof Uint32Array ||
    v instanceof Uint16Array ||
    v instanceof Uint8Array
  )
    return v.length === n ? v : v.subarray(0, n);
  return null;
}

/** Whether a task's rows are grouped by partition by counting (else the whole number is sorted at once). */
const countable = (partSpan: number, n: number) => partSpan > 1 && partSpan <= Math.max(65536, 2 * n);

/** The sort keys (partition keys ascending, then the order keys) of `b` packed, or null when they do not pack. */
export function packKeys(b: Batch, partitionBy: number[], orderBy: SortKey[]): Packed | null {
  const n = b.length;
  const keys = [...partitionBy.map((col) => ({ col, desc: false, nullsFirst: false })), ...orderBy];
  const vals: ArrayLike<number>[] = [];
  // per key: its range, and a row's rank as base + sign * value (a null's: nullCode)
  const spans: number[] = [],
    bases: number[] = [],
    signs: number[] = [],
    nullCodes: number[] = [];
  let total = 1,
    orderSpan = 1;
  for (let k = 0; k < keys.length; k++) {
    const c = b.columns[keys[k].col];
    const x = exactIntegers(c);
    if (!x) return null;
    const valid = c.valid;
    const [lo0, hi0, nulls] = valid === null ? minMax(x, n) : minMaxValid(x, valid, n);
    const [lo, hi] = lo0 > hi0 ? [0, 0] : [lo0, hi0]; // every row null
    const span = hi - lo + 1 + (nulls ? 1 : 0);
    total *= span;
    if (total >= LIMIT) return null;
    if (k >= partitionBy.length) orderSpan *= span;
    const { desc, nullsFirst } = keys[k];
    vals.push(x);
    spans.push(span);
    // ascending: x - lo; descending: hi - x; one more past a null placed first
    bases.push((desc ? hi : -lo) + (nulls && nullsFirst ? 1 : 0));
    signs.push(desc ? -1 : 1);
    nullCodes.push(nullsFirst ? 0 : span - 1);
  }
  const partSpan = total / orderSpan;
  const codes = scratchF64('codes', n);
  // the partition keys' number is written out as each row's partition on the way, when it will be counted
  const part = partitionBy.length > 0 && countable(partSpan, n) ? scratchI32('part', n) : null;
  for (let k = 0; k < keys.length; k++) {
    const x = vals[k],
      span = spans[k],
      base = bases[k],
      sign = signs[k],
      nullCode = nullCodes[k],
      valid = b.columns[keys[k].col].valid;
    // the first key's rank written, the others' added below it (codes holds a reused slot's old values)
    if (k === 0 && valid === null) {
      if (sign === 1) for (let i = 0; i < n; i++) codes[i] = base + x[i];
      else for (let i = 0; i < n; i++) codes[i] = base - x[i];
    } else if (k === 0) for (let i = 0; i < n; i++) codes[i] = valid![i] === 0 ? nullCode : base + sign * x[i];
    else if (valid === null) for (let i = 0; i < n; i++) codes[i] = codes[i] * span + (base + sign * x[i]);
    else for (let i = 0; i < n; i++) codes[i] = codes[i] * span + (valid[i] === 0 ? nullCode : base + sign * x[i]);
    if (part !== null && k === partitionBy.length - 1) for (let i = 0; i < n; i++) part[i] = codes[i];
  }
  return { codes, orderSpan, partSpan, part };
}

/** The least and greatest of x[0, n) (Infinity, -Infinity when n is 0), and no nulls. */
function minMax(x: ArrayLike<number>, n: number): [number, number, boolean] {
  let lo = Infinity,
    hi = -Infinity;
  for (let i = 0; i < n; i++) {
    const v = x[i];
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  return [lo, hi, false];
}

/** The least and greatest of the valid x[0, n), and whether any is null. */
function minMaxValid(x: ArrayLike<number>, valid: Uint8Array, n: number): [number, number, boolean] {
  let lo = Infinity,
    hi = -Infinity,
    nulls = false;
  for (let i = 0; i < n; i++) {
    if (valid[i] === 0) {
      nulls = true;
      continue;
    }
    const v = x[i];
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  return [lo, hi, nulls];
}

/** Segments up to this long are sorted by insertion. */
const INSERTION_ROWS = 48;

/**
 * The row order of the packed numbers (stable: ties keep the input order), and the numbers in that order. Rows are
 * first grouped by partition (a counting sort on floor(number / orderSpan), when the partitions are few enough to
 * count), then each partition's rows sorted unless they already are (rows often arrive in their order keys' order,
 * as a file written in it is read): by insertion when few, else by an LSD radix sort of the number.
 */
export function sortPacked(p: Packed): { order: Int32Array; sorted: Float64Array } {
  const { codes, partSpan, part } = p;
  const n = codes.length;
  const order = scratchI32('order', n);
  const sorted = scratchF64('sorted', n);
  if (part === null) {
    for (let i = 0; i < n; i++) order[i] = i;
    sorted.set(codes);
    sortSegment(order, sorted, 0, n);
    return { order, sorted };
  }
  const count = new Int32Array(partSpan + 1);
  for (let i = 0; i < n; i++) count[part[i] + 1]++;
  for (let q = 0; q < partSpan; q++) count[q + 1] += count[q];
  const next = count.slice(0, partSpan);
  for (let i = 0; i < n; i++) {
    const at = next[part[i]]++;
    order[at] = i;
    sorted[at] = codes[i];
  }
  for (let q = 0; q < partSpan; q++)
    if (count[q + 1] - count[q] > 1) sortSegment(order, sorted, count[q], count[q + 1]);
  return { order, sorted };
}

/** Rows [a, b) of `sorted` (and `order` with them) sorted, stably. */
function sortSegment(order: Int32Array, sorted: Float64Array, a: number, b: number): void {
  let inOrder = true;
  for (let i = a + 1; i < b; i++)
    if (sorted[i] < sorted[i - 1]) {
      inOrder = false;
      break;
    }
  if (inOrder) return;
  if (b - a <= INSERTION_ROWS) {
    for (let i = a + 1; i < b; i++) {
      const x = sorted[i],
        o = order[i];
      let j = i - 1;
      for (; j >= a && sorted[j] > x; j--) {
        sorted[j + 1] = sorted[j];
        order[j + 1] = order[j];
      }
      sorted[j + 1] = x;
      order[j + 1] = o;
    }
    return;
  }
  radixSegment(order, sorted, a, b);
}

/** Digit counts of the 16-bit passes, reused by every sort on the thread. */
const COUNTS16 = new Int32Array(65536);
const COUNTS8 = new Int32Array(256);

/** An LSD radix sort of rows [a, b) by their numbers less the segment's least: 8-bit digits for a short one, else 16. */
function radixSegment(order: Int32Array, sorted: Float64Array, a: number, b: number): void {
  const m = b - a;
  let min = Infinity,
    max = -Infinity;
  for (let i = a; i < b; i++) {
    const x = sorted[i];
    if (x < min) min = x;
    if (x > max) max = x;
  }
  const bits = Math.ceil(Math.log2(max - min + 1));
  const digit = m < 4096 ? 8 : 16;
  const mask = (1 << digit) - 1;
  const count = digit === 16 ? COUNTS16 : COUNTS8;
  let key = scratchF64('radixKey', m),
    idx = scratchI32('radixIdx', m),
    keyT = scratchF64('radixKeyT', m),
    idxT = scratchI32('radixIdxT', m);
  for (let i = 0; i < m; i++) {
    key[i] = sorted[a + i] - min;
    idx[i] = order[a + i];
  }
  for (let shift = 0; shift < bits; shift += digit) {
    const scale = 2 ** shift;
    count.fill(0);
    for (let i = 0; i < m; i++) count[(key[i] / scale) & mask]++;
    let sum = 0;
    for (let d = 0; d <= mask; d++) {
      const c = count[d];
      count[d] = sum;
      sum += c;
    }
    for (let i = 0; i < m; i++) {
      const x = key[i],
        at = count[(x / scale) & mask]++;
      keyT[at] = x;
      idxT[at] = idx[i];
    }
    [key, keyT] = [keyT, key];
    [idx, idxT] = [idxT, idx];
  }
  for (let i = 0; i < m; i++) {
    sorted[a + i] = key[i] + min;
    order[a + i] = idx[i];
  }
}

/** The shape of rows sorted by their packed numbers: a partition is floor(number / orderSpan), peers equal numbers. */
export function shapeOfPacked(sorted: Float64Array, orderSpan: number, partitioned: boolean, ordered: boolean): Shape {
  const n = sorted.length;
  const cut = scratchZeroU8('partCut', n);
  if (n > 0) cut[0] = 1;
  if (partitioned) {
    // sorted: a partition starts where the number reaches the next multiple of orderSpan
    let next = -1;
    for (let i = 0; i < n; i++) {
      const code = sorted[i];
      if (code < next) continue;
      cut[i] = 1;
      next = (Math.floor(code / orderSpan) + 1) * orderSpan;
    }
  }
  const peers = scratchZeroU8('peerCut', n);
  peers.set(cut);
  if (ordered) for (let i = 1; i < n; i++) if (sorted[i] !== sorted[i - 1]) peers[i] = 1;
  return new CutShape(n, cut, peers, true);
}
