// The aggregate kernel: a reduce task's input (rows, partial states from combiners, or both) aggregated to its
// final rows, or one step of a skewed partition's two-level aggregation (agg/twolevel.ts).
import { aggregateBatch } from '../../agg/functions.js';
import { finalAggregate, rowsAsStates } from '../../agg/partial.js';
import { twoLevelStep } from '../../agg/twolevel.js';
import { ungroupable, ungroupedAggregate } from '../../agg/ungrouped.js';
import { type Batch, type Schema, concatBatches, rowCount } from '../../kernels/column.js';
import type { SourceKernel, TaskSource } from '../task.js';

type AggregateSource = Extract<TaskSource, { kind: 'aggregate' }>;

/** An aggregate task's rows (raw) or states aggregated: one two-level step, or to the final rows. */
function aggregateAll(b: Batch, src: AggregateSource, raw: boolean, schema: Schema, groupBy: number[]): Batch {
  if (src.step) return twoLevelStep(b, src.step, raw, schema, groupBy, src.aggs, src.outSchema);
  if (raw && groupBy.length === 0 && ungroupable(src.aggs)) return ungroupedAggregate(b, src.aggs);
  return raw
    ? aggregateBatch(b, groupBy, src.aggs, src.outSchema, src.lead)
    : finalAggregate(b, groupBy.length, src.aggs, src.outSchema, false, src.lead);
}

/**
 * A reduce task's partitions aggregated one by one: their groups are apart, and a hash table of one partition's
 * groups stays in cache where one of the task's would not (count(DISTINCT l_partkey) by l_suppkey, JCC-H SF 10:
 * about 900K (supplier, part) pairs a task of 9, against 40K a partition).
 */
function byPartition(src: AggregateSource): { batches: Batch[]; rows: number } {
  const batches: Batch[] = [];
  let at = 0,
    rows = 0;
  for (const p of src.parts!) {
    const input = src.input.slice(at, at + p.states + p.rows);
    at += p.states + p.rows;
    const one = produceOne({
      ...src,
      input,
      parts: undefined,
      ...(src.rows ? { rows: { ...src.rows, from: p.states } } : {}),
    });
    batches.push(...one.batches);
    rows += one.rows;
  }
  return { batches, rows };
}

function produceOne(src: AggregateSource): { batches: Batch[]; rows: number } {
  const from = src.rows?.from ?? src.input.length;
  const rows = src.rows && from < src.input.length ? concatBatches(src.rows.schema, src.input.slice(from)) : null;
  // only rows that combiners passed through: aggregated as without combiners
  if (rows && from === 0)
    return { batches: [aggregateAll(rows, src, true, src.rows!.schema, src.rows!.groupBy)], rows: rows.length };
  // states and rows: each row becomes its own state (no hashing: the final aggregate groups them once
  // with the rest; grouping them first measured 1.9x slower on TPC-H q21's aggregate reduce)
  const states = rows ? [...src.input.slice(0, from), rowsAsStates(rows, src.rows!.groupBy, src.aggs)] : src.input;
  const all = concatBatches(src.schema, states);
  return {
    batches: [aggregateAll(all, src, src.mode === 'raw', src.schema, src.groupBy)],
    rows: rowCount(src.input),
  };
}

export const aggregateKernel: SourceKernel<AggregateSource> = {
  inputs: (src) => src.input,
  withInputs: (src, input) => ({ ...src, input }),
  produce: (src) => (src.parts && src.parts.length > 1 ? byPartition(src) : produceOne(src)),
};
