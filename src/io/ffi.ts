// Decoded Parquet seen in place: parquet-wasm exports its Arrow arrays through
// the Arrow C Data Interface, and plain columns (fixed-width numbers, dates,
// timestamps, utf8) become engine columns that are views into WebAssembly
// memory, skipping the IPC copy. The views stay valid only until the next
// call into the module (which may grow, and so detach, its memory): a task
// uses them synchronously and then releases the data (see readRowGroups).
import type * as pw from 'parquet-wasm';
import { parquetWasm } from './wasm.js';
import { type Batch, type Column, type DataType, type Field, type TypeId, valuesCtor } from '../kernels/column.js';
import { decimalFromArrow } from '../kernels/decimal.js';

const FORMATS: Partial<Record<TypeId, string>> = {
  int8: 'c',
  uint8: 'C',
  int16: 's',
  uint16: 'S',
  int32: 'i',
  uint32: 'I',
  int64: 'l',
  uint64: 'L',
  float32: 'f',
  float64: 'g',
  date32: 'tdD',
  utf8: 'u',
};
const UNIT_LETTER = { second: 's', millisecond: 'm', microsecond: 'u', nanosecond: 'n' } as const;

/** Whether an engine type can be read in place from an array of this C Data Interface format. */
function formatMatches(t: DataType, format: string): boolean {
  if (t.id === 'decimal') return format === `d:${t.precision},${t.scale}`;
  if (t.id === 'timestamp') return format.startsWith(`ts${UNIT_LETTER[t.unit!]}:`);
  if (t.id === 'utf8' && t.large) return false;
  return FORMATS[t.id] === format;
}

const utf8 = new TextDecoder();

class Mem {
  readonly dv: DataView;
  constructor(readonly buf: ArrayBuffer) {
    this.dv = new DataView(buf);
  }
  u32(p: number) {
    return this.dv.getUint32(p, true);
  }
  i64(p: number) {
    return Number(this.dv.getBigInt64(p, true));
  }
  /** A NUL-terminated UTF-8 string (formats, column names). */
  cstr(p: number): string {
    const u = new Uint8Array(this.buf);
    let e = p;
    while (u[e] !== 0) e++;
    return utf8.decode(u.subarray(p, e));
  }
}

// ArrowSchema (wasm32): format@0 name@4 metadata@8 flags@16 n_children@24 children@32 dictionary@36
// ArrowArray (wasm32): length@0 null_count@8 offset@16 n_buffers@24 n_children@32 buffers@40 children@44 dictionary@48

/**
 * Validity bits from bit `off` of the bitmap at byte `bm` as one byte per row (a loop alone in its function: see
 * groupIdsOfRows in agg/joinagg.ts).
 */
function unpackBits(bits: Uint8Array, bm: number, off: number, valid: Uint8Array, n: number): void {
  for (let i = 0; i < n; i++) {
    const k = i + off;
    valid[i] = (bits[bm + (k >> 3)] >> (k & 7)) & 1;
  }
}

function column(m: Mem, schema: number, array: number, type: DataType): Column | null {
  if (m.u32(schema + 36) !== 0 || m.u32(array + 48) !== 0) return null; // dictionary
  if (!formatMatches(type, m.cstr(m.u32(schema)))) return null;
  const n = m.i64(array),
    nulls = m.i64(array + 8),
    off = m.i64(array + 16);
  const bufs = m.u32(array + 40);
  let valid: Uint8Array | null = null;
  if (nulls !== 0) {
    const bm = m.u32(bufs);
    if (bm === 0) return null;
    const bits = new Uint8Array(m.buf);
    valid = new Uint8Array(n);
    unpackBits(bits, bm, off, valid, n);
  }
  if (type.id === 'utf8') {
    const o = m.u32(bufs + 4) + 4 * off,
      data = m.u32(bufs + 8);
    if (o % 4 !== 0) return null;
    const offsets = new Int32Array(m.buf, o, n + 1);
    if (offsets[0] !== 0) return null;
    return { type, length: n, values: new Uint8Array(m.buf, data, offsets[n]), offsets, valid };
  }
  if (type.id === 'decimal') {
    // Decimal128 words copied to the engine's lanes (the copy also detaches them from the module's memory).
    const at = m.u32(bufs + 4) + 16 * off;
    if (at % 4 !== 0) return null;
    return decimalFromArrow(new Uint32Array(m.buf, at, 4 * n), n, type, valid);
  }
  const ctor = valuesCtor(type),
    w = ctor.BYTES_PER_ELEMENT,
    at = m.u32(bufs + 4) + w * off;
  if (at % w !== 0) return null;
  return { type, length: n, values: new ctor(m.buf, at, n), valid };
}

