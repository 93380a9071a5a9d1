// Column-at-a-time helpers for the expression kernels: reading exact numbers
// (integers, scaled decimals) as float64 where that is exact and as bigint
// where it is not, writing exact results the same two ways, null masks, and
// literals as columns.
import { ExecutionError } from '../errors.js';
import { type Column, type DataType, allocValues, decimalAt, lanes } from '../kernels/column.js';
import { pow10 } from '../kernels/decimal.js';
import type { Scalar } from './types.js';

const TWO32 = 4294967296;
const encoder = new TextEncoder();

/**
 * Values of an exact-number column (scaled integers for decimals) as float64,
 * NaN where a value is not exactly representable (read those with bigAt).
 */
export function exactNums(c: Column): Float64Array {
  const n = c.length,
    out = new Float64Array(n),
    v = c.values as any;
  const id = c.type.id;
  if (id === 'int64' || id === 'uint64' || id === 'decimal' || id === 'timestamp') {
    const words = 2 * lanes(c.type),
      w = new Int32Array(v.buffer, v.byteOffset, words * n);
    const unsigned = id === 'uint64';
    for (let i = 0; i < n; i++) {
      const b = words * i,
        hi = w[b + 1];
      const ok = words === 2 || (w[b + 2] === hi >> 31 && w[b + 3] === hi >> 31);
      if (unsigned ? hi >>> 0 < 0x200000 : ok && hi < 0x200000 && hi >= -0x200000)
        out[i] = (unsigned ? hi >>> 0 : hi) * TWO32 + (w[b] >>> 0);
      else out[i] = NaN;
    }
    return out;
  }
  for (let i = 0; i < n; i++) out[i] = v[i];
  return out;
}

/** Row i of an exact-number column as bigint (decimals: the scaled integer). */
export function bigAt(c: Column, i: number): bigint {
  if (c.type.id === 'decimal') return decimalAt(c, i);
  const v = c.values[i];
  return typeof v === 'bigint' ? v : BigInt(v as number);
}

/**
 * A decimal past 2^53 as DuckDB casts it to a double (TryCastDecimalToFloatingPoint): its integer part as a double,
 * plus its fraction over 10^scale; a 16-byte one's integer part as Hugeint::Cast<double> gives it (a negative one
 * above -2^64 as -(|q| - 1) - 1). Not always the nearest double (1 in 25 past 2^56), but DuckDB's.
 */
function decimalDouble(v: bigint, scale: number, wide: boolean): number {
  const p = 10n ** BigInt(scale);
  const q = v / p;
  const frac = Number(v % p) / 10 ** scale;
  if (!wide) return Number(q) + frac;
  const upper = q >> 64n,
    lower = BigInt.asUintN(64, q);
  const whole = upper === -1n ? -Number(0xffffffffffffffffn - lower) - 1 : Number(lower) + Number(upper) * 2 ** 64;
  return whole + frac;
}

/** Values as float64 (decimals divided by their scale: exact ones correctly rounded, larger ones as DuckDB casts). */
export function floats(c: Column): Float64Array {
  if (c.values instanceof Float64Array) return c.values;
  const n = c.length;
  if (c.type.id !== 'decimal' && c.type.id !== 'int64' && c.type.id !== 'uint64')
    return Float64Array.from(c.values as ArrayLike<number>);
  const x = exactNums(c),
    s = c.type.scale ?? 0,
    f = 10 ** s;
  for (let i = 0; i < n; i++) {
    // A division of two exact doubles is correctly rounded; past 10^22 the power itself is not exact.
    if (x[i] === x[i] && s <= 22) x[i] = x[i] / f;
    else x[i] = s ? decimalDouble(bigAt(c, i), s, lanes(c.type) === 2) : Number(bigAt(c, i));
  }
  return x;
}

/** Rows valid in every column (null when all are valid). */
export function andValid(cols: Column[], n: number): Uint8Array | null {
  let out: Uint8Array | null = null;
  for (const c of cols) {
    if (!c.valid) continue;
    if (!out) out = c.valid.slice(0, n);
    else for (let i = 0; i < n; i++) out[i] &= c.valid[i];
  }
  return out;
}

