// Decimals as scaled integers: one 64-bit lane per row up to precision 18,
// two (a 128-bit integer, low lane first) above. Sums accumulate 32-bit words
// in float64 with carries, so no value is ever rounded; results beyond 38
// digits are an error, never a wrong number.
import { ExecutionError } from '../errors.js';
import { type Column, type DataType, allocValues, decimalText, lanes } from './column.js';

export const MAX_PRECISION = 38;
const POW10: bigint[] = Array.from({ length: 80 }, (_, i) => 10n ** BigInt(i));
export const pow10 = (k: number): bigint => POW10[k];

export const decimalType = (precision: number, scale: number): DataType => ({
  id: 'decimal',
  precision: Math.min(MAX_PRECISION, Math.max(1, precision)),
  scale,
});

/** The scaled integers of a decimal column as a column of the given decimal type; an overflow names `what`. */
export function decimalColumn(vals: ArrayLike<bigint | null>, type: DataType, what: string): Column {
  const n = vals.length,
    wide = lanes(type) === 2;
  const out = new BigInt64Array(wide ? 2 * n : n);
  const limit = POW10[type.precision!];
  let valid: Uint8Array | null = null;
  for (let k = 0; k < n; k++) {
    const x = vals[k];
    if (x === null) {
      valid ??= new Uint8Array(n).fill(1);
      valid[k] = 0;
      continue;
    }
    putScaled(out, k, x, wide, limit, type, what);
  }
  return { type, length: n, values: out, valid };
}

/**
 * Scaled integer x as row k of a decimal column's lanes (two when `wide`), below `limit` (10^precision) or an overflow
 * naming `what`.
 */
function putScaled(
  out: BigInt64Array,
  k: number,
  x: bigint,
  wide: boolean,
  limit: bigint,
  type: DataType,
  what: string,
): void {
  if (x >= limit || -x >= limit) throw overflow(what, x, type);
  if (wide) {
    out[2 * k] = BigInt.asIntN(64, x);
    out[2 * k + 1] = x >> 64n;
  } else out[k] = x;
}

function overflow(what: string, x: bigint, type: DataType): ExecutionError {
  const digits = type.precision! >= MAX_PRECISION ? 'beyond 38 digits' : `beyond ${type.precision} digits`;
  return new ExecutionError(`${what}: decimal result ${decimalText(x, type.scale!)} is ${digits}`);
}

const TWO32 = 4294967296;
const CHUNK = 1 << 20; // rows between carries: 2^20 x 2^32 stays below 2^53

/**
 * Exact sums per group of a decimal column (any number of lanes), as scaled
 * integers; null for a group that counted no value (`cnt[k] === 0`). One
 * pass: the low word summed unsigned, the next one signed, so a value that
 * fits in 64 bits (its upper words only repeat the sign) adds two words; a
 * 128-bit value adds its four (the second unsigned then, and the two upper).
 */
export function decimalSums(c: Column, gid: Int32Array, nGroups: number, cnt: Float64Array): (bigint | null)[] {
  const wide = lanes(c.type) === 2;
  const [a0, a1, a2, a3] = wordSums(c, gid, nGroups);
  const out: (bigint | null)[] = new Array(nGroups);
  for (let k = 0; k < nGroups; k++) out[k] = cnt[k] === 0 ? null : sumAt(a0, a1, a2, a3, k, wide);
  return out;
}

/** Group k's sum from its carried words (wordSums) as a bigint; a2 and a3 only for a 128-bit column. */
function sumAt(
  a0: Float64Array,
  a1: Float64Array,
  a2: Float64Array,
  a3: Float64Array,
  k: number,
  wide: boolean,
): bigint {
  let s = BigInt(a1[k]);
  if (wide) s = (BigInt(a3[k]) << 64n) + (BigInt(a2[k]) << 32n) + s;
  return (s << 32n) + BigInt(a0[k]);
}

/** The groups' sums in 32-bit words, carried: a0 (and a1, a2 of a 128-bit column) in [0, 2^32), the top word signed. */
function wordSums(c: Column, gid: Int32Array, nGroups: number): Float64Array[] {
  const wide = lanes(c.type) === 2,
    words = wide ? 4 : 2,
    n = c.length,
    valid = c.valid;
  const w = new Int32Array(c.values.buffer, c.values.byteOffset, words * n);
  // two banks a word (even rows, odd rows: see sums64), folded into one before each carry
  const a0 = new Float64Array(2 * nGroups),
    a1 = new Float64Array(2 * nGroups);
  const a2 = new Float64Array(wide ? 2 * nGroups : 0),
    a3 = new Float64Array(wide ? 2 * nGroups : 0);
  for (let start = 0; start < n; start += CHUNK) {
    const end = Math.min(n, start + CHUNK);
    if (!wide) sums64(w, valid, gid, a0, a1, start, end, nGroups);
    else sums128(w, valid, gid, a0, a1, a2, a3, start, end, nGroups);
    for (const a of wide ? [a0, a1, a2, a3] : [a0, a1]) fold(a, nGroups);
    carry(a0, a1);
    if (wide) {
      carry(a1, a2);
      carry(a2, a3);
    }
  }
  return [a0, a1, a2, a3].map((a) => a.subarray(0, a.length >> 1));
}

