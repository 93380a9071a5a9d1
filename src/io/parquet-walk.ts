// The one walk of the direct readers (io/parquet-direct.ts decodes chunks whole, io/parquet-mask.ts reads a
// filter's outcomes, io/parquet-select.ts reads the rows kept): the row groups read (a range skipping and limiting
// rows of them), each column chunk checked against its leaf and read from the file, and a chunk's pages: headers
// read, the dictionary page decoded, a data page (v1 or v2) opened only when its reader wants its rows
// (decompressed, definition levels decoded, dictionary indices unpacked).
import fs from 'node:fs';
import zlib from 'node:zlib';
import { uncompressSync } from 'snappy';
import { type Chunk, type Footer, NotDirect, openFooter, readAt } from './parquet-footer.js';
import { type Dict, type Plan, plainWords, u32 } from './parquet-values.js';
import { CorruptPage, defLevels, rleHybrid } from './rle.js';
import { ThriftReader, type TStruct } from './thrift-read.js';

const CODECS = new Set([0, 1, 2]); // none, snappy, gzip
const ENCODINGS = new Set([0, 2, 3, 8]); // PLAIN, PLAIN_DICTIONARY, RLE (levels), RLE_DICTIONARY

export interface DirectRange {
  offset?: number;
  limit?: number;
}

type RowGroup = Footer['rowGroups'][number];

/** A row group read: rows [lo, hi) of it, the first of them `first` rows after the first row read. */
export interface GroupRead {
  g: number;
  rg: RowGroup;
  lo: number;
  hi: number;
  first: number;
}

/** The row groups `rowGroups` in order, `range` skipping and limiting their rows (a limit of 0 is none). */
export function* groupsRead(footer: Footer, rowGroups: number[], range: DirectRange = {}): Generator<GroupRead> {
  let skip = range.offset ?? 0,
    left = range.limit || Infinity,
    first = 0;
  for (const g of rowGroups) {
    const rg = footer.rowGroups[g];
    if (!rg) throw new NotDirect(`no row group ${g}`);
    if (left <= 0) return;
    if (skip >= rg.rows) {
      skip -= rg.rows;
      continue;
    }
    const lo = skip,
      hi = Math.min(rg.rows, lo + left);
    skip = 0;
    left -= hi - lo;
    yield { g, rg, lo, hi, first };
    first += hi - lo;
  }
}

/** A row group's chunk of `plan`'s column, checked (NotDirect for a codec or encoding not taken), and its bytes. */
export function chunkOf(fd: number, rg: RowGroup, plan: Plan): { chunk: Chunk; bytes: Uint8Array } {
  const chunk = rg.chunks[plan.index];
  if (!chunk || chunk.phys !== plan.leaf.phys) throw new CorruptPage('column chunk does not match the schema');
  if (!CODECS.has(chunk.codec)) throw new NotDirect(`codec ${chunk.codec}`);
  if (chunk.encodings.some((e) => !ENCODINGS.has(e))) throw new NotDirect(`encodings ${chunk.encodings}`);
  return { chunk, bytes: readAt(fd, chunk.start, chunk.size) };
}

/** Whether a chunk's codec is one the direct readers take. */
export const codecTaken = (chunk: Chunk) => CODECS.has(chunk.codec);

function decompress(codec: number, body: Uint8Array, size: number): Uint8Array {
  if (codec === 0) return body;
  const copy = { asBuffer: true, copyOutputData: true }; // native external buffers cost q06 SF 10 1.5 s of sys, 1 GB
  const out = codec === 1 ? (uncompressSync(body, copy) as Buffer) : zlib.gunzipSync(body);
  if (out.length !== size) throw new CorruptPage(`page decompressed to ${out.length} bytes, header says ${size}`);
  return new Uint8Array(out.buffer, out.byteOffset, out.length); // a plain view: Buffer's subarray costs far more
}

