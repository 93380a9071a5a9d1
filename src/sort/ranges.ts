// The reduce side of a range-partitioned sort: a task's consecutive ranges,
// each sorted on its own, as one output batch per range in range order; a
// range far above the size that fits the cache is first cut locally into
// small ranges by boundaries sampled from its own rows.
import { type Batch, type Schema, batchBytes, concatBatches, gatherBatch, rowCount } from '../kernels/column.js';
import { type SortKey, sortIndices } from '../kernels/sort.js';
import { chooseBounds } from './range.js';
import { rangePartition, sampleRows } from './partition.js';

/** Sampled rows per local range (the boundaries' quantiles need a few dozen rows each). */
const LOCAL_SAMPLE_PER_RANGE = 64;
/** Most local ranges of one range (a task holds about 32). */
const MAX_LOCAL_RANGES = 1024;

/**
 * Sort each range (`ranges[r]` blocks of `input`, in order): one batch per
 * small range, in range order. The gather in sort order reads a small
 * range's rows from the cache rather than at random from the whole task's
 * rows, which costs several times as much a row; so a range above
 * `localBytes` (a sort-task group cut by the join below, sort/fused.ts) is
 * first cut into ranges of about `localBytes`: one scatter into a few dozen
 * ranges, cheap where the join's scatter into thousands was not. The
 * batches are not concatenated (a second copy): the output takes them as
 * they are (a Parquet file cuts its own row groups).
 */
export function sortRanges(schema: Schema, input: Batch[], ranges: number[], by: SortKey[], localBytes?: number): Batch[] {
  const sorted: Batch[] = [];
  let at = 0;
  for (const n of ranges) {
    const blocks = input.slice(at, at += n);
    for (const rows of localBytes ? cutLocally(schema, blocks, by, localBytes) : [concatBatches(schema, blocks)]) {
      if (rows.length > 0) sorted.push(gatherBatch(rows, sortIndices(rows, by)));
    }
  }
  return sorted;
}

/** A range's rows as consecutive ranges of about `localBytes` (in range order; one when it is small). */
function cutLocally(schema: Schema, blocks: Batch[], by: SortKey[], localBytes: number): Batch[] {
  const bytes = blocks.reduce((a, b) => a + batchBytes(b), 0);
  const R = Math.min(MAX_LOCAL_RANGES, Math.ceil(bytes / Math.max(1, localBytes)));
  const rows = rowCount(blocks);
  if (R < 2 || rows < 2) return [concatBatches(schema, blocks)];
  const sample = sampleRows(blocks, R * LOCAL_SAMPLE_PER_RANGE)!;
  const bounds = chooseBounds(sample, by, bytes, localBytes, 1, MAX_LOCAL_RANGES);
  return rangePartition(blocks, by, bounds, 0).blocks.filter((b): b is Batch => b !== null);
}
