// Parquet decoded straight into engine columns, without WebAssembly or Arrow,
// for the common flat files: INT32, INT64, FLOAT, DOUBLE, BYTE_ARRAY strings
// and decimals (INT32, INT64, FIXED_LEN_BYTE_ARRAY), PLAIN or dictionary
// encoded, v1 or v2 data pages, uncompressed, snappy or gzip. A decimal of
// precision <= 18 goes to its 8-byte lane directly (parquet-wasm widens it to
// 16 bytes first). Anything else throws NotDirect and the caller reads the
// file through parquet-wasm (io/parquet.ts), which also reports corrupt data.
import fs from 'node:fs';
import type { Batch, Column, Field } from '../kernels/column.js';
import { valuesCtor } from '../kernels/column.js';
import { type Footer, NotDirect, footerOf, openFooter } from './parquet-footer.js';
import { wasmLoaded } from './wasm.js';
import { type Plan, Strings, dictValues, planOf, plainValues } from './parquet-values.js';
import {
  type DirectRange,
  type GroupRead,
  type Page,
  chunkOf,
  groupsRead,
  indices,
  pages,
  scratchOf,
} from './parquet-walk.js';
import { CorruptPage } from './rle.js';
import type { WordLease } from './word-pool.js';

/**
 * Rows per batch handed to the engine at most. A task's rows are decoded into one array a column anyway (the
 * batches are views into it), and a combiner copies a task's batches back together when each holds most of its
 * groups: one batch a task where it has up to a million rows (paired whole processes on JCC-H SF 1, 2 threads, 5
 * runs: top 3 per supplier 0.56 -> 0.50 s, ROLLUP 0.63 -> 0.62 s, the other ETL queries unchanged; at 1 << 17
 * rows, as parquet-wasm's batches, before).
 */
const BATCH_ROWS = 1 << 20;

/** A column's rows decoded: words (fixed widths) or strings, and validity; index 0 holds row `first` of the read. */
interface Decoded {
  words: Int32Array | null;
  strings: Strings | null;
  valid: Uint8Array | null;
  first: number;
}

/**
 * One column of the row groups read, decoded: only the pages holding rows of [lo, hi) of each group (a map task
 * over a row range of a huge row group decompresses and decodes its own pages, not the whole chunk), one after
 * another into one array; rows counted from the first group's first row.
 */
function decodeColumn(fd: number, plan: Plan, groups: GroupRead[], lease?: WordLease): Decoded {
  const kept: Page[] = [],
    at: number[] = [];
  let bytes = 0,
    base = 0;
  for (const { rg, lo, hi } of groups) {
    const c = chunkOf(fd, rg, plan);
    bytes += c.bytes.length;
    for (const page of pages(plan, c.chunk, c.bytes, rg.rows, hi)) {
      if (page.row + page.rows <= lo) continue;
      kept.push(page);
      at.push(base + page.row);
    }
    base += rg.rows;
  }
  const first = at.length ? at[0] : 0,
    rows = at.length ? at[at.length - 1] + kept[kept.length - 1].rows - first : 0;
  // (a leased array is not zeroed: the pages write every row's words, nulls' too, or throw)
  const n = rows * plan.words,
    words = plan.kind === 'utf8' ? null : lease ? lease.take(n) : new Int32Array(n);
  const strings = plan.kind === 'utf8' ? new Strings(new Int32Array(rows + 1), bytes * 2) : null;
  const d: Decoded = { words, strings, valid: null, first };
  // validity made on the first null (all present until a page says otherwise)
  const validFor = () => (d.valid ??= new Uint8Array(rows).fill(1));
  for (let k = 0; k < kept.length; k++) {
    const page = kept[k],
      n = page.rows,
      row = at[k] - first,
      o = page.open(validFor, row),
      nonNull = o.nonNull,
      valid = d.valid;
    if (valid === null && nonNull < n) throw new CorruptPage('levels count no nulls');
    if (o.enc === 0) plainValues(plan, o.data, o.p, n, nonNull, row, words, strings, valid);
    // the levels were copied out of the scratch: the indices may reuse it
    else dictValues(plan, page.dict!, indices(o, nonNull, scratchOf(nonNull)), n, nonNull, row, words, strings, valid);
  }
  return d;
}

