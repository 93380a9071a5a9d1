// The engine's in-memory columnar format: one typed array per column, a byte
// per row for validity, UTF-8 bytes plus offsets for strings. Arrow is used at
// the I/O boundary only; inside, these plain objects cross threads as buffers.

export type TypeId =
  | 'int8'
  | 'int16'
  | 'int32'
  | 'int64'
  | 'uint8'
  | 'uint16'
  | 'uint32'
  | 'uint64'
  | 'float32'
  | 'float64'
  | 'bool'
  | 'utf8'
  | 'date32'
  | 'timestamp'
  | 'decimal';

export type TimeUnit = 'second' | 'millisecond' | 'microsecond' | 'nanosecond';

export interface DataType {
  id: TypeId;
  /** timestamp only */
  unit?: TimeUnit;
  /** timestamp only: time zone, or null for a naive timestamp */
  tz?: string | null;
  /** utf8 only: the source column was large utf8 (64-bit offsets); written back as such */
  large?: boolean;
  /** decimal only: digits in all (1..38) and after the point; values are integers scaled by 10^scale */
  precision?: number;
  scale?: number;
}

export interface Field {
  name: string;
  type: DataType;
}
export type Schema = Field[];

export type Values =
  | Int8Array
  | Int16Array
  | Int32Array
  | BigInt64Array
  | Uint8Array
  | Uint16Array
  | Uint32Array
  | BigUint64Array
  | Float32Array
  | Float64Array;

export interface Column {
  type: DataType;
  length: number;
  /** utf8: the bytes of all strings; bool: one byte per row (0/1) */
  values: Values;
  /** utf8 only: length + 1 offsets into values */
  offsets?: Int32Array;
  /** one byte per row, 1 = valid; null when every row is valid */
  valid: Uint8Array | null;
}

export interface Batch {
  length: number;
  columns: Column[];
}

const INTEGER_IDS: ReadonlySet<TypeId> = new Set([
  'int8',
  'int16',
  'int32',
  'int64',
  'uint8',
  'uint16',
  'uint32',
  'uint64',
]);
export const isInteger = (t: DataType) => INTEGER_IDS.has(t.id);
export const isFloat = (t: DataType) => t.id === 'float32' || t.id === 'float64';
export const isDecimal = (t: DataType) => t.id === 'decimal';
export const isNumeric = (t: DataType) => isInteger(t) || isFloat(t) || t.id === 'decimal';

/**
 * 64-bit lanes per row: a decimal of precision above 18 is a 128-bit integer,
 * two lanes (low, then high; the layout of Arrow's Decimal128). Every other
 * fixed-width type has one element per row.
 */
export const lanes = (t: DataType): number => (t.id === 'decimal' && t.precision! > 18 ? 2 : 1);
/** Bytes per row of a fixed-width type. */
export const rowWidth = (t: DataType): number => CTORS[t.id].BYTES_PER_ELEMENT * lanes(t);

export function typeName(t: DataType): string {
  if (t.id === 'decimal') return `decimal(${t.precision},${t.scale})`;
  if (t.id === 'timestamp') return `timestamp[${t.unit}${t.tz ? ', ' + t.tz : ''}]`;
  if (t.id === 'utf8' && t.large) return 'large_utf8';
  return t.id;
}

/** The typed array class holding a type's values: a new one of n values, or a view on a buffer. */
export type ValuesCtor = {
  new (n: number): Values;
  new (buffer: ArrayBufferLike, byteOffset: number, length: number): Values;
  BYTES_PER_ELEMENT: number;
};
const CTORS: Record<TypeId, ValuesCtor> = {
  int8: Int8Array,
  int16: Int16Array,
  int32: Int32Array,
  int64: BigInt64Array,
  uint8: Uint8Array,
  uint16: Uint16Array,
  uint32: Uint32Array,
  uint64: BigUint64Array,
  float32: Float32Array,
  float64: Float64Array,
  bool: Uint8Array,
  utf8: Uint8Array,
  date32: Int32Array,
  timestamp: BigInt64Array,
  decimal: BigInt64Array,
};

export function allocValues(t: DataType, n: number): Values {
  return new CTORS[t.id](n * lanes(t));
}
export const valuesCtor = (t: DataType): ValuesCtor => CTORS[t.id];

