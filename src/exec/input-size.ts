// A task's input in bytes for the statistics (`tasks[].inputBytes`): the
// in-memory size of the blocks it was given, or of the columns a scan read,
// so that task balance can be judged by bytes as well as rows and time.
import { type Batch, batchBytes } from '../kernels/column.js';
import type { TaskSource } from './task.js';

function sum(bs: readonly Batch[]): number {
  let s = 0;
  for (const b of bs) s += batchBytes(b);
  return s;
}

/** Bytes of a task's input; a scan's are those of the batches it decoded (`read`). */
export function inputBytesOf(src: TaskSource, read: readonly Batch[]): number {
  switch (src.kind) {
    case 'scan':
      return sum(read);
    case 'batches':
      return sum(src.batches);
    case 'join':
      return sum(src.left) + sum(src.right);
    case 'split':
      return sum(src.blocks);
    case 'aggregate':
    case 'sort':
      return sum(src.input);
  }
}
