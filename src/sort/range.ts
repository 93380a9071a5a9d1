// Range partitioning for a parallel, out-of-core sort: boundaries chosen from
// a sample of the rows (a pure function: sample and sizes in, boundaries out),
// and the range of every row. A hot sort value whose rows would overflow one
// range gets several equal boundaries; its rows are then dealt round-robin
// over every range those boundaries allow (equal rows may sit in any of them
// without breaking the order), so no range grows with the hot value.
import { type Batch, type Column, concatColumns, gatherBatch } from '../kernels/column.js';
import { compareWords, sortWords } from '../kernels/radix.js';
import { type SortKey, sortIndices, valueComparator } from '../kernels/sort.js';

/**
 * Ranges for `totalBytes` of rows at about `rangeBytes` each (at least
 * `minRanges`, at most `maxRanges`), and their R-1 boundaries: rows of the
 * sorted sample at evenly spaced quantiles. Fewer ranges when the sample is
 * small (no more than one boundary per sampled row).
 */
export function chooseBounds(sample: Batch, by: SortKey[], totalBytes: number, rangeBytes: number, minRanges: number, maxRanges = 1024): Batch {
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
    const ca = a.columns[k.col], cb = b.columns[k.col];
    // one comparator over both columns: b's values appended after a's, so that the
    // string and number comparisons are the sort's own
    const both = concatPair(ca, cb);
    const cmp = valueComparator(both);
    const off = ca.length;
    const va = ca.valid, vb = cb.valid;
    const dir = k.desc ? -1 : 1, nullDir = k.nullsFirst ? -1 : 1;
    return (i: number, j: number) => {
      const ni = va !== null && va[i] === 0, nj = vb !== null && vb[j] === 0;
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

/** The same comparison over fixed-width keys as words (kernels/radix.ts), or null for string keys. */
function wordOrder(a: Batch, b: Batch, by: SortKey[]): ((i: number, j: number) => number) | null {
  const nulls = by.map((k) => a.columns[k.col].valid !== null || b.columns[k.col].valid !== null);
  const wa = sortWords(a, by, nulls), wb = wa && sortWords(b, by, nulls);
  return wa && wb ? (i, j) => compareWords(wa, i, wb, j) : null;
}

const concatPair = (x: Column, y: Column) => concatColumns(x.type, [x, y]);

/**
 * The range (0..bounds.length) of each row of `b`: the first range whose
 * upper boundary is not below the row; a row equal to boundaries lo..hi-1 is
 * dealt round-robin over ranges lo..hi (`rr` carries the turn across batches).
 */
export function rangeIds(b: Batch, bounds: Batch, by: SortKey[], out: Int32Array, rr: { next: number }): Int32Array {
  const B = bounds.length;
  const cmp = wordOrder(b, bounds, by) ?? crossOrder(b, bounds, by);
  for (let i = 0; i < b.length; i++) {
    let lo = 0, hi = B; // first boundary >= row
    while (lo < hi) { const m = (lo + hi) >> 1; if (cmp(i, m) > 0) lo = m + 1; else hi = m; }
    let end = lo; // first boundary > row
    if (end < B && cmp(i, end) === 0) {
      let h = B;
      while (end < h) { const m = (end + h) >> 1; if (cmp(i, m) >= 0) end = m + 1; else h = m; }
      out[i] = lo + (rr.next++ % (end - lo + 1));
    } else {
      out[i] = lo;
    }
  }
  return out;
}
