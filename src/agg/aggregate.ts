// Hash aggregation of one batch: group ids, then one accumulator per
// aggregate over typed arrays. Integer sums are exact: 32-bit halves are
// summed in float64 and carried, so no value is ever rounded.
import { ExecutionError } from '../errors.js';
import { type Column, type Values, allocValues, gather } from '../kernels/column.js';
import { MAX_PRECISION, decimalSums, decimalSumsColumn, decimalType } from '../kernels/decimal.js';
import { buildKeys, normFor } from '../kernels/keys.js';
import { valueComparator } from '../kernels/sort.js';
import { type Groups, groupRows } from './groups.js';
import { groupsOf, pairOf } from './group-ids.js';

export { groupsOf };

const TWO32 = 4294967296;
const CHUNK = 1 << 20; // rows between carries: 2^20 x 2^32 stays below 2^53

export function countValid(c: Column | null, g: Groups, n: number): Float64Array {
  const v = c?.valid ?? null;
  if (v === null) {
    // the rows of each group: the same for count(*) and every column without nulls of one aggregation, counted once
    // (ROLLUP's reduce by (l_suppkey, l_returnflag): count(*) and sum(l_quantity), a pass over the rows each)
    const known = sizes.get(g);
    if (known?.n === n) return known.cnt;
  }
  const cnt = new Float64Array(g.nGroups);
  for (let i = 0; i < n; i++) if (v === null || v[i]) cnt[g.gid[i]]++;
  if (v === null) sizes.set(g, { n, cnt });
  return cnt;
}

/** Rows a group of `Groups` over n rows (countValid of a column without nulls); callers only read them. */
const sizes = new WeakMap<Groups, { n: number; cnt: Float64Array }>();

/**
 * Exact integer sums per group as 32-bit halves: the sum is hi * 2^32 + lo,
 * lo carried into [0, 2^32), hi an integer in float64.
 */
function intSumWords(c: Column, g: Groups): { lo: Float64Array; hi: Float64Array } {
  const lo = new Float64Array(g.nGroups),
    hi = new Float64Array(g.nGroups);
  const n = c.length,
    gid = g.gid,
    valid = c.valid;
  const wide = c.type.id === 'int64' || c.type.id === 'uint64';
  const unsignedHi = c.type.id === 'uint64';
  const vals = c.values as any;
  const w = wide ? new Int32Array(vals.buffer, vals.byteOffset, 2 * n) : null;
  for (let start = 0; start < n; start += CHUNK) {
    const end = Math.min(n, start + CHUNK);
    for (let i = start; i < end; i++) {
      if (valid !== null && !valid[i]) continue;
      const k = gid[i];
      if (w) {
        lo[k] += w[2 * i] >>> 0;
        hi[k] += unsignedHi ? w[2 * i + 1] >>> 0 : w[2 * i + 1];
      } else {
        lo[k] += vals[i];
      }
    }
    for (let k = 0; k < g.nGroups; k++) {
      const carry = Math.floor(lo[k] / TWO32);
      lo[k] -= carry * TWO32;
      hi[k] += carry;
    }
  }
  return { lo, hi };
}

/**
 * Sums kept as 32-bit halves (see intSumWords) as an int64 column, null where
 * a group counted no value; a sum beyond int64 is an error naming `what`.
 * Written word by word: no bigint per group.
 */
export function wordSumColumn(lo: Float64Array, hi: Float64Array, cnt: Float64Array, what: string): Column {
  const n = lo.length;
  const out = new BigInt64Array(n),
    w = new Int32Array(out.buffer);
  let valid: Uint8Array | null = null;
  for (let k = 0; k < n; k++) {
    if (cnt[k] === 0) {
      valid ??= new Uint8Array(n).fill(1);
      valid[k] = 0;
      continue;
    }
    const h = hi[k];
    if (h < -2147483648 || h > 2147483647)
      throw new ExecutionError(`${what} overflows a 64-bit integer (${BigInt(h) * 4294967296n + BigInt(lo[k])})`);
    w[2 * k] = lo[k];
    w[2 * k + 1] = h;
  }
  return { type: { id: 'int64' }, length: n, values: out, valid };
}