/** Per-thread scratch for arrays that do not outlive a synchronous step; kept while at most `keep` long. */
export class Int32Scratch {
  private buf: Int32Array;
  constructor(
    initial: number,
    private readonly keep: number,
  ) {
    this.buf = new Int32Array(initial);
  }
  /** At least n elements (a fresh array beyond `keep`). */
  get(n: number): Int32Array {
    if (this.buf.length >= n) return this.buf;
    const fresh = new Int32Array(n);
    if (n <= this.keep) this.buf = fresh;
    return fresh;
  }
}

function emptyColumn(type: DataType): Column {
  return type.id === 'utf8'
    ? { type, length: 0, values: new Uint8Array(0), offsets: new Int32Array(1), valid: null }
    : { type, length: 0, values: allocValues(type, 0), valid: null };
}

export function emptyBatch(schema: Schema): Batch {
  return { length: 0, columns: schema.map((f) => emptyColumn(f.type)) };
}

export const isNull = (c: Column, i: number) => c.valid !== null && c.valid[i] === 0;

// Fixed-width gathers by element size, each over one array type so that the
// loops stay monomorphic: 8-byte values move as two 32-bit words, which keeps
// float and int64 bit patterns intact.
function gather1(dst: Uint8Array, at: number, src: Uint8Array, idx: Int32Array, n: number) {
  for (let i = 0; i < n; i++) {
    const j = idx[i];
    dst[at + i] = j < 0 ? 0 : src[j];
  }
}
function gather2(dst: Uint16Array, at: number, src: Uint16Array, idx: Int32Array, n: number) {
  for (let i = 0; i < n; i++) {
    const j = idx[i];
    dst[at + i] = j < 0 ? 0 : src[j];
  }
}
function gather4(dst: Int32Array, at: number, src: Int32Array, idx: Int32Array, n: number) {
  for (let i = 0; i < n; i++) {
    const j = idx[i];
    dst[at + i] = j < 0 ? 0 : src[j];
  }
}
function gather8(dst: Int32Array, at: number, src: Int32Array, idx: Int32Array, n: number) {
  for (let i = 0; i < n; i++) {
    const j = idx[i],
      d = 2 * (at + i);
    if (j < 0) {
      dst[d] = 0;
      dst[d + 1] = 0;
    } else {
      dst[d] = src[2 * j];
      dst[d + 1] = src[2 * j + 1];
    }
  }
}

function gather16(dst: Int32Array, at: number, src: Int32Array, idx: Int32Array, n: number) {
  for (let i = 0; i < n; i++) {
    const j = idx[i],
      d = 4 * (at + i);
    if (j < 0) {
      dst[d] = 0;
      dst[d + 1] = 0;
      dst[d + 2] = 0;
      dst[d + 3] = 0;
    } else {
      const s = 4 * j;
      dst[d] = src[s];
      dst[d + 1] = src[s + 1];
      dst[d + 2] = src[s + 2];
      dst[d + 3] = src[s + 3];
    }
  }
}

/** n values of the given width (all of them by default) as 8-, 16- or 32-bit words (8-byte values as two words each). */
export function wordView(a: ArrayBufferView, width: number, n = a.byteLength / width): any {
  if (width === 1) return new Uint8Array(a.buffer, a.byteOffset, n);
  if (width === 2) return new Uint16Array(a.buffer, a.byteOffset, n);
  return new Int32Array(a.buffer, a.byteOffset, (n * width) / 4);
}

/**
 * Rows of several columns of one type picked by index lists, concatenated:
 * rows idxs[0] of cols[0], then idxs[1] of cols[1], ... An index of -1 gives
 * a null (the missing side of an outer join).
 */
