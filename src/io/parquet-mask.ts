// A column that only a filter reads, read as the filter's outcome: the predicate is evaluated once per value of a
// column chunk's dictionary (and once for null), and each row's outcome is looked up by its dictionary index, so
// the column's values are never materialized (TPC-H's lineitem: `l_shipmode`, `l_shipinstruct`, `l_returnflag`,
// `l_shipdate` are read only to be filtered; decoded as strings and dates through parquet-wasm they cost 11-17 ns a
// row each at SF 10, their indices about 3). A page written PLAIN (a dictionary that grew too large) is decoded
// and its rows evaluated as they are. Throws NotDirect for a file or column the direct reader does not take.
import fs from 'node:fs';
import { type Column, type Field, valuesCtor } from '../kernels/column.js';
import { CODECS, type DirectRange, ENCODINGS, dataPage, decompress, planOf, readDict } from './parquet-direct.js';
import { type Chunk, NotDirect, openFooter, readAt } from './parquet-footer.js';
import { type Dict, type Plan, Strings, plainValues } from './parquet-values.js';
import { CorruptPage, defLevels, rleHybrid } from './rle.js';
import { ThriftReader, type TStruct } from './thrift-read.js';

/** A predicate's outcome over a column's rows: 1 where it holds, anything else where it does not (false or null). */
type Truth = (values: Column) => Uint8Array;

export interface MaskSpec {
  field: Field;
  truth: Truth;
}

/** The dictionary's values `which` (all when null) as a column, then one null row. */
function dictColumn(plan: Plan, d: Dict, which: Int32Array | null): Column {
  const type = plan.field.type,
    n = which ? which.length : d.n;
  const at = (k: number) => (which ? which[k] : k);
  const valid = new Uint8Array(n + 1).fill(1);
  valid[n] = 0;
  if (d.words) {
    const w = plan.words,
      words = new Int32Array((n + 1) * w);
    for (let k = 0; k < n; k++) for (let q = 0; q < w; q++) words[k * w + q] = d.words[at(k) * w + q];
    const ctor = valuesCtor(type);
    return {
      type,
      length: n + 1,
      values: new ctor(words.buffer, 0, (words.byteLength / ctor.BYTES_PER_ELEMENT) | 0),
      valid,
    };
  }
  const starts = d.starts!,
    lens = d.lens!;
  let total = 0;
  for (let k = 0; k < n; k++) total += lens[at(k)];
  const bytes = new Uint8Array(total),
    offsets = new Int32Array(n + 2);
  for (let k = 0, o = 0; k < n; k++) {
    const j = at(k);
    bytes.set(d.data.subarray(starts[j], starts[j] + lens[j]), o);
    o += lens[j];
    offsets[k + 1] = o;
  }
  offsets[n + 1] = total;
  return { type, length: n + 1, values: bytes, offsets, valid };
}

/** A PLAIN page's n rows decoded as a column (nulls by `valid`). */
function pageColumn(plan: Plan, data: Uint8Array, p: number, n: number, nonNull: number, valid: Uint8Array | null) {
  const type = plan.field.type;
  if (plan.kind === 'utf8') {
    const s = new Strings(new Int32Array(n + 1), data.length - p);
    plainValues(plan, data, p, n, nonNull, 0, null, s, valid);
    return { type, length: n, values: s.bytes.subarray(0, s.len), offsets: s.offsets, valid };
  }
  const words = new Int32Array(n * plan.words);
  plainValues(plan, data, p, n, nonNull, 0, words, null, valid);
  const ctor = valuesCtor(type);
  return { type, length: n, values: new ctor(words.buffer, 0, (words.byteLength / ctor.BYTES_PER_ELEMENT) | 0), valid };
}

