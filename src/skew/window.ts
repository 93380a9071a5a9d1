// Which partitions of a window's shuffle are split by ranges of their (partition, order) keys: pure policy from the
// shuffle statistics and the skew settings, as joins and aggregates decide (skew/decide.ts detectSkew: bytes over
// factor x the median partition and over thresholdBytes). A split is exact only where a piece's rows need nothing
// from the pieces after it and a few numbers from those before it: row_number, rank, dense_rank, and count, sum,
// min, max, first_value over a frame from the partition's start to the current row (ROWS or RANGE). Other
// functions (lag/lead, sliding or forward frames, avg, ntile, percent_rank, cume_dist, last/nth_value) keep the
// partition in one task, and say why.
import type { BoundWindowFn } from '../plan/bound.js';
import type { SkewSettings } from '../plan/load.js';
import { detectSkew } from './decide.js';

/** Most pieces one window partition is cut into. */
const MAX_PIECES = 64;

export interface WindowSplit {
  partition: number;
  rows: number;
  bytes: number;
  /** ranges: cut by ranges of the keys, computed in `pieces` tasks and carried over; none: one task (reason) */
  method: 'ranges' | 'none';
  pieces?: number;
  reason?: string;
}

/** The skew handling of one window's shuffle, for the statistics. */
export interface WindowStats {
  id: string;
  splits: WindowSplit[];
}

/** Why the window's functions cannot be split by ranges (null: they can). */
export function unsplittable(fns: BoundWindowFn[]): string | null {
  for (const f of fns) {
    if (f.fn === 'row_number' || f.fn === 'rank' || f.fn === 'dense_rank') continue;
    const cumulative = f.frame.start === null && f.frame.end === 0;
    if (
      cumulative &&
      (f.fn === 'count' || f.fn === 'sum' || f.fn === 'min' || f.fn === 'max' || f.fn === 'first_value')
    )
      continue;
    return `${f.fn}→${f.as}${cumulative || f.fn === 'avg' ? '' : ' over this frame'} needs more than the rows before a piece`;
  }
  return null;
}

/**
 * The window's skewed partitions (bytes over factor x the median partition and thresholdBytes) and how each is
 * computed: cut by ranges into pieces of about `targetBytes` (what the other partitions are packed up to), or whole.
 */
export function planWindowSplits(
  rows: number[],
  bytes: number[],
  o: SkewSettings,
  fns: BoundWindowFn[],
  ordered: boolean,
  targetBytes: number,
): WindowSplit[] {
  if (!o.enabled) return [];
  const d = detectSkew({ partitionRows: rows, partitionBytes: bytes, mapBytes: [], hotKeys: [] }, o);
  const why = ordered ? unsplittable(fns) : 'no orderBy: every row of a partition is its peer';
  return d.skewedPartitions.map((p): WindowSplit => {
    const s = { partition: p, rows: rows[p], bytes: bytes[p] };
    if (why) return { ...s, method: 'none', reason: why };
    const pieces = Math.min(MAX_PIECES, rows[p], Math.ceil(bytes[p] / Math.max(1, targetBytes)));
    if (pieces < 2) return { ...s, method: 'none', reason: `not larger than a task (${targetBytes} bytes)` };
    return { ...s, method: 'ranges', pieces };
  });
}
