// A column that only a filter reads, read as the filter's outcome: the predicate is evaluated once per value of a
// column chunk's dictionary (and once for null), and each row's outcome is looked up by its dictionary index, so
// the column's values are never materialized (TPC-H's lineitem: `l_shipmode`, `l_shipinstruct`, `l_returnflag`,
// `l_shipdate` are read only to be filtered; decoded as strings and dates through parquet-wasm they cost 11-17 ns a
// row each at SF 10, their indices about 3). A page written PLAIN (a dictionary that grew too large) is decoded
// and its rows evaluated as they are. Throws NotDirect for a file or column the direct reader does not take.
import fs from 'node:fs';
import { type Column, type Field, valuesCtor } from '../kernels/column.js';
import {
  CODECS,
  type Dict,
  type DirectRange,
  ENCODINGS,
  type Plan,
  Strings,
  dataPage,
  decompress,
  planOf,
  readDict,
} from './parquet-direct.js';
import { type Chunk, NotDirect, openFooter, readAt } from './parquet-footer.js';
import { plainValues } from './parquet-values.js';
import { CorruptPage, defLevels, rleHybrid } from './rle.js';
import { ThriftReader, type TStruct } from './thrift-read.js';

/** A predicate's outcome over a column's rows: 1 where it holds, anything else where it does not (false or null). */
type Truth = (values: Column) => Uint8Array;

export interface MaskSpec {
  field: Field;
  truth: Truth;
}

/** The dictionary's values as a column of n + 1 rows, the last one null. */
function dictColumn(plan: Plan, d: Dict): Column {
  const type = plan.field.type,
    n = d.n;
  const valid = new Uint8Array(n + 1).fill(1);
  valid[n] = 0;
  if (d.words) {
    const w = plan.words,
      words = new Int32Array((n + 1) * w);
    words.set(d.words.subarray(0, n * w));
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
  for (let k = 0; k < n; k++) total += lens[k];
  const bytes = new Uint8Array(total),
    offsets = new Int32Array(n + 2);
  for (let k = 0, at = 0; k < n; k++) {
    bytes.set(d.data.subarray(starts[k], starts[k] + lens[k]), at);
    at += lens[k];
    offsets[k + 1] = at;
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

/** One column chunk's rows as outcomes into out[0, rows): 1 where the predicate holds. */
function maskChunk(plan: Plan, chunk: Chunk, bytes: Uint8Array, rows: number, truth: Truth, out: Uint8Array) {
  if (chunk.numValues !== rows) throw new CorruptPage(`chunk has ${chunk.numValues} values for ${rows} rows`);
  let keep: Uint8Array | null = null,
    row = 0,
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
      keep = truth(dictColumn(plan, readDict(plan, decompress(chunk.codec, body, usize), Number(dh[1]))));
      continue;
    }
    if (type !== 0 && type !== 3) continue; // index pages
    const { n, enc, data, p, levels, lp, lend } = dataPage(plan, chunk, h, type, body, usize);
    if (!(n >= 0 && row + n <= rows)) throw new CorruptPage('more values than rows');
    if (lend > levels.length) throw new CorruptPage('levels beyond the page');
    let valid: Uint8Array | null = null;
    const validFor = () => (valid ??= new Uint8Array(n).fill(1));
    const nonNull = plan.leaf.optional ? defLevels(levels, lp, lend, n, scratchOf(n), validFor, 0) : n;
    if (enc === 0) out.set(truth(pageColumn(plan, data, p, n, nonNull, valid)).subarray(0, n), row);
    else if (enc === 2 || enc === 8) {
      if (!keep) throw new CorruptPage('dictionary-encoded page without a dictionary');
      if (p >= data.length && nonNull > 0) throw new CorruptPage('values end early');
      const idx = scratchOf(nonNull);
      rleHybrid(data, p + 1, data.length, data[p] ?? 0, idx, nonNull);
      lookUp(out, row, keep, idx, n, valid);
    } else throw new NotDirect(`encoding ${enc}`);
    row += n;
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
        const out = new Uint8Array(rg.rows);
        maskChunk(p, chunk, readAt(fd, chunk.start, chunk.size), rg.rows, specs[i].truth, out);
        parts[i].push(lo === 0 && hi === rg.rows ? out : out.subarray(lo, hi));
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
