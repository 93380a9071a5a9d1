// The map side of a broadcast join: a row operator that probes a table built
// once (in shared memory, see exec/broadcast.ts) with each batch of the other
// side, in the map task that scanned it. The probing side is never shuffled.
import { groupsOf } from '../agg/aggregate.js';
import type { Groups } from '../agg/groups.js';
import { JoinAggregator, type JoinShape } from '../agg/joinagg.js';
import { partialSchema } from '../agg/partial.js';
import { type Batch, Int32Scratch, type Schema, concatBatches } from '../kernels/column.js';
import { JoinProbe } from '../kernels/join.js';
import { type Keys, buildKeys } from '../kernels/keys.js';
import { KeyTable, type TableArrays } from '../kernels/table.js';
import type { BoundAggregate, KeyNorm } from '../plan/bound.js';
import { GatherSink } from './gather.js';

/** A side built into a hash table; every array is in a SharedArrayBuffer, read in place by every task. */
export interface BroadcastTable extends TableArrays {
  /** unique per table built: the key of per-thread caches over it */
  id: string;
  batch: Batch;
  keys: Keys;
}

export interface ProbeOp {
  kind: 'probe';
  /** the join's id (for --explain) */
  id: string;
  table: BroadcastTable;
  /** key columns of the probing rows, and their normal forms */
  keys: number[];
  /** the table's key columns (in its side's schema) */
  buildKeys: number[];
  norms: KeyNorm[];
  /**
   * The join as seen from the probing rows (they play its left side): the
   * join's type when the right side is broadcast; inner for an inner join and
   * left for a right join when the left side is.
   */
  type: 'inner' | 'left' | 'semi' | 'anti';
  /** the broadcast side is the join's left: its columns come first */
  buildFirst: boolean;
  /** the join's sides, left and right */
  leftSchema: Schema;
  rightSchema: Schema;
}

const probeHashes = new Int32Scratch(1 << 16, 1 << 20);

/** A probing batch's keys: hashed unless the table is direct (looked up by value). */
const probeKeys = (b: Batch, op: ProbeOp) => buildKeys(b, op.keys, op.norms, probeHashes.get(b.length), op.table.direct === null);

/** The joined rows of one probing batch (none, one or several batches). */
export function probeBatch(b: Batch, op: ProbeOp): Batch[] {
  if (b.length === 0) return [];
  const t = op.table, build = t.batch;
  const joiner = new JoinProbe(op.type, t.keys, new KeyTable(t.keys, true, t));
  const sink = new GatherSink(op.type !== 'semi' && op.type !== 'anti');
  joiner.probe(probeKeys(b, op), op.buildFirst
    ? (pi, bi, n) => sink.add(build, b, bi, pi, n)
    : (pi, bi, n) => sink.add(b, build, pi, bi, n));
  sink.flush();
  return sink.batches;
}

// Groups of a broadcast table's rows by some columns, per thread: every map
// task of a run aggregates against the same table (a few entries suffice).
const groupsCache = new Map<string, Groups>();

function cachedGroups(t: BroadcastTable): (cols: number[]) => Groups {
  return (cols) => {
    const key = `${t.id}|${cols.join(',')}`;
    let g = groupsCache.get(key);
    if (!g) {
      g = groupsOf(t.batch, cols);
      if (groupsCache.size >= 4) groupsCache.delete(groupsCache.keys().next().value!);
      groupsCache.set(key, g);
    }
    return g;
  };
}

/** A probe fused with the partial aggregate after it: batches in, partial states out. */
export interface ProbeAggregate {
  add(b: Batch): void;
  finish(): Batch;
  /** chunks of matched pairs the probe handed to the aggregator */
  matchChunks(): number;
}

/**
 * When a probe is the last row operator and a combiner follows: the matches
 * go straight into the aggregator (agg/joinagg.ts) through their row indices,
 * so the joined rows are never gathered. Grouped by the broadcast side's
 * columns, the table's rows are grouped once per thread; grouped by the
 * probing side's (a left join grouped by its left columns, say), each probing
 * batch is grouped and gives its own partial states. Null when neither
 * serves the aggregate (see JoinAggregator.applies).
 */
export function probeAggregate(op: ProbeOp, groupBy: number[], aggs: BoundAggregate[], schema: Schema): ProbeAggregate | null {
  const t = op.table, build = t.batch, states = partialSchema(schema, groupBy, aggs);
  const shape = (groupedLeft: boolean): JoinShape => ({
    // the join's own type: a probe seen as a left join from the right side of the join is a right join
    type: op.buildFirst ? (op.type === 'left' ? 'right' : 'inner') : op.type, groupedLeft,
    leftSchema: op.leftSchema, rightSchema: op.rightSchema,
    leftKeys: op.buildFirst ? op.buildKeys : op.keys, rightKeys: op.buildFirst ? op.keys : op.buildKeys,
  });
  const onBuild = shape(op.buildFirst), onProbe = shape(!op.buildFirst);
  const byBuild = JoinAggregator.applies(onBuild, groupBy, aggs);
  if (!byBuild && !JoinAggregator.applies(onProbe, groupBy, aggs)) return null;
  const joiner = new JoinProbe(op.type, t.keys, new KeyTable(t.keys, true, t));
  let chunks = 0;
  const matchChunks = () => chunks;
  const probe = (b: Batch, agg: JoinAggregator) => joiner.probe(probeKeys(b, op), op.buildFirst
    ? (pi, bi, n) => { chunks++; agg.add(build, b, bi, pi, n); }
    : (pi, bi, n) => { chunks++; agg.add(b, build, pi, bi, n); });
  if (byBuild) {
    const agg = JoinAggregator.create(build, onBuild, groupBy, aggs, states, cachedGroups(t));
    return { add: (b) => { if (b.length > 0) probe(b, agg); }, finish: () => agg.finish(), matchChunks };
  }
  const parts: Batch[] = [];
  return {
    add(b) {
      if (b.length === 0) return;
      const agg = JoinAggregator.create(b, onProbe, groupBy, aggs, states);
      probe(b, agg);
      parts.push(agg.finish());
    },
    finish: () => concatBatches(states, parts),
    matchChunks,
  };
}
