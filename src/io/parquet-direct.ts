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
import { type Chunk, type Leaf, NotDirect, openFooter } from './parquet-footer.js';
import { type Plan, Strings, dictValues, planOf, plainValues } from './parquet-values.js';
import { type DirectRange, chunkOf, groupsRead, indices, pages, scratchOf } from './parquet-walk.js';
import { CorruptPage } from './rle.js';
import type { WordLease } from './word-pool.js';

/** Rows per batch handed to the engine (as the parquet-wasm path reads). */
const BATCH_ROWS = 1 << 17;

/** A column chunk decoded: words (fixed widths) or strings, and validity. */
interface Decoded {
  words: Int32Array | null;
  strings: Strings | null;
  valid: Uint8Array | null;
}

/** A column's rows `rows` (of several chunks) made ready to decode into. */
function decodedFor(plan: Plan, rows: number, bytes: number, lease?: WordLease): Decoded {
  // (a leased array is not zeroed: the pages write every row's words, nulls' too, or throw)
  const n = rows * plan.words,
    words = plan.kind === 'utf8' ? null : lease ? lease.take(n) : new Int32Array(n);
  const strings = plan.kind === 'utf8' ? new Strings(new Int32Array(rows + 1), bytes * 2) : null;
  return { words, strings, valid: null };
}

/** Decode one column chunk (its bytes from the file) of `rows` rows into `d` from its row `base`. */
function decodeChunk(plan: Plan, chunk: Chunk, bytes: Uint8Array, rows: number, d: Decoded, base: number) {
  const { words, strings } = d;
  const total = words ? words.length / plan.words : strings!.offsets.length - 1;
  // validity made on the first null (all present until a page says otherwise)
  const validFor = () => (d.valid ??= new Uint8Array(total).fill(1));
  for (const page of pages(plan, chunk, bytes, rows)) {
    const { rows: n } = page,
      row = base + page.row,
      o = page.open(validFor, row),
      nonNull = o.nonNull,
      valid = d.valid;
    if (valid === null && nonNull < n) throw new CorruptPage('levels count no nulls');
    if (o.enc === 0) plainValues(plan, o.data, o.p, n, nonNull, row, words, strings, valid);
    // the levels were copied out of the scratch: the indices may reuse it
    else dictValues(plan, page.dict!, indices(o, nonNull, scratchOf(nonNull)), n, nonNull, row, words, strings, valid);
  }
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
    const decoded = plans.map((p) => {
      const d = decodedFor(
        p,
        rows,
        groups.reduce((a, { rg }) => a + (rg.chunks[p.index]?.size ?? 0), 0),
        lease,
      );
      for (let k = 0, base = 0; k < groups.length; base += groups[k++].rg.rows) {
        const { chunk, bytes } = chunkOf(fd, groups[k].rg, p);
        decodeChunk(p, chunk, bytes, groups[k].rg.rows, d, base);
      }
      return d;
    });
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
