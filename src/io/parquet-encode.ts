// Parquet written straight from engine batches, with no Arrow or WebAssembly
// in between: flat OPTIONAL columns, PLAIN values in v1 data pages (strings
// through a dictionary while it stays small, see StringDict), definition
// levels in the RLE/bit-packed hybrid, snappy, the footer at the end. The
// schema (physical, converted and logical types) is the one parquet-rs wrote
// for the same Arrow types, so readers see the same types.
import { compressSync } from 'snappy';
import type { Batch, Column, DataType, Field } from '../kernels/column.js';
import { T, ThriftWriter } from './thrift-compact.js';

/** Physical types, converted types and encodings of parquet.thrift. */
const enum Phys {
  BOOLEAN = 0,
  INT32 = 1,
  INT64 = 2,
  FLOAT = 4,
  DOUBLE = 5,
  BYTE_ARRAY = 6,
  FIXED_LEN_BYTE_ARRAY = 7,
}
const CONV = {
  UTF8: 0,
  DECIMAL: 5,
  DATE: 6,
  TIMESTAMP_MILLIS: 9,
  TIMESTAMP_MICROS: 10,
  UINT_8: 11,
  UINT_16: 12,
  UINT_32: 13,
  UINT_64: 14,
  INT_8: 15,
  INT_16: 16,
};
const PLAIN = 0,
  PLAIN_DICTIONARY = 2,
  RLE = 3,
  SNAPPY = 1,
  DATA_PAGE = 0,
  DICTIONARY_PAGE = 2;
const MAGIC = new Uint8Array([0x50, 0x41, 0x52, 0x31]); // PAR1

/** Rows per row group, unless asked otherwise (as the parquet-wasm writer was set). */
const ROW_GROUP_ROWS = 1 << 17;
/** Bytes of values per data page (parquet-rs's default page size). */
const PAGE_BYTES = 1 << 20;

/** How a column's values are laid out in its pages. */
type Layout =
  | 'bytes4'
  | 'bytes8' // the engine's bytes as they are (int32, uint32 bits, float, date; int64, double, timestamp, decimal <= 18)
  | 'widen' // an 8- or 16-bit integer as INT32
  | 'dec32' // a decimal of precision <= 9 (one int64 lane) as INT32
  | 'bool'
  | 'string'
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

const intType = (bits: number, signed: boolean) => (w: ThriftWriter) => {
  w.begin(10).i8(1, bits).bool(2, signed).end();
};
const UNIT_IDS = { millisecond: 1, microsecond: 2, nanosecond: 3 } as const;

function columnPlan(f: Field): ColumnPlan {
  const t: DataType = f.type,
    name = f.name;
  switch (t.id) {
    case 'int8':
    case 'int16':
    case 'uint8':
    case 'uint16': {
      const bits = t.id.endsWith('8') ? 8 : 16,
        signed = t.id.startsWith('int');
      const converted = signed ? (bits === 8 ? CONV.INT_8 : CONV.INT_16) : bits === 8 ? CONV.UINT_8 : CONV.UINT_16;
      return { name, phys: Phys.INT32, layout: 'widen', converted, logical: intType(bits, signed) };
    }
    case 'int32':
      return { name, phys: Phys.INT32, layout: 'bytes4' };
    case 'uint32':
      return { name, phys: Phys.INT32, layout: 'bytes4', converted: CONV.UINT_32, logical: intType(32, false) };
    case 'int64':
      return { name, phys: Phys.INT64, layout: 'bytes8' };
    case 'uint64':
      return { name, phys: Phys.INT64, layout: 'bytes8', converted: CONV.UINT_64, logical: intType(64, false) };
    case 'float32':
      return { name, phys: Phys.FLOAT, layout: 'bytes4' };
    case 'float64':
      return { name, phys: Phys.DOUBLE, layout: 'bytes8' };
    case 'bool':
      return { name, phys: Phys.BOOLEAN, layout: 'bool' };
    case 'utf8':
      return {
        name,
        phys: Phys.BYTE_ARRAY,
        layout: 'string',
        converted: CONV.UTF8,
        logical: (w) => {
          w.begin(1).end();
        },
      };
    case 'date32':
      return {
        name,
        phys: Phys.INT32,
        layout: 'bytes4',
        converted: CONV.DATE,
        logical: (w) => {
          w.begin(6).end();
        },
      };
    case 'timestamp': {
      // seconds have no Parquet unit: a plain INT64 (the Arrow schema in the footer keeps the type)
      if (t.unit === 'second') return { name, phys: Phys.INT64, layout: 'bytes8' };
      const unit = UNIT_IDS[t.unit!];
      const converted =
        t.unit === 'millisecond' ? CONV.TIMESTAMP_MILLIS : t.unit === 'microsecond' ? CONV.TIMESTAMP_MICROS : undefined;
      const utc = t.tz != null;
      return {
        name,
        phys: Phys.INT64,
        layout: 'bytes8',
        converted,
        logical: (w) => {
          w.begin(8).bool(1, utc).begin(2).begin(unit).end().end().end();
        },
      };
    }
    case 'decimal': {
      const p = t.precision!,
        s = t.scale!;
      const logical = (w: ThriftWriter) => {
        w.begin(5).i32(1, s).i32(2, p).end();
      };
      const base = { name, converted: CONV.DECIMAL, scale: s, precision: p, logical };
      if (p <= 9) return { ...base, phys: Phys.INT32, layout: 'dec32' };
      if (p <= 18) return { ...base, phys: Phys.INT64, layout: 'bytes8' };
      return { ...base, phys: Phys.FIXED_LEN_BYTE_ARRAY, layout: 'flba', typeLength: decimalBytes(p) };
    }
  }
}