/** Bank 2 of each group (a[nGroups + k]) added into bank 1 (a[k]) and cleared. */
function fold(a: Float64Array, nGroups: number): void {
  for (let k = 0; k < nGroups; k++) {
    a[k] += a[nGroups + k];
    a[nGroups + k] = 0;
  }
}

/**
 * decimalColumn(decimalSums(...)) in one pass, with no bigint for a group
 * whose sum lies within ±2^53 (its words are the column's words as they
 * are): TPC-H q18's sums of l_quantity by order spent more time making four
 * bigints a group (and collecting them) than summing.
 */
export function decimalSumsColumn(
  c: Column,
  gid: Int32Array,
  nGroups: number,
  cnt: Float64Array,
  type: DataType,
  what: string,
): Column {
  const wideIn = lanes(c.type) === 2;
  const [a0, a1, a2, a3] = wordSums(c, gid, nGroups);
  return wordsColumn(a0, a1, a2, a3, wideIn, cnt, type, what);
}

/**
 * Carried word sums (wordSums: a0, a1 and, of a 128-bit input (`wideIn`), a2, a3) as a column of decimal `type`, null
 * where `cnt` is 0; a sum beyond the type's precision is an overflow naming `what`.
 */
function wordsColumn(
  a0: Float64Array,
  a1: Float64Array,
  a2: Float64Array,
  a3: Float64Array,
  wideIn: boolean,
  cnt: Float64Array,
  type: DataType,
  what: string,
): Column {
  const nGroups = a0.length;
  const wide = lanes(type) === 2;
  const out = new BigInt64Array(wide ? 2 * nGroups : nGroups);
  const limit = POW10[type.precision!];
  // a bound exact as a double, or none a sum within 2^53 can reach
  const bound = type.precision! <= 15 ? Number(limit) : Infinity;
  const valid = sumWords(a0, wideIn ? highWord(a1, a2, a3) : a1, cnt, new Int32Array(out.buffer), wide, bound);
  for (let k = 0; k < nGroups; k++) {
    if (valid[k] !== 2) continue;
    // beyond 2^53 (or the bound): the exact value as a bigint
    putScaled(out, k, sumAt(a0, a1, a2, a3, k, wideIn), wide, limit, type, what);
    valid[k] = 1;
  }
  let nulls = false;
  for (let k = 0; k < nGroups && !nulls; k++) nulls = valid[k] === 0;
  return { type, length: nGroups, values: out, valid: nulls ? valid : null };
}

/**
 * The signed word above a0 of 128-bit sums (words a1, a2 in [0, 2^32), a3
 * signed) where the upper two only extend its sign; NaN (out of any range)
 * where they carry more.
 */
function highWord(a1: Float64Array, a2: Float64Array, a3: Float64Array): Float64Array {
  const n = a1.length,
    hi = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    hi[k] = a3[k] === 0 && a2[k] === 0 ? a1[k] : a3[k] === -1 && a2[k] === 4294967295 ? a1[k] - 4294967296 : NaN;
  }
  return hi;
}

/**
 * Each group's sum (words a0 unsigned, a1 signed) written as a 64-bit value,
 * sign-extended to 128 bits when `wide`, where it lies within ±2^53 and below
 * `bound`; returns per group 1 (written), 0 (no value: null) or 2 (left to
 * the caller).
 */
function sumWords(
  a0: Float64Array,
  a1: Float64Array,
  cnt: Float64Array,
  w: Int32Array,
  wide: boolean,
  bound: number,
): Uint8Array {
  const n = a0.length,
    state = new Uint8Array(n);
  for (let k = 0; k < n; k++) {
    if (cnt[k] === 0) continue;
    const hi = a1[k];
    if (!(hi >= -0x200000 && hi < 0x200000)) {
      state[k] = 2;
      continue;
    } // NaN too
    const x = hi * 4294967296 + a0[k];
    if (x >= bound || -x >= bound) {
      state[k] = 2;
      continue;
    }
    if (wide) {
      const o = 4 * k;
      w[o] = a0[k];
      w[o + 1] = hi;
      w[o + 2] = w[o + 3] = hi < 0 ? -1 : 0;
    } else {
      w[2 * k] = a0[k];
      w[2 * k + 1] = hi;
    }
    state[k] = 1;
  }
  return state;
}

