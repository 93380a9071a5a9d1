// The reduce side of a range-partitioned sort: a task's consecutive ranges,
// each sorted on its own, into one output batch in range order.
import { type Batch, type Schema, concatBatches, gatherBatch } from '../kernels/column.js';
import { type SortKey, sortIndices } from '../kernels/sort.js';

/**
 * Sort each range (`ranges[r]` blocks of `input`, in order) and concatenate
 * them. The ranges are small (sort/stage.ts): a range's rows fit the cache,
 * so the gather in sort order reads them there rather than at random from
 * the whole task's rows, which costs several times as much a row.
 */
export function sortRanges(schema: Schema, input: Batch[], ranges: number[], by: SortKey[]): Batch {
  const sorted: Batch[] = [];
  let at = 0;
  for (const n of ranges) {
    const rows = concatBatches(schema, input.slice(at, at += n));
    sorted.push(gatherBatch(rows, sortIndices(rows, by)));
  }
  return sorted.length === 1 ? sorted[0] : concatBatches(schema, sorted);
}