/**
 * A string column chunk's dictionary (parquet-rs and DuckDB write one by
 * default): each distinct value once, pages of indices into it. Values are
 * found by a hash of their bytes in an open-addressing table of typed arrays.
 * Once it would pass MAX_BYTES or MAX_VALUES the chunk's further pages are
 * PLAIN (the pages written stay as they are, as parquet-rs falls back).
 * On the out-of-core benchmark's sorted output (50M rows, a region string of
 * a few values beside three 8-byte columns) its column went from about 111 MB
 * to 18 MB (DuckDB's: 25 MB), with less to compress and to write; encoding a
 * column of 2M such strings took 43-48 ms against 54-55 ms PLAIN.
 */
class StringDict {
  static readonly MAX_BYTES = 1 << 20;
  static readonly MAX_VALUES = 1 << 16;
  n = 0;
  private bytes = new Uint8Array(1024);
  private used = 0;
  private offsets = new Int32Array(65);
  private slots = new Int32Array(256).fill(-1);
  private hashes = new Int32Array(64);

  /**
   * Indices of the non-null rows [s, e) of a string column into `out` (values added when new);
   * false when the dictionary is full. One loop with the table's arrays in locals (reloaded
   * only after an addition): called per value, a lookup method cost about twice as much.
   */
  indices(src: Uint8Array, o: Int32Array, v: Uint8Array | null, s: number, e: number, out: Int32Array): boolean {
    let slots = this.slots,
      hashes = this.hashes,
      offs = this.offsets,
      bytes = this.bytes,
      mask = slots.length - 1;
    for (let i = s, n = 0; i < e; i++) {
      if (v !== null && v[i] === 0) continue;
      const a = o[i],
        b = o[i + 1],
        len = b - a;
      let h = 0x811c9dc5 | 0;
      for (let x = a; x < b; x++) h = Math.imul(h ^ src[x], 0x01000193);
      let k = -1;
      for (let at = h & mask; ; at = (at + 1) & mask) {
        const c = slots[at];
        if (c < 0) break;
        if (hashes[c] !== h) continue;
        const st = offs[c];
        if (offs[c + 1] - st !== len) continue;
        let y = 0;
        while (y < len && bytes[st + y] === src[a + y]) y++;
        if (y === len) {
          k = c;
          break;
        }
      }
      if (k < 0) {
        if (this.n >= StringDict.MAX_VALUES || this.used + len > StringDict.MAX_BYTES) return false;
        k = this.add(src, a, b, h);
        slots = this.slots;
        hashes = this.hashes;
        offs = this.offsets;
        bytes = this.bytes;
        mask = slots.length - 1;
      }
      out[n++] = k;
    }
    return true;
  }

