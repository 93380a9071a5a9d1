// Parquet decoded straight into engine columns, without WebAssembly or Arrow,
// for the common flat files: INT32, INT64, FLOAT, DOUBLE, BYTE_ARRAY strings
// and decimals (INT32, INT64, FIXED_LEN_BYTE_ARRAY), PLAIN or dictionary
// encoded, v1 or v2 data pages, uncompressed, snappy or gzip. A decimal of
// precision <= 18 goes to its 8-byte lane directly (parquet-wasm widens it to
// 16 bytes first). Anything else throws NotDirect and the caller reads the
// file through parquet-wasm (io/parquet.ts), which also reports corrupt data.
import fs from 'node:fs';
import zlib from 'node:zlib';
import { uncompressSync } from 'snappy';
import type { Batch, Column, DataType, Field } from '../kernels/column.js';
import { valuesCtor } from '../kernels/column.js';
import { type Chunk, type Leaf, NotDirect, openFooter, readAt } from './parquet-footer.js';
import { CorruptPage, defLevels, rleHybrid } from './rle.js';
import { ThriftReader, type TStruct } from './thrift-read.js';
import type { WordLease } from './word-pool.js';
import {
  type Dict,
  type Kind,
  type Plan,
  Strings,
  dictValues,
  plainValues,
  plainWords,
  u32,
} from './parquet-values.js';

/** Rows per batch handed to the engine (as the parquet-wasm path reads). */
const BATCH_ROWS = 1 << 17;

const INTEGER = 10,
  DATE = 6,
  DECIMAL = 5,
  TIMESTAMP = 8;
const TS_UNITS = ['millisecond', 'microsecond', 'nanosecond'] as const;

/** Whether a leaf is a plain integer of `bits` (no converted or logical type beyond that). */
function plainInt(l: Leaf, bits: number): boolean {
  if (l.logical) return l.logical.id === INTEGER && l.logical.value[1] === bits && l.logical.value[2] === true;
  return l.converted === undefined || l.converted === (bits === 32 ? 17 : 18);
}

function decimalOf(l: Leaf): { precision: number; scale: number } | null {
  if (l.logical?.id === DECIMAL)
    return { scale: Number(l.logical.value[1] ?? 0), precision: Number(l.logical.value[2]) };
  if (l.converted === DECIMAL && l.precision !== undefined) return { precision: l.precision, scale: l.scale ?? 0 };
  return null;
}

function timestampUnit(l: Leaf): string | null {
  if (l.logical?.id === TIMESTAMP) {
    const u = l.logical.value[2] as TStruct | undefined;
    return u ? (TS_UNITS[Number(Object.keys(u)[0]) - 1] ?? null) : null;
  }
  return l.converted === 9 ? 'millisecond' : l.converted === 10 ? 'microsecond' : null;
}

/** How `field` is read from `leaf`, or NotDirect. */
function planColumn(field: Field, leaf: Leaf, index: number): Plan {
  const t: DataType = field.type,
    p = leaf.phys;
  const plan = (kind: Kind, words: number, physBytes: number): Plan => ({ field, leaf, index, kind, words, physBytes });
  switch (t.id) {
    case 'int32':
      if (p === 1 && plainInt(leaf, 32)) return plan('copy', 1, 4);
      break;
    case 'date32':
      if (p === 1 && (leaf.logical?.id === DATE || leaf.converted === 6)) return plan('copy', 1, 4);
      break;
    case 'int64':
      if (p === 2 && plainInt(leaf, 64)) return plan('copy', 2, 8);
      break;
    case 'float32':
      if (p === 4) return plan('copy', 1, 4);
      break;
    case 'float64':
      if (p === 5) return plan('copy', 2, 8);
      break;
    case 'timestamp':
      if (p === 2 && timestampUnit(leaf) === t.unit) return plan('copy', 2, 8);
      break;
    case 'utf8':
      if (p === 6) return plan('utf8', 0, 0);
      break;
    case 'decimal': {
      const d = decimalOf(leaf);
      if (!d || d.precision !== t.precision || d.scale !== t.scale) break;
      const words = t.precision! > 18 ? 4 : 2;
      if (p === 1 && words === 2) return plan('int32-decimal', 2, 4);
      if (p === 2 && words === 2) return plan('copy', 2, 8);
      if (p === 7 && leaf.typeLength > 0 && leaf.typeLength <= 16) return plan('flba-decimal', words, leaf.typeLength);
      break;
    }
  }
  throw new NotDirect(`column ${field.name}: ${t.id} from physical type ${p}`);
}

