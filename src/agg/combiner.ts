// A map task's combiner over its output batches: partial states of each batch,
// merged into one set at the end, so the task's rows are not concatenated into
// a copy (where each batch holds most of the task's groups, the rows are copied
// together and aggregated once); unless its first rows show barely any grouping
// (adaptive pass-through, agg/partial.ts), when the rows pass through as they are: into
// a shuffle, which then holds no more bytes than without combiners (a state
// is wider than its row: a sum's is [sum, count]), and whose reduce tasks
// aggregate such rows beside other tasks' states; elsewhere each row as its own state.
import {
  type Batch,
  type Column,
  type DataType,
  type Schema,
  batchBytes,
  concatBatches,
  emptyBatch,
  gather,
} from '../kernels/column.js';
import { decimalSumsColumn } from '../kernels/decimal.js';
import type { BoundAggregate } from '../plan/bound.js';
import { materialize, selectedRows, selectionOf } from '../expr/deferred.js';
import { unknownState } from './functions.js';
import { widenNarrowed } from './narrow.js';
import { countColumn, float64Column, floatSums, groupsOf, intSumColumn, minMax } from './aggregate.js';
import {
  PASS_THROUGH_SAMPLE,
  combinerGrouping,
  mergeable,
  passesThrough,
  partialAggregate,
  partialSchema,
  rowsAsStates,
  type SampleGroups,
  estimatedGroups,
  sampleGroupsOf,
} from './partial.js';

/** Partial aggregation of a task's output before its sink. */
export interface Combine {
  groupBy: number[];
  aggs: BoundAggregate[];
  schema: Schema;
  /** the consumer takes rows that pass through as they are (an aggregate's shuffle), not only states */
  passRows?: boolean;
  /** the group columns expected to determine the others (agg/group-ids.ts groupsOf) */
  lead?: number;
}

/**
 * pass-through: `batches` are the input rows (`Combine.schema`) as they came when `rows` was
 * allowed (no copy: the sink cuts them into partitions anyway), else one batch of a state per row
 */
export interface Combined {
  batches: Batch[];
  rowsOut: number;
  mode: 'partial' | 'pass-through';
  rowsIn: number;
  bytesIn: number;
}

/** `rows`: rows that do not reduce may pass through as they are (not as states), if `c.passRows`. */
export function combine(batches: Batch[], c: Combine, rows = false): Combined {
  const schema = partialSchema(c.schema, c.groupBy, c.aggs);
  // batches may carry a dense filter's rows still to be picked (expr/deferred.ts)
  const rowsIn = batches.reduce((s, b) => s + selectedRows(b), 0);
  const bytesIn = batches.reduce(
    (s, b) => s + Math.round((batchBytes(b) * selectedRows(b)) / Math.max(1, b.length)),
    0,
  );
  const partial = (b: Batch) => partialAggregate(b, c.groupBy, c.aggs, schema, selectionOf(b), c.lead);
  // the first rows decide, as if the batches were one
  // (rows, unlike states, take their schema's lanes: a sum's column may come narrowed, agg/narrow.ts)
  const rowsOf = (b: Batch, limit?: number) => widenNarrowed(materialize(b, limit), c.schema);
  const head = () =>
    selectedRows(batches[0]) >= PASS_THROUGH_SAMPLE
      ? rowsOf(batches[0], PASS_THROUGH_SAMPLE)
      : concatBatches(
          c.schema,
          batches.map((b) => rowsOf(b)),
        );
  // the sample's groups are counted, not aggregated, and passed batches are not concatenated: a
  // pass-through task costs what it costs without combiners (aggregate by key at s = 0, map stage
  // CPU: 17% above no-combiners' when the sample was aggregated and the rows copied; now level)
  // (the states' groups: count_distinct's column is one of them)
  const stateGroups = combinerGrouping(c.groupBy, c.aggs).groupBy;
  let sampled: { n: number; s: SampleGroups } | null = null;
  const groups = (sample: Batch) => {
    const s = sampleGroupsOf(groupsOf(sample, stateGroups, undefined, false, c.lead), sample.length);
    sampled = { n: sample.length, s };
    return s;
  };
  if (c.groupBy.length > 0 && rowsIn > 0 && passesThrough(head(), groups, rowsIn)) {
    const passed = batches.map((b) => rowsOf(b));
    if (rows && c.passRows) return { batches: passed, rowsOut: rowsIn, mode: 'pass-through', rowsIn, bytesIn };
    const states = rowsAsStates(concatBatches(c.schema, passed), c.groupBy, c.aggs);
    return { batches: [states], rowsOut: states.length, mode: 'pass-through', rowsIn, bytesIn };
  }
  const one = (b: Batch): Combined => ({ batches: [b], rowsOut: b.length, mode: 'partial', rowsIn, bytesIn });
  if (batches.length <= 1) return one(batches.length ? partial(batches[0]) : partial(emptyBatch(c.schema)));
  // each batch holding most of the task's groups (ROLLUP's partial aggregate by (l_suppkey, l_returnflag): 28K of
  // the 30K groups in each of four batches of 131K rows), merging the batches' states costs more than copying the
  // rows once: 60 ms a task against 85
  if (sampled !== null && statesOfBatches(batches, sampled) > MERGE_SHARE * rowsIn)
    return one(partialAggregate(rowsTogether(batches, c.schema), c.groupBy, c.aggs, schema, undefined, c.lead));
  return one(mergeStates(concatBatches(schema, batches.map(partial)), c.groupBy, c.aggs, schema, c.lead));
}

