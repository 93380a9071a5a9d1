// Run statistics (shared/PLAN-SPEC.md, "Statistics"): one entry per hash
// shuffle with the map-side partition sizes and the skew test applied, and
// one entry per task that ran.
import type { AggregateStats } from '../skew/aggregate.js';
import type { WindowStats } from '../skew/window.js';
import type { SplitInfo } from '../skew/decide.js';

export interface HotKey {
  key: string[];
  rows: number;
  partition: number;
}

export interface ShuffleStats {
  id: string;
  partitions: number;
  partitionRows: number[];
  partitionBytes: number[];
  medianBytes: number;
  thresholdBytes: number;
  skewedPartitions: number[];
  hotKeys: HotKey[];
  /** with combiners: rows and bytes the map tasks produced before combining, and the tasks that passed rows through */
  /**
   * a sort's range shuffle: cut by the join below it in its reduce tasks, or by range tasks over the collected input
   * (physical/fused-ranges.ts)
   */
  partitionedBy?: 'join' | 'tasks';
  /** a sort's range shuffle: ranges far larger than planned, cut again by boundaries sampled from their own rows */
  recutRanges?: number;
  combine?: {
    rowsBefore: number;
    bytesBefore: number;
    rowsAfter: number;
    bytesAfter: number;
    partialTasks: number;
    passThroughTasks: number;
  };
}

/**
 * How a join task ran, for the statistics (tests assert the path they mean to
 * exercise): streamed probe blocks gathered into rows, streamed into the fused
 * join aggregator, or both sides concatenated (hashJoin; eager and
 * combiners the fused form cannot serve); which side was built; how many
 * chunks of matched pairs the probe emitted. A map task whose probe of a
 * broadcast table fed its combiner reports 'fused-aggregate' too. The join
 * family's task metric (physical/join/operator.ts analyze).
 */
export interface JoinPath {
  path: 'gather' | 'fused-aggregate' | 'concatenated';
  /** the side built (a task over several partitions: the side built for most rows) */
  build: 'left' | 'right';
  matchChunks: number;
  /** rows the task built tables over (the probing rows are the rest of its input) */
  buildRows?: number;
  /**
   * fused-aggregate: the groups came from the built side's rows or from each probing batch's (any partition of the
   * task)
   */
  grouped?: 'build' | 'probe';
  /**
   * a broadcast probe fused with the aggregate: whose group ids (see ProbeAggregate.groups), and how rows found them
   * (ProbeAggregate.lookup)
   */
  groups?: 'table' | 'thread' | 'batch';
  lookup?: 'pairs' | 'key-groups';
}

/** How a scan task read its columns (the scan family's task metric, physical/scan/operator.ts analyze). */
export interface ScanRead {
  read?: 'direct' | 'in-place' | 'ipc';
  masks?: number;
}

export interface TaskStats {
  stage: string;
  kind: 'map' | 'reduce' | 'split';
  partition: number;
  /** input rows (a join task: both sides; a split task: the rows it cut) */
  rows: number;
  /**
   * input bytes: of a reduce or split task as shuffled (a row range: its share of its block),
   * of a map task the columns it decoded or the blocks it was given
   */
  inputBytes: number;
  outputRows: number;
  ms: number;
  /** CPU time of the thread that ran the task (Linux); `ms` also counts time it waited for a core */
  cpuMs?: number;
  /** the operator a map task read from */
  source?: string;
  /** a coalesced reduce task: every partition it read */
  partitions?: number[];
  /** how a skewed partition was split: the piece this task ran */
  split?: string;
  /** ms after the run began that the task started, and the thread it ran on (0: the coordinator) */
  startMs?: number;
  thread?: number;
  /** bytes of this task's output written to spill files, and of spilled input it read back */
  spilledBytes: number;
  spillReadBytes: number;
  /** the attempt, from 1: a task whose worker died runs again (runtime/retry.ts) */
  attempt: number;
  /** a failed attempt: why */
  error?: string;
  /**
   * a join task: streamed and gathered, fused with the aggregate above, or concatenated; the side built; chunks of
   * matched pairs
   */
  join?: JoinPath;
  /**
   * a scan: columns decoded by the direct reader (io/parquet-direct.ts), read in place from the Parquet module's
   * memory, or through Arrow IPC
   */
  read?: ScanRead['read'];
  /** a scan: columns only its filter reads, read as the filter's outcome per dictionary value (physical/scan/masks.ts) */
  masks?: number;
  /** rows each runtime join filter tested and kept in this task */
  filters?: { id: string; rowsIn: number; rowsKept: number; skipped?: boolean }[];
}

