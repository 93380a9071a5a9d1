// Which side a shuffle join's reduce task builds, partition by partition, and
// which side's rows the fused join aggregate groups: so that every task of a
// stage takes the fused path whatever its sides' sizes (a coalesced task of
// small partitions may have fewer rows on the side that carries the groups).
import { JoinAggregator, type JoinShape } from '../../agg/joinagg.js';
import { type Batch, type Schema, concatBatches, gatherBatch } from '../../kernels/column.js';
import type { BoundAggregate } from '../../plan/bound.js';
import { PAIR_CHUNK, buildsLeft } from '../../kernels/join.js';

/**
 * How a partition is joined: the side built, and the side whose rows the fused aggregate groups (null: no aggregate
 * fused).
 */
export interface Orientation {
  buildLeft: boolean;
  grouped: 'build' | 'probe' | null;
}

/** The join without its rows: type, schemas and keys (the aggregator's JoinShape less its grouped side). */
export type JoinSides = Omit<JoinShape, 'groupedLeft'>;

/** The aggregate above the join, fused into its tasks: group columns and aggregates over the joined schema. */
export interface FusedAggregate {
  groupBy: number[];
  aggs: BoundAggregate[];
}

/**
 * The orientation of one partition of `leftRows` and `rightRows`: the smaller
 * side of an inner join is built (other joins build their right side), the
 * aggregate grouped on the built side when it can be, else on the probing
 * batches. Null when the fused aggregate serves neither.
 */
export function orient(join: JoinSides, leftRows: number, rightRows: number, agg?: FusedAggregate): Orientation | null {
  const buildLeft = buildsLeft(join.type, leftRows, rightRows);
  if (!agg) return { buildLeft, grouped: null };
  const serves = (groupedLeft: boolean) => JoinAggregator.applies({ ...join, groupedLeft }, agg.groupBy, agg.aggs);
  if (serves(buildLeft)) return { buildLeft, grouped: 'build' };
  if (serves(!buildLeft)) return { buildLeft, grouped: 'probe' };
  return null;
}

/**
 * A fused aggregate grouped by the probing side: the matches of each probing
 * batch are collected, then that batch's rows are grouped and give their own
 * partial states (a shuffle join's reduce task, and a broadcast probe grouped
 * by its probing side, physical/join/probe.ts). Where fewer than half its rows matched (a dimension's
 * partition probing a few facts' keys), only the matched rows are gathered
 * and grouped: grouping the rest (hashing their group columns) was most of
 * the task's time.
 */
export class ProbeGroupedAggregate {
  private readonly parts: Batch[] = [];
  private li = new Int32Array(1024);
  private ri = new Int32Array(1024);
  private n = 0;
  private l: Batch | null = null;
  private r: Batch | null = null;
  constructor(
    private readonly shape: JoinShape,
    private readonly agg: FusedAggregate,
    private readonly states: Schema,
  ) {}

  /** Matched pairs of the current probing batch, as a JoinAggregator takes them. */
  add(l: Batch, r: Batch, li: Int32Array, ri: Int32Array, n: number): void {
    if (this.n + n > this.li.length) {
      const cap = Math.max(2 * this.li.length, this.n + n);
      const a = new Int32Array(cap);
      a.set(this.li.subarray(0, this.n));
      this.li = a;
      const b = new Int32Array(cap);
      b.set(this.ri.subarray(0, this.n));
      this.ri = b;
    }
    this.li.set(li.subarray(0, n), this.n);
    this.ri.set(ri.subarray(0, n), this.n);
    this.n += n;
    this.l = l;
    this.r = r;
  }

  /** The probing batch `probe` is done: its matches become partial states. */
  flush(probe: Batch): void {
    const n = this.n;
    if (n === 0) return;
    this.n = 0;
    const left = this.shape.groupedLeft,
      idx = left ? this.li : this.ri;
    // the row loops are functions of their own (see groupIdsOfRows in agg/joinagg.ts): inline, each
    // new aggregate shape recompiled this whole function with them (TPC-H q13, q20: 8-9 times a run)
    const seen = new Uint8Array(probe.length);
    const matched = markMatched(idx, n, seen);
    let grouped = probe;
    if (matched * 2 < probe.length) {
      const rows = new Int32Array(matched),
        at = new Int32Array(probe.length);
      keepMatched(seen, rows, at);
      renumber(idx, n, at);
      grouped = gatherBatch(probe, rows);
    }
    const agg = JoinAggregator.create(grouped, this.shape, this.agg.groupBy, this.agg.aggs, this.states);
    const l = left ? grouped : this.l!,
      r = left ? this.r! : grouped;
    for (let k = 0; k < n; k += PAIR_CHUNK) {
      const m = Math.min(PAIR_CHUNK, n - k);
      agg.add(l, r, this.li.subarray(k, k + m), this.ri.subarray(k, k + m), m);
    }
    this.parts.push(agg.finish());
  }

  finish(): Batch {
    return concatBatches(this.states, this.parts);
  }
}

/** Marks the rows idx[0..n) reaches (-1: none) in `seen`; returns how many distinct rows. */
function markMatched(idx: Int32Array, n: number, seen: Uint8Array): number {
  let matched = 0;
  for (let k = 0; k < n; k++) {
    const j = idx[k];
    if (j >= 0 && !seen[j]) {
      seen[j] = 1;
      matched++;
    }
  }
  return matched;
}

/** The rows marked in `seen`, in order, into `rows`; at[j]: row j's place among them. */
function keepMatched(seen: Uint8Array, rows: Int32Array, at: Int32Array): void {
  for (let j = 0, m = 0; j < seen.length; j++)
    if (seen[j]) {
      at[j] = m;
      rows[m++] = j;
    }
}

/** Each index (but -1) replaced by its row's place among the rows kept. */
function renumber(idx: Int32Array, n: number, at: Int32Array): void {
  for (let k = 0; k < n; k++) {
    const j = idx[k];
    if (j >= 0) idx[k] = at[j];
  }
}