/** States per row of the task above which its batches are aggregated together, not each then merged. */
const MERGE_SHARE = 1 / 8;

/** The states that aggregating each batch apart would make, estimated from the sample's groups. */
function statesOfBatches(batches: Batch[], sampled: { n: number; s: SampleGroups }): number {
  const { n, s } = sampled;
  let states = 0;
  for (const b of batches) states += estimatedGroups(n, s.groups, s.firstHalf, selectedRows(b));
  return states;
}

/**
 * The batches' rows as one batch: in the lanes they came in when every batch has the same column types (a sum's
 * decimal column may come narrowed, agg/narrow.ts), else in the schema's.
 */
function rowsTogether(batches: Batch[], schema: Schema): Batch {
  const rows = batches.map((b) => materialize(b));
  const types = rows[0].columns.map((col) => col.type);
  const same = rows.every((r) => r.columns.every((col, i) => sameType(col.type, types[i])));
  if (!same)
    return concatBatches(
      schema,
      rows.map((r) => widenNarrowed(r, schema)),
    );
  return concatBatches(
    schema.map((f, i) => ({ ...f, type: types[i] })),
    rows,
  );
}

const sameType = (a: DataType, b: DataType) =>
  a.id === b.id &&
  a.precision === b.precision &&
  a.scale === b.scale &&
  a.unit === b.unit &&
  a.tz === b.tz &&
  a.large === b.large;

/** Partial states (several rows per group) merged into one state per group, in the same schema. */
function mergeStates(b: Batch, groupBy0: number[], aggs0: BoundAggregate[], schema: Schema, lead = 0): Batch {
  const { groupBy, aggs } = combinerGrouping(groupBy0, aggs0);
  const nKeys = groupBy.length;
  if (b.length === 0 && nKeys > 0) return emptyBatch(schema);
  const g = groupsOf(
    b,
    groupBy.map((_, i) => i),
    undefined,
    false,
    lead,
  );
  const out: Column[] = b.columns.slice(0, nKeys).map((k) => gather(k, g.first, g.nGroups));
  let s = nKeys;
  for (const a of aggs) {
    const st = mergeable(a);
    if (st.kind === 'count') {
      out.push(countColumn(floatSums(b.columns[s++], g)));
      continue;
    }
    if (st.kind === 'extreme') {
      out.push(minMax(b.columns[s++], g, st.max));
      continue;
    }
    if (st.kind !== 'sum') unknownState(st);
    const sum = b.columns[s++],
      cnt = floatSums(b.columns[s++], g),
      what = `partial sum of "${a.as}"`;
    out.push(
      sum.type.id === 'decimal'
        ? decimalSumsColumn(sum, g.gid, g.nGroups, cnt, sum.type, what)
        : sum.type.id === 'int64'
          ? intSumColumn(sum, g, what, cnt)
          : float64Column(floatSums(sum, g), cnt),
    );
    out.push(countColumn(cnt));
  }
  return { length: g.nGroups, columns: out };
}