/**
 * The join strategies, each as --stats and --explain --analyze name it (`JoinStats.strategy`, physical/explain.ts;
 * the join family decides them, physical/join/): `built`, what becomes of the side built once (none for a shuffle: each reduce task builds its
 * partition). A new strategy is a new entry here; the compiler then names the places that print or count it.
 */
export const JOIN_STRATEGIES = {
  broadcast: { built: "built once and probed in the other side's map tasks" },
  shuffle: { built: null },
  /** a semi or anti join's left side built once, marked by the right side's map tasks (physical/join/marked.ts) */
  marked: { built: "built once and marked by the other side's map tasks" },
  /** no keys: the smaller side replicated to every task of the larger (physical/join/stage.ts runCross) */
  cross: { built: 'replicated to every task of the larger side' },
  /**
   * no keys, a filter bounding one side's column by the other's (<, <=, >, >=, BETWEEN): the smaller side sorted on
   * its bound, the larger one's rows binary searched in tasks (physical/join/range.ts)
   */
  range: { built: 'sorted on its bound once and searched by every task of the larger side' },
} as const satisfies Record<string, { built: string | null }>;
export type JoinStrategyName = keyof typeof JOIN_STRATEGIES;

/**
 * The plan of one join: its strategy and, for a shuffle join, the reduce plan (target task size, skewed partitions
 * split).
 */
export interface JoinStats {
  id: string;
  type: string;
  /** each one's meaning: JOIN_STRATEGIES above */
  strategy: JoinStrategyName;
  /** why (the sizes against broadcastBytes, the join type's rule, or eager aggregation) */
  reason: string;
  broadcast?: { side: 'left' | 'right'; rows: number; bytes: number };
  targetBytes: number;
  tasks: number;
  splits: SplitInfo[];
}

/**
 * A runtime join filter: the join and its side built, the source whose rows it tested (a scan's id; a join's, on its
 * output) and on which columns, its kind ("bitmap+minmax", "bloom+minmax", "bloom", "minmax"), the built keys and
 * its bytes, and the rows its tasks tested and kept (`skippedTasks`: tasks that let every row through untested,
 * the filter having kept most rows on their thread).
 */
export interface RuntimeFilterStats {
  id: string;
  join: string;
  side: string;
  into: string;
  columns: string[];
  kind: string;
  keys: number;
  bytes: number;
  rowsIn: number;
  rowsKept: number;
  tasks: number;
  skippedTasks?: number;
}

/** A repeated subtree computed once (physical/repeats.ts): its rows held for the other readers, or not. */
export interface RepeatStats {
  /** the source node of the reader that computed it */
  id: string;
  readers: number;
  held: boolean;
  /** the rows and bytes handed back (held: all of them) */
  rows: number;
  bytes: number;
  /** why the rows were not held */
  reason?: string;
}

export interface Stats {
  wallMs: number;
  shuffles: ShuffleStats[];
  tasks: TaskStats[];
  joins: JoinStats[];
  /** per aggregate with a shuffle: its partitions aggregated in two levels (skew/aggregate.ts) */
  aggregates: AggregateStats[];
  /** per window: its partitions split by ranges of their keys (skew/window.ts), when it has skewed ones */
  windows?: WindowStats[];
  /** aggregates computed by eager aggregation below their join */
  eager: string[];
  /** runtime join filters (physical/join/filters.ts), when any was built */
  runtimeFilters?: RuntimeFilterStats[];
  /** repeated subtrees computed once, when the plan has any */
  repeats?: RepeatStats[];
  outputRows?: number;
  /** the run's tasks ran on the calling thread (a small input), not on the worker pool */
  inThread?: boolean;
  /**
   * per tree of three or more inner joins (plan/join-order.ts): its top join and whether the order chosen by cost
   * differs from the plan's
   */
  joinOrders?: { root: string; reordered: boolean }[];
  /** totals over the tasks: bytes written to spill files and read back */
  spilledBytes: number;
  spillReadBytes: number;
}

/** A run's statistics before any task: no shuffle, task or join yet (the executor's start, a DESCRIBE, a Spark run). */
export function emptyStats(wallMs = 0): Stats {
  return { wallMs, shuffles: [], tasks: [], joins: [], aggregates: [], eager: [], spilledBytes: 0, spillReadBytes: 0 };
}
