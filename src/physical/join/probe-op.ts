// The row operator of a broadcast join's map side (physical/join/probe.ts) and the table it probes: the types
// the probe's kernels (probe.ts, keyed.ts) and the broadcast that builds the table share, in a leaf file.
import type { Groups } from '../../agg/groups.js';
import type { Batch, Schema } from '../../kernels/column.js';
import type { Keys } from '../../kernels/keys.js';
import type { TableArrays } from '../../kernels/table.js';
import type { KeyNorm } from '../../plan/bound.js';

/**
 * A broadcast table's rows grouped by the columns the fused aggregate above
 * it groups by: computed once where the table is built (physical/join/broadcast.ts),
 * arrays shared, so no task regroups the table.
 */
interface TableGroups extends Groups {
  cols: number[];
}

/** A side built into a hash table; every array is in a SharedArrayBuffer, read in place by every task. */
export interface BroadcastTable extends TableArrays {
  /** unique per table built: the key of per-thread caches over it */
  id: string;
  batch: Batch;
  keys: Keys;
  /** the rows' groups for the fused aggregate above the join, when one groups by the table's columns */
  groups?: TableGroups;
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
