// The sort kernel: consecutive ranges of a range-partitioned sort, each range's rows sorted (sort/ranges.ts).
import { rowCount } from '../../kernels/column.js';
import type { SourceKernel, TaskSource } from '../task.js';
import { sortRanges } from './ranges.js';

type SortSource = Extract<TaskSource, { kind: 'sort' }>;

export const sortKernel: SourceKernel<SortSource> = {
  inputs: (src) => src.input,
  withInputs: (src, input) => ({ ...src, input }),
  produce(src) {
    const sorted = sortRanges(src.schema, src.input, src.ranges ?? [src.input.length], src.by);
    return { batches: sorted, rows: rowCount(sorted) };
  },
};
