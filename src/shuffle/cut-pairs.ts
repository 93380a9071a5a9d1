// A join's matches cut straight into a sort's ranges (the range sink of
// physical/fused-ranges.ts): the sort keys of the joined rows, gathered alone, give each
// row its range; then every column is read from the join's two sides and
// written to its range's place in one shared layout. The joined rows are
// never gathered into batches and scattered again: a copy of every column
// less. The blocks are those rangePartition would cut from the gathered rows.
import { type Batch, type Column, type DataType, gatherMany, rowWidth, wordView } from '../kernels/column.js';
import type { SortKey } from '../kernels/sort.js';
import { type Layout, type Partitioned, countIds, destinations, layout, layoutBlocks } from './partition.js';
import { type Turn, rangeIds } from './range.js';

/** Matches of a join: rows li of `l` beside rows ri of `r` (no index -1: no outer join's missing side). */
export interface PairChunk {
  l: Batch;
  r: Batch;
  li: Int32Array;
  ri: Int32Array;
}

/** Joined rows whose sort keys are gathered at a time for their range ids. */
const KEY_ROWS = 1 << 16;

/**
 * The joined rows of `chunks` (left columns, then the right's when
 * `withRight`; of those, the `select`ed ones), in chunk order, cut into
 * bounds.length + 1 ranges like rangePartition (same ranges, same order
 * within each, same turns).
 */
export function cutPairs(
  chunks: PairChunk[],
  withRight: boolean,
  by: SortKey[],
  bounds: Batch,
  seed: number,
  select?: number[],
  spread = true,
): Omit<Partitioned, 'sketch'> {
  const joined = chunks.length
    ? [
        ...chunks[0].l.columns.map((_, c) => ({ right: false, c })),
        ...(withRight ? chunks[0].r.columns.map((_, c) => ({ right: true, c })) : []),
      ]
    : [];
  // a projection between the join and the sort: only its columns, in its order (the sort keys index them)
  const sides = select && chunks.length ? select.map((i) => joined[i]) : joined;
  const colsOf = (k: number) => chunks.map((ch) => (sides[k].right ? ch.r : ch.l).columns[sides[k].c]);
  const idxOf = (k: number, ch: PairChunk) => (sides[k].right ? ch.ri : ch.li);
  const total = chunks.reduce((a, ch) => a + ch.li.length, 0);
  const ids = rangeIdsOf(chunks, by, bounds, { next: seed, spread }, total, colsOf, idxOf);
  const P = bounds.length + 1;
  const counts = new Int32Array(P);
  countIds(ids, counts, total);
  const rows = Array.from(counts);
  const types = sides.map((_, k) => colsOf(k)[0].type);
  const hasValid = sides.map((_, k) => colsOf(k).some((c) => c.valid !== null));
  const strBytes = types.map((t, k) =>
    t.id === 'utf8' ? stringBytes(chunks, colsOf(k), (ch) => idxOf(k, ch), ids, P) : null,
  );
  const L = layout(types, hasValid, strBytes, rows, total);
  // each joined row's place in the layout (rows keep their order within a range)
  const dest = new Int32Array(total);
  destinations(ids, Int32Array.from(L.start), dest, total);
  types.forEach((t, k) =>
    fillColumn(
      t,
      colsOf(k),
      chunks.map((ch) => idxOf(k, ch)),
      ids,
      dest,
      L,
      k,
      total,
    ),
  );
  return layoutBlocks(types, L, rows);
}

/** Every joined row's range: its sort keys gathered a slice of chunks at a time. */
function rangeIdsOf(
  chunks: PairChunk[],
  by: SortKey[],
  bounds: Batch,
  rr: Turn,
  total: number,
  colsOf: (k: number) => Column[],
  idxOf: (k: number, ch: PairChunk) => Int32Array,
): Int32Array {
  const ids = new Int32Array(total);
  const keyBy = by.map((k, i) => ({ ...k, col: i }));
  const keyBounds: Batch = { length: bounds.length, columns: by.map((k) => bounds.columns[k.col]) };
  const keyCols = by.map((k) => colsOf(k.col));
  let at = 0;
  for (let s = 0; s < chunks.length; ) {
    let e = s,
      n = 0;
    while (e < chunks.length && (n === 0 || n + chunks[e].li.length <= KEY_ROWS)) n += chunks[e++].li.length;
    const slice = chunks.slice(s, e);
    const keys: Batch = {
      length: n,
      columns: by.map((k, i) =>
        gatherMany(
          keyCols[i][0].type,
          keyCols[i].slice(s, e),
          slice.map((ch) => idxOf(k.col, ch)),
          undefined,
          true,
        ),
      ),
    };
    rangeIds(keys, keyBounds, keyBy, ids.subarray(at, at + n), rr);
    at += n;
    s = e;
  }
  return ids;
}