export const CODECS = new Set([0, 1, 2]);
export const ENCODINGS = new Set([0, 2, 3, 8]); // PLAIN, PLAIN_DICTIONARY, RLE (levels), RLE_DICTIONARY

export function decompress(codec: number, body: Uint8Array, size: number): Uint8Array {
  if (codec === 0) return body;
  const copy = { asBuffer: true, copyOutputData: true }; // native external buffers cost q06 SF 10 1.5 s of sys, 1 GB
  const out = codec === 1 ? (uncompressSync(body, copy) as Buffer) : zlib.gunzipSync(body);
  if (out.length !== size) throw new CorruptPage(`page decompressed to ${out.length} bytes, header says ${size}`);
  return new Uint8Array(out.buffer, out.byteOffset, out.length); // a plain view: Buffer's subarray costs far more
}

export function readDict(plan: Plan, data: Uint8Array, n: number): Dict {
  if (plan.kind !== 'utf8') {
    const words = new Int32Array(n * plan.words);
    plainWords(plan, data, 0, n, words, 0);
    return { n, words, starts: null, lens: null, data };
  }
  const starts = new Int32Array(n),
    lens = new Int32Array(n);
  let p = 0;
  for (let k = 0; k < n; k++) {
    if (p + 4 > data.length) throw new CorruptPage('dictionary ends early');
    const len = u32(data, p);
    p += 4;
    if (p + len > data.length) throw new CorruptPage('dictionary ends early');
    starts[k] = p;
    lens[k] = len;
    p += len;
  }
  return { n, words: null, starts, lens, data };
}

let scratch = new Int32Array(1 << 16);
const scratchOf = (n: number) => (scratch.length >= n ? scratch : (scratch = new Int32Array(n)));

/** A column chunk decoded: words (fixed widths) or strings, and validity. */
interface Decoded {
  words: Int32Array | null;
  strings: Strings | null;
  valid: Uint8Array | null;
}