/**
 * An exact integer sum column per group (see intSumWords); `cnt`: the column's non-null values per group, when known.
 */
export function intSumColumn(c: Column, g: Groups, what: string, cnt = countValid(c, g, c.length)): Column {
  const { lo, hi } = intSumWords(c, g);
  return wordSumColumn(lo, hi, cnt, what);
}

/**
 * The float64 nearest each group's exact integer sum (hi * 2^32 is exact: one rounding); 0 for a group with no value.
 */
export function intSumFloats(c: Column, g: Groups): Float64Array {
  const { lo, hi } = intSumWords(c, g);
  for (let k = 0; k < lo.length; k++) lo[k] += hi[k] * TWO32;
  return lo;
}

/**
 * Sums per group in float64: of a float column, or of an int64 column of
 * counts (partial states; below 2^53, read as two 32-bit words).
 */
export function floatSums(c: Column, g: Groups): Float64Array {
  const s = new Float64Array(g.nGroups);
  const v = c.values,
    valid = c.valid,
    gid = g.gid,
    n = c.length;
  if (v instanceof BigInt64Array || v instanceof BigUint64Array) {
    const w = new Int32Array(v.buffer, v.byteOffset, 2 * n);
    for (let i = 0; i < n; i++) if (valid === null || valid[i]) s[gid[i]] += w[2 * i + 1] * TWO32 + (w[2 * i] >>> 0);
  } else if (v instanceof Float64Array) {
    for (let i = 0; i < n; i++) if (valid === null || valid[i]) s[gid[i]] += v[i];
  } else {
    const x = v as Exclude<Values, BigInt64Array | BigUint64Array>;
    for (let i = 0; i < n; i++) if (valid === null || valid[i]) s[gid[i]] += x[i];
  }
  return s;
}

const INT64_MIN = -(2n ** 63n),
  INT64_MAX = 2n ** 63n - 1n;

export function int64Column(vals: (bigint | null)[], what: string): Column {
  const n = vals.length;
  const out = new BigInt64Array(n);
  let valid: Uint8Array | null = null;
  for (let k = 0; k < n; k++) {
    const x = vals[k];
    if (x === null) {
      valid ??= new Uint8Array(n).fill(1);
      valid[k] = 0;
      continue;
    }
    if (x < INT64_MIN || x > INT64_MAX) throw new ExecutionError(`${what} overflows a 64-bit integer (${x})`);
    out[k] = x;
  }
  return { type: { id: 'int64' }, length: n, values: out, valid };
}

/** Counts (integers below 2^53) as an int64 column, written as 32-bit words. */
export function countColumn(cnt: Float64Array): Column {
  const out = new BigInt64Array(cnt.length);
  countWords(cnt, new Int32Array(out.buffer));
  return { type: { id: 'int64' }, length: cnt.length, values: out, valid: null };
}

function countWords(cnt: Float64Array, w: Int32Array): void {
  for (let k = 0; k < cnt.length; k++) {
    const c = cnt[k];
    w[2 * k] = c % TWO32;
    w[2 * k + 1] = Math.floor(c / TWO32);
  }
}

export function float64Column(vals: Float64Array, nonNull: Float64Array): Column {
  let valid: Uint8Array | null = null;
  for (let k = 0; k < vals.length; k++)
    if (nonNull[k] === 0) {
      valid ??= new Uint8Array(vals.length).fill(1);
      valid[k] = 0;
    }
  return { type: { id: 'float64' }, length: vals.length, values: vals, valid };
}