export function gatherMany(
  type: DataType,
  cols: Column[],
  idxs: Int32Array[],
  counts?: number[],
  noMissing = false,
): Column {
  // No loop over rows here, only over the columns (a few): every row loop is a
  // function of its own (see groupIdsOfRows in agg/joinagg.ts). This function
  // sees every column type and shape; when it held the loops, each new one
  // deoptimized it and the whole of it was compiled again, loops and all
  // (TPC-H q10: about 30 compilations of it, over 200 ms of CPU a run).
  const ns: number[] = [];
  let n = 0;
  for (let k = 0; k < idxs.length; k++) {
    const m = counts?.[k] ?? idxs[k].length;
    ns.push(m);
    n += m;
  }
  let needValid = false;
  if (noMissing) needValid = cols.some((c) => c.valid !== null);
  else
    for (let k = 0; k < cols.length && !needValid; k++)
      needValid = cols[k].valid !== null || anyMissing(idxs[k], ns[k]);
  let valid: Uint8Array | null = null;
  if (needValid) {
    valid = new Uint8Array(n);
    let at = 0;
    for (let k = 0; k < cols.length; k++) {
      const src = cols[k].valid;
      if (src) gather1(valid, at, src, idxs[k], ns[k]);
      else presentRows(valid, at, idxs[k], ns[k]);
      at += ns[k];
    }
  }
  if (type.id === 'utf8') {
    const offsets = new Int32Array(n + 1);
    let total = 0,
      at = 0;
    for (let k = 0; k < cols.length; k++) {
      total = stringOffsets(offsets, at, cols[k].offsets!, idxs[k], ns[k], total);
      at += ns[k];
    }
    const out = new Uint8Array(total);
    at = 0;
    for (let k = 0; k < cols.length; k++) {
      gatherStrings(out, offsets, at, cols[k].offsets!, cols[k].values as Uint8Array, idxs[k], ns[k]);
      at += ns[k];
    }
    return { type, length: n, values: out, offsets, valid };
  }
  const values = allocValues(type, n);
  const width = rowWidth(type);
  const dst = wordView(values, width);
  let at = 0;
  for (let k = 0; k < cols.length; k++) {
    const src = wordView(cols[k].values, width);
    if (width === 1) gather1(dst, at, src, idxs[k], ns[k]);
    else if (width === 2) gather2(dst, at, src, idxs[k], ns[k]);
    else if (width === 4) gather4(dst, at, src, idxs[k], ns[k]);
    else if (width === 8) gather8(dst, at, src, idxs[k], ns[k]);
    else gather16(dst, at, src, idxs[k], ns[k]);
    at += ns[k];
  }
  return { type, length: n, values, valid };
}

/** Whether any of the first n indices is -1 (a missing row). */
function anyMissing(idx: Int32Array, n: number): boolean {
  let missing = false;
  for (let i = 0; i < n && !missing; i++) missing = idx[i] < 0;
  return missing;
}

/** Validity of rows picked from a column without nulls: 0 where the index is -1. */
function presentRows(valid: Uint8Array, at: number, idx: Int32Array, n: number): void {
  for (let i = 0; i < n; i++) valid[at + i] = idx[i] < 0 ? 0 : 1;
}

/** End offsets of the picked strings, from `total` on; returns the new total. */
function stringOffsets(
  offsets: Int32Array,
  at: number,
  o: Int32Array,
  idx: Int32Array,
  n: number,
  total: number,
): number {
  let t = total;
  for (let i = 0; i < n; i++) {
    const j = idx[i];
    if (j >= 0) t += o[j + 1] - o[j];
    offsets[at + i + 1] = t;
  }
  return t;
}

/** The picked strings' bytes to their offsets (stringOffsets). */
function gatherStrings(
  out: Uint8Array,
  offsets: Int32Array,
  at: number,
  o: Int32Array,
  bytes: Uint8Array,
  idx: Int32Array,
  n: number,
): void {
  for (let i = 0; i < n; i++) {
    const j = idx[i];
    if (j < 0) continue;
    const s = o[j],
      e = o[j + 1];
    let p = offsets[at + i];
    if (e - s < 32) for (let x = s; x < e; x++) out[p++] = bytes[x];
    else out.set(bytes.subarray(s, e), p);
  }
}

/** Rows picked by index; an index of -1 gives a null. */
export function gather(c: Column, idx: Int32Array, n = idx.length): Column {
  return gatherMany(c.type, [c], [idx], [n]);
}

/** Rows picked by a selection (indices, none -1): the scan for missing rows is skipped. */
export function gatherSelected(c: Column, idx: Int32Array, n: number): Column {
  return gatherMany(c.type, [c], [idx], [n], true);
}

