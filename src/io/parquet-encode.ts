// Parquet written straight from engine batches, with no Arrow or WebAssembly
// in between: flat OPTIONAL columns, PLAIN values in v1 data pages,
// definition levels in the RLE/bit-packed hybrid, snappy, the footer at the
// end. The schema (physical, converted and logical types) is the one
// parquet-rs wrote for the same Arrow types, so readers see the same types.
import { compressSync } from 'snappy';
import type { Batch, Column, DataType, Field } from '../kernels/column.js';
import { T, ThriftWriter } from './thrift-compact.js';

/** Physical types, converted types and encodings of parquet.thrift. */
const enum Phys { BOOLEAN = 0, INT32 = 1, INT64 = 2, FLOAT = 4, DOUBLE = 5, BYTE_ARRAY = 6, FIXED_LEN_BYTE_ARRAY = 7 }
const CONV = { UTF8: 0, DECIMAL: 5, DATE: 6, TIMESTAMP_MILLIS: 9, TIMESTAMP_MICROS: 10, UINT_8: 11, UINT_16: 12, UINT_32: 13, UINT_64: 14, INT_8: 15, INT_16: 16 };
const PLAIN = 0, RLE = 3, SNAPPY = 1, DATA_PAGE = 0;
const MAGIC = new Uint8Array([0x50, 0x41, 0x52, 0x31]); // PAR1

/** Rows per row group, unless asked otherwise (as the parquet-wasm writer was set). */
export const ROW_GROUP_ROWS = 1 << 17;
/** Bytes of values per data page (parquet-rs's default page size). */
const PAGE_BYTES = 1 << 20;

/** How a column's values are laid out in its pages. */
type Layout =
  | 'bytes4' | 'bytes8' // the engine's bytes as they are (int32, uint32 bits, float, date; int64, double, timestamp, decimal <= 18)
  | 'widen' // an 8- or 16-bit integer as INT32
  | 'dec32' // a decimal of precision <= 9 (one int64 lane) as INT32
  | 'bool' | 'string'
  | 'flba'; // a decimal of precision > 18 (two lanes) as big-endian bytes

interface ColumnPlan {
  name: string;
  phys: Phys;
  layout: Layout;
  /** fixed_len_byte_array only */
  typeLength?: number;
  converted?: number;
  scale?: number;
  precision?: number;
  /** writes the LogicalType union's member, or nothing */
  logical?: (w: ThriftWriter) => void;
}

/** Bytes of a decimal of this precision as a fixed-length byte array (parquet-rs's rule). */
export const decimalBytes = (precision: number) => Math.ceil((Math.log2(10 ** precision + 1) + 1) / 8);

const intType = (bits: number, signed: boolean) => (w: ThriftWriter) => { w.begin(10).i8(1, bits).bool(2, signed).end(); };
const UNIT_IDS = { millisecond: 1, microsecond: 2, nanosecond: 3 } as const;

