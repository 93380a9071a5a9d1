// A map task's combiner over its output batches: partial states of each batch,
// merged into one set at the end, so the task's rows are never concatenated
// into a copy; unless its first rows show barely any grouping (adaptive
// pass-through, agg/partial.ts), when the rows pass through as they are: into
// a shuffle, which then holds no more bytes than without combiners (a state
// is wider than its row: a sum's is [sum, count]), and whose reduce tasks
// aggregate such rows beside other tasks' states; elsewhere each row as its own state.
import { type Batch, type Column, type Schema, batchBytes, concatBatches, emptyBatch, gather } from '../kernels/column.js';
import { decimalColumn, decimalSums } from '../kernels/decimal.js';
import type { BoundAggregate } from '../plan/bound.js';
import { materialize, selectedRows, selectionOf } from '../exec/deferred.js';
import { countColumn, float64Column, floatSums, groupsOf, intSumColumn, minMax } from './aggregate.js';
import { PASS_THROUGH_SAMPLE, barelyShrinks, combinerGrouping, partialAggregate, partialSchema, rowsAsStates } from './partial.js';

/** Partial aggregation of a task's output before its sink. */
export interface Combine {
  groupBy: number[]; aggs: BoundAggregate[]; schema: Schema;
  /** the consumer takes rows that pass through as they are (an aggregate's shuffle), not only states */
  passRows?: boolean;
}

/** pass-through: `batch` holds the input rows (`Combine.schema`) when `rows` was allowed, else one state per row */
export interface Combined { batch: Batch; mode: 'partial' | 'pass-through'; rowsIn: number; bytesIn: number }

/** `rows`: rows that do not reduce may pass through as they are (not as states), if `c.passRows`. */
export function combine(batches: Batch[], c: Combine, rows = false): Combined {
  const schema = partialSchema(c.schema, c.groupBy, c.aggs);
  // batches may carry a dense filter's rows still to be picked (exec/deferred.ts)
  const rowsIn = batches.reduce((s, b) => s + selectedRows(b), 0);
  const bytesIn = batches.reduce((s, b) => s + Math.round((batchBytes(b) * selectedRows(b)) / Math.max(1, b.length)), 0);
  const partial = (b: Batch) => partialAggregate(b, c.groupBy, c.aggs, schema, selectionOf(b));
  // the first rows decide, as if the batches were one
  const head = () => (selectedRows(batches[0]) >= PASS_THROUGH_SAMPLE ? materialize(batches[0], PASS_THROUGH_SAMPLE) : concatBatches(c.schema, batches.map((b) => materialize(b))));
  if (c.groupBy.length > 0 && rowsIn >= 2 * PASS_THROUGH_SAMPLE && barelyShrinks(head(), partial, rowsIn)) {
    const all = concatBatches(c.schema, batches.map((b) => materialize(b)));
    return { batch: rows && c.passRows ? all : rowsAsStates(all, c.groupBy, c.aggs), mode: 'pass-through', rowsIn, bytesIn };
  }
  if (batches.length <= 1) return { batch: batches.length ? partial(batches[0]) : partial(emptyBatch(c.schema)), mode: 'partial', rowsIn, bytesIn };
  const states = concatBatches(schema, batches.map(partial));
  return { batch: mergeStates(states, c.groupBy, c.aggs, schema), mode: 'partial', rowsIn, bytesIn };
}

/** Partial states (several rows per group) merged into one state per group, in the same schema. */
export function mergeStates(b: Batch, groupBy0: number[], aggs0: BoundAggregate[], schema: Schema): Batch {
  const { groupBy, aggs } = combinerGrouping(groupBy0, aggs0);
  const nKeys = groupBy.length;
  if (b.length === 0 && nKeys > 0) return emptyBatch(schema);
  const g = groupsOf(b, groupBy.map((_, i) => i));
  const out: Column[] = b.columns.slice(0, nKeys).map((k) => gather(k, g.first, g.nGroups));
  let s = nKeys;
  for (const a of aggs) {
    if (a.fn === 'count') { out.push(countColumn(floatSums(b.columns[s++], g))); continue; }
    if (a.fn === 'min' || a.fn === 'max') { out.push(minMax(b.columns[s++], g, a.fn === 'max')); continue; }
    const sum = b.columns[s++], cnt = floatSums(b.columns[s++], g), what = `partial sum of "${a.as}"`;
    out.push(sum.type.id === 'decimal' ? decimalColumn(decimalSums(sum, g.gid, g.nGroups, cnt), sum.type, what)
      : sum.type.id === 'int64' ? intSumColumn(sum, g, what, cnt)
        : float64Column(floatSums(sum, g), cnt));
    out.push(countColumn(cnt));
  }
  return { length: g.nGroups, columns: out };
}
