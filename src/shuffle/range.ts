// Range partitioning for a parallel, out-of-core sort: boundaries chosen from
// a sample of the rows (a pure function: sample and sizes in, boundaries out),
// and the range of every row. A hot sort value whose rows would overflow one
// range gets several equal boundaries; its rows are then dealt round-robin
// over every range those boundaries allow (equal rows may sit in any of them
// without breaking the order), so no range grows with the hot value. With skew
// handling off (`spread: false`) a row takes the first range whose boundary is
// not below it: a hot value's rows all in one range, as a baseline.
import { type Batch, type Column, concatColumns, gatherBatch } from '../kernels/column.js';
import { compareWords, sortWords } from '../kernels/radix.js';
import { type SortKey, sortIndices, valueComparator } from '../kernels/sort.js';

/**
 * Ranges for `totalBytes` of rows at about `rangeBytes` each (at least
 * `minRanges`, at most `maxRanges`), and their R-1 boundaries: rows of the
 * sorted sample at evenly spaced quantiles. Fewer ranges when the sample is
 * small (no more than one boundary per sampled row).
 */
export function chooseBounds(
  sample: Batch,
  by: SortKey[],
  totalBytes: number,
  rangeBytes: number,
  minRanges: number,
  maxRanges = 1024,
): Batch {
  const wanted = Math.min(maxRanges, Math.max(minRanges, Math.ceil(totalBytes / Math.max(1, rangeBytes))));
  const R = Math.max(1, Math.min(wanted, sample.length));
  const order = sortIndices(sample, by);
  const pick = new Int32Array(R - 1);
  for (let r = 1; r < R; r++) pick[r - 1] = order[Math.floor((r * sample.length) / R)];
  return gatherBatch(sample, pick);
}

/** Compare row i of `a` with row j of `b` (same schema) by the sort keys: nulls as the keys ask. */
function crossOrder(a: Batch, b: Batch, by: SortKey[]): (i: number, j: number) => number {
  const cmps = by.map((k) => {
    const ca = a.columns[k.col],
      cb = b.columns[k.col];
    // one comparator over both columns: b's values appended after a's, so that the
    // string and number comparisons are the sort's own
    const both = concatPair(ca, cb);
    const cmp = valueComparator(both);
    const off = ca.length;
    const va = ca.valid,
      vb = cb.valid;
    const dir = k.desc ? -1 : 1,
      nullDir = k.nullsFirst ? -1 : 1;
    return (i: number, j: number) => {
      const ni = va !== null && va[i] === 0,
        nj = vb !== null && vb[j] === 0;
      if (ni || nj) return ni === nj ? 0 : ni ? nullDir : -nullDir;
      return dir * cmp(i, off + j);
    };
  });
  return (i, j) => {
    for (const c of cmps) {
      const d = c(i, j);
      if (d !== 0) return d;
    }
    return 0;
  };
}

/** The sort words of a batch and of the boundaries (same layout), or null for string keys. */
function wordsOf(a: Batch, b: Batch, by: SortKey[]): [Uint32Array[], Uint32Array[]] | null {
  const nulls = by.map((k) => a.columns[k.col].valid !== null || b.columns[k.col].valid !== null);
  const wa = sortWords(a, by, nulls),
    wb = wa && sortWords(b, by, nulls);
  return wa && wb ? [wa, wb] : null;
}

const concatPair = (x: Column, y: Column) => concatColumns(x.type, [x, y]);

/** The turn of the dealing, carried across batches; `spread: false`: no dealing (skew handling off). */
export interface Turn {
  next: number;
  spread?: boolean;
}

/**
 * The range (0..bounds.length) of each row of `b`: the first range whose
 * upper boundary is not below the row; a row equal to boundaries lo..hi-1 is
 * dealt round-robin over ranges lo..hi (`rr` carries the turn across batches)
 * unless `rr.spread` is false.
 */
export function rangeIds(b: Batch, bounds: Batch, by: SortKey[], out: Int32Array, rr: Turn): Int32Array {
  const words = wordsOf(b, bounds, by);
  if (words && words[0].length <= 2) return rangeIdsByWords(words[0], words[1], b.length, bounds.length, out, rr);
  const spread = rr.spread !== false;
  const cmp = words ? (i: number, j: number) => compareWords(words[0], i, words[1], j) : crossOrder(b, bounds, by);
  const B = bounds.length;
  for (let i = 0; i < b.length; i++) {
    let lo = 0,
      hi = B; // first boundary >= row
    while (lo < hi) {
      const m = (lo + hi) >> 1;
      if (cmp(i, m) > 0) lo = m + 1;
      else hi = m;
    }
    out[i] = !spread || lo === B || cmp(i, lo) !== 0 ? lo : dealtRow(cmp, i, lo, B, rr);
  }
  return out;
}