function columnPlan(f: Field): ColumnPlan {
  const t: DataType = f.type, name = f.name;
  switch (t.id) {
    case 'int8': case 'int16': case 'uint8': case 'uint16': {
      const bits = t.id.endsWith('8') ? 8 : 16, signed = t.id.startsWith('int');
      const converted = signed ? (bits === 8 ? CONV.INT_8 : CONV.INT_16) : (bits === 8 ? CONV.UINT_8 : CONV.UINT_16);
      return { name, phys: Phys.INT32, layout: 'widen', converted, logical: intType(bits, signed) };
    }
    case 'int32': return { name, phys: Phys.INT32, layout: 'bytes4' };
    case 'uint32': return { name, phys: Phys.INT32, layout: 'bytes4', converted: CONV.UINT_32, logical: intType(32, false) };
    case 'int64': return { name, phys: Phys.INT64, layout: 'bytes8' };
    case 'uint64': return { name, phys: Phys.INT64, layout: 'bytes8', converted: CONV.UINT_64, logical: intType(64, false) };
    case 'float32': return { name, phys: Phys.FLOAT, layout: 'bytes4' };
    case 'float64': return { name, phys: Phys.DOUBLE, layout: 'bytes8' };
    case 'bool': return { name, phys: Phys.BOOLEAN, layout: 'bool' };
    case 'utf8': return { name, phys: Phys.BYTE_ARRAY, layout: 'string', converted: CONV.UTF8, logical: (w) => { w.begin(1).end(); } };
    case 'date32': return { name, phys: Phys.INT32, layout: 'bytes4', converted: CONV.DATE, logical: (w) => { w.begin(6).end(); } };
    case 'timestamp': {
      // seconds have no Parquet unit: a plain INT64 (the Arrow schema in the footer keeps the type)
      if (t.unit === 'second') return { name, phys: Phys.INT64, layout: 'bytes8' };
      const unit = UNIT_IDS[t.unit!];
      const converted = t.unit === 'millisecond' ? CONV.TIMESTAMP_MILLIS : t.unit === 'microsecond' ? CONV.TIMESTAMP_MICROS : undefined;
      const utc = t.tz != null;
      return { name, phys: Phys.INT64, layout: 'bytes8', converted, logical: (w) => { w.begin(8).bool(1, utc).begin(2).begin(unit).end().end().end(); } };
    }
    case 'decimal': {
      const p = t.precision!, s = t.scale!;
      const logical = (w: ThriftWriter) => { w.begin(5).i32(1, s).i32(2, p).end(); };
      const base = { name, converted: CONV.DECIMAL, scale: s, precision: p, logical };
      if (p <= 9) return { ...base, phys: Phys.INT32, layout: 'dec32' };
      if (p <= 18) return { ...base, phys: Phys.INT64, layout: 'bytes8' };
      return { ...base, phys: Phys.FIXED_LEN_BYTE_ARRAY, layout: 'flba', typeLength: decimalBytes(p) };
    }
  }
}

/** One column of a row group being built: its pages (headers and compressed bodies) and their totals. */
interface ColumnChunk { parts: Uint8Array[]; bytes: number; uncompressed: number; nulls: number; values: number }

/** A column chunk's totals: `bytes` of it in the row group's data, after the chunks before it. */
export type ChunkMeta = Omit<ColumnChunk, 'parts'>;

/**
 * A row group encoded: its column chunks one after another in `data` (built
 * in a task, appended to the file by the coordinator, see ParquetFileWriter.appendEncoded).
 */
export interface EncodedRowGroup { rows: number; data: Uint8Array; columns: ChunkMeta[] }

/** x as 4 little-endian bytes at buf[at] (level and string lengths, 4-byte values, the footer's length). */
function le32(buf: Uint8Array, at: number, x: number) {
  buf[at] = x & 0xff; buf[at + 1] = (x >> 8) & 0xff; buf[at + 2] = (x >> 16) & 0xff; buf[at + 3] = (x >>> 24) & 0xff;
}

/** Rows [s, e) of a column: nulls counted (0 when the column has no validity). */
function nullsIn(valid: Uint8Array | null, s: number, e: number): number {
  if (!valid) return 0;
  let k = 0;
  for (let i = s; i < e; i++) k += valid[i];
  return e - s - k;
}

/** The page's definition levels (max level 1) with their 4-byte length: one RLE run, or one bit-packed run. */
function writeLevels(body: Uint8Array, valid: Uint8Array | null, s: number, e: number, nulls: number): number {
  const n = e - s;
  let p = 4;
  const varint = (x: number) => { while (x >= 0x80) { body[p++] = (x % 0x80) | 0x80; x = Math.floor(x / 0x80); } body[p++] = x; };
  if (nulls === 0) {
    varint(n * 2);
    body[p++] = 1;
  } else {
    const groups = (n + 7) >> 3;
    varint(groups * 2 + 1);
    const v = valid!;
    let i = s;
    for (let g = 0; g < groups; g++) {
      let byte = 0;
      for (let bit = 0; bit < 8 && i < e; bit++, i++) byte |= v[i] << bit;
      body[p++] = byte;
    }
  }
  const len = p - 4;
  le32(body, 0, len);
  return p;
}

