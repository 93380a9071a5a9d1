// The task source of a window: shuffled rows of some partitions, sorted by (partition keys, order keys) in the task,
// each function appended as a column (window/source.ts). Apart from window/source.ts so that physical/task.ts
// can name it without an import circle.
import type { Batch, Schema } from '../../kernels/column.js';
import type { SortKey } from '../../kernels/sort.js';
import type { BoundWindowFn } from '../../plan/bound.js';

export interface WindowSource {
  kind: 'window';
  schema: Schema;
  input: Batch[];
  partitionBy: number[];
  orderBy: SortKey[];
  fns: BoundWindowFn[];
  /**
   * a piece of a split partition (window/carry.ts): the output is the rows computed and their summary, as they are
   */
  piece?: boolean;
  /** cut the input into the ranges of these sorted boundary rows (the input's schema): one batch each, as they are */
  cut?: Batch;
  /**
   * the second pass over a piece: `input` is its computed rows, sorted; the first `upTo` (its first window
   * partition) get what the pieces before carry (a summary row), if anything
   */
  carry?: { upTo: number; values: Batch | null };
}