const TYPE_OF_FORMAT: Record<string, DataType> = {
  ...Object.fromEntries(Object.entries(FORMATS).map(([id, f]) => [f, { id: id as TypeId }])),
  b: { id: 'bool' },
  U: { id: 'utf8', large: true },
};
const UNIT_OF_LETTER = { s: 'second', m: 'millisecond', u: 'microsecond', n: 'nanosecond' } as const;

/**
 * Column names and engine types of a schema exported through the C Data
 * Interface, without loading Arrow JS; null when a column is of a type this
 * reader does not name (dictionary, ...): the caller then asks Arrow JS.
 */
export function schemaFields(schema: pw.Schema): { name: string; type: DataType }[] | null {
  const ffi = schema.intoFFI();
  try {
    const addr = ffi.addr();
    const m = new Mem(parquetWasm().wasmMemory().buffer);
    const n = m.i64(addr + 24),
      kids = m.u32(addr + 32);
    const out: { name: string; type: DataType }[] = [];
    for (let c = 0; c < n; c++) {
      const s = m.u32(kids + 4 * c);
      if (m.u32(s + 36) !== 0) return null; // dictionary
      const f = m.cstr(m.u32(s)),
        name = m.cstr(m.u32(s + 4));
      const ts = /^ts([smun]):(.*)$/.exec(f);
      const dec = /^d:(\d+),(\d+)$/.exec(f); // Decimal128; the bounds the engine takes, else Arrow JS names the type
      if (dec && !(Number(dec[2]) <= Number(dec[1]) && Number(dec[1]) <= 38)) return null;
      const type: DataType | undefined = ts
        ? { id: 'timestamp', unit: UNIT_OF_LETTER[ts[1] as 's'], tz: ts[2] || null }
        : dec
          ? { id: 'decimal', precision: Number(dec[1]), scale: Number(dec[2]) }
          : TYPE_OF_FORMAT[f];
      if (!type) return null;
      out.push({ name, type });
    }
    return out;
  } finally {
    ffi.free();
  }
}

/**
 * The table's batches as engine columns in place, in the order of `fields`
 * (matched by name), or null when a column needs conversion (dictionary,
 * bool, large utf8, other units): then the caller takes the IPC path.
 */
export function batchesInPlace(stream: pw.FFIStream, fields: Field[]): Batch[] | null {
  const schema = stream.schemaAddr(),
    arrays = Array.from(stream.arrayAddrs());
  const m = new Mem(parquetWasm().wasmMemory().buffer); // no call into the module from here on
  const nChildren = m.i64(schema + 24),
    children = m.u32(schema + 32);
  const names: string[] = [];
  for (let c = 0; c < nChildren; c++) names.push(m.cstr(m.u32(m.u32(children + 4 * c) + 4)));
  const idx = fields.map((f) => names.indexOf(f.name));
  if (idx.some((i) => i < 0)) return null;
  const out: Batch[] = [];
  for (const arr of arrays) {
    const length = m.i64(arr),
      kids = m.u32(arr + 44);
    if (m.i64(arr + 16) !== 0) return null;
    const columns: Column[] = [];
    for (let i = 0; i < fields.length; i++) {
      const c = column(m, m.u32(children + 4 * idx[i]), m.u32(kids + 4 * idx[i]), fields[i].type);
      if (c === null) return null;
      columns.push(c);
    }
    out.push({ length, columns });
  }
  return out;
}