/** Bytes the levels of n rows take at most (length, varint header, packed bits). */
const levelBytes = (n: number) => 4 + 10 + ((n + 7) >> 3);

/** Bytes of the PLAIN values of rows [s, e) with `nulls` nulls. */
function valueBytes(plan: ColumnPlan, c: Column, s: number, e: number, nulls: number): number {
  const n = e - s - nulls;
  switch (plan.layout) {
    case 'bytes4': case 'widen': case 'dec32': return 4 * n;
    case 'bytes8': return 8 * n;
    case 'bool': return (n + 7) >> 3;
    case 'flba': return plan.typeLength! * n;
    case 'string': {
      const o = c.offsets!;
      if (nulls === 0) return 4 * n + o[e] - o[s];
      let b = 0;
      const v = c.valid!;
      for (let i = s; i < e; i++) if (v[i]) b += o[i + 1] - o[i];
      return 4 * n + b;
    }
  }
}

/** Write the PLAIN values of rows [s, e) at body[p]; returns the end. */
function writeValues(plan: ColumnPlan, c: Column, s: number, e: number, nulls: number, body: Uint8Array, p: number): number {
  const v = c.valid;
  const vals = c.values;
  switch (plan.layout) {
    case 'bytes4': case 'bytes8': {
      const w = plan.layout === 'bytes4' ? 4 : 8;
      const src = new Uint8Array(vals.buffer, vals.byteOffset, vals.length * vals.BYTES_PER_ELEMENT);
      if (nulls === 0) { body.set(src.subarray(s * w, e * w), p); return p + (e - s) * w; }
      // runs of valid rows copied at once
      let i = s;
      while (i < e) {
        while (i < e && !v![i]) i++;
        const r = i;
        while (i < e && v![i]) i++;
        if (i > r) { body.set(src.subarray(r * w, i * w), p); p += (i - r) * w; }
      }
      return p;
    }
    case 'widen': case 'dec32': {
      // numbers through a 4-byte little-endian write (the body offset is not 4-aligned)
      const src = plan.layout === 'dec32' ? new Int32Array(vals.buffer, vals.byteOffset, 2 * c.length) : vals as Int8Array;
      const step = plan.layout === 'dec32' ? 2 : 1;
      for (let i = s; i < e; i++) {
        if (v !== null && !v[i]) continue;
        const x = src[i * step] as number;
        le32(body, p, x);
        p += 4;
      }
      return p;
    }
    case 'bool': {
      const src = vals as Uint8Array;
      let byte = 0, bit = 0;
      for (let i = s; i < e; i++) {
        if (v !== null && !v[i]) continue;
        byte |= src[i] << bit;
        if (++bit === 8) { body[p++] = byte; byte = 0; bit = 0; }
      }
      if (bit > 0) body[p++] = byte;
      return p;
    }
    case 'string': {
      const o = c.offsets!, bytes = vals as Uint8Array;
      for (let i = s; i < e; i++) {
        if (v !== null && !v[i]) continue;
        const a = o[i], b = o[i + 1], len = b - a;
        le32(body, p, len);
        p += 4;
        if (len < 32) for (let x = a; x < b; x++) body[p++] = bytes[x];
        else { body.set(bytes.subarray(a, b), p); p += len; }
      }
      return p;
    }
    case 'flba': {
      // two little-endian 64-bit lanes (low, high) = 16 little-endian bytes; the low L of them, most significant first
      const L = plan.typeLength!;
      const src = new Uint8Array(vals.buffer, vals.byteOffset, 16 * c.length);
      for (let i = s; i < e; i++) {
        if (v !== null && !v[i]) continue;
        const at = 16 * i + L - 1;
        for (let j = 0; j < L; j++) body[p++] = src[at - j];
      }
      return p;
    }
  }
}