/** Decode one column chunk (its bytes from the file) of `rows` rows. */
function decodeChunk(plan: Plan, chunk: Chunk, bytes: Uint8Array, rows: number, lease?: WordLease): Decoded {
  if (chunk.numValues !== rows) throw new CorruptPage(`chunk has ${chunk.numValues} values for ${rows} rows`);
  // (a leased array is not zeroed: the pages write every row's words, nulls' too, or throw)
  const n = rows * plan.words,
    words = plan.kind === 'utf8' ? null : lease ? lease.take(n) : new Int32Array(n);
  const strings = plan.kind === 'utf8' ? new Strings(new Int32Array(rows + 1), bytes.length * 2) : null;
  // validity made on the first null (all present until a page says otherwise)
  let valid: Uint8Array | null = null;
  let row = 0;
  const validFor = () => (valid ??= new Uint8Array(rows).fill(1));
  let dict: Dict | null = null,
    pos = 0;
  while (row < rows) {
    if (pos >= bytes.length) throw new CorruptPage('column chunk ends early');
    const r = new ThriftReader(bytes, pos);
    const h = r.struct();
    pos = r.pos;
    const type = Number(h[1]),
      usize = Number(h[2]),
      csize = Number(h[3]);
    if (!(csize >= 0 && pos + csize <= bytes.length)) throw new CorruptPage('page beyond its column chunk');
    const body = bytes.subarray(pos, pos + csize);
    pos += csize;
    if (type === 2) {
      const dh = h[7] as TStruct;
      if (!dh || (dh[2] !== 0 && dh[2] !== 2)) throw new NotDirect('dictionary encoding');
      dict = readDict(plan, decompress(chunk.codec, body, usize), Number(dh[1]));
      continue;
    }
    if (type !== 0 && type !== 3) continue; // index pages
    const { n, enc, data, p, levels, lp, lend } = dataPage(plan, chunk, h, type, body, usize);
    if (!(n >= 0 && row + n <= rows)) throw new CorruptPage('more values than rows');
    if (lend > levels.length) throw new CorruptPage('levels beyond the page');
    const nonNull = plan.leaf.optional ? defLevels(levels, lp, lend, n, scratchOf(n), validFor, row) : n;
    if (valid === null && nonNull < n) throw new CorruptPage('levels count no nulls');
    if (enc === 0) plainValues(plan, data, p, n, nonNull, row, words, strings, valid);
    else if (enc === 2 || enc === 8) {
      if (!dict) throw new CorruptPage('dictionary-encoded page without a dictionary');
      if (p >= data.length && nonNull > 0) throw new CorruptPage('values end early');
      // the levels were copied out of the scratch: the indices may reuse it
      const idx = scratchOf(nonNull);
      rleHybrid(data, p + 1, data.length, data[p] ?? 0, idx, nonNull);
      dictValues(plan, dict, idx, n, nonNull, row, words, strings, valid);
    } else throw new NotDirect(`encoding ${enc}`);
    row += n;
  }
  return { words, strings, valid };
}

/** A data page (v1 or v2) opened: its values' count and encoding, its data decompressed, where its levels lie. */
export function dataPage(plan: Plan, chunk: Chunk, h: TStruct, type: number, body: Uint8Array, usize: number) {
  if (type === 0) {
    const dp = h[5] as TStruct;
    const n = Number(dp[1]),
      enc = Number(dp[2]),
      data = decompress(chunk.codec, body, usize);
    if (!plan.leaf.optional) return { n, enc, data, p: 0, levels: data, lp: 0, lend: 0 };
    if (dp[3] !== 3) throw new NotDirect('definition levels not RLE');
    if (data.length < 4) throw new CorruptPage('levels end early');
    const lend = 4 + u32(data, 0);
    return { n, enc, data, p: lend, levels: data, lp: 4, lend };
  }
  const dp = h[8] as TStruct;
  const n = Number(dp[1]),
    enc = Number(dp[4]);
  const dl = Number(dp[5] ?? 0),
    rl = Number(dp[6] ?? 0);
  if (rl !== 0) throw new NotDirect('repetition levels');
  if (dl > body.length) throw new CorruptPage('levels beyond the page');
  const data = dp[7] === false ? body.subarray(dl) : decompress(chunk.codec, body.subarray(dl), usize - dl);
  return { n, enc, data, p: 0, levels: body, lp: 0, lend: dl };
}

/** One engine column of rows [lo, hi) of a decoded chunk (views where the layout allows). */
function slice(plan: Plan, d: Decoded, lo: number, hi: number): Column {
  const type = plan.field.type,
    n = hi - lo;
  const valid = d.valid ? d.valid.subarray(lo, hi) : null;
  if (d.strings) {
    const src = d.strings.offsets,
      base = src[lo];
    const offsets = new Int32Array(n + 1);
    for (let i = 0; i <= n; i++) offsets[i] = src[lo + i] - base;
    return { type, length: n, values: d.strings.bytes.subarray(base, src[hi]), offsets, valid };
  }
  const ctor = valuesCtor(type),
    bytesPerRow = 4 * plan.words,
    w = d.words!;
  return {
    type,
    length: n,
    values: new ctor(w.buffer, w.byteOffset + lo * bytesPerRow, (n * bytesPerRow) / ctor.BYTES_PER_ELEMENT),
    valid,
  };
}

