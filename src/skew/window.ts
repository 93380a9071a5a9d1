// Which partitions of a window's shuffle are split by ranges of their (partition, order) keys: pure policy from the
// shuffle statistics and the skew settings, as joins and aggregates decide (skew/decide.ts detectSkew: bytes over
// factor x the median partition and over thresholdBytes). A split is exact only where a piece's rows need nothing
// from the pieces after it and a few numbers from those before it: row_number, rank, dense_rank, and count, sum,
// avg (its sum and count carried), min, max, first_value over a frame from the partition's start to the current
// row (ROWS or RANGE); ntile, percent_rank and cume_dist with the partition's total rows added up over the pieces;
// lag/lead and functions over ROWS frames of n preceding/following rows recomputed with the n rows before and after
// a piece from its neighbours; count, sum, min, max and last_value over a frame to the partition's end (from the
// current row or the partition's start), and avg from the current row to the end, with what the pieces after it
// carry, the mirror of a running value. Other functions (RANGE frames with offsets, avg over the whole partition,
// first_value or nth_value to the partition's end) keep the partition in one task, and say why. A window without orderBy whose functions are
// aggregates over the whole partition (count, sum, avg, min, max) or ranks (rank, dense_rank, percent_rank,
// cume_dist: every row a peer) is a two-level aggregate: its hot partition's rows are dealt over several ranges of
// the partition keys, each piece computes its partials, and each partition's partials, combined, go back to its
// rows in every piece.
import type { BoundWindowFn } from '../plan/bound.js';
import { WINDOW_FNS } from '../plan/window-fns.js';
import type { SkewSettings } from '../plan/load.js';
import { detectSkew } from './decide.js';

/** Most pieces one window partition is cut into. */
const MAX_PIECES = 64;

export interface WindowSplit {
  partition: number;
  rows: number;
  bytes: number;
  /**
   * ranges: cut by ranges of the keys, computed in `pieces` tasks and carried over; aggregate (a window without
   * orderBy): the partition's rows dealt over `pieces` ranges, partial aggregates combined per partition and given
   * back to its rows; none: one task (reason)
   */
  method: 'ranges' | 'aggregate' | 'none';
  pieces?: number;
  reason?: string;
}

/** The skew handling of one window's shuffle, for the statistics. */
export interface WindowStats {
  id: string;
  splits: WindowSplit[];
  /** the bytes its tasks are packed up to, and a split partition's pieces sized to */
  targetBytes?: number;
  /** the columns its shuffle carries (its input's, pruned to what it and the plan above read) */
  shuffled?: string[];
  /** the input columns its tasks emit beside the functions' (pruned to those read above it) */
  emitted?: string[];
  /** a top-N filter above (plan/window-topn.ts): its tasks kept only the rows that may be among the first `n` */
  topN?: { fn: string; n: number };
}

/** Why the window's functions cannot be split by ranges (null: they can). */
export function unsplittable(fns: BoundWindowFn[]): string | null {
  for (const f of fns) {
    if (f.distinct) return `${f.fn}(distinct)→${f.as} needs the values of the rows before a piece`;
    const def = WINDOW_FNS[f.fn];
    // the rows before a piece (row_number, rank, dense_rank); the partition's total rows, from a count over the
    // pieces' summaries (window/carry.ts partitionTotals); the n rows before and after a piece, from its neighbours
    // (window/carry.ts reach)
    if (def.split !== 'frame') continue;
    if (f.frame.unit === 'rows' && f.frame.start !== null && f.frame.end !== null) continue;
    // to the partition's end: what the pieces after carry (window/carry.ts toEnd)
    if (
      f.frame.end === null &&
      (f.frame.start === 0 || (f.frame.start === null && def.toEnd === 'start or current')) &&
      def.toEnd !== null
    )
      continue;
    const cumulative = f.frame.start === null && f.frame.end === 0;
    if (cumulative && def.running) continue;
    return `${f.fn}→${f.as}${cumulative ? '' : ' over this frame'} needs more than the rows before a piece`;
  }
  return null;
}

/** Why a window without orderBy cannot be split as a two-level aggregate (null: it can). */
export function unsplittableWhole(fns: BoundWindowFn[]): string | null {
  for (const f of fns) {
    if (f.distinct) return `${f.fn}(distinct)→${f.as} needs every value of the partition`;
    const def = WINDOW_FNS[f.fn];
    // the ranks: every row a peer; the aggregates over the whole partition: combined from per-piece partials
    if (def.whole && (def.kind === 'rank' || (f.frame.start === null && f.frame.end === null))) continue;
    return `no orderBy, and ${f.fn}→${f.as} is not an aggregate over the whole partition`;
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
  const why = ordered ? unsplittable(fns) : unsplittableWhole(fns);
  return d.skewedPartitions.map((p): WindowSplit => {
    const s = { partition: p, rows: rows[p], bytes: bytes[p] };
    if (why) return { ...s, method: 'none', reason: why };
    const pieces = Math.min(MAX_PIECES, rows[p], Math.ceil(bytes[p] / Math.max(1, targetBytes)));
    if (pieces < 2) return { ...s, method: 'none', reason: `not larger than a task (${targetBytes} bytes)` };
    return { ...s, method: ordered ? 'ranges' : 'aggregate', pieces };
  });
}