const LIMITS: Record<string, [bigint, bigint]> = { int64: [-(2n ** 63n), 2n ** 63n - 1n] };

/** Exact results (int64 or decimal) written as float64 where safe, as bigint otherwise, range-checked. */
export class ExactWriter {
  readonly values: BigInt64Array;
  private readonly w: Int32Array;
  private readonly words: number;
  private readonly lo: bigint;
  private readonly hi: bigint;
  constructor(
    readonly type: DataType,
    readonly n: number,
    private readonly what: string,
    public valid: Uint8Array | null,
  ) {
    this.values = allocValues(type, n) as BigInt64Array;
    this.words = 2 * lanes(type);
    this.w = new Int32Array(this.values.buffer);
    [this.lo, this.hi] =
      type.id === 'decimal' ? [1n - pow10(type.precision!), pow10(type.precision!) - 1n] : LIMITS.int64;
  }
  /** A safe integer (|r| <= 2^53). */
  num(i: number, r: number) {
    const hi = Math.floor(r / TWO32),
      b = this.words * i,
      w = this.w;
    w[b] = (r - hi * TWO32) | 0;
    w[b + 1] = hi;
    if (this.words === 4) w[b + 2] = w[b + 3] = hi < 0 ? -1 : 0;
  }
  big(i: number, x: bigint) {
    if (x < this.lo || x > this.hi) {
      const what = this.type.id === 'decimal' ? `beyond ${this.type.precision} digits` : 'overflows int64';
      throw new ExecutionError(`${this.what}: result ${x} ${what}`);
    }
    if (this.words === 2) this.values[i] = x;
    else {
      this.values[2 * i] = BigInt.asIntN(64, x);
      this.values[2 * i + 1] = x >> 64n;
    }
  }
  column(): Column {
    return { type: this.type, length: this.n, values: this.values, valid: this.valid };
  }
}

/** A literal as a column of n equal rows. */
export function constColumn(v: Scalar, type: DataType, n: number): Column {
  if (v === null) {
    const c =
      type.id === 'utf8'
        ? { type, length: n, values: new Uint8Array(0), offsets: new Int32Array(n + 1), valid: new Uint8Array(n) }
        : { type, length: n, values: allocValues(type, n), valid: new Uint8Array(n) };
    return c;
  }
  if (type.id === 'utf8') {
    const b = encoder.encode(v as string),
      values = new Uint8Array(b.length * n),
      offsets = new Int32Array(n + 1);
    for (let i = 0; i < n; i++) {
      values.set(b, i * b.length);
      offsets[i + 1] = (i + 1) * b.length;
    }
    return { type, length: n, values, offsets, valid: null };
  }
  const values = allocValues(type, n) as any;
  if (type.id === 'decimal' && lanes(type) === 2) {
    const x = v as bigint,
      lo = BigInt.asIntN(64, x),
      hi = x >> 64n;
    for (let i = 0; i < n; i++) {
      values[2 * i] = lo;
      values[2 * i + 1] = hi;
    }
  } else {
    values.fill(typeof v === 'boolean' ? (v ? 1 : 0) : v);
  }
  return { type, length: n, values, valid: null };
}

/** A bool result column from three-valued results (0 false, 1 true, 2 null). */
export function boolColumn(r: Uint8Array): Column {
  const n = r.length,
    values = new Uint8Array(n);
  let valid: Uint8Array | null = null;
  for (let i = 0; i < n; i++) {
    if (r[i] === 2) {
      valid ??= new Uint8Array(n).fill(1);
      valid[i] = 0;
    } else values[i] = r[i];
  }
  return { type: { id: 'bool' }, length: n, values, valid };
}

/** A bool column as three-valued results. */
export function tri(c: Column): Uint8Array {
  const n = c.length,
    out = new Uint8Array(n),
    v = c.values as Uint8Array,
    valid = c.valid;
  for (let i = 0; i < n; i++) out[i] = valid !== null && valid[i] === 0 ? 2 : v[i];
  return out;
}

