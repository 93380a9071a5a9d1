// A task's input with its spilled blocks read back: the only place a task
// touches spill files, before its source runs (on the worker that runs it).
import { inputsOf, withInputs } from '../physical/kernels.js';
import type { TaskSource } from '../physical/task.js';
import { readBack } from '../spill/block.js';

/** The source with every spilled block in memory, and the spill bytes read. */
export function withSpillRead(src: TaskSource): { source: TaskSource; readBytes: number } {
  const n = { bytes: 0 };
  const inputs = inputsOf(src);
  if (inputs.length === 0) return { source: src, readBytes: 0 };
  const read = readBack(inputs, n);
  return { source: read === inputs ? src : withInputs(src, read), readBytes: n.bytes };
}