function readDict(plan: Plan, data: Uint8Array, n: number): Dict {
  if (plan.kind !== 'utf8') {
    const words = new Int32Array(n * plan.words);
    plainWords(plan, data, 0, n, words, 0);
    return { n, words, starts: null, lens: null, data, width: -1 };
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
  let width = n > 0 ? lens[0] : -1;
  for (let k = 1; k < n && width >= 0; k++) if (lens[k] !== width) width = -1;
  return { n, words: null, starts, lens, data, width };
}

/** A chunk's dictionary page (its first page), or null when it has none. */
export function firstDict(plan: Plan, chunk: Chunk, bytes: Uint8Array): Dict | null {
  const r = new ThriftReader(bytes, 0);
  const h = r.struct();
  const dh = h[7] as TStruct | undefined;
  if (Number(h[1]) !== 2 || !dh) return null;
  const body = bytes.subarray(r.pos, r.pos + Number(h[3]));
  return readDict(plan, decompress(chunk.codec, body, Number(h[2])), Number(dh[1]));
}

let scratch = new Int32Array(1 << 16);
/** A thread's scratch of at least n integers (levels, then indices: each copied out before the next use). */
export const scratchOf = (n: number) => (scratch.length >= n ? scratch : (scratch = new Int32Array(n)));

/** A data page opened: its values' encoding, its data decompressed and where its values start, the non-null count. */
export interface Opened {
  enc: number;
  data: Uint8Array;
  p: number;
  nonNull: number;
}

/** A data page of a chunk, its header read: rows [row, row + rows) of the chunk; `dict` the chunk's dictionary. */
export class Page {
  constructor(
    readonly plan: Plan,
    readonly chunk: Chunk,
    private readonly h: TStruct,
    private readonly type: number,
    private readonly body: Uint8Array,
    private readonly usize: number,
    readonly row: number,
    readonly rows: number,
    readonly dict: Dict | null,
  ) {}

  /**
   * Decompressed and its definition levels decoded: when some rows are null, 0/1 per row into
   * validFor()[at, at + rows) (all present: validFor is not called).
   */
  open(validFor: () => Uint8Array, at: number): Opened {
    const { plan, chunk, h, body, usize } = this,
      n = this.rows;
    let data: Uint8Array, levels: Uint8Array, lp: number, lend: number, enc: number, p: number;
    if (this.type === 0) {
      const dp = h[5] as TStruct;
      enc = Number(dp[2]);
      data = decompress(chunk.codec, body, usize);
      levels = data;
      if (!plan.leaf.optional) lp = lend = p = 0;
      else {
        if (dp[3] !== 3) throw new NotDirect('definition levels not RLE');
        if (data.length < 4) throw new CorruptPage('levels end early');
        lp = 4;
        lend = p = 4 + u32(data, 0);
      }
    } else {
      const dp = h[8] as TStruct;
      enc = Number(dp[4]);
      const dl = Number(dp[5] ?? 0),
        rl = Number(dp[6] ?? 0);
      if (rl !== 0) throw new NotDirect('repetition levels');
      if (dl > body.length) throw new CorruptPage('levels beyond the page');
      data = dp[7] === false ? body.subarray(dl) : decompress(chunk.codec, body.subarray(dl), usize - dl);
      levels = body;
      lp = p = 0;
      lend = dl;
    }
    if (lend > levels.length) throw new CorruptPage('levels beyond the page');
    if (enc !== 0 && enc !== 2 && enc !== 8) throw new NotDirect(`encoding ${enc}`);
    if (enc !== 0 && !this.dict) throw new CorruptPage('dictionary-encoded page without a dictionary');
    const nonNull = plan.leaf.optional ? defLevels(levels, lp, lend, n, scratchOf(n), validFor, at) : n;
    return { enc, data, p, nonNull };
  }
}

/** A dictionary page's `count` indices (the first `count` of its non-null values) into `into`. */
export function indices(o: Opened, count: number, into: Int32Array): Int32Array {
  const { data, p } = o;
  if (p >= data.length && count > 0) throw new CorruptPage('values end early');
  rleHybrid(data, p + 1, data.length, data[p] ?? 0, into, count);
  return into;
}

/**
 * The data pages of a column chunk of `rows` rows (its bytes from the file) that hold rows before `upTo`, in order;
 * a dictionary page decoded as it comes, index pages passed over. A page is opened only by its reader.
 */
export function* pages(plan: Plan, chunk: Chunk, bytes: Uint8Array, rows: number, upTo = rows): Generator<Page> {
  if (chunk.numValues !== rows) throw new CorruptPage(`chunk has ${chunk.numValues} values for ${rows} rows`);
  let dict: Dict | null = null,
    row = 0,
    pos = 0;
  while (row < upTo) {
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
    const n = Number(((type === 0 ? h[5] : h[8]) as TStruct | undefined)?.[1]);
    if (!(n >= 0 && row + n <= rows)) throw new CorruptPage('more values than rows');
    yield new Page(plan, chunk, h, type, body, usize, row, n, dict);
    row += n;
  }
}

/** The rows of the first data page of a chunk (its page headers read from the file), or null when not readable. */
function firstPageRows(fd: number, chunk: Chunk): number | null {
  let pos = chunk.start;
  for (let k = 0; k < 2; k++) {
    const n = Math.min(1024, chunk.start + chunk.size - pos);
    if (n <= 0) return null;
    const r = new ThriftReader(readAt(fd, pos, n), 0);
    const h = r.struct();
    const type = Number(h[1]);
    if (type === 2) {
      pos += r.pos + Number(h[3]);
      continue;
    }
    const rows = Number(((type === 0 ? h[5] : h[8]) as TStruct | undefined)?.[1]);
    return rows > 0 ? rows : null;
  }
  return null;
}

/**
 * Into how many row ranges a row group can be cut so that each reads only its own pages: its rows over the largest
 * first data page of its column chunks (a writer that puts a whole chunk in one page, as DuckDB does, cannot be cut:
 * every range would decompress and decode the whole page). Null when the file's pages cannot be read here.
 */
export function rangeCuts(path: string, g: number): number | null {
  try {
    const { fd, footer } = openFooter(path);
    try {
      const rg = footer.rowGroups[g];
      if (!rg) return null;
      let largest = 1;
      for (const chunk of rg.chunks) {
        if (!CODECS.has(chunk.codec)) return null;
        const rows = firstPageRows(fd, chunk);
        if (rows === null) return null;
        largest = Math.max(largest, rows);
      }
      return Math.max(1, Math.floor(rg.rows / largest));
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return null;
  }
}
