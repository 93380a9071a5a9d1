// The in-memory source kernel: batches the coordinator hands a task (rows read to measure a side, a repeated
// aggregate's rows, a limit's rows).
import { type Batch, batchBytes, rowCount } from '../../kernels/column.js';
import type { SourceKernel, TaskSource } from '../task.js';

type BatchesSource = Extract<TaskSource, { kind: 'batches' }>;

/** The in-memory bytes of batches (`tasks[].inputBytes`). */
export function batchesBytes(bs: readonly Batch[]): number {
  let s = 0;
  for (const b of bs) s += batchBytes(b);
  return s;
}

export const batchesKernel: SourceKernel<BatchesSource> = {
  inputs: (src) => src.batches,
  withInputs: (src, batches) => ({ ...src, batches }),
  produce: (src) => ({ batches: src.batches, rows: rowCount(src.batches) }),
};
