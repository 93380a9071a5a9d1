// Skew in an aggregate's shuffle, where combiners cannot remove it (the
// distinct values of a hot group, map tasks that passed their rows through):
// a skewed partition (the joins' test, decide.ts `detectSkew`) is aggregated
// in two levels. Level 1: tasks of about the target size turn its rows into
// states per group; level 2: one task (or grace pieces) merges them.
//
// Without count_distinct, level 1 reads row ranges of the partition's blocks
// (views, no copy). With count_distinct, the distinct counts of two pieces add
// only if their values are disjoint: split tasks over row ranges first reduce
// their rows to distinct (group, value) pairs and cut them by the hash of the
// pair; each level-1 task takes one piece from every range.
//
// This file plans (a pure function of the shuffle's statistics); physical/aggregate/two-level.ts runs the plan.
import { AGGREGATES, allMergeable } from '../agg/functions.js';
import { combinable } from '../agg/partial.js';
import { hasDistinct } from '../agg/twolevel.js';
import type { BoundAggregate } from '../plan/bound.js';
import type { SkewSettings } from '../plan/load.js';
import { type SideDecision, detectSkew } from './decide.js';

/** Most level-1 tasks for one partition. */
const MAX_PIECES = 256;
/** Pieces cut by hash per target-sized share of the rows. */
const HASH_HEADROOM = 1.25;

export interface AggregateSplit {
  partition: number;
  /** two-level: split; none: skewed, but aggregated by one task (see reason) */
  method: 'two-level' | 'none';
  rows: number;
  bytes: number;
  /** rows: level 1 over row ranges; distinct: over pieces cut by the hash of (group, count_distinct value) */
  cut?: 'rows' | 'distinct';
  /** level-1 tasks planned, and the input rows each is meant to read at most (a spilled block is read whole) */
  pieces?: number;
  targetRows?: number;
  reason?: string;
}

/** The skew handling of one aggregate's shuffle, for the statistics. */
export interface AggregateStats {
  id: string;
  targetBytes: number;
  splits: AggregateSplit[];
}

/**
 * Which partitions of an aggregate shuffle are aggregated in two levels. The
 * target task size is the joins' (advisoryPartitionBytes or the mean of the
 * partitions not skewed), at most a worker's share of the memory budget.
 */
export function planAggregateSplits(
  rows: number[],
  bytes: number[],
  o: SkewSettings,
  aggs: BoundAggregate[],
  shareBytes: number,
): { decision: SideDecision; targetBytes: number; splits: AggregateSplit[] } {
  const d = detectSkew({ partitionRows: rows, partitionBytes: bytes, mapBytes: [], hotKeys: [] }, o);
  const skewed = o.enabled ? d.skewedPartitions : [];
  const rest = bytes.filter((_, p) => !skewed.includes(p));
  const mean = rest.length ? rest.reduce((a, b) => a + b, 0) / rest.length : 0;
  const targetBytes = Math.max(1, Math.min(Math.max(o.advisoryPartitionBytes, mean), shareBytes));
  const splits = skewed.map((p): AggregateSplit => {
    const s = { partition: p, rows: rows[p], bytes: bytes[p] };
    if (!combinable(aggs))
      return {
        ...s,
        method: 'none',
        reason: allMergeable(aggs)
          ? 'count_distinct of more than one column: no mergeable partial state'
          : `${aggs.find((a) => AGGREGATES[a.fn].state === null)!.fn} is holistic: no mergeable partial state`,
      };
    if (bytes[p] <= targetBytes || rows[p] < 2)
      return { ...s, method: 'none', reason: `not larger than the target task size (${targetBytes} bytes)` };
    const targetRows = Math.ceil(rows[p] / Math.min(MAX_PIECES, Math.ceil(bytes[p] / targetBytes)));
    // Row ranges are exact; pieces by hash vary in size (values repeat across ranges): some headroom.
    const distinct = hasDistinct(aggs);
    const pieces = Math.min(MAX_PIECES, Math.ceil((distinct ? HASH_HEADROOM : 1) * (rows[p] / targetRows)));
    return { ...s, method: 'two-level', cut: distinct ? 'distinct' : 'rows', pieces, targetRows };
  });
  return { decision: { ...d, skewedPartitions: skewed }, targetBytes, splits };
}
