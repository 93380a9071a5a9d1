// The map side of a broadcast join: a row operator that probes a table built
// once (in shared memory, see exec/broadcast.ts) with each batch of the other
// side, in the map task that scanned it. The probing side is never shuffled.
import { type Batch, Int32Scratch } from '../kernels/column.js';
import { JoinProbe } from '../kernels/join.js';
import { type Keys, KeyTable, buildKeys } from '../kernels/keys.js';
import type { KeyNorm } from '../plan/bound.js';
import { GatherSink } from './gather.js';

/** A side built into a hash table; every array is in a SharedArrayBuffer, read in place by every task. */
export interface BroadcastTable {
  batch: Batch;
  keys: Keys;
  heads: Int32Array;
  next: Int32Array;
  mask: number;
}

export interface ProbeOp {
  kind: 'probe';
  /** the join's id (for --explain) */
  id: string;
  table: BroadcastTable;
  /** key columns of the probing rows, and their normal forms */
  keys: number[];
  norms: KeyNorm[];
  /**
   * The join as seen from the probing rows (they play its left side): the
   * join's type when the right side is broadcast; inner for an inner join and
   * left for a right join when the left side is.
   */
  type: 'inner' | 'left' | 'semi' | 'anti';
  /** the broadcast side is the join's left: its columns come first */
  buildFirst: boolean;
}

const probeHashes = new Int32Scratch(1 << 16, 1 << 20);

/** The joined rows of one probing batch (none, one or several batches). */
export function probeBatch(b: Batch, op: ProbeOp): Batch[] {
  if (b.length === 0) return [];
  const t = op.table, build = t.batch;
  const joiner = new JoinProbe(op.type, t.keys, new KeyTable(t.keys, true, t));
  const sink = new GatherSink(op.type !== 'semi' && op.type !== 'anti');
  joiner.probe(buildKeys(b, op.keys, op.norms, probeHashes.get(b.length)), op.buildFirst
    ? (pi, bi, n) => sink.add(build, b, bi, pi, n)
    : (pi, bi, n) => sink.add(b, build, pi, bi, n));
  sink.flush();
  return sink.batches;
}