// The loops of decimalSums, each a function of its own (see groupIdsOfRows in
// agg/joinagg.ts): held inline, the first low word at or past 2^31 ("lost
// precision") or the first null recompiled the whole function, TPC-H q01 about
// 14 times a run.

/**
 * Rows start..end of 64-bit values (two words each) into the groups' word sums: even rows into
 * a[k], odd rows into a second bank a[G + k], so that two rows of one group do not wait on each other's add
 * (a sum's load, add and store a row was the loop's critical path: 25-35% faster measured alone).
 */
function sums64(
  w: Int32Array,
  valid: Uint8Array | null,
  gid: Int32Array,
  a0: Float64Array,
  a1: Float64Array,
  start: number,
  end: number,
  G: number,
): void {
  let i = start;
  for (; i + 1 < end; i += 2) {
    const k = gid[i],
      j = gid[i + 1] + G;
    if (valid === null || valid[i] !== 0) {
      a0[k] += w[2 * i] >>> 0;
      a1[k] += w[2 * i + 1];
    }
    if (valid === null || valid[i + 1] !== 0) {
      a0[j] += w[2 * i + 2] >>> 0;
      a1[j] += w[2 * i + 3];
    }
  }
  if (i < end && (valid === null || valid[i] !== 0)) {
    const k = gid[i];
    a0[k] += w[2 * i] >>> 0;
    a1[k] += w[2 * i + 1];
  }
}

/**
 * Rows start..end of 128-bit values (four words each), banked as sums64: a value that fits in 64 bits adds two words.
 */
function sums128(
  w: Int32Array,
  valid: Uint8Array | null,
  gid: Int32Array,
  a0: Float64Array,
  a1: Float64Array,
  a2: Float64Array,
  a3: Float64Array,
  start: number,
  end: number,
  G: number,
): void {
  for (let i = start; i < end; i++) {
    if (valid !== null && valid[i] === 0) continue;
    const k = gid[i] + (i & 1) * G,
      p = 4 * i,
      h = w[p + 1],
      sign = h >> 31;
    a0[k] += w[p] >>> 0;
    if (w[p + 2] === sign && w[p + 3] === sign) a1[k] += h;
    else {
      a1[k] += h >>> 0;
      a2[k] += w[p + 2] >>> 0;
      a3[k] += w[p + 3];
    }
  }
}

/** Bring each group's sum in `a` into [0, 2^32), the rest carried into the next word's `b`. */
function carry(a: Float64Array, b: Float64Array) {
  for (let k = 0; k < a.length; k++) {
    const c = Math.floor(a[k] / TWO32);
    a[k] -= c * TWO32;
    b[k] += c;
  }
}

/**
 * decimalSumsColumn for one group, the rows idx[0..n) (ascending: a selection) or 0..n when `idx` is null, `cnt` of
 * them not null: the same answer and the same overflow, its words summed in local variables a chunk at a time (an
 * aggregate without GROUP BY: every row's add waited on the previous row's store into the one group's slot).
 */
export function decimalSumOne(
  c: Column,
  idx: Int32Array | null,
  n: number,
  cnt: number,
  type: DataType,
  what: string,
): Column {
  const [a0, a1, a2, a3] = oneWords(c, idx, n);
  return wordsColumn(a0, a1, a2, a3, lanes(c.type) === 2, Float64Array.of(cnt), type, what);
}

/** The exact sum of a decimal column's rows (as decimalSumOne's) as a scaled integer, of any size. */
export function decimalSumValue(c: Column, idx: Int32Array | null, n: number): bigint {
  const [a0, a1, a2, a3] = oneWords(c, idx, n);
  return sumAt(a0, a1, a2, a3, 0, lanes(c.type) === 2);
}

/**
 * The carried words of decimalSumOne's sum (wordSums' for one group): of a one-lane decimal or an int64 column (two
 * words a row), a0 in [0, 2^32) and a1; of a 128-bit decimal, a0..a3. Also agg/ungrouped.ts's exact int64 sums.
 */
export function oneWords(c: Column, idx: Int32Array | null, n: number): Float64Array[] {
  const wideIn = lanes(c.type) === 2;
  const w = new Int32Array(c.values.buffer, c.values.byteOffset, (wideIn ? 4 : 2) * c.length);
  const a0 = new Float64Array(1),
    a1 = new Float64Array(1),
    a2 = new Float64Array(wideIn ? 1 : 0),
    a3 = new Float64Array(wideIn ? 1 : 0);
  for (let start = 0; start < n; start += CHUNK) {
    const end = Math.min(n, start + CHUNK);
    if (wideIn) {
      words128(w, c.valid, idx, start, end, SUMS);
      a2[0] += SUMS[2];
      a3[0] += SUMS[3];
    } else words64(w, c.valid, idx, start, end, SUMS);
    a0[0] += SUMS[0];
    a1[0] += SUMS[1];
    carry(a0, a1);
    if (wideIn) {
      carry(a1, a2);
      carry(a2, a3);
    }
  }
  return [a0, a1, a2, a3];
}