export function minMax(c: Column, g: Groups, max: boolean): Column {
  const valid = c.valid,
    gid = g.gid;
  // integers of up to 32 bits and dates compared as numbers in a loop of their own (q21's min and max
  // of l_suppkey over 6M rows spent 110 ms a thread calling the general comparator a row)
  if (
    c.values instanceof Int32Array ||
    c.values instanceof Uint32Array ||
    c.values instanceof Int16Array ||
    c.values instanceof Uint16Array ||
    c.values instanceof Int8Array ||
    (c.values instanceof Uint8Array && c.type.id !== 'utf8' && c.type.id !== 'bool')
  ) {
    // each group's best value so far (NaN: none yet), one random read a row where the row's index took two
    const bv = new Float64Array(g.nGroups).fill(NaN);
    bestOfNumbers(c.values, valid, gid, bv, max, c.length);
    const values = allocValues(c.type, g.nGroups) as SmallInts,
      found = new Uint8Array(g.nGroups);
    const all = numbersOf(bv, values, found);
    return { type: c.type, length: g.nGroups, values, valid: all ? null : found };
  }
  const best = new Int32Array(g.nGroups).fill(-1);
  const cmp = valueComparator(c);
  for (let i = 0; i < c.length; i++) {
    if (valid !== null && !valid[i]) continue;
    const k = gid[i],
      b = best[k];
    if (b < 0) {
      best[k] = i;
      continue;
    }
    const d = cmp(i, b);
    if (max ? d > 0 : d < 0) best[k] = i;
  }
  return gather(c, best, g.nGroups);
}

type SmallInts = Int32Array | Uint32Array | Int16Array | Uint16Array | Int8Array | Uint8Array;

/** The best values into `values` (0 for a group without one), found[k] whether group k had one; whether all had. */
function numbersOf(bv: Float64Array, values: SmallInts, found: Uint8Array): boolean {
  let all = true;
  for (let k = 0; k < bv.length; k++) {
    const x = bv[k];
    if (x === x) {
      values[k] = x;
      found[k] = 1;
    } else all = false;
  }
  return all;
}

/** minMax's loop over numbers: each group's smallest (largest) value into bv (NaN until the group has one). */
function bestOfNumbers(
  v: ArrayLike<number>,
  valid: Uint8Array | null,
  gid: Int32Array,
  bv: Float64Array,
  max: boolean,
  n: number,
): void {
  for (let i = 0; i < n; i++) {
    if (valid !== null && !valid[i]) continue;
    const k = gid[i],
      x = v[i],
      b = bv[k];
    if (b !== b || (max ? x > b : x < b)) bv[k] = x;
  }
}

export function countDistinct(c: Column, g: Groups): Column {
  // Distinct (group, value) pairs: group again on the pair, skipping nulls.
  const gidCol: Column = { type: { id: 'int32' }, length: c.length, values: g.gid, valid: null };
  // an int32 value without nulls and its group id as one word (groupRows' one-part loop): count(DISTINCT l_partkey)
  // per supplier's reduce, 6M rows, spent most of its time in the two-part loop
  const word = pairOf(gidCol, c);
  const pairs = word
    ? buildKeys({ length: c.length, columns: [word] }, [0], [normFor(word.type)])
    : buildKeys({ length: c.length, columns: [gidCol, c] }, [0, 1], [{ kind: 'int' }, normFor(c.type)]);
  const pg = groupRows(pairs);
  const cnt = new Float64Array(g.nGroups);
  countFirsts(cnt, g.gid, pg.first, pg.nGroups, c.valid);
  return countColumn(cnt);
}

/** Counts per group of the rows `first` that are not null. */
function countFirsts(cnt: Float64Array, gid: Int32Array, first: Int32Array, n: number, valid: Uint8Array | null): void {
  for (let p = 0; p < n; p++) {
    const row = first[p];
    if (valid === null || valid[row]) cnt[gid[row]]++;
  }
}

/** sum of a decimal column: exact, decimal(38, s). */
export function decimalSumColumn(c: Column, g: Groups, cnt: Float64Array, as: string): Column {
  return decimalSumsColumn(c, g.gid, g.nGroups, cnt, decimalType(MAX_PRECISION, c.type.scale!), `sum of "${as}"`);
}

/** avg of a decimal column (or of decimal sum states with their counts): the exact sum divided in float64. */
export function decimalAvg(c: Column, g: Groups, cnt: Float64Array): Column {
  const sums = decimalSums(c, g.gid, g.nGroups, cnt);
  const s = new Float64Array(g.nGroups);
  // one division of the exact sum by count x 10^scale, as DuckDB divides (the sum scaled first rounds twice)
  const scale = 10 ** c.type.scale!;
  for (let k = 0; k < s.length; k++) if (sums[k] !== null) s[k] = Number(sums[k]!) / (scale * cnt[k]);
  return float64Column(s, cnt);
}
