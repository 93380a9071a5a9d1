// A task's input with its spilled blocks read back: the only place a task
// touches spill files, before its source runs (on the worker that runs it).
import { readBack } from '../spill/block.js';
import type { TaskSource } from './task.js';

/** The source with every spilled block in memory, and the spill bytes read. */
export function withSpillRead(src: TaskSource): { source: TaskSource; readBytes: number } {
  const n = { bytes: 0 };
  let source = src;
  if (src.kind === 'join') source = { ...src, left: readBack(src.left, n), right: readBack(src.right, n) };
  else if (src.kind === 'aggregate' || src.kind === 'sort') source = { ...src, input: readBack(src.input, n) };
  else if (src.kind === 'split') source = { ...src, blocks: readBack(src.blocks, n) };
  else if (src.kind === 'batches') source = { ...src, batches: readBack(src.batches, n) };
  return { source, readBytes: n.bytes };
}
