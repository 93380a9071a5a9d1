// The task source of a window: shuffled rows of some partitions, sorted by (partition keys, order keys) in the task,
// each function appended as a column (window/source.ts). Apart from window/source.ts so that physical/kernels.ts
// can register it (FamilySources) without an import circle.
import type { Batch, Schema } from '../../kernels/column.js';
import type { SortKey } from '../../kernels/sort.js';
import type { BoundWindowFn } from '../../plan/bound.js';
import type { TopN } from './topn.js';

export interface WindowSource {
  kind: 'window';
  schema: Schema;
  input: Batch[];
  partitionBy: number[];
  orderBy: SortKey[];
  fns: BoundWindowFn[];
  /**
   * the input columns the task emits (then the functions'), absent: all (plan/prune.ts); a task gathers into sorted
   * order only these and what its functions read. Not set on a split partition's cut and first pass (their rows go
   * on to the second pass whole)
   */
  keep?: number[];
  /** only the rows that may be among the first N of their partition are sorted (window/topn.ts; not on a split's pieces) */
  topN?: TopN;
  /**
   * a piece of a split partition (window/carry.ts): the output is the rows computed and their summary, as they are
   */
  piece?: boolean;
  /** cut the input into the ranges of these sorted boundary rows (the input's schema): one batch each, as they are */
  cut?: Batch;
  /**
   * with `cut`, a window without orderBy: rows equal to boundaries dealt in turn over their ranges (a hot partition
   * over several pieces), the turn starting here
   */
  deal?: number;
  /**
   * the second pass over a piece: `input` is its computed rows, sorted; the first `upTo` (its first window
   * partition) get what the pieces before carry (a summary row), if anything; `totals`: the rows of its first and
   * last window partition over every piece (ntile, percent_rank, cume_dist)
   */
  carry?: {
    upTo: number;
    values: Batch | null;
    totals?: { first: number; last: number };
    /** the rows just before and after the piece (the input's columns, sorted): lag/lead, bounded ROWS frames */
    neighbours?: { before: Batch; after: Batch };
    /**
     * a window without orderBy: its first partition's rows (before `upTo`) and its last one's (from `lastFrom`) take
     * the values combined over every piece they span (summary rows; null: an empty piece)
     */
    whole?: { first: Batch | null; last: Batch | null; lastFrom: number };
    /** frames to the partition's end: what the pieces after carry to the rows of its last partition, from `lastFrom` */
    after?: { values: Batch; lastFrom: number };
  };
}