/** Where the pages of rows [s, e) end: about PAGE_BYTES of values each. */
function pageEnd(plan: ColumnPlan, c: Column, s: number, e: number): number {
  if (plan.layout !== 'string') {
    const width = plan.layout === 'bytes8' ? 8 : plan.layout === 'flba' ? plan.typeLength! : plan.layout === 'bool' ? 1 : 4;
    return Math.min(e, s + Math.max(1, Math.floor(PAGE_BYTES / width)));
  }
  // the first row at which the page's string bytes reach PAGE_BYTES (offsets only grow)
  const o = c.offsets!, limit = o[s] + PAGE_BYTES;
  if (o[e] <= limit) return e;
  let lo = s + 1, hi = e;
  while (lo < hi) { const m = (lo + hi) >> 1; if (o[m] >= limit) hi = m; else lo = m + 1; }
  return lo;
}

/** A data page of rows [s, e) appended to `chunk`. */
function encodePage(plan: ColumnPlan, c: Column, s: number, e: number, chunk: ColumnChunk, header: ThriftWriter) {
  const nulls = nullsIn(c.valid, s, e);
  const body = new Uint8Array(levelBytes(e - s) + valueBytes(plan, c, s, e, nulls));
  const end = writeValues(plan, c, s, e, nulls, body, writeLevels(body, c.valid, s, e, nulls));
  // copied into memory V8 counts: the addon's own buffers are not reported to it, and a worker's RSS grew by GBs before a GC
  const packed = compressSync(body.subarray(0, end), { copyOutputData: true });
  const h = header.reset();
  h.i32(1, DATA_PAGE).i32(2, end).i32(3, packed.length)
    .begin(5).i32(1, e - s).i32(2, PLAIN).i32(3, RLE).i32(4, RLE).end();
  h.end();
  const hb = h.bytes().slice();
  chunk.parts.push(hb, packed);
  chunk.bytes += hb.length + packed.length;
  chunk.uncompressed += hb.length + end;
  chunk.nulls += nulls;
  chunk.values += e - s;
}

/** Row groups built from rows added a batch at a time (every column's pages, compressed). */
export class RowGroupBuilder {
  readonly plans: ColumnPlan[];
  rows = 0;
  private chunks: ColumnChunk[];
  private readonly header = new ThriftWriter();

  constructor(fields: Field[]) {
    this.plans = fields.map(columnPlan);
    this.chunks = this.fresh();
  }

  private fresh(): ColumnChunk[] { return this.plans.map(() => ({ parts: [], bytes: 0, uncompressed: 0, nulls: 0, values: 0 })); }

  /** Rows [s, e) of a batch: each column's pages. */
  add(b: Batch, s: number, e: number) {
    if (e <= s) return;
    for (let k = 0; k < this.plans.length; k++) {
      const plan = this.plans[k], c = b.columns[k];
      for (let at = s; at < e;) {
        const end = pageEnd(plan, c, at, e);
        encodePage(plan, c, at, end, this.chunks[k], this.header);
        at = end;
      }
    }
    this.rows += e - s;
  }

  /** The row group built so far, its chunks in one buffer (the builder starts a new one). */
  take(): EncodedRowGroup {
    const data = new Uint8Array(this.chunks.reduce((a, c) => a + c.bytes, 0));
    let at = 0;
    const columns = this.chunks.map(({ parts, ...meta }) => {
      for (const p of parts) { data.set(p, at); at += p.length; }
      return meta;
    });
    const g = { rows: this.rows, data, columns };
    this.chunks = this.fresh();
    this.rows = 0;
    return g;
  }
}

/** A batch's rows into the builder, each row group of `size` rows handed to `full` as it fills. */
function addRows(b: RowGroupBuilder, x: Batch, size: number, full: (g: EncodedRowGroup) => void) {
  for (let at = 0; at < x.length;) {
    const end = Math.min(x.length, at + size - b.rows);
    b.add(x, at, end);
    at = end;
    if (b.rows >= size) full(b.take());
  }
}

/** Batches as row groups of `rowGroupSize` rows (the last one shorter): a task's share of a Parquet output. */
export function encodeRowGroups(fields: Field[], batches: Batch[], rowGroupSize = ROW_GROUP_ROWS): EncodedRowGroup[] {
  const b = new RowGroupBuilder(fields), groups: EncodedRowGroup[] = [];
  for (const x of batches) addRows(b, x, rowGroupSize, (g) => groups.push(g));
  if (b.rows > 0) groups.push(b.take());
  return groups;
}