export function gatherBatch(b: Batch, idx: Int32Array, n = idx.length): Batch {
  return { length: n, columns: b.columns.map((c) => gather(c, idx, n)) };
}

export function sliceColumn(c: Column, start: number, end: number): Column {
  const n = end - start;
  const valid = c.valid ? c.valid.slice(start, end) : null;
  if (c.type.id === 'utf8') {
    const offs = c.offsets!;
    const base = offs[start];
    const out = new Int32Array(n + 1);
    for (let i = 0; i <= n; i++) out[i] = offs[start + i] - base;
    return { type: c.type, length: n, values: (c.values as Uint8Array).slice(base, offs[end]), offsets: out, valid };
  }
  const l = lanes(c.type);
  return { type: c.type, length: n, values: c.values.slice(start * l, end * l) as Values, valid };
}

export function sliceBatch(b: Batch, start: number, end: number): Batch {
  end = Math.min(end, b.length);
  start = Math.min(start, end);
  return { length: end - start, columns: b.columns.map((c) => sliceColumn(c, start, end)) };
}

/**
 * Rows [start, end) as views into the same memory (a SharedArrayBuffer stays
 * shared: no copy when the batch is sent to a worker); only a string column's
 * offsets are copied, rebased to 0 as every kernel expects.
 */
export function viewBatch(b: Batch, start: number, end: number): Batch {
  const n = end - start;
  return {
    length: n,
    columns: b.columns.map((c): Column => {
      const valid = c.valid ? c.valid.subarray(start, end) : null;
      if (c.type.id === 'utf8') {
        const o = c.offsets!;
        const base = o[start];
        const offsets = new Int32Array(new SharedArrayBuffer(4 * (n + 1)));
        for (let i = 0; i <= n; i++) offsets[i] = o[start + i] - base;
        return { type: c.type, length: n, values: (c.values as Uint8Array).subarray(base, o[end]), offsets, valid };
      }
      const l = lanes(c.type);
      return { type: c.type, length: n, values: c.values.subarray(start * l, end * l) as Values, valid };
    }),
  };
}

/** Memory for `bytes`: a SharedArrayBuffer when `shared` (read in place by every thread), else an ArrayBuffer. */
const bufferOf = (bytes: number, shared: boolean) => (shared ? new SharedArrayBuffer(bytes) : new ArrayBuffer(bytes));

/** The columns one after another; `shared`: straight into SharedArrayBuffers (one copy, as shareBatch after concatenating would make two). */
export function concatColumns(type: DataType, cols: Column[], shared = false): Column {
  if (cols.length === 1) return shared ? shareColumn(cols[0]) : cols[0];
  let n = 0,
    bytes = 0,
    anyNull = false;
  for (const c of cols) {
    n += c.length;
    if (c.valid) anyNull = true;
    if (type.id === 'utf8') bytes += c.offsets![c.length];
  }
  const valid = anyNull ? new Uint8Array(bufferOf(n, shared)) : null;
  if (valid) {
    let p = 0;
    for (const c of cols) {
      if (c.valid) valid.set(c.valid, p);
      else valid.fill(1, p, p + c.length);
      p += c.length;
    }
  }
  if (type.id === 'utf8') {
    const values = new Uint8Array(bufferOf(bytes, shared));
    const offsets = new Int32Array(bufferOf(4 * (n + 1), shared));
    let p = 0,
      b = 0;
    for (const c of cols) {
      const o = c.offsets!;
      values.set((c.values as Uint8Array).subarray(0, o[c.length]), b);
      rebaseOffsets(offsets, p, o, c.length, b);
      p += c.length;
      b += o[c.length];
    }
    return { type, length: n, values, offsets, valid };
  }
  const values = new CTORS[type.id](bufferOf(n * rowWidth(type), shared), 0, n * lanes(type)) as any;
  let p = 0;
  const l = lanes(type);
  for (const c of cols) {
    values.set(c.values.subarray(0, c.length * l), p);
    p += c.length * l;
  }
  return { type, length: n, values, valid };
}