/** What words64 and words128 return: a chunk's word sums. */
const SUMS = new Float64Array(4);

/**
 * The rows start..end (positions in `idx`, or rows when it is null) of 64-bit values (two words each, the upper
 * signed) summed word by word into sums[0] (low words, unsigned) and sums[1]: at most 2^20 rows, each sum exact below
 * 2^52. Two banks of locals (even and odd rows) so that consecutive adds do not wait on each other.
 */
function words64(
  w: Int32Array,
  valid: Uint8Array | null,
  idx: Int32Array | null,
  start: number,
  end: number,
  sums: Float64Array,
): void {
  let x0 = 0,
    x1 = 0,
    y0 = 0,
    y1 = 0;
  if (idx === null && valid === null) {
    let i = start;
    for (; i + 1 < end; i += 2) {
      x0 += w[2 * i] >>> 0;
      x1 += w[2 * i + 1];
      y0 += w[2 * i + 2] >>> 0;
      y1 += w[2 * i + 3];
    }
    if (i < end) {
      x0 += w[2 * i] >>> 0;
      x1 += w[2 * i + 1];
    }
  } else if (idx === null) {
    for (let i = start; i < end; i++)
      if (valid![i] !== 0) {
        x0 += w[2 * i] >>> 0;
        x1 += w[2 * i + 1];
      }
  } else {
    for (let k = start; k < end; k++) {
      const i = idx[k];
      if (valid === null || valid[i] !== 0) {
        x0 += w[2 * i] >>> 0;
        x1 += w[2 * i + 1];
      }
    }
  }
  sums[0] = x0 + y0;
  sums[1] = x1 + y1;
}

/**
 * words64 of 128-bit values (four words each) into sums[0..4): a value that fits in 64 bits (its upper words only
 * repeat the sign) adds two words, as sums128 does.
 */
function words128(
  w: Int32Array,
  valid: Uint8Array | null,
  idx: Int32Array | null,
  start: number,
  end: number,
  sums: Float64Array,
): void {
  let x0 = 0,
    x1 = 0,
    x2 = 0,
    x3 = 0;
  for (let k = start; k < end; k++) {
    const i = idx === null ? k : idx[k];
    if (valid !== null && valid[i] === 0) continue;
    const p = 4 * i,
      h = w[p + 1],
      sign = h >> 31;
    x0 += w[p] >>> 0;
    if (w[p + 2] === sign && w[p + 3] === sign) x1 += h;
    else {
      x1 += h >>> 0;
      x2 += w[p + 2] >>> 0;
      x3 += w[p + 3];
    }
  }
  sums[0] = x0;
  sums[1] = x1;
  sums[2] = x2;
  sums[3] = x3;
}

/** A decimal literal: its scaled integer and scale (`0.06` is 6 at scale 2). */
export interface DecimalValue {
  scaled: bigint;
  scale: number;
}

/**
 * Exact decimal text (`-12.50`, `1e-3`, `3`) as a scaled integer with the
 * digits written (trailing zeros after the point kept, as SQL reads `1.50`);
 * null when the text is not a number.
 */
export function parseDecimal(text: string): DecimalValue | null {
  const m = /^\s*([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?\s*$/.exec(text);
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return null;
  let digits = m[2] + (m[3] ?? ''),
    scale = (m[3] ?? '').length - Number(m[4] ?? 0);
  if (scale < 0) {
    digits += '0'.repeat(-scale);
    scale = 0;
  }
  const x = BigInt(digits || '0');
  return { scaled: m[1] === '-' ? -x : x, scale };
}

/** A JSON number as a decimal with the digits of its shortest form. */
export const numberToDecimal = (v: number): DecimalValue => parseDecimal(String(v))!;

/**
 * Arrow's Decimal128 values (four 32-bit words each) as one 64-bit lane per row (precision <= 18) or two; here, not in
 * io/arrow.ts, so that the in-place reader does not load Arrow JS.
 */
export function decimalFromArrow(words: Uint32Array, n: number, type: DataType, valid: Uint8Array | null): Column {
  const values = allocValues(type, n);
  // signed words: a copied word stays a small integer in every tier of the JIT
  const out = new Int32Array(values.buffer),
    w = new Int32Array(words.buffer, words.byteOffset, 4 * n);
  if (lanes(type) === 2) out.set(w);
  else
    for (let i = 0; i < n; i++) {
      out[2 * i] = w[4 * i];
      out[2 * i + 1] = w[4 * i + 1];
    }
  return { type, length: n, values, valid };
}
