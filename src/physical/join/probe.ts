// The map side of a broadcast join: a row operator that probes a table built
// once (in shared memory, see physical/join/broadcast.ts) with each batch of the other
// side, in the map task that scanned it. The probing side is never shuffled.
import { groupsOf } from '../../agg/aggregate.js';
import type { Groups } from '../../agg/groups.js';
import { JoinAggregator, type JoinShape } from '../../agg/joinagg.js';
import { partialSchema } from '../../agg/partial.js';
import { type Batch, Int32Scratch, type Schema } from '../../kernels/column.js';
import { JoinProbe } from '../../kernels/join.js';
import { buildKeys } from '../../kernels/keys.js';
import { KeyTable } from '../../kernels/table.js';
import type { BoundAggregate } from '../../plan/bound.js';
import { GatherSink } from './gather.js';
import { keyedProbe } from './keyed.js';
import { ProbeGroupedAggregate } from './orient.js';
import type { BroadcastTable, ProbeOp } from './probe-op.js';

export type { BroadcastTable, ProbeOp } from './probe-op.js';

/** Where a probe's matched pairs go: an aggregator over the built rows, or one over each probing batch's. */
type PairSink = Pick<JoinAggregator, 'add'>;

const probeHashes = new Int32Scratch(1 << 16, 1 << 20);

/** A probing batch's keys: hashed unless the table is direct (looked up by value). */
export const probeKeys = (b: Batch, op: Pick<ProbeOp, 'keys' | 'norms' | 'table'>) =>
  buildKeys(b, op.keys, op.norms, probeHashes.get(b.length), op.table.direct === null);

/** The joined rows of one probing batch (none, one or several batches). */
export function probeBatch(b: Batch, op: ProbeOp): Batch[] {
  if (b.length === 0) return [];
  const t = op.table,
    build = t.batch;
  const joiner = new JoinProbe(op.type, t.keys, new KeyTable(t.keys, true, t));
  const sink = new GatherSink(op.type !== 'semi' && op.type !== 'anti');
  joiner.probe(
    probeKeys(b, op),
    op.buildFirst ? (pi, bi, n) => sink.add(build, b, bi, pi, n) : (pi, bi, n) => sink.add(b, build, pi, bi, n),
  );
  sink.flush();
  return sink.batches;
}

// Groups of a broadcast table's rows by some columns, per thread, where the
// table carries none for them (a few entries suffice: every map task of a run
// aggregates against the same table).
const groupsCache = new Map<string, Groups>();

/**
 * The table's groups by some columns; `shared`: whether its own (or none: no group columns) served, not this thread's.
 */
function tableGroups(t: BroadcastTable): { groupsFor: (cols: number[]) => Groups; shared: () => boolean } {
  let shared = false;
  const groupsFor = (cols: number[]) => {
    shared = true;
    // add() reads no gid
    if (cols.length === 0) return { gid: new Int32Array(0), nGroups: 1, first: new Int32Array(1) };
    if (t.groups && t.groups.cols.join() === cols.join()) return t.groups;
    shared = false;
    const key = `${t.id}|${cols.join(',')}`;
    let g = groupsCache.get(key);
    if (!g) {
      g = groupsOf(t.batch, cols);
      if (groupsCache.size >= 4) groupsCache.delete(groupsCache.keys().next().value!);
      groupsCache.set(key, g);
    }
    return g;
  };
  return { groupsFor, shared: () => shared };
}

/** The join a fused aggregate serves, seen with the given side grouped (see JoinShape). */
function fusedShape(op: Omit<ProbeOp, 'table'>, groupedLeft: boolean): JoinShape {
  return {
    // the join's own type: a probe seen as a left join from the right side of the join is a right join
    type: op.buildFirst ? (op.type === 'left' ? 'right' : 'inner') : op.type,
    groupedLeft,
    leftSchema: op.leftSchema,
    rightSchema: op.rightSchema,
    leftKeys: op.buildFirst ? op.buildKeys : op.keys,
    rightKeys: op.buildFirst ? op.keys : op.buildKeys,
  };
}

