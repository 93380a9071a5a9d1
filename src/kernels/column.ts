// The engine's in-memory columnar format: one typed array per column, a byte
// per row for validity, UTF-8 bytes plus offsets for strings. Arrow is used at
// the I/O boundary only; inside, these plain objects cross threads as buffers.

import {
  allocValues,
  type Batch,
  type Column,
  type DataType,
  lanes,
  rowWidth,
  type Schema,
  type Values,
  valuesCtor,
} from './data-type.js';

export * from './data-type.js';

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

export { gather, gatherBatch, gatherMany, gatherSelected, wordView } from './gather.js';

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

/**
 * The columns one after another; `shared`: straight into SharedArrayBuffers (one copy, as shareBatch after
 * concatenating would make two).
 */
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
  const values = new (valuesCtor(type))(bufferOf(n * rowWidth(type), shared), 0, n * lanes(type)) as any;
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

/** The in-memory bytes of batches (a task's input, `tasks[].inputBytes`). */
export function batchesBytes(bs: readonly Batch[]): number {
  let s = 0;
  for (const b of bs) s += batchBytes(b);
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
