// A column chunk's pages for the Parquet writer (io/parquet-encode.ts): rows
// cut into pages of about PAGE_BYTES of values, each page's definition levels
// (RLE/bit-packed hybrid), its values PLAIN or as dictionary indices, the body
// compressed with snappy and appended after its Thrift header.
import { compressSync } from 'snappy';
import type { Column } from '../kernels/column.js';
import type { StringDict } from './parquet-dict.js';
import { type ColumnPlan, DATA_PAGE, le32, PLAIN, PLAIN_DICTIONARY, RLE } from './parquet-format.js';
import type { ThriftWriter } from './thrift-compact.js';

/** Bytes of values per data page (parquet-rs's default page size). */
const PAGE_BYTES = 1 << 20;

/** One column of a row group being built: its pages (headers and compressed bodies) and their totals. */
export interface ColumnChunk {
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
  switch (plan.layout) {
    case 'bytes4':
    case 'bytes8':
      return writeBytes(plan.layout === 'bytes4' ? 4 : 8, c, s, e, nulls, body, p);
    case 'widen':
    case 'dec32':
      return writeWidened(plan.layout === 'dec32', c, s, e, body, p);
    case 'bool':
      return writeBools(c, s, e, body, p);
    case 'string':
      return writeStrings(c, s, e, body, p);
    case 'flba':
      return writeFixedBytes(plan.typeLength!, c, s, e, body, p);
  }
}

/** Values of `w` bytes each, as the engine holds them. */
function writeBytes(w: number, c: Column, s: number, e: number, nulls: number, body: Uint8Array, p: number): number {
  const v = c.valid,
    vals = c.values;
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

/** An 8- or 16-bit integer, or a decimal's low lane (`dec32`), as 4 bytes. */
function writeWidened(dec32: boolean, c: Column, s: number, e: number, body: Uint8Array, p: number): number {
  const v = c.valid,
    vals = c.values;
  // numbers through a 4-byte little-endian write (the body offset is not 4-aligned)
  const src = dec32 ? new Int32Array(vals.buffer, vals.byteOffset, 2 * c.length) : (vals as Int8Array);
  const step = dec32 ? 2 : 1;
  for (let i = s; i < e; i++) {
    if (v !== null && !v[i]) continue;
    const x = src[i * step] as number;
    le32(body, p, x);
    p += 4;
  }
  return p;
}

/** Booleans bit-packed, least significant bit first. */
function writeBools(c: Column, s: number, e: number, body: Uint8Array, p: number): number {
  const v = c.valid,
    src = c.values as Uint8Array;
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

/** Strings: a 4-byte length, then the bytes. */
function writeStrings(c: Column, s: number, e: number, body: Uint8Array, p: number): number {
  const v = c.valid,
    o = c.offsets!,
    bytes = c.values as Uint8Array;
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

/** A decimal of two lanes as `L` big-endian bytes. */
function writeFixedBytes(L: number, c: Column, s: number, e: number, body: Uint8Array, p: number): number {
  const v = c.valid,
    vals = c.values;
  // two little-endian 64-bit lanes (low, high) = 16 little-endian bytes; the low L of them, most significant first
  const src = new Uint8Array(vals.buffer, vals.byteOffset, 16 * c.length);
  for (let i = s; i < e; i++) {
    if (v !== null && !v[i]) continue;
    const at = 16 * i + L - 1;
    for (let j = 0; j < L; j++) body[p++] = src[at - j];
  }
  return p;
}

/** Where the pages of rows [s, e) end: about PAGE_BYTES of values each. */
export function pageEnd(plan: ColumnPlan, c: Column, s: number, e: number): number {
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
export function encodePage(
  plan: ColumnPlan,
  c: Column,
  s: number,
  e: number,
  chunk: ColumnChunk,
  header: ThriftWriter,
) {
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

/**
 * A page (its body compressed) and its header appended to a chunk; `typed` writes the header's part for its
 * page type.
 */
export function pushPage(
  chunk: ColumnChunk,
  header: ThriftWriter,
  body: Uint8Array,
  type: number,
  typed: (h: ThriftWriter) => void,
) {
  // copied into memory V8 counts: the addon's own buffers are not reported to it, and a worker's RSS grew by GBs
  // before a GC
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
