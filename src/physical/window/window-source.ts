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
}