/** Rows' outcomes by their dictionary indices (nulls: the dictionary's last outcome, the null's). */
function lookUp(out: Uint8Array, at: number, keep: Uint8Array, idx: Int32Array, n: number, valid: Uint8Array | null) {
  const dn = keep.length - 1;
  let bad = 0;
  if (valid === null) {
    for (let k = 0; k < n; k++) {
      const j = idx[k];
      bad |= dn - 1 - j;
      out[at + k] = keep[j];
    }
  } else {
    for (let k = 0, j = 0; k < n; k++) {
      const i = valid[k] ? idx[j++] : dn;
      bad |= dn - i;
      out[at + k] = keep[i];
    }
  }
  if (bad < 0) throw new CorruptPage('dictionary index out of range');
}

let scratch = new Int32Array(1 << 16);
const scratchOf = (n: number) => (scratch.length >= n ? scratch : (scratch = new Int32Array(n)));

/** Rows of [a, b) that validity says are present. */
function count(valid: Uint8Array, a: number, b: number): number {
  let n = 0;
  for (let i = a; i < b; i++) n += valid[i];
  return n;
}

const UNKNOWN = 2,
  PENDING = 3;

/**
 * The outcomes of a chunk's dictionary values (the null's last): all evaluated at once when the dictionary is
 * smaller than the rows read, else each value when a row read first needs it (a task reading a row range of a
 * row group whose values are nearly all distinct: TPC-H's `c_phone`, read by eight tasks a row group).
 */
class DictTruth {
  readonly keep: Uint8Array;
  constructor(
    private readonly plan: Plan,
    private readonly dict: Dict,
    private readonly truth: Truth,
    rowsRead: number,
  ) {
    const n = dict.n;
    if (n <= rowsRead) this.keep = truth(dictColumn(plan, dict, null));
    else {
      this.keep = new Uint8Array(n + 1).fill(UNKNOWN);
      this.keep[n] = truth(dictColumn(plan, dict, new Int32Array(0)))[0];
    }
  }

  /** Evaluates the values of idx[0, m) not evaluated yet. */
  resolve(idx: Int32Array, m: number): void {
    const keep = this.keep,
      n = this.dict.n;
    const wanted: number[] = [];
    for (let k = 0; k < m; k++) {
      const j = idx[k];
      if (j < n && keep[j] === UNKNOWN) {
        keep[j] = PENDING;
        wanted.push(j);
      }
    }
    if (wanted.length === 0) return;
    const r = this.truth(dictColumn(this.plan, this.dict, Int32Array.from(wanted)));
    for (let t = 0; t < wanted.length; t++) keep[wanted[t]] = r[t];
  }
}

/**
 * One column chunk's rows [lo, hi) as outcomes into out[0, hi - lo): 1 where the predicate holds. Pages without a
 * row in the range are not decompressed.
 */
function maskChunk(
  plan: Plan,
  chunk: Chunk,
  bytes: Uint8Array,
  rows: number,
  lo: number,
  hi: number,
  truth: Truth,
  out: Uint8Array,
) {
  if (chunk.numValues !== rows) throw new CorruptPage(`chunk has ${chunk.numValues} values for ${rows} rows`);
  let dict: DictTruth | null = null,
    row = 0,
    pos = 0;
  while (row < hi) {
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
      const d = readDict(plan, decompress(chunk.codec, body, usize), Number(dh[1]));
      dict = new DictTruth(plan, d, truth, hi - lo);
      continue;
    }
    if (type !== 0 && type !== 3) continue; // index pages
    const pageRows = Number(((type === 0 ? h[5] : h[8]) as TStruct | undefined)?.[1]);
    if (!(pageRows >= 0 && row + pageRows <= rows)) throw new CorruptPage('more values than rows');
    if (row + pageRows <= lo) {
      row += pageRows;
      continue;
    }
    const { n, enc, data, p, levels, lp, lend } = dataPage(plan, chunk, h, type, body, usize);
    if (lend > levels.length) throw new CorruptPage('levels beyond the page');
    let valid: Uint8Array | null = null;
    const validFor = () => (valid ??= new Uint8Array(n).fill(1));
    const nonNull = plan.leaf.optional ? defLevels(levels, lp, lend, n, scratchOf(n), validFor, 0) : n;
    let page: Uint8Array;
    if (enc === 0) page = truth(pageColumn(plan, data, p, n, nonNull, valid));
    else if (enc === 2 || enc === 8) {
      if (!dict) throw new CorruptPage('dictionary-encoded page without a dictionary');
      if (p >= data.length && nonNull > 0) throw new CorruptPage('values end early');
      const idx = scratchOf(nonNull);
      rleHybrid(data, p + 1, data.length, data[p] ?? 0, idx, nonNull);
      // the values of the rows in the range only (indices count non-null rows)
      const a = Math.max(lo, row) - row,
        b = Math.min(hi, row + n) - row;
      const ja = valid ? count(valid, 0, a) : a;
      dict.resolve(idx.subarray(ja, ja + (valid ? count(valid, a, b) : b - a)), valid ? count(valid, a, b) : b - a);
      page = new Uint8Array(n);
      lookUp(page, 0, dict.keep, idx, n, valid);
    } else throw new NotDirect(`encoding ${enc}`);
    const a = Math.max(lo, row) - row,
      b = Math.min(hi, row + n) - row;
    out.set(page.subarray(a, b), row + a - lo);
    row += n;
  }
}