const decoder = new TextDecoder();

/** Row i as a Scalar (the representation of its type; decimals as the scaled integer). */
export function scalarAt(c: Column, i: number): Scalar {
  if (c.valid !== null && c.valid[i] === 0) return null;
  switch (c.type.id) {
    case 'utf8': {
      const o = c.offsets!;
      return decoder.decode((c.values as Uint8Array).subarray(o[i], o[i + 1]));
    }
    case 'bool':
      return c.values[i] === 1;
    case 'decimal':
      return decimalAt(c, i);
    default:
      return c.values[i] as number | bigint;
  }
}

/** A column from Scalars (null for null). */
export function fromScalars(type: DataType, vals: Scalar[]): Column {
  const n = vals.length;
  let valid: Uint8Array | null = null;
  for (let i = 0; i < n; i++)
    if (vals[i] === null) {
      valid ??= new Uint8Array(n).fill(1);
      valid[i] = 0;
    }
  if (type.id === 'utf8') {
    const parts = vals.map((v) => encoder.encode(v === null ? '' : (v as string)));
    const offsets = new Int32Array(n + 1);
    for (let i = 0; i < n; i++) offsets[i + 1] = offsets[i] + parts[i].length;
    const values = new Uint8Array(offsets[n]);
    parts.forEach((p, i) => values.set(p, offsets[i]));
    return { type, length: n, values, offsets, valid };
  }
  const values = allocValues(type, n) as any;
  const wide = type.id === 'decimal' && lanes(type) === 2;
  for (let i = 0; i < n; i++) {
    const v = vals[i];
    if (v === null) continue;
    if (wide) {
      values[2 * i] = BigInt.asIntN(64, v as bigint);
      values[2 * i + 1] = (v as bigint) >> 64n;
    } else values[i] = typeof v === 'boolean' ? (v ? 1 : 0) : v;
  }
  return { type, length: n, values, valid };
}

/**
 * Row i taken from column which[i] of `cols` (all of `type`), null where
 * which[i] < 0: the result of nullif.
 */
export function choose(type: DataType, cols: Column[], which: Int32Array): Column {
  return pickAt(type, cols, which, null);
}

/**
 * Row i is row at[i] (i when `at` is null) of column which[i] of `cols` (all of `type`), null where which[i] < 0:
 * the result of case and coalesce, each branch computed over its own rows.
 */
export function pickAt(type: DataType, cols: Column[], which: Int32Array, at: Int32Array | null): Column {
  const n = which.length;
  let valid: Uint8Array | null = null;
  for (let i = 0; i < n; i++) {
    const k = which[i],
      j = at === null ? i : at[i];
    if (k < 0 || (cols[k].valid !== null && cols[k].valid![j] === 0)) {
      valid ??= new Uint8Array(n).fill(1);
      valid[i] = 0;
    }
  }
  if (type.id === 'utf8') {
    const offsets = new Int32Array(n + 1);
    for (let i = 0; i < n; i++) {
      const k = which[i],
        j = at === null ? i : at[i],
        o = k >= 0 ? cols[k].offsets! : null;
      offsets[i + 1] = offsets[i] + (o && (valid === null || valid[i]) ? o[j + 1] - o[j] : 0);
    }
    const values = new Uint8Array(offsets[n]);
    for (let i = 0; i < n; i++) {
      if (offsets[i + 1] === offsets[i]) continue;
      const c = cols[which[i]],
        j = at === null ? i : at[i],
        o = c.offsets!;
      values.set((c.values as Uint8Array).subarray(o[j], o[j + 1]), offsets[i]);
    }
    return { type, length: n, values, offsets, valid };
  }
  const l = lanes(type),
    values = allocValues(type, n) as any;
  for (let i = 0; i < n; i++) {
    const k = which[i];
    if (k < 0) continue;
    const src = cols[k].values as any,
      j = at === null ? i : at[i];
    if (l === 1) values[i] = src[j];
    else {
      values[2 * i] = src[2 * j];
      values[2 * i + 1] = src[2 * j + 1];
    }
  }
  return { type, length: n, values, valid };
}
