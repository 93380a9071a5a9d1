// Which side a shuffle join's reduce task builds, partition by partition, and
// which side's rows the fused join aggregate groups: so that every task of a
// stage takes the fused path whatever its sides' sizes (a coalesced task of
// small partitions may have fewer rows on the side that carries the groups).
import { JoinAggregator, type JoinShape } from '../agg/joinagg.js';
import { type Batch, type Schema, concatBatches } from '../kernels/column.js';
import type { BoundAggregate } from '../plan/bound.js';
import type { JoinType } from '../plan/spec.js';
import { buildsLeft } from '../kernels/join.js';

/**
 * An inner join builds its larger side when only that side carries the
 * aggregate's groups, up to this many times the other side's rows: grouping
 * those rows costs the same on either side, and the table stays small enough
 * to stay in cache. Beyond it the probing batches are grouped instead.
 */
export const FLIP_ROWS = 4;

/** How a partition is joined: the side built, and the side whose rows the fused aggregate groups (null: no aggregate fused). */
export interface Orientation { buildLeft: boolean; grouped: 'build' | 'probe' | null }

/** The join without its rows: type, schemas and keys (the aggregator's JoinShape less its grouped side). */
export type JoinSides = Omit<JoinShape, 'groupedLeft'>;

/** The aggregate above the join, fused into its tasks: group columns and aggregates over the joined schema. */
export interface FusedAggregate { groupBy: number[]; aggs: BoundAggregate[] }

/**
 * The orientation of one partition of `leftRows` and `rightRows`: the smaller
 * side of an inner join is built (other joins build their right side), the
 * aggregate grouped on the built side when it can be; else on the larger side
 * of an inner join built instead (within FLIP_ROWS); else on each probing
 * batch. Null when the fused aggregate serves no orientation.
 */
export function orient(join: JoinSides, leftRows: number, rightRows: number, agg?: FusedAggregate): Orientation | null {
  const def = buildsLeft(join.type, leftRows, rightRows);
  if (!agg) return { buildLeft: def, grouped: null };
  const serves = (buildLeft: boolean, grouped: 'build' | 'probe') =>
    JoinAggregator.applies({ ...join, groupedLeft: grouped === 'build' ? buildLeft : !buildLeft }, agg.groupBy, agg.aggs);
  if (serves(def, 'build')) return { buildLeft: def, grouped: 'build' };
  const [small, large] = def ? [leftRows, rightRows] : [rightRows, leftRows];
  if (join.type === 'inner' && large <= FLIP_ROWS * Math.max(1, small) && serves(!def, 'build')) return { buildLeft: !def, grouped: 'build' };
  if (serves(def, 'probe')) return { buildLeft: def, grouped: 'probe' };
  if (join.type === 'inner' && serves(!def, 'build')) return { buildLeft: !def, grouped: 'build' };
  return null;
}

/** Whether an inner join's task builds its left side, as `orient` decides from the sides' rows (for the planner's cost of a task). */
export function plannedBuildLeft(join: JoinSides, agg: FusedAggregate | undefined): (leftRows: number, rightRows: number) => boolean {
  return (l, r) => (orient(join, l, r, agg) ?? { buildLeft: buildsLeft(join.type, l, r) }).buildLeft;
}

/**
 * A fused aggregate grouped by the probing side: each probing batch is
 * grouped on its own and gives its own partial states (as a broadcast probe
 * grouped by its probing side does, joins/probe.ts).
 */
export class ProbeGroupedAggregate {
  private readonly parts: Batch[] = [];
  constructor(private readonly shape: JoinShape, private readonly agg: FusedAggregate, private readonly states: Schema) {}

  /** The aggregator of one probing batch `b`: feed it the batch's matches, then call `done`. */
  for(b: Batch): JoinAggregator {
    return JoinAggregator.create(b, this.shape, this.agg.groupBy, this.agg.aggs, this.states);
  }

  done(a: JoinAggregator): void { this.parts.push(a.finish()); }

  finish(): Batch { return concatBatches(this.states, this.parts); }
}
