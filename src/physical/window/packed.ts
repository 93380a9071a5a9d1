// A window task's sort keys packed into one number a row when they are integers (ints, dates, int64 and one-lane
// decimals whose values stay below 2^53): each key as its rank within the task's [min, max] (descending: from the
// top; nulls one more value where the key puts them), mixed-radix, the product of the ranges below 2^53. The
// numbers, as two 32-bit words, are radix sorted with the row numbers (16 bits a pass, passes over a digit every row
// shares skipped), and the partitions and peers read off the sorted numbers: no comparison of columns, no key
// gathered to find them. Pure; window/source.ts sorts by the columns (kernels/sort.ts) when a key does not pack.
import { type Batch, type Column, lanes } from '../../kernels/column.js';
import type { SortKey } from '../../kernels/sort.js';
import { type Shape, runs } from './bounds.js';

const TWO32 = 4294967296;
const LIMIT = 2 ** 53;

/** The packed keys of a task's rows: `hi`/`lo` words of each row's number (hi null when every number is below 2^32). */
export interface Packed {
  hi: Uint32Array | null;
  lo: Uint32Array;
  /** the order keys' part of a number: floor(number / orderSpan) is the row's partition */
  orderSpan: number;
}

/** Integer values of a column as numbers (a view when they already are), or null for a type or value that does not pack. */
function integers(c: Column): ArrayLike<number> | null {
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
    const x = integers(c);
    if (!x) return null;
    const valid = c.valid;
    let lo = Infinity,
      hi = -Infinity,
      nulls = false;
    for (let i = 0; i < n; i++) {
      if (valid !== null && valid[i] === 0) {
        nulls = true;
        continue;
      }
      const v = x[i];
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
    if (lo > hi) lo = hi = 0; // every row null
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
  const codes = new Float64Array(n);
  for (let k = 0; k < keys.length; k++) {
    const x = vals[k],
      span = spans[k],
      base = bases[k],
      sign = signs[k],
      nullCode = nullCodes[k],
      valid = b.columns[keys[k].col].valid;
    if (valid === null) for (let i = 0; i < n; i++) codes[i] = codes[i] * span + (base + sign * x[i]);
    else for (let i = 0; i < n; i++) codes[i] = codes[i] * span + (valid[i] === 0 ? nullCode : base + sign * x[i]);
  }
  const lo = new Uint32Array(n);
  if (total <= TWO32) {
    for (let i = 0; i < n; i++) lo[i] = codes[i];
    return { hi: null, lo, orderSpan };
  }
  const hi = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const h = Math.floor(codes[i] / TWO32);
    hi[i] = h;
    lo[i] = codes[i] - h * TWO32;
  }
  return { hi, lo, orderSpan };
}

/** Digit counts, reused by every sort on the thread. */
const COUNTS = new Int32Array(65536);

/**
 * The row order of the packed numbers (stable: ties keep the input order), and the numbers in that order: an LSD
 * radix sort of 16-bit digits that moves the words with the row numbers. `p`'s words are reused.
 */
export function sortPacked(p: Packed): { order: Int32Array; hi: Uint32Array | null; lo: Uint32Array } {
  const n = p.lo.length;
  let idx = new Int32Array(n),
    tmp = new Int32Array(n);
  for (let i = 0; i < n; i++) idx[i] = i;
  let lo: Uint32Array = p.lo,
    hi: Uint32Array | null = p.hi,
    loT: Uint32Array = new Uint32Array(n),
    hiT: Uint32Array | null = hi ? new Uint32Array(n) : null;
  const count = COUNTS;
  for (let pass = 0; pass < 4; pass++) {
    const word = pass < 2 ? lo : hi;
    if (word === null || n === 0) continue;
    const shift = pass % 2 ? 16 : 0;
    count.fill(0);
    for (let i = 0; i < n; i++) count[(word[i] >>> shift) & 0xffff]++;
    if (count[(word[0] >>> shift) & 0xffff] === n) continue; // one digit for every row: nothing moves
    let sum = 0;
    for (let d = 0; d < 65536; d++) {
      const c = count[d];
      count[d] = sum;
      sum += c;
    }
    if (hi === null) {
      for (let i = 0; i < n; i++) {
        const x = lo[i],
          at = count[(x >>> shift) & 0xffff]++;
        tmp[at] = idx[i];
        loT[at] = x;
      }
    } else {
      const h = hi,
        ht = hiT!;
      for (let i = 0; i < n; i++) {
        const x = word[i],
          at = count[(x >>> shift) & 0xffff]++;
        tmp[at] = idx[i];
        loT[at] = lo[i];
        ht[at] = h[i];
      }
      hiT = hi;
      hi = ht;
    }
    const t = idx;
    idx = tmp;
    tmp = t;
    const u = lo;
    lo = loT;
    loT = u;
  }
  return { order: idx, hi, lo };
}

/** The shape of rows sorted by their packed numbers: a partition is floor(number / orderSpan), peers equal numbers. */
export function shapeOfPacked(
  hi: Uint32Array | null,
  lo: Uint32Array,
  orderSpan: number,
  partitioned: boolean,
  ordered: boolean,
): Shape {
  const n = lo.length;
  const partStart = new Int32Array(n),
    partEnd = new Int32Array(n),
    peerStart = new Int32Array(n),
    peerEnd = new Int32Array(n);
  const cut = new Uint8Array(n);
  if (n > 0) cut[0] = 1;
  if (partitioned) {
    // sorted: a partition starts where the number reaches the next multiple of orderSpan
    let next = -1;
    for (let i = 0; i < n; i++) {
      const code = hi === null ? lo[i] : hi[i] * TWO32 + lo[i];
      if (code < next) continue;
      cut[i] = 1;
      next = (Math.floor(code / orderSpan) + 1) * orderSpan;
    }
  }
  runs(n, cut, partStart, partEnd);
  if (ordered) for (let i = 1; i < n; i++) if (lo[i] !== lo[i - 1] || (hi !== null && hi[i] !== hi[i - 1])) cut[i] = 1;
  runs(n, cut, peerStart, peerEnd);
  return { n, partStart, partEnd, peerStart, peerEnd };
}