/** dealt for row i, in a function of its own (see dealtWords: no closure over the loop's row). */
function dealtRow(
  cmp: (i: number, j: number) => number,
  i: number,
  lo: number,
  B: number,
  rr: { next: number },
): number {
  return dealt(lo, B, rr, (m) => cmp(i, m));
}

/**
 * The range of a row whose first boundary not below it is `lo`: lo itself,
 * or, when the row equals boundaries lo..end-1, its turn among ranges lo..end.
 */
function dealt(lo: number, B: number, rr: { next: number }, cmp: (m: number) => number): number {
  if (lo === B || cmp(lo) !== 0) return lo;
  let end = lo,
    h = B; // first boundary > row
  while (end < h) {
    const m = (end + h) >> 1;
    if (cmp(m) >= 0) end = m + 1;
    else h = m;
  }
  return lo + (rr.next++ % (end - lo + 1));
}

/**
 * rangeIds for keys of one or two words (one number, with or without a null
 * word): the search compares the words inline, with no comparator call per
 * step (a sort into a thousand ranges spent most of its range partitioning
 * in those calls), and starts from a table over the top bits of the first
 * word (bucketStarts), which leaves it a step or two instead of a dozen
 * unpredictable branches a row.
 */
function rangeIdsByWords(
  wa: Uint32Array[],
  wb: Uint32Array[],
  n: number,
  B: number,
  out: Int32Array,
  rr: Turn,
): Int32Array {
  const spread = rr.spread !== false;
  const a0 = wa[0],
    b0 = wb[0];
  const a1 = wa.length > 1 ? wa[1] : new Uint32Array(n),
    b1 = wb.length > 1 ? wb[1] : new Uint32Array(B);
  if (B === 0) return out.fill(0, 0, n);
  const { starts, min, max, shift } = bucketStarts(b0);
  for (let i = 0; i < n; i++) {
    const x = a0[i],
      y = a1[i];
    if (x < min) {
      out[i] = 0;
      continue;
    }
    if (x > max) {
      out[i] = B;
      continue;
    }
    const k = (x - min) >>> shift;
    let lo = starts[k],
      hi = starts[k + 1];
    while (lo < hi) {
      const m = (lo + hi) >> 1,
        u = b0[m];
      if (x > u || (x === u && y > b1[m])) lo = m + 1;
      else hi = m;
    }
    if (!spread || lo === B || b0[lo] !== x || b1[lo] !== y) out[i] = lo;
    // equal to boundary lo alone (the next one is above it: distinct boundaries, the common case) is
    // dealt over ranges lo and lo+1 without the search for the last equal boundary
    else if (lo + 1 === B || b0[lo + 1] !== x || b1[lo + 1] !== y) out[i] = lo + (rr.next++ & 1);
    else out[i] = dealtWords(x, y, b0, b1, lo, rr);
  }
  return out;
}

/**
 * dealt for a row of words (x, y) equal to boundary lo, in a function of its
 * own: a closure over the row's words in rangeIdsByWords' loop would make V8
 * allocate them in a context object for every row, taken or not (half the
 * loop's time and most of its garbage, measured).
 */
function dealtWords(x: number, y: number, b0: Uint32Array, b1: Uint32Array, lo: number, rr: { next: number }): number {
  return dealt(lo, b0.length, rr, (m) => (x !== b0[m] ? (x < b0[m] ? -1 : 1) : y !== b1[m] ? (y < b1[m] ? -1 : 1) : 0));
}

/** Buckets of the first word's top bits over the boundaries' span: about this many per boundary. */
const BUCKETS_PER_BOUND = 4;

/**
 * For sorted first words `b0`: bucket k holds the words w with
 * (w - min) >>> shift === k; starts[k] is the first boundary in bucket k or
 * after it. A row in bucket k has its first boundary not below it within
 * starts[k]..starts[k+1] (the boundaries of lower buckets are below it, of
 * higher ones above).
 */
function bucketStarts(b0: Uint32Array): { starts: Int32Array; min: number; max: number; shift: number } {
  const B = b0.length,
    min = b0[0],
    max = b0[B - 1];
  const span = max - min,
    want = Math.max(1, B * BUCKETS_PER_BOUND);
  let shift = 0;
  while (span / 2 ** shift >= want) shift++;
  const K = Math.floor(span / 2 ** shift) + 1;
  const starts = new Int32Array(K + 1);
  let m = 0;
  for (let k = 0; k <= K; k++) {
    while (m < B && (b0[m] - min) / 2 ** shift < k) m++;
    starts[k] = m;
  }
  return { starts, min, max, shift };
}