/** A string column's end offsets 1..n, moved by b, to offsets from p + 1 on (a loop of its own: see gatherMany). */
function rebaseOffsets(offsets: Int32Array, p: number, o: Int32Array, n: number, b: number): void {
  for (let i = 1; i <= n; i++) offsets[p + i] = o[i] + b;
}

/** The batches' rows in one batch; `shared`: in SharedArrayBuffers, copied once (see concatColumns). */
export function concatBatches(schema: Schema, batches: Batch[], shared = false): Batch {
  const bs = batches.filter((b) => b.length > 0);
  if (bs.length === 0) return shared ? shareBatch(emptyBatch(schema)) : emptyBatch(schema);
  if (bs.length === 1) return shared ? shareBatch(bs[0]) : bs[0];
  let n = 0;
  for (const b of bs) n += b.length;
  return {
    length: n,
    columns: schema.map((f, i) =>
      concatColumns(
        f.type,
        bs.map((b) => b.columns[i]),
        shared,
      ),
    ),
  };
}

export function rowCount(batches: readonly Batch[]): number {
  let n = 0;
  for (const b of batches) n += b.length;
  return n;
}

/** Approximate size in memory, used for shuffle statistics and skew decisions. */
function columnBytes(c: Column): number {
  let b = c.type.id === 'utf8' ? c.offsets![c.length] + 4 * (c.length + 1) : c.length * rowWidth(c.type);
  if (c.valid) b += c.length;
  return b;
}

export function batchBytes(b: Batch): number {
  let s = 0;
  for (const c of b.columns) s += columnBytes(c);
  return s;
}

/** The distinct ArrayBuffers behind a set of batches, for a postMessage transfer list. */
export function buffersOf(batches: Iterable<Batch>, into = new Set<ArrayBuffer>()): Set<ArrayBuffer> {
  for (const b of batches) {
    for (const c of b.columns) {
      for (const a of [c.values, c.offsets, c.valid]) {
        if (a && a.buffer instanceof ArrayBuffer && a.buffer.byteLength > 0) into.add(a.buffer);
      }
    }
  }
  return into;
}

const decoder = new TextDecoder();
export function stringAt(c: Column, i: number): string {
  const o = c.offsets!;
  return decoder.decode((c.values as Uint8Array).subarray(o[i], o[i + 1]));
}

/** A decimal cell's scaled integer (the value times 10^scale). */
export function decimalAt(c: Column, i: number): bigint {
  const v = c.values as BigInt64Array;
  if (lanes(c.type) === 1) return v[i];
  return (v[2 * i + 1] << 64n) | BigInt.asUintN(64, v[2 * i]);
}

/** A scaled integer as exact decimal text: 1234.50, -0.05. */
export function decimalText(x: bigint, scale: number): string {
  if (scale === 0) return x.toString();
  const neg = x < 0n;
  const digits = (neg ? -x : x).toString().padStart(scale + 1, '0');
  return `${neg ? '-' : ''}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}

/** A JS value for one cell (bigint for 64-bit types, number of days for date32, exact text for decimals), or null. */
export function valueAt(c: Column, i: number): unknown {
  if (isNull(c, i)) return null;
  if (c.type.id === 'decimal') return decimalText(decimalAt(c, i), c.type.scale!);
  if (c.type.id === 'utf8') return stringAt(c, i);
  if (c.type.id === 'bool') return c.values[i] === 1;
  return c.values[i];
}

/** The array in a SharedArrayBuffer (itself when it already is). */
export function shareArray<T extends Values | Int32Array | Uint8Array>(a: T): T {
  if (a.buffer instanceof SharedArrayBuffer) return a;
  const Ctor = a.constructor as { new (b: SharedArrayBuffer): T };
  const out = new Ctor(new SharedArrayBuffer(a.byteLength));
  (out as any).set(a);
  return out;
}

/**
 * The batch in SharedArrayBuffers: read by several tasks at once (a
 * replicated side) without a copy per task and without being detached.
 */
export function shareBatch(b: Batch): Batch {
  return { length: b.length, columns: b.columns.map(shareColumn) };
}

function shareColumn(c: Column): Column {
  return {
    ...c,
    values: shareArray(c.values),
    offsets: c.offsets ? shareArray(c.offsets) : undefined,
    valid: c.valid ? shareArray(c.valid) : null,
  };
}