/** One engine column of rows [lo, hi) of a decoded chunk (views where the layout allows). */
function slice(plan: Plan, d: Decoded, from: number, to: number): Column {
  const type = plan.field.type,
    n = to - from,
    lo = from - d.first,
    hi = to - d.first;
  const valid = d.valid ? d.valid.subarray(lo, hi) : null;
  if (d.strings) {
    const src = d.strings.offsets,
      base = src[lo];
    // the first rows decoded (a task's one batch, often) keep the decoded offsets: a view, not a copy
    const offsets = base === 0 ? src.subarray(lo, hi + 1) : new Int32Array(n + 1);
    if (base !== 0) for (let i = 0; i <= n; i++) offsets[i] = src[lo + i] - base;
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

/**
 * Integer, date and string values one thread decodes here before it loads parquet-wasm for them. parquet-wasm
 * decodes those faster (in-process on TPC-H's lineitem: this reader takes 1.6x its time for integers, 3.2x for
 * dates), but loading it and compiling what a decode calls costs a thread 50-70 ms of CPU, which a run of a few
 * million rows per thread never earns back: rented until the values decoded here could have paid for the load
 * (about 20 million values), then bought (a ski rental: never more than twice the better choice's cost).
 * SKEWJOIN_DIRECT_RENT sets another budget, for tests (0: parquet-wasm from the first task), read at the first
 * decision so that a test can set it before its first run.
 */
let rentValues: number | null = null;
let rented = 0;

/** How this reader decodes a column of the file, or null for a column it does not take. */
function planOrNull(footer: Footer, f: Field): Plan | null {
  try {
    return planOf(footer.leaves, f);
  } catch {
    return null;
  }
}

/**
 * Which of `fields` (of rows `range` of `rowGroups`) to decode with this reader rather than parquet-wasm:
 * decimals always (parquet-wasm widens them to 16 bytes and the engine narrows them back: about 1.5-2x faster
 * here, measured on lineitem), the other columns while this thread rents (rentValues). All false for a file this
 * reader does not take.
 */
export function preferDirect(path: string, fields: Field[], rowGroups: number[], range: DirectRange = {}): boolean[] {
  const footer = footerOf(path);
  if (!footer) return fields.map(() => false);
  const kinds = fields.map((f) => planOrNull(footer, f)?.kind ?? null);
  const others = fields.filter((f, i) => kinds[i] !== null && f.type.id !== 'decimal').length;
  let rent = false;
  if (others > 0 && !wasmLoaded()) {
    try {
      let rows = 0;
      for (const g of groupsRead(footer, rowGroups, range)) rows += g.hi - g.lo;
      rentValues ??= Number(process.env.SKEWJOIN_DIRECT_RENT || 20_000_000);
      rent = rented + rows * others <= rentValues;
      if (rent) rented += rows * others;
    } catch {
      /* row groups this reader does not find: parquet-wasm reports them */
    }
  }
  return fields.map((f, i) => kinds[i] !== null && (f.type.id === 'decimal' ? kinds[i] !== 'utf8' : rent));
}

/**
 * One of `fields` for each way this reader decodes them (a kind of value, its width, its physical type): what a
 * thread decodes to warm up compiles the code every column of the file will run, without decoding a first page
 * of each (lineitem: 16 columns, 70 ms, against 5 ways). None for a file it does not take.
 */
export function oneFieldPerWay(path: string, fields: Field[]): Field[] {
  const footer = footerOf(path);
  if (!footer) return [];
  const ways = new Map<string, Field>();
  for (const f of fields) {
    const p = planOrNull(footer, f);
    const way = p && `${p.kind}/${p.words}/${p.leaf.phys}`;
    if (way && !ways.has(way)) ways.set(way, f);
  }
  return [...ways.values()];
}

/**
 * Rows of some row groups (named: an empty list is left to parquet-wasm) of a flat Parquet file as engine batches
 * of at most BATCH_ROWS rows, or of `lengths` rows each (to line up with batches read otherwise: they may span row
 * groups, as parquet-wasm's do); `range` skips and limits rows of the groups read. Throws NotDirect for a file or
 * column this reader does not take, another error for data it finds corrupt. `lease`: fixed-width columns' words
 * come from it (io/word-pool.ts).
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
    // the groups' chunks decoded one after another into one array a column: rows [from, to) of it are read
    const groups = [...groupsRead(footer, rowGroups, range)];
    if (groups.length === 0) return [];
    let rows = 0;
    for (const x of groups) rows += x.rg.rows;
    const from = groups[0].lo,
      to = rows - groups[groups.length - 1].rg.rows + groups[groups.length - 1].hi;
    const decoded = plans.map((p) => decodeColumn(fd, p, groups, lease));
    const cuts =
      lengths ??
      Array.from({ length: Math.ceil((to - from) / BATCH_ROWS) }, (_, k) =>
        Math.min(BATCH_ROWS, to - from - k * BATCH_ROWS),
      );
    if (lengths && lengths.reduce((x, y) => x + y, 0) !== to - from) throw new NotDirect('batch lengths do not match');
    const out: Batch[] = [];
    for (let a = from, k = 0; k < cuts.length; a += cuts[k++]) {
      out.push({ length: cuts[k], columns: plans.map((p, i) => slice(p, decoded[i], a, a + cuts[k])) });
    }
    return out;
  } finally {
    fs.closeSync(fd);
  }
}
