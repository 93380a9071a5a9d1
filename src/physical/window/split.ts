// The worker side of a window partition split by ranges (window/carry.ts): a piece keeps the rows of its range of
// (partition, order) keys, and reports a summary of its first and last window partition; the second pass adds
// what the pieces before it carry.
import { type Batch, type Schema, concatBatches, gather, gatherSelected } from '../../kernels/column.js';
import { type SortKey, valueComparator } from '../../kernels/sort.js';
import type { BoundWindowFn } from '../../plan/bound.js';
import type { Shape } from './bounds.js';
import { mergeEarlier, summaryFn, summaryG, summaryR } from './carry.js';

/** A total order of rows on the keys alone (ties: 0). */
export function keyOrder(b: Batch, keys: SortKey[]): (i: number, j: number) => number {
  const cmps = keys.map((k) => {
    const c = b.columns[k.col];
    const cmp = valueComparator(c);
    const valid = c.valid;
    const dir = k.desc ? -1 : 1,
      nullDir = k.nullsFirst ? -1 : 1;
    return (i: number, j: number) => {
      if (valid !== null && (valid[i] === 0 || valid[j] === 0))
        return valid[i] === valid[j] ? 0 : valid[i] === 0 ? nullDir : -nullDir;
      return dir * cmp(i, j);
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

/**
 * The rows of `blocks` cut into the ranges of the sorted boundary rows (range k: above boundary k-1, not above
 * boundary k; rows with equal keys in one range), one batch per range (empty ones too).
 */
export function cutByBounds(schema: Schema, blocks: Batch[], bounds: Batch, keys: SortKey[]): Batch[] {
  const B = bounds.length;
  const parts: Batch[][] = Array.from({ length: B + 1 }, () => []);
  for (const rows of blocks) {
    const n = rows.length;
    if (n === 0) continue;
    const cmp = keyOrder(concatBatches(schema, [rows, bounds]), keys);
    const id = new Int32Array(n),
      count = new Int32Array(B + 1);
    for (let i = 0; i < n; i++) {
      let lo = 0,
        hi = B; // the first boundary not below the row
      while (lo < hi) {
        const m = (lo + hi) >> 1;
        if (cmp(i, n + m) > 0) lo = m + 1;
        else hi = m;
      }
      id[i] = lo;
      count[lo]++;
    }
    for (let k = 0; k <= B; k++) {
      if (count[k] === 0) continue;
      const pick = new Int32Array(count[k]);
      let at = 0;
      for (let i = 0; i < n; i++) if (id[i] === k) pick[at++] = i;
      parts[k].push({ length: at, columns: rows.columns.map((c) => gatherSelected(c, pick, at)) });
    }
  }
  return parts.map((bs) => concatBatches(schema, bs));
}

/** The summary rows of a piece's sorted output (`w`: the input's width): its first and last window partition. */
export function summaryOf(out: Batch, w: number, partitionBy: number[], fns: BoundWindowFn[], s: Shape): Batch {
  const n = out.length;
  const ends = Int32Array.of(s.partEnd[0] - 1, n - 1);
  const groups = (ps: number, pe: number) => {
    let g = 0;
    for (let i = ps; i < pe; i++) if (s.peerStart[i] === i) g++;
    return g;
  };
  const R = Float64Array.of(s.partEnd[0], n - s.partStart[n - 1]);
  const G = Float64Array.of(groups(0, s.partEnd[0]), groups(s.partStart[n - 1], n));
  const f64 = (v: Float64Array) => ({ type: { id: 'float64' as const }, length: 2, values: v, valid: null });
  const cols = [...partitionBy.map((c) => gather(out.columns[c], ends)), f64(R), f64(G)];
  fns.forEach((_, k) => {
    cols.push(gather(out.columns[w + k], ends));
  });
  return { length: 2, columns: cols };
}

/** A piece's output with what its first window partition carries from before (`c`, one summary row) added. */
export function withCarry(out: Batch, w: number, keys: number, fns: BoundWindowFn[], upTo: number, c: Batch): Batch {
  const R = (c.columns[summaryR(keys)].values as Float64Array)[0],
    G = (c.columns[summaryG(keys)].values as Float64Array)[0];
  const cols = out.columns.slice();
  fns.forEach((f, k) => {
    cols[w + k] = mergeEarlier(
      f,
      c.columns[summaryFn(keys, k)],
      out.columns[w + k],
      upTo,
      f.fn === 'dense_rank' ? G : R,
    );
  });
  return { length: out.length, columns: cols };
}
