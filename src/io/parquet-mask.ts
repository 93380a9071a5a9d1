// A column that only a filter reads, read as the filter's outcome: the predicate is evaluated once per value of a
// column chunk's dictionary (and once for null), and each row's outcome is looked up by its dictionary index, so
// the column's values are never materialized (TPC-H's lineitem: `l_shipmode`, `l_shipinstruct`, `l_returnflag`,
// `l_shipdate` are read only to be filtered; decoded as strings and dates through parquet-wasm they cost 11-17 ns a
// row each at SF 10, their indices about 3). A page written PLAIN (a dictionary that grew too large) is decoded
// and its rows evaluated as they are. Throws NotDirect for a file or column the direct reader does not take.
import fs from 'node:fs';
import { type Column, type Field, valuesCtor } from '../kernels/column.js';
import { type Chunk, openFooter, readAt } from './parquet-footer.js';
import { type Dict, type Plan, Strings, planOf, plainValues } from './parquet-values.js';
import {
  type DirectRange,
  chunkOf,
  codecTaken,
  firstDict,
  groupsRead,
  indices,
  pages,
  scratchOf,
} from './parquet-walk.js';
import { CorruptPage } from './rle.js';

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
    readonly dict: Dict,
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
  let dict = null as DictTruth | null;
  for (const page of pages(plan, chunk, bytes, rows, hi)) {
    const { row, rows: n } = page;
    if (row + n <= lo) continue;
    let valid: Uint8Array | null = null;
    const o = page.open(() => (valid ??= new Uint8Array(n).fill(1)), 0),
      nonNull = o.nonNull;
    // the rows of the page in the range
    const a = Math.max(lo, row) - row,
      b = Math.min(hi, row + n) - row;
    let outcome: Uint8Array;
    if (o.enc === 0) outcome = truth(pageColumn(plan, o.data, o.p, n, nonNull, valid));
    else {
      if (dict?.dict !== page.dict) dict = new DictTruth(plan, page.dict!, truth, hi - lo);
      const idx = indices(o, nonNull, scratchOf(nonNull));
      // the values of the rows in the range only (indices count non-null rows)
      const ja = valid ? count(valid, 0, a) : a,
        m = valid ? count(valid, a, b) : b - a;
      dict.resolve(idx.subarray(ja, ja + m), m);
      outcome = new Uint8Array(n);
      lookUp(outcome, 0, dict.keep, idx, n, valid);
    }
    out.set(outcome.subarray(a, b), row + a - lo);
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
    if (!chunk || !codecTaken(chunk)) return null;
    const d = firstDict(plan, chunk, readAt(fd, chunk.start, chunk.size));
    if (!d || d.n === 0) return null;
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
    const parts: Uint8Array[][] = specs.map(() => []);
    for (const { rg, lo, hi } of groupsRead(footer, rowGroups, range)) {
      plans.forEach((p, i) => {
        const { chunk, bytes } = chunkOf(fd, rg, p);
        const out = new Uint8Array(hi - lo);
        maskChunk(p, chunk, bytes, rg.rows, lo, hi, specs[i].truth, out);
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