  private add(src: Uint8Array, a: number, b: number, h: number): number {
    const k = this.n++,
      len = b - a;
    if (this.used + len > this.bytes.length) this.bytes = grow(this.bytes, this.used + len);
    this.bytes.set(src.subarray(a, b), this.used);
    this.used += len;
    if (this.n + 1 > this.offsets.length) this.offsets = grow(this.offsets, this.n + 1);
    this.offsets[this.n] = this.used;
    if (k >= this.hashes.length) this.hashes = grow(this.hashes, k + 1);
    this.hashes[k] = h;
    if (2 * this.n > this.slots.length) this.rehash();
    else this.place(k);
    return k;
  }

  private place(k: number) {
    const mask = this.slots.length - 1;
    let at = this.hashes[k] & mask;
    while (this.slots[at] >= 0) at = (at + 1) & mask;
    this.slots[at] = k;
  }

  private rehash() {
    this.slots = new Int32Array(2 * this.slots.length).fill(-1);
    for (let k = 0; k < this.n; k++) this.place(k);
  }

  /** The dictionary page's body: every value PLAIN (4-byte length, bytes). */
  plain(): Uint8Array {
    const out = new Uint8Array(4 * this.n + this.used);
    for (let k = 0, p = 0; k < this.n; k++) {
      const o = this.offsets[k],
        e = this.offsets[k + 1];
      le32(out, p, e - o);
      out.set(this.bytes.subarray(o, e), p + 4);
      p += 4 + e - o;
    }
    return out;
  }
}

function grow<A extends Uint8Array | Int32Array>(a: A, need: number): A {
  const b = new (a.constructor as new (n: number) => A)(Math.max(need, 2 * a.length));
  b.set(a);
  return b;
}

/** One column of a row group being built: its pages (headers and compressed bodies) and their totals. */
interface ColumnChunk {
  parts: Uint8Array[];
  bytes: number;
  uncompressed: number;
  nulls: number;
  values: number;
  /** a string chunk's dictionary */
  dict: StringDict | null;
  /** whether the next page uses the dictionary (false once it is full: PLAIN pages from then on) */
  dictOpen: boolean;
  /** whether any page used the dictionary */
  dictPages: boolean;
  /** bytes of the dictionary page (header included) at the chunk's start; 0: none */
  dictionary: number;
}

/** A column chunk's totals: `bytes` of it in the row group's data, after the chunks before it. */
type ChunkMeta = Omit<ColumnChunk, 'parts' | 'dict' | 'dictOpen' | 'dictPages'>;

/**
 * A row group encoded: its column chunks one after another in `data` (built
 * in a task, appended to the file by the coordinator, see ParquetFileWriter.appendEncoded).
 */
export interface EncodedRowGroup {
  rows: number;
  data: Uint8Array;
  columns: ChunkMeta[];
}

/** x as 4 little-endian bytes at buf[at] (level and string lengths, 4-byte values, the footer's length). */
function le32(buf: Uint8Array, at: number, x: number) {
  buf[at] = x & 0xff;
  buf[at + 1] = (x >> 8) & 0xff;
  buf[at + 2] = (x >> 16) & 0xff;
  buf[at + 3] = (x >>> 24) & 0xff;
}

/** Rows [s, e) of a column: nulls counted (0 when the column has no validity). */
function nullsIn(valid: Uint8Array | null, s: number, e: number): number {
  if (!valid) return 0;
  let k = 0;
  for (let i = s; i < e; i++) k += valid[i];
  return e - s - k;
}

/** An unsigned varint (a run header of the RLE/bit-packed hybrid) at buf[p]; returns the end. */
function putVarint(buf: Uint8Array, p: number, x: number): number {
  while (x >= 0x80) {
    buf[p++] = (x % 0x80) | 0x80;
    x = Math.floor(x / 0x80);
  }
  buf[p++] = x;
  return p;
}