export interface DirectRange {
  offset?: number;
  limit?: number;
}

export function planOf(leaves: Leaf[] | null, f: Field): Plan {
  if (!leaves) throw new NotDirect('nested schema');
  const i = leaves.findIndex((l) => l.name === f.name);
  if (i < 0) throw new NotDirect(`no column ${f.name}`);
  return planColumn(f, leaves[i], i);
}

/**
 * Which of `fields` this reader decodes faster than parquet-wasm, measured on
 * TPC-H's lineitem (shared machine, in-process A/B): decimals, which
 * parquet-wasm widens to 16 bytes and the engine narrows back (about 1.5-2x
 * faster here). Integers, dates and strings are faster through parquet-wasm.
 * All false for a file this reader does not take.
 */
export function preferDirect(path: string, fields: Field[]): boolean[] {
  let leaves: Leaf[] | null;
  try {
    const { fd, footer } = openFooter(path);
    fs.closeSync(fd);
    leaves = footer.leaves;
  } catch {
    return fields.map(() => false);
  }
  return fields.map((f) => {
    try {
      return f.type.id === 'decimal' && planOf(leaves, f).kind !== 'utf8';
    } catch {
      return false;
    }
  });
}

/**
 * Rows of some row groups (named: an empty list is left to parquet-wasm) of a flat Parquet
 * file as engine batches of at most BATCH_ROWS rows, or of `lengths` rows each
 * (one row group only: to line up with batches read otherwise); `range` skips
 * and limits rows of the groups read. Throws NotDirect for a file or column
 * this reader does not take, another error for data it finds corrupt.
 * `lease`: fixed-width columns' words come from it (io/word-pool.ts).
 */
export function readDirect(
  path: string,
  rowGroups: number[],
  fields: Field[],
  range: DirectRange = {},
  lengths?: number[],
  lease?: WordLease,
): Batch[] {
  const { fd, footer } = openFooter(path);
  try {
    const plans = fields.map((f) => planOf(footer.leaves, f));
    if (rowGroups.length === 0) throw new NotDirect('no row groups named');
    let skip = range.offset ?? 0,
      left = range.limit || Infinity; // a limit of 0 is none, as parquet-wasm reads it
    const out: Batch[] = [];
    for (const g of rowGroups) {
      const rg = footer.rowGroups[g];
      if (!rg) throw new NotDirect(`no row group ${g}`);
      if (left <= 0) break;
      if (skip >= rg.rows) {
        skip -= rg.rows;
        continue;
      }
      const lo = skip,
        hi = Math.min(rg.rows, lo + left);
      skip = 0;
      left -= hi - lo;
      const decoded = plans.map((p) => {
        const chunk = rg.chunks[p.index];
        if (!chunk || chunk.phys !== p.leaf.phys) throw new CorruptPage('column chunk does not match the schema');
        if (!CODECS.has(chunk.codec)) throw new NotDirect(`codec ${chunk.codec}`);
        if (chunk.encodings.some((e) => !ENCODINGS.has(e))) throw new NotDirect(`encodings ${chunk.encodings}`);
        return decodeChunk(p, chunk, readAt(fd, chunk.start, chunk.size), rg.rows, lease);
      });
      const cuts =
        lengths ??
        Array.from({ length: Math.ceil((hi - lo) / BATCH_ROWS) }, (_, k) =>
          Math.min(BATCH_ROWS, hi - lo - k * BATCH_ROWS),
        );
      if (lengths && (rowGroups.length !== 1 || lengths.reduce((x, y) => x + y, 0) !== hi - lo))
        throw new NotDirect('batch lengths do not match');
      for (let a = lo, k = 0; k < cuts.length; a += cuts[k++]) {
        out.push({ length: cuts[k], columns: plans.map((p, i) => slice(p, decoded[i], a, a + cuts[k])) });
      }
    }
    return out;
  } finally {
    fs.closeSync(fd);
  }
}