/**
 * The share of a column chunk's dictionary values (row group `g`) a predicate keeps: a guess at the share of rows
 * it keeps, for values spread alike over the rows. Null for a chunk without a dictionary.
 */
export function dictShare(path: string, g: number, field: Field, truth: Truth): number | null {
  const { fd, footer } = openFooter(path);
  try {
    const plan = planOf(footer.leaves, field);
    const chunk = footer.rowGroups[g]?.chunks[plan.index];
    if (!chunk || !CODECS.has(chunk.codec)) return null;
    const bytes = readAt(fd, chunk.start, chunk.size);
    const r = new ThriftReader(bytes, 0);
    const h = r.struct();
    const dh = h[7] as TStruct | undefined;
    if (Number(h[1]) !== 2 || !dh) return null;
    const body = bytes.subarray(r.pos, r.pos + Number(h[3]));
    const d = readDict(plan, decompress(chunk.codec, body, Number(h[2])), Number(dh[1]));
    if (d.n === 0) return null;
    const keep = truth(dictColumn(plan, d, null));
    let n = 0;
    for (let k = 0; k < d.n; k++) n += keep[k];
    return n / d.n;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Per spec, the outcome of its predicate over rows of some row groups (in order, `range` skipping and limiting
 * them as the direct reader does): 1 where it holds.
 */
export function readMasks(path: string, rowGroups: number[], specs: MaskSpec[], range: DirectRange = {}): Uint8Array[] {
  const { fd, footer } = openFooter(path);
  try {
    const plans = specs.map((s) => planOf(footer.leaves, s.field));
    let skip = range.offset ?? 0,
      left = range.limit || Infinity;
    const parts: Uint8Array[][] = specs.map(() => []);
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
      plans.forEach((p, i) => {
        const chunk = rg.chunks[p.index];
        if (!chunk || chunk.phys !== p.leaf.phys) throw new CorruptPage('column chunk does not match the schema');
        if (!CODECS.has(chunk.codec)) throw new NotDirect(`codec ${chunk.codec}`);
        if (chunk.encodings.some((e) => !ENCODINGS.has(e))) throw new NotDirect(`encodings ${chunk.encodings}`);
        const out = new Uint8Array(hi - lo);
        maskChunk(p, chunk, readAt(fd, chunk.start, chunk.size), rg.rows, lo, hi, specs[i].truth, out);
        parts[i].push(out);
      });
    }
    return parts.map((ps) => (ps.length === 1 ? ps[0] : concat(ps)));
  } finally {
    fs.closeSync(fd);
  }
}

function concat(ps: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(ps.reduce((a, p) => a + p.length, 0));
  let at = 0;
  for (const p of ps) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