interface WrittenGroup { rows: number; offset: number; columns: (ChunkMeta & { offset: number })[] }

/**
 * A Parquet file written through `out` as rows arrive: row groups of
 * `rowGroupSize` rows whatever the batches' sizes, each written once full;
 * the footer (with `kv` metadata) on finish().
 */
export class ParquetFileWriter {
  private pos = 0;
  private readonly groups: WrittenGroup[] = [];
  private readonly builder: RowGroupBuilder;

  constructor(fields: Field[], private readonly out: (b: Uint8Array) => void,
    private readonly opts: { rowGroupSize?: number; kv?: [string, string][] } = {}) {
    this.builder = new RowGroupBuilder(fields);
    this.emit(MAGIC);
  }

  private emit(b: Uint8Array) { this.out(b); this.pos += b.length; }
  private get groupRows() { return this.opts.rowGroupSize ?? ROW_GROUP_ROWS; }

  write(b: Batch) { addRows(this.builder, b, this.groupRows, (g) => this.append(g)); }

  /** A row group encoded elsewhere, after the rows written before it (a partial row group of them is closed first). */
  appendEncoded(g: EncodedRowGroup) {
    if (this.builder.rows > 0) this.append(this.builder.take());
    this.append(g);
  }

  private append(g: EncodedRowGroup) {
    if (g.rows === 0) return;
    const written: WrittenGroup = { rows: g.rows, offset: this.pos, columns: [] };
    let at = this.pos;
    for (const c of g.columns) { written.columns.push({ ...c, offset: at }); at += c.bytes; }
    this.emit(g.data);
    this.groups.push(written);
  }

  finish() {
    if (this.builder.rows > 0) this.append(this.builder.take());
    const footer = this.footer();
    const len = footer.length;
    const tail = new Uint8Array(len + 8);
    tail.set(footer);
    le32(tail, len, len);
    tail.set(MAGIC, len + 4);
    this.emit(tail);
  }

  /** FileMetaData (parquet.thrift) in the compact protocol. */
  private footer(): Uint8Array {
    const w = new ThriftWriter();
    const plans = this.builder.plans;
    w.i32(1, 1);
    w.list(2, T.STRUCT, plans.length + 1);
    w.begin().string(4, 'arrow_schema').i32(5, plans.length).end();
    for (const p of plans) {
      w.begin().i32(1, p.phys);
      if (p.typeLength !== undefined) w.i32(2, p.typeLength);
      w.i32(3, 1).string(4, p.name); // OPTIONAL
      if (p.converted !== undefined) w.i32(6, p.converted);
      if (p.scale !== undefined) w.i32(7, p.scale).i32(8, p.precision!);
      if (p.logical) { w.begin(10); p.logical(w); w.end(); }
      w.end();
    }
    w.i64(3, this.groups.reduce((a, g) => a + g.rows, 0));
    w.list(4, T.STRUCT, this.groups.length);
    for (const g of this.groups) {
      w.begin().list(1, T.STRUCT, g.columns.length);
      let bytes = 0, uncompressed = 0;
      g.columns.forEach((c, k) => {
        const p = plans[k];
        bytes += c.bytes; uncompressed += c.uncompressed;
        w.begin().i64(2, c.offset).begin(3)
          .i32(1, p.phys).list(2, T.I32, 2).i32Element(PLAIN).i32Element(RLE)
          .list(3, T.BINARY, 1).stringElement(p.name)
          .i32(4, SNAPPY).i64(5, c.values).i64(6, c.uncompressed).i64(7, c.bytes).i64(9, c.offset)
          .begin(12).i64(3, c.nulls).end()
          .end().end();
      });
      w.i64(2, uncompressed).i64(3, g.rows).i64(5, g.offset).i64(6, bytes).end();
    }
    const kv = this.opts.kv ?? [];
    if (kv.length) {
      w.list(5, T.STRUCT, kv.length);
      for (const [k, v] of kv) w.begin().string(1, k).string(2, v).end();
    }
    w.string(6, 'skewjoin');
    w.end();
    return w.bytes().slice();
  }
}
