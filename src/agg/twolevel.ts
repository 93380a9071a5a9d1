// The batch steps of a two-level aggregation (a skewed aggregate partition,
// see skew/aggregate.ts): level 1 turns a piece of the partition's rows into
// mergeable states per group, level 2 merges them and finalizes.
//
// Level-1 states ("two-level states") are laid out as the combiner's partial
// states (agg/partial.ts) with the count_distinct column replaced by a count:
// the group columns, `$distinct.count` when there is a count_distinct, then
// each other aggregate's state columns. The counts of two pieces add only
// when their distinct values are disjoint: the caller cuts the partition by
// the hash of (group, distinct value) before level 1 (step `dedup`).
import { type Batch, type Column, type Schema, emptyBatch, gather } from '../kernels/column.js';
import { decimalSumsColumn } from '../kernels/decimal.js';
import type { BoundAggregate } from '../plan/bound.js';
import { countColumn, countValid, float64Column, floatSums, groupsOf, intSumColumn, minMax } from './aggregate.js';
import { stateOf, unknownState } from './functions.js';
import type { Groups } from './groups.js';
import {
  barelyShrinks,
  combinerGrouping,
  finalAggregate,
  mergeable,
  partialAggregate,
  partialSchema,
  rowsAsStates,
} from './partial.js';

/**
 * dedup: rows → partial states by (group, count_distinct column), the cut's input;
 * piece: rows → two-level states by group (level 1); merge: two-level states → the result (level 2).
 */
export type TwoLevelStep = 'dedup' | 'piece' | 'merge';

export const hasDistinct = (aggs: BoundAggregate[]) => aggs.some((a) => stateOf(a)?.kind === 'distinct');

/** The schema of two-level states, from the schema of partial states. */
export function twoLevelSchema(partial: Schema, g: number, aggs: BoundAggregate[]): Schema {
  return hasDistinct(aggs)
    ? partial.map((f, i) => (i === g ? { name: '$distinct.count', type: { id: 'int64' } } : f))
    : partial;
}

/** Merge the state columns from `start` on (each non-distinct aggregate's, in order) within groups `g`. */
function mergeStateColumns(b: Batch, g: Groups, start: number, aggs: BoundAggregate[]): Column[] {
  const out: Column[] = [];
  let s = start;
  for (const a of aggs) {
    if (stateOf(a)?.kind === 'distinct') continue;
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
      cnt = b.columns[s++];
    const nonNull = countValid(sum, g, b.length);
    out.push(
      sum.type.id === 'int64'
        ? intSumColumn(sum, g, `partial sum of "${a.as}"`, nonNull)
        : sum.type.id === 'decimal'
          ? decimalSumsColumn(sum, g.gid, g.nGroups, nonNull, sum.type, `partial sum of "${a.as}"`)
          : float64Column(floatSums(sum, g), nonNull),
    );
    out.push(countColumn(floatSums(cnt, g)));
  }
  return out;
}

/** Partial states (any number of rows per key) merged by their first `nKeys` columns. */
function mergeStates(b: Batch, nKeys: number, aggs: BoundAggregate[], schema: Schema): Batch {
  if (b.length === 0) return emptyBatch(schema);
  const g = groupsOf(
    b,
    Array.from({ length: nKeys }, (_, i) => i),
  );
  const keys = Array.from({ length: nKeys }, (_, i) => gather(b.columns[i], g.first, g.nGroups));
  return { length: g.nGroups, columns: [...keys, ...mergeStateColumns(b, g, nKeys, aggs)] };
}

/**
 * One step over all rows of a task. `raw`: `b` holds input rows (`schema`,
 * grouped by `groupBy`); otherwise partial states (or, for `merge`, two-level
 * states) whose first columns are the keys.
 */
export function twoLevelStep(
  b: Batch,
  step: TwoLevelStep,
  raw: boolean,
  schema: Schema,
  groupBy: number[],
  aggs: BoundAggregate[],
  outSchema: Schema,
): Batch {
  const g = groupBy.length;
  const distinct = hasDistinct(aggs);
  if (step === 'merge') return finalAggregate(b, g, aggs, outSchema, true);
  const ps = raw ? partialSchema(schema, groupBy, aggs) : schema;
  const aggregate = (x: Batch) =>
    raw
      ? partialAggregate(x, groupBy, aggs, ps)
      : mergeStates(x, combinerGrouping(groupBy, aggs).groupBy.length, aggs, ps);
  // The cut reduces its rows to distinct pairs only where that pays (a pair repeats), as combiners do.
  // the states' groups: of the rows' columns, or the states' first columns
  const stateKeys = combinerGrouping(groupBy, aggs).groupBy;
  const by = raw ? stateKeys : stateKeys.map((_, i) => i);
  if (step === 'dedup' && barelyShrinks(b, (x) => groupsOf(x, by))) return raw ? rowsAsStates(b, groupBy, aggs) : b;
  const states = aggregate(b);
  if (step === 'dedup' || !distinct) return states;
  // Fold the distinct values of each group into their count: the rows are distinct (group, value) pairs.
  if (states.length === 0) return emptyBatch(twoLevelSchema(ps, g, aggs));
  const groups = groupsOf(
    states,
    Array.from({ length: g }, (_, i) => i),
  );
  const keys = Array.from({ length: g }, (_, i) => gather(states.columns[i], groups.first, groups.nGroups));
  const count = countColumn(countValid(states.columns[g], groups, states.length));
  return { length: groups.nGroups, columns: [...keys, count, ...mergeStateColumns(states, groups, g + 1, aggs)] };
}
