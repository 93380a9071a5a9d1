// The reduce side of a range-partitioned sort: a task's consecutive ranges,
// each sorted on its own, as one output batch per range in range order.
import { type Batch, type Schema, concatBatches, gatherSelected } from '../../kernels/column.js';
import { type SortKey, sortIndices } from '../../kernels/sort.js';

/**
 * Sort each range (`ranges[r]` blocks of `input`, in order): one batch per
 * range, in range order. The ranges are small (physical/sort/stage.ts): a range's
 * rows fit the cache, so the gather in sort order reads them there rather
 * than at random from the whole task's rows, which costs several times as
 * much a row. The batches are not concatenated (a second copy): the output
 * takes them as they are (a Parquet file cuts its own row groups).
 */
export function sortRanges(schema: Schema, input: Batch[], ranges: number[], by: SortKey[]): Batch[] {
  const sorted: Batch[] = [];
  let at = 0;
  for (const n of ranges) {
    const rows = concatBatches(schema, input.slice(at, (at += n)));
    if (rows.length === 0) continue;
    // the order is a permutation (no -1 for a missing row): gathered with no scan for one
    const order = sortIndices(rows, by);
    sorted.push({ length: rows.length, columns: rows.columns.map((c) => gatherSelected(c, order, order.length)) });
  }
  return sorted;
}
