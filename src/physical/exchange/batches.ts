// The in-memory source kernel: batches the coordinator hands a task (rows read to measure a side, a repeated
// aggregate's rows, a limit's rows).
import { rowCount } from '../../kernels/column.js';
import type { SourceKernel, TaskSource } from '../task.js';

type BatchesSource = Extract<TaskSource, { kind: 'batches' }>;

export const batchesKernel: SourceKernel<BatchesSource> = {
  inputs: (src) => src.batches,
  withInputs: (src, batches) => ({ ...src, batches }),
  produce: (src) => ({ batches: src.batches, rows: rowCount(src.batches) }),
};
