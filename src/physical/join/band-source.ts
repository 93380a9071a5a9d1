// The tasks of a keyed band join (physical/join/band.ts chooses it): a hash join on its keys whose filter bounds a
// column of one side by the other's. A shuffle join's reduce task (`bandJoin` source: its blocks, as the hash join's
// task has them) builds its smaller side; a broadcast probe (`bandProbe` row operator) its broadcast table. Either
// way the built rows of each key are sorted by their bound once, and each probing row is binary searched in its
// key's run (kernels/band-join.ts): only the matching pairs are made and gathered. The conjuncts of the band leave the
// filter above (physical/join/band.ts); where a bound is not exact (a key past 2^53, a NaN) the search is widened to
// <= and the task checks its matches with the filter it took (`check`).
import { type BandIndex, type BandProbe, bandIndex, bandPairs, firstRows } from '../../kernels/band-join.js';
import { type Batch, concatBatches } from '../../kernels/column.js';
import { gatherBatch } from '../../kernels/gather.js';
import { selectRows } from '../../expr/filter.js';
import type { BoundPredicate, KeyNorm } from '../../plan/bound.js';
import { type Keys, buildKeys } from '../../kernels/keys.js';
import type { RangeShape } from '../../kernels/range-join.js';
import { KeyTable, type TableArrays } from '../../kernels/table.js';
import type { SourceKernel, TaskSource } from '../task.js';
import type { Side } from './decide.js';
import { GatherSink } from './gather.js';
import { joinMetrics } from './metrics.js';
import type { ProbeOp } from './probe-op.js';
import { probeKeys } from './probe.js';
import { rangeKeys } from './range-keys.js';
import { type SearchBound, relaxed, searchOf, validIn } from './range-search.js';

type JoinSource = Extract<TaskSource, { kind: 'join' }>;

/** A shuffle join's reduce task (hash join's source as planned: a partition, a piece of a hot key, a grace piece). */
export interface BandJoinSource {
  kind: 'bandJoin';
  join: JoinSource;
  bound: SearchBound;
  /** the filter the band came from, over the joined rows: applied here where a bound is not exact */
  check: BoundPredicate;
}

/** A broadcast join's probe, searched per key by its bound. */
export interface BandProbeOp {
  kind: 'bandProbe';
  probe: ProbeOp;
  bound: SearchBound;
  check: BoundPredicate;
}

/** A built side indexed by key and bound: the search's shape and whether its keys are exact. */
interface Built {
  index: BandIndex;
  shape: RangeShape;
  exact: boolean;
  probing: ReturnType<typeof searchOf>['probing'];
  scale: number;
}

function indexBuilt(bound: SearchBound, side: Side, B: Batch, keys: Keys, table: TableArrays): Built {
  const s = searchOf(bound, side);
  const first = new Int32Array(B.length);
  firstRows(table, keys, keys, first);
  const [a, b] = s.built.map((e) => rangeKeys(B, e, s.scale));
  const index = bandIndex(first, a!.keys, b ? b.keys : null, validIn([a, b], B.length));
  return { index, shape: s.shape, exact: a!.exact && (b?.exact ?? true), probing: s.probing, scale: s.scale };
}

/** The pairs of probing rows `P` (their keys `pk`) into `out`, the built side's columns first when `builtLeft`. */
function probeBuilt(
  k: Built,
  B: Batch,
  keys: Keys,
  table: TableArrays,
  P: Batch,
  pk: Keys,
  builtLeft: boolean,
  out: GatherSink,
): { chunks: number; exact: boolean } {
  const [x, y] = k.probing.map((e) => rangeKeys(P, e, k.scale));
  const first = new Int32Array(P.length);
  firstRows(table, keys, pk, first);
  const p: BandProbe = { first, x: x!.keys, y: y ? y.keys : null, valid: validIn([x, y], P.length) };
  const exact = k.exact && x!.exact && (y?.exact ?? true);
  let chunks = 0;
  bandPairs(exact ? k.shape : relaxed(k.shape), k.index, p, {
    probe: PROBE,
    built: BUILT,
    flush(n) {
      chunks++;
      if (builtLeft) out.add(B, P, BUILT, PROBE, n);
      else out.add(P, B, PROBE, BUILT, n);
    },
  });
  return { chunks, exact };
}

/** The gathered rows, checked by the filter where the search was widened. */
function checked(batches: Batch[], exact: boolean, check: BoundPredicate): Batch[] {
  if (exact) return batches;
  return batches.map((b) => {
    const { idx, n } = selectRows(b, check);
    return gatherBatch(b, idx, n);
  });
}

/** Pairs found before they are gathered (GatherSink copies them). */
const PAIRS = 1 << 15;
const PROBE = new Int32Array(PAIRS),
  BUILT = new Int32Array(PAIRS);

export const bandJoinKernel: SourceKernel<BandJoinSource> = {
  inputs: (s) => [...s.join.left, ...s.join.right],
  withInputs: (s, bs) => ({
    ...s,
    join: { ...s.join, left: bs.slice(0, s.join.left.length), right: bs.slice(s.join.left.length) },
  }),
  produce(s) {
    const j = s.join;
    // the keys of one task's partitions are apart: its blocks are joined as one
    const l = concatBatches(j.leftSchema, j.left),
      r = concatBatches(j.rightSchema, j.right);
    const side: Side = l.length <= r.length ? 'left' : 'right';
    const [B, P] = side === 'left' ? [l, r] : [r, l];
    const key = (b: Batch, s: Side, norms: KeyNorm[]) => buildKeys(b, s === 'left' ? j.leftKeys : j.rightKeys, norms);
    const bk = key(B, side, side === 'left' ? j.leftNorms : j.rightNorms);
    const probing: Side = side === 'left' ? 'right' : 'left';
    const pk = key(P, probing, probing === 'left' ? j.leftNorms : j.rightNorms);
    const table = new KeyTable(bk, true);
    const out = new GatherSink(true);
    const k = indexBuilt(s.bound, side, B, bk, table);
    const { chunks, exact } = probeBuilt(k, B, bk, table, P, pk, side === 'left', out);
    out.flush();
    const metrics = joinMetrics({ path: 'gather', build: side, matchChunks: chunks, buildRows: B.length });
    return { batches: checked(out.batches, exact, s.check), rows: l.length + r.length, metrics };
  },
};

// The index of each broadcast table, per thread (every map task of a run probes the same table).
const indexes = new Map<string, Built>();

/** The joined rows of one probing batch of a broadcast band join. */
export function bandProbeBatch(b: Batch, op: BandProbeOp): Batch[] {
  if (b.length === 0) return [];
  const p = op.probe,
    t = p.table;
  const side: Side = p.buildFirst ? 'left' : 'right';
  let k = indexes.get(t.id);
  if (!k) {
    k = indexBuilt(op.bound, side, t.batch, t.keys, t);
    if (indexes.size >= 4) indexes.delete(indexes.keys().next().value!);
    indexes.set(t.id, k);
  }
  const out = new GatherSink(true);
  const { exact } = probeBuilt(k, t.batch, t.keys, t, b, probeKeys(b, p), p.buildFirst, out);
  out.flush();
  return checked(out.batches, exact, op.check);
}
