// Sorting: a row order (indices) from a list of sort keys; strings compare
// by UTF-8 bytes (code point order), nulls last unless asked otherwise.
import { type Batch, type Column, floatOrder, lanes } from './column.js';
import { type SortKey, radixOrder, sortWords } from './radix.js';

export type { SortKey };

export function valueComparator(c: Column): (i: number, j: number) => number {
  const v = c.values as any;
  if (c.type.id === 'utf8') {
    const o = c.offsets!;
    return (i, j) => {
      const a0 = o[i],
        a1 = o[i + 1],
        b0 = o[j],
        b1 = o[j + 1];
      const n = Math.min(a1 - a0, b1 - b0);
      for (let k = 0; k < n; k++) {
        const d = v[a0 + k] - v[b0 + k];
        if (d !== 0) return d;
      }
      return a1 - a0 - (b1 - b0);
    };
  }
  if (c.type.id === 'decimal' && lanes(c.type) === 2) {
    // 128-bit: the signed high lanes, then the low lanes unsigned
    return (i, j) => {
      const a = v[2 * i + 1],
        b = v[2 * j + 1];
      if (a !== b) return a < b ? -1 : 1;
      const x = BigInt.asUintN(64, v[2 * i]),
        y = BigInt.asUintN(64, v[2 * j]);
      return x < y ? -1 : x > y ? 1 : 0;
    };
  }
  if (c.type.id === 'float64' || c.type.id === 'float32') {
    // NaN above every number, equal to itself (DuckDB's order, and min/max's): else it compares with nothing
    return (i, j) => floatOrder(v[i] as number, v[j] as number);
  }
  return (i, j) => (v[i] < v[j] ? -1 : v[i] > v[j] ? 1 : 0);
}

/** A total order on rows: the sort keys, then the row index (so ties keep input order). */
function rowOrder(b: Batch, keys: SortKey[]): (i: number, j: number) => number {
  const cmps = keys.map((k) => {
    const c = b.columns[k.col];
    const cmp = valueComparator(c);
    const valid = c.valid;
    const dir = k.desc ? -1 : 1;
    const nullDir = k.nullsFirst ? -1 : 1;
    return (i: number, j: number) => {
      if (valid !== null) {
        const ni = valid[i] === 0,
          nj = valid[j] === 0;
        if (ni || nj) return ni === nj ? 0 : ni ? nullDir : -nullDir;
      }
      return dir * cmp(i, j);
    };
  });
  return (i, j) => {
    for (const c of cmps) {
      const d = c(i, j);
      if (d !== 0) return d;
    }
    return i - j;
  };
}

/** Rows from which fixed-width keys are radix sorted (below, a comparison sort is as fast). */
const RADIX_MIN_ROWS = 4096;

export function sortIndices(b: Batch, keys: SortKey[]): Int32Array {
  const words = b.length >= RADIX_MIN_ROWS ? sortWords(b, keys) : null;
  return words ? radixOrder(words, b.length) : comparisonSort(b, keys);
}

/** The same order by comparisons (strings, small inputs; the reference the radix sort is tested against). */
export function comparisonSort(b: Batch, keys: SortKey[]): Int32Array {
  const idx = new Int32Array(b.length);
  for (let i = 0; i < idx.length; i++) idx[i] = i;
  // The index as the last key: TypedArray sort is not guaranteed stable.
  return idx.sort(rowOrder(b, keys));
}

/**
 * The first k rows in sort order, sorted (the same rows as sortIndices'
 * first k): a bounded max-heap over the order, O(n log k), for a limit above
 * a sort.
 */
export function topIndices(b: Batch, keys: SortKey[], k: number): Int32Array {
  const n = b.length;
  if (k >= n / 4) return sortIndices(b, keys).slice(0, Math.min(k, n));
  const cmp = rowOrder(b, keys);
  const heap = new Int32Array(k); // heap[0]: the last of the best k so far
  let size = 0;
  for (let i = 0; i < n; i++) {
    if (size < k) {
      let p = size++;
      heap[p] = i;
      while (p > 0) {
        // sift up
        const q = (p - 1) >> 1;
        if (cmp(heap[q], heap[p]) >= 0) break;
        const t = heap[q];
        heap[q] = heap[p];
        heap[p] = t;
        p = q;
      }
    } else if (k > 0 && cmp(i, heap[0]) < 0) {
      heap[0] = i;
      for (let p = 0; ; ) {
        // sift down
        const l = 2 * p + 1,
          r = l + 1;
        let m = p;
        if (l < size && cmp(heap[l], heap[m]) > 0) m = l;
        if (r < size && cmp(heap[r], heap[m]) > 0) m = r;
        if (m === p) break;
        const t = heap[m];
        heap[m] = heap[p];
        heap[p] = t;
        p = m;
      }
    }
  }
  return heap.subarray(0, size).sort(cmp);
}