/** Bytes of a string column's joined rows in each range. */
function stringBytes(
  chunks: PairChunk[],
  cols: Column[],
  idxOf: (ch: PairChunk) => Int32Array,
  ids: Int32Array,
  P: number,
): Float64Array {
  const nbytes = new Float64Array(P);
  for (let k = 0, r = 0; k < chunks.length; k++) {
    const o = cols[k].offsets!,
      idx = idxOf(chunks[k]);
    for (let i = 0; i < idx.length; i++) {
      const j = idx[i];
      nbytes[ids[r++]] += o[j + 1] - o[j];
    }
  }
  return nbytes;
}

/**
 * Column k's region of the layout: the joined rows read in join order (each
 * chunk's rows of its side, `idx[c]`) and written to their places (`dest`):
 * the reads stay near each other, the writes go to one stream per range, as
 * in a shuffle's scatter (read in place order, the rows came from all over
 * the task's input: a cache miss each).
 */
function fillColumn(
  type: DataType,
  cols: Column[],
  idx: Int32Array[],
  ids: Int32Array,
  dest: Int32Array,
  L: Layout,
  k: number,
  total: number,
): void {
  const { buf, start } = L;
  const { valid: vOff, values: off, offsets: oOff, strStart } = L.cols[k];
  if (vOff >= 0) fillValid(new Uint8Array(buf, vOff, total), cols, idx, dest);
  if (type.id === 'utf8') {
    fillStrings(
      new Uint8Array(buf, off, oOff - off),
      new Int32Array(buf, oOff, total + start.length),
      strStart!,
      cols,
      idx,
      ids,
      dest,
    );
    return;
  }
  const width = rowWidth(type);
  const dst = wordView(new Uint8Array(buf, off, total * width), width, total);
  for (let ch = 0, r = 0; ch < cols.length; ch++) {
    const src = wordView(cols[ch].values, width, cols[ch].length),
      x = idx[ch];
    if (width <= 4) fill1(dst, src, x, dest, r);
    else if (width === 8) fill2(dst, src, x, dest, r);
    else fillN(dst, src, x, dest, r, width / 4);
    r += x.length;
  }
}

// Loops in functions of their own (a loop on-stack-replaced inside a larger function is
// optimized for that call only), with plain counters: one shared with a callback would
// live in a context object.
function fillValid(dst: Uint8Array, cols: Column[], idx: Int32Array[], dest: Int32Array) {
  for (let ch = 0, r = 0; ch < cols.length; ch++) {
    const v = cols[ch].valid,
      x = idx[ch];
    if (v === null) for (let i = 0; i < x.length; i++) dst[dest[r++]] = 1;
    else for (let i = 0; i < x.length; i++) dst[dest[r++]] = v[x[i]];
  }
}

/** Strings to their ranges: each range's bytes appended at its own cursor, offsets at each row's place. */
function fillStrings(
  bytes: Uint8Array,
  offs: Int32Array,
  base: Float64Array,
  cols: Column[],
  idx: Int32Array[],
  ids: Int32Array,
  dest: Int32Array,
) {
  const bpos = Float64Array.from(base);
  for (let ch = 0, r = 0; ch < cols.length; ch++) {
    const o = cols[ch].offsets!,
      src = cols[ch].values as Uint8Array,
      x = idx[ch];
    for (let i = 0; i < x.length; i++, r++) {
      const p = ids[r],
        j = x[i],
        e = o[j + 1];
      let b = bpos[p];
      for (let y = o[j]; y < e; y++) bytes[b++] = src[y];
      bpos[p] = b;
      offs[dest[r] + p + 1] = b - base[p];
    }
  }
}

// One loop per row width (in elements of the word views), as in kernels/column.ts' gathers.
function fill1(dst: any, src: any, x: Int32Array, dest: Int32Array, r: number) {
  for (let i = 0; i < x.length; i++) dst[dest[r + i]] = src[x[i]];
}
function fill2(dst: Int32Array, src: Int32Array, x: Int32Array, dest: Int32Array, r: number) {
  for (let i = 0; i < x.length; i++) {
    const j = 2 * dest[r + i],
      s = 2 * x[i];
    dst[j] = src[s];
    dst[j + 1] = src[s + 1];
  }
}
function fillN(dst: Int32Array, src: Int32Array, x: Int32Array, dest: Int32Array, r: number, w: number) {
  for (let i = 0; i < x.length; i++) {
    const j = w * dest[r + i],
      s = w * x[i];
    for (let y = 0; y < w; y++) dst[j + y] = src[s + y];
  }
}