/** The page's definition levels (max level 1) with their 4-byte length: one RLE run, or one bit-packed run. */
function writeLevels(body: Uint8Array, valid: Uint8Array | null, s: number, e: number, nulls: number): number {
  const n = e - s;
  let p = 4;
  if (nulls === 0) {
    p = putVarint(body, p, n * 2);
    body[p++] = 1;
  } else {
    const groups = (n + 7) >> 3;
    p = putVarint(body, p, groups * 2 + 1);
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
    case 'bytes4':
    case 'widen':
    case 'dec32':
      return 4 * n;
    case 'bytes8':
      return 8 * n;
    case 'bool':
      return (n + 7) >> 3;
    case 'flba':
      return plan.typeLength! * n;
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
function writeValues(
  plan: ColumnPlan,
  c: Column,
  s: number,
  e: number,
  nulls: number,
  body: Uint8Array,
  p: number,
): number {
  const v = c.valid;
  const vals = c.values;
  switch (plan.layout) {
    case 'bytes4':
    case 'bytes8': {
      const w = plan.layout === 'bytes4' ? 4 : 8;
      const src = new Uint8Array(vals.buffer, vals.byteOffset, vals.length * vals.BYTES_PER_ELEMENT);
      if (nulls === 0) {
        body.set(src.subarray(s * w, e * w), p);
        return p + (e - s) * w;
      }
      // runs of valid rows copied at once
      let i = s;
      while (i < e) {
        while (i < e && !v![i]) i++;
        const r = i;
        while (i < e && v![i]) i++;
        if (i > r) {
          body.set(src.subarray(r * w, i * w), p);
          p += (i - r) * w;
        }
      }
      return p;
    }
    case 'widen':
    case 'dec32': {
      // numbers through a 4-byte little-endian write (the body offset is not 4-aligned)
      const src =
        plan.layout === 'dec32' ? new Int32Array(vals.buffer, vals.byteOffset, 2 * c.length) : (vals as Int8Array);
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
      let byte = 0,
        bit = 0;
      for (let i = s; i < e; i++) {
        if (v !== null && !v[i]) continue;
        byte |= src[i] << bit;
        if (++bit === 8) {
          body[p++] = byte;
          byte = 0;
          bit = 0;
        }
      }
      if (bit > 0) body[p++] = byte;
      return p;
    }
    case 'string': {
      const o = c.offsets!,
        bytes = vals as Uint8Array;
      for (let i = s; i < e; i++) {
        if (v !== null && !v[i]) continue;
        const a = o[i],
          b = o[i + 1],
          len = b - a;
        le32(body, p, len);
        p += 4;
        if (len < 32) for (let x = a; x < b; x++) body[p++] = bytes[x];
        else {
          body.set(bytes.subarray(a, b), p);
          p += len;
        }
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
    const width =
      plan.layout === 'bytes8' ? 8 : plan.layout === 'flba' ? plan.typeLength! : plan.layout === 'bool' ? 1 : 4;
    return Math.min(e, s + Math.max(1, Math.floor(PAGE_BYTES / width)));
  }
  // the first row at which the page's string bytes reach PAGE_BYTES (offsets only grow)
  const o = c.offsets!,
    limit = o[s] + PAGE_BYTES;
  if (o[e] <= limit) return e;
  let lo = s + 1,
    hi = e;
  while (lo < hi) {
    const m = (lo + hi) >> 1;
    if (o[m] >= limit) hi = m;
    else lo = m + 1;
  }
  return lo;
}

/** A data page of rows [s, e) appended to `chunk`. */
function encodePage(plan: ColumnPlan, c: Column, s: number, e: number, chunk: ColumnChunk, header: ThriftWriter) {
  const nulls = nullsIn(c.valid, s, e);
  let idx = chunk.dictOpen ? dictIndices(chunk.dict!, c, s, e, nulls) : null;
  if (!idx)
    chunk.dictOpen = false; // full: PLAIN from this page on
  else if (idx.length === 0) idx = null; // nulls only: nothing to index
  const width = idx ? bitWidth(chunk.dict!.n) : 0;
  const vbytes = idx ? 1 + bitPackedBytes(idx.length, width) : valueBytes(plan, c, s, e, nulls);
  const body = scratchBody(levelBytes(e - s) + vbytes);
  const at = writeLevels(body, c.valid, s, e, nulls);
  const end = idx ? writeIndices(body, at, idx, width) : writeValues(plan, c, s, e, nulls, body, at);
  if (idx) chunk.dictPages = true;
  const encoding = idx ? PLAIN_DICTIONARY : PLAIN;
  pushPage(chunk, header, body.subarray(0, end), DATA_PAGE, (h) =>
    h
      .begin(5)
      .i32(1, e - s)
      .i32(2, encoding)
      .i32(3, RLE)
      .i32(4, RLE)
      .end(),
  );
  chunk.nulls += nulls;
  chunk.values += e - s;
}

/**
 * A page's uncompressed body is written here, every byte up to its end, and
 * compressed at once (the chunk keeps the compressed copy): one buffer a
 * thread rather than a fresh one a page, which in the out-of-core sort came
 * to about 1.5 GB of short-lived allocations a run, each zeroed by the kernel.
 */
let bodyScratch = new Uint8Array(1 << 16);
let indexScratch = new Int32Array(1 << 12);
function scratchBody(n: number): Uint8Array {
  if (bodyScratch.length < n) bodyScratch = new Uint8Array(Math.max(n, 2 * bodyScratch.length));
  return bodyScratch.subarray(0, n);
}

/** A page (its body compressed) and its header appended to a chunk; `typed` writes the header's part for its page type. */
function pushPage(
  chunk: ColumnChunk,
  header: ThriftWriter,
  body: Uint8Array,
  type: number,
  typed: (h: ThriftWriter) => void,
) {
  // copied into memory V8 counts: the addon's own buffers are not reported to it, and a worker's RSS grew by GBs before a GC
  const packed = compressSync(body, { copyOutputData: true });
  const h = header.reset();
  h.i32(1, type).i32(2, body.length).i32(3, packed.length);
  typed(h);
  h.end();
  const hb = h.bytes().slice();
  chunk.parts.push(hb, packed);
  chunk.bytes += hb.length + packed.length;
  chunk.uncompressed += hb.length + body.length;
}

/** Dictionary indices of the non-null rows of [s, e); null when the dictionary is full. */
function dictIndices(dict: StringDict, c: Column, s: number, e: number, nulls: number): Int32Array | null {
  if (indexScratch.length < e - s) indexScratch = new Int32Array(Math.max(e - s, 2 * indexScratch.length));
  const idx = indexScratch.subarray(0, e - s - nulls);
  return dict.indices(c.values as Uint8Array, c.offsets!, c.valid, s, e, idx) ? idx : null;
}

/** Bits an index below n takes (at least 1). */
const bitWidth = (n: number) => Math.max(1, 32 - Math.clz32(Math.max(0, n - 1)));

/** Bytes of n values bit-packed at `width` bits in one run (its header included). */
const bitPackedBytes = (n: number, width: number) => 5 + ((n + 7) >> 3) * width;

/** The page's indices: the bit width, then one bit-packed run of the RLE/bit-packed hybrid (groups of 8, LSB first). */
function writeIndices(body: Uint8Array, p: number, idx: Int32Array, width: number): number {
  body[p++] = width;
  p = putVarint(body, p, ((idx.length + 7) >> 3) * 2 + 1);
  const end = p + ((idx.length + 7) >> 3) * width;
  body.fill(0, p, end);
  let acc = 0,
    bits = 0;
  for (let i = 0; i < idx.length; i++) {
    acc |= idx[i] << bits;
    bits += width;
    while (bits >= 8) {
      body[p++] = acc & 0xff;
      acc >>>= 8;
      bits -= 8;
    }
    // a width above 24 would overflow acc: a dictionary holds at most 2^16 values
  }
  if (bits > 0) body[p++] = acc & 0xff;
  return end;
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

  private fresh(): ColumnChunk[] {
    return this.plans.map((p) => ({
      parts: [],
      bytes: 0,
      uncompressed: 0,
      nulls: 0,
      values: 0,
      dict: p.layout === 'string' ? new StringDict() : null,
      dictOpen: p.layout === 'string',
      dictPages: false,
      dictionary: 0,
    }));
  }

  /** Rows [s, e) of a batch: each column's pages. */
  add(b: Batch, s: number, e: number) {
    if (e <= s) return;
    for (let k = 0; k < this.plans.length; k++) {
      const plan = this.plans[k],
        c = b.columns[k];
      for (let at = s; at < e; ) {
        const end = pageEnd(plan, c, at, e);
        encodePage(plan, c, at, end, this.chunks[k], this.header);
        at = end;
      }
    }
    this.rows += e - s;
  }

  /** The row group built so far, its chunks in one buffer (the builder starts a new one). */
  take(): EncodedRowGroup {
    for (const c of this.chunks) if (c.dictPages) this.dictionaryPage(c);
    const data = new Uint8Array(this.chunks.reduce((a, c) => a + c.bytes, 0));
    let at = 0;
    const columns = this.chunks.map(({ parts, dict, dictOpen, dictPages, ...meta }) => {
      for (const p of parts) {
        data.set(p, at);
        at += p.length;
      }
      return meta;
    });
    const g = { rows: this.rows, data, columns };
    this.chunks = this.fresh();
    this.rows = 0;
    return g;
  }

  /** The chunk's dictionary page, put before its data pages. */
  private dictionaryPage(c: ColumnChunk) {
    const pages = c.parts,
      before = c.bytes;
    c.parts = [];
    const values = c.dict!;
    pushPage(c, this.header, values.plain(), DICTIONARY_PAGE, (h) =>
      h.begin(7).i32(1, values.n).i32(2, PLAIN_DICTIONARY).end(),
    );
    c.dictionary = c.bytes - before;
    c.parts.push(...pages);
  }
}

/** A batch's rows into the builder, each row group of `size` rows handed to `full` as it fills. */
function addRows(b: RowGroupBuilder, x: Batch, size: number, full: (g: EncodedRowGroup) => void) {
  for (let at = 0; at < x.length; ) {
    const end = Math.min(x.length, at + size - b.rows);
    b.add(x, at, end);
    at = end;
    if (b.rows >= size) full(b.take());
  }
}

/** Batches as row groups of `rowGroupSize` rows (the last one shorter): a task's share of a Parquet output. */
export function encodeRowGroups(fields: Field[], batches: Batch[], rowGroupSize = ROW_GROUP_ROWS): EncodedRowGroup[] {
  const b = new RowGroupBuilder(fields),
    groups: EncodedRowGroup[] = [];
  for (const x of batches) addRows(b, x, rowGroupSize, (g) => groups.push(g));
  if (b.rows > 0) groups.push(b.take());
  return groups;
}

interface WrittenGroup {
  rows: number;
  offset: number;
  columns: (ChunkMeta & { offset: number })[];
}

/**
 * A Parquet file written through `out` as rows arrive: row groups of
 * `rowGroupSize` rows whatever the batches' sizes, each written once full;
 * the footer (with `kv` metadata) on finish().
 */
export class ParquetFileWriter {
  private pos = 0;
  private readonly groups: WrittenGroup[] = [];
  private readonly builder: RowGroupBuilder;

  constructor(
    fields: Field[],
    private readonly out: (b: Uint8Array) => void,
    private readonly opts: { rowGroupSize?: number; kv?: [string, string][] } = {},
  ) {
    this.builder = new RowGroupBuilder(fields);
    this.emit(MAGIC);
  }

  private emit(b: Uint8Array) {
    this.out(b);
    this.pos += b.length;
  }
  private get groupRows() {
    return this.opts.rowGroupSize ?? ROW_GROUP_ROWS;
  }

  write(b: Batch) {
    addRows(this.builder, b, this.groupRows, (g) => this.append(g));
  }

  /** A row group encoded elsewhere, after the rows written before it (a partial row group of them is closed first). */
  appendEncoded(g: EncodedRowGroup) {
    if (this.builder.rows > 0) this.append(this.builder.take());
    this.append(g);
  }

  private append(g: EncodedRowGroup) {
    if (g.rows === 0) return;
    const written: WrittenGroup = { rows: g.rows, offset: this.pos, columns: [] };
    let at = this.pos;
    for (const c of g.columns) {
      written.columns.push({ ...c, offset: at });
      at += c.bytes;
    }
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
      if (p.logical) {
        w.begin(10);
        p.logical(w);
        w.end();
      }
      w.end();
    }
    w.i64(
      3,
      this.groups.reduce((a, g) => a + g.rows, 0),
    );
    w.list(4, T.STRUCT, this.groups.length);
    for (const g of this.groups) {
      w.begin().list(1, T.STRUCT, g.columns.length);
      let bytes = 0,
        uncompressed = 0;
      g.columns.forEach((c, k) => {
        const p = plans[k];
        bytes += c.bytes;
        uncompressed += c.uncompressed;
        w.begin().i64(2, c.offset).begin(3).i32(1, p.phys);
        if (c.dictionary > 0) w.list(2, T.I32, 3).i32Element(PLAIN).i32Element(RLE).i32Element(PLAIN_DICTIONARY);
        else w.list(2, T.I32, 2).i32Element(PLAIN).i32Element(RLE);
        w.list(3, T.BINARY, 1)
          .stringElement(p.name)
          .i32(4, SNAPPY)
          .i64(5, c.values)
          .i64(6, c.uncompressed)
          .i64(7, c.bytes)
          .i64(9, c.offset + c.dictionary);
        if (c.dictionary > 0) w.i64(11, c.offset);
        w.begin(12).i64(3, c.nulls).end().end().end();
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