/**
 * The table's columns the probe fused with this aggregate groups the table's
 * rows by; null when it groups the probing batches instead or does not fuse.
 */
export function fusedTableGroupColumns(
  op: Omit<ProbeOp, 'table'>,
  groupBy: number[],
  aggs: BoundAggregate[],
): number[] | null {
  const onBuild = fusedShape(op, op.buildFirst);
  return JoinAggregator.applies(onBuild, groupBy, aggs) ? JoinAggregator.groupColumns(onBuild, groupBy, aggs) : null;
}

/** A probe fused with the partial aggregate after it: batches in, partial states out. */
export interface ProbeAggregate {
  add(b: Batch): void;
  finish(): Batch;
  /** chunks of matched pairs the probe handed to the aggregator */
  matchChunks(): number;
  /**
   * whose groups: the table's, computed where it was built (or none needed); the table's, grouped in this thread; each
   * probing batch's
   */
  groups: 'table' | 'thread' | 'batch';
  /**
   * how probing rows found their groups: through matched pairs (see JoinProbe), or by key (physical/join/keyed.ts) for
   * some batch
   */
  lookup(): 'pairs' | 'key-groups';
}

/**
 * When a probe is the last row operator and a combiner follows: the matches
 * go straight into the aggregator (agg/joinagg.ts) through their row indices,
 * so the joined rows are never gathered. Grouped by the broadcast side's
 * columns, the table's rows are grouped once where it was built (else once
 * per thread); grouped by the probing side's (a left join grouped by its left
 * columns, say), each probing batch is grouped and gives its own partial
 * states (physical/join/orient.ts ProbeGroupedAggregate). Null when neither
 * serves the aggregate (see JoinAggregator.applies).
 */
export function probeAggregate(
  op: ProbeOp,
  groupBy: number[],
  aggs: BoundAggregate[],
  schema: Schema,
): ProbeAggregate | null {
  const t = op.table,
    build = t.batch,
    states = partialSchema(schema, groupBy, aggs);
  const onBuild = fusedShape(op, op.buildFirst),
    onProbe = fusedShape(op, !op.buildFirst);
  const byBuild = JoinAggregator.applies(onBuild, groupBy, aggs);
  if (!byBuild && !JoinAggregator.applies(onProbe, groupBy, aggs)) return null;
  const joiner = new JoinProbe(op.type, t.keys, new KeyTable(t.keys, true, t));
  let chunks = 0;
  const matchChunks = () => chunks;
  const probe = (b: Batch, agg: PairSink) =>
    joiner.probe(
      probeKeys(b, op),
      op.buildFirst
        ? (pi, bi, n) => {
            chunks++;
            agg.add(build, b, bi, pi, n);
          }
        : (pi, bi, n) => {
            chunks++;
            agg.add(b, build, pi, bi, n);
          },
    );
  if (byBuild) {
    const { groupsFor, shared } = tableGroups(t);
    const agg = JoinAggregator.create(build, onBuild, groupBy, aggs, states, groupsFor);
    const groups = shared() ? 'table' : 'thread';
    const keyed = keyedProbe(t, op.type, agg, JoinAggregator.groupColumns(onBuild, groupBy, aggs));
    let keyedChunks = 0;
    return {
      add(b) {
        if (b.length === 0) return;
        if (keyed) {
          const k = keyed(b, probeKeys(b, op));
          if (k > 0) {
            chunks += k;
            keyedChunks += k;
            return;
          }
        }
        probe(b, agg);
      },
      finish: () => agg.finish(),
      matchChunks,
      groups,
      lookup: () => (keyedChunks > 0 ? 'key-groups' : 'pairs'),
    };
  }
  const byProbe = new ProbeGroupedAggregate(onProbe, { groupBy, aggs }, states);
  return {
    add(b) {
      if (b.length === 0) return;
      probe(b, byProbe);
      byProbe.flush(b);
    },
    finish: () => byProbe.finish(),
    matchChunks,
    groups: 'batch',
    lookup: () => 'pairs',
  };
}
