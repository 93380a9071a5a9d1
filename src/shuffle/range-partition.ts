// The task side of a range-partitioned sort: a sample of a task's output rows
// (for the boundaries), and its rows scattered to ranges in one shared buffer
// like a hash shuffle's blocks.
import { type Batch, Int32Scratch, concatBatches, gatherBatch, rowCount } from '../kernels/column.js';
import type { SortKey } from '../kernels/sort.js';
import { type Partitioned, scatterRows } from './partition.js';
import { rangeIds } from './range.js';

/** Up to n evenly spaced rows of the batches (all of them when fewer), gathered without concatenating them. */
export function sampleRows(batches: Batch[], n: number): Batch | undefined {
  const total = rowCount(batches);
  if (total === 0) return undefined;
  const k = Math.min(n, total);
  const pieces: Batch[] = [];
  let start = 0,
    i = 0;
  for (const b of batches) {
    const picks: number[] = [];
    for (let at = Math.floor((i * total) / k); i < k && at < start + b.length; at = Math.floor((++i * total) / k))
      picks.push(at - start);
    if (picks.length) pieces.push(gatherBatch(b, Int32Array.from(picks)));
    start += b.length;
  }
  return concatBatches(
    batches[0].columns.map((c) => ({ name: '', type: c.type })),
    pieces,
  );
}

const scratch = new Int32Scratch(1 << 16, 2 << 20);

export function rangePartition(
  batches: Batch[],
  by: SortKey[],
  bounds: Batch,
  seed: number,
  spread = true,
): Omit<Partitioned, 'sketch'> {
  const total = rowCount(batches);
  const buf = scratch.get(2 * total);
  const ids = buf.subarray(0, total),
    dest = buf.subarray(total, 2 * total);
  const rr = { next: seed, spread };
  let at = 0;
  for (const b of batches) {
    rangeIds(b, bounds, by, ids.subarray(at, at + b.length), rr);
    at += b.length;
  }
  return scatterRows(batches, ids, dest, bounds.length + 1);
}
