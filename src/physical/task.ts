// A task: a source (a scan split, in-memory batches, a join or an aggregation over shuffled partitions, a sort's
// ranges, a hot-key split), a chain of row-wise operators, and a sink (collect, or partition rows for the next
// exchange). These are the types the coordinator and the workers share, and the contract of the kernels that run
// each kind of source and sink (physical/kernels.ts holds one table of each: a kind without a kernel does not compile).
import type { Combine } from '../agg/combiner.js';
import type { EagerPlan } from '../agg/eager.js';
import type { Groups } from '../agg/groups.js';
import type { TwoLevelStep } from '../agg/twolevel.js';
import type { EncodedRowGroup } from '../io/parquet-encode.js';
import { type Batch, type Field, type Schema, buffersOf } from '../kernels/column.js';
import type { RuntimeFilter } from '../kernels/runtime-filter.js';
import type { SortKey } from '../kernels/sort.js';
import type { BoundAggregate, BoundPredicate, FileSplit, KeyNorm } from '../plan/bound.js';
import type { JoinType } from '../plan/spec.js';
import type { PartitionSpec, Partitioned, TaskSketch } from '../shuffle/partition.js';
import type { SplitKey } from '../skew/split.js';
import type { BoundExpr } from '../expr/types.js';

/**
 * The row operators and sources an operator family adds without this contract naming it: each family exports its
 * own type, and physical/kernels.ts registers it here (`declare module './task.js'`, one entry per family, keyed by a
 * name) beside its kernel, so a family's kind without a kernel does not compile and no contract imports a family.
 * @public
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled in by physical/kernels.ts
export interface FamilyRowOps {}
/** The sources the families add, registered like FamilyRowOps. @public */
// biome-ignore lint/suspicious/noEmptyInterface: filled in by physical/kernels.ts
export interface FamilySources {}

/** A row operator a family adds (a broadcast probe, a semi join's mark, a set operation's expand or repeat). */
export type FamilyRowOp = FamilyRowOps[keyof FamilyRowOps];

/** The kernel of each family's row operator: a batch in, the batches it becomes out (physical/row-ops.ts). */
export type RowOpKernels = { [K in FamilyRowOp['kind']]: (b: Batch, op: Extract<FamilyRowOp, { kind: K }>) => Batch[] };

export type RowOp =
  | { kind: 'filter'; pred: BoundPredicate }
  | { kind: 'project'; indices: number[] }
  /** append computed columns (src/expr) */
  | { kind: 'compute'; exprs: BoundExpr[] }
  /** hand a copy of the rows here back to the coordinator too (TaskResult.teed): a repeated subtree's output, held
   * for its other readers (physical/repeats.ts) */
  | { kind: 'tee'; id: number }
  /**
   * keep the rows whose key may be on a join's built side (kernels/runtime-filter.ts): a runtime join filter, first
   * after a scan (read there as a mask of its key column, physical/scan/masks.ts) or before a shuffle's partitioning
   */
  | { kind: 'rtfilter'; filter: RuntimeFilter; keys: number[]; norms: KeyNorm[] }
  | FamilyRowOp;

export type TaskSource =
  /** offset, limit: a row range of the row groups read (a map split below the row group, or a sample's first rows) */
  | {
      kind: 'scan';
      path: string;
      rowGroups: number[];
      wholeFile?: boolean;
      fields: Field[];
      offset?: number;
      limit?: number;
      /** a CSV file's chunk (io/csv.ts) instead of row groups */
      csv?: FileSplit['csv'];
      /**
       * conjuncts of one column each read as their outcome, a boolean column (physical/scan/masks.ts): in the
       * column's place, or at `at` after the columns when the column is read too; `filter`: a runtime join filter
       * on its key column (`norm`: the key's normal form) instead of a conjunct (`pred` then reads the mask)
       */
      masks?: { col: number; pred: BoundPredicate; at?: number; filter?: RuntimeFilter; norm?: KeyNorm }[];
    }
  | { kind: 'batches'; schema: Schema; batches: Batch[] }
  | {
      kind: 'join';
      type: JoinType;
      leftSchema: Schema;
      rightSchema: Schema;
      left: Batch[];
      right: Batch[];
      leftKeys: number[];
      rightKeys: number[];
      leftNorms: KeyNorm[];
      rightNorms: KeyNorm[];
      /** a task over several partitions: blocks of each, [left, right], in order (joined one partition at a time) */
      parts?: [number, number][];
      /** the sides are eager partial aggregates: emit the states of the aggregate above the join */
      eager?: EagerPlan;
    }
  /**
   * cut hot keys out of a partition's rows (key-level skew handling); `locate`: report at most this many runs of rows
   * instead
   */
  | {
      kind: 'split';
      schema: Schema;
      blocks: Batch[];
      keys: number[];
      norms: KeyNorm[];
      hot: SplitKey[];
      locate?: number;
    }
  /**
   * raw: input rows; final: partial states from combiners, grouped by their leading columns;
   * step: one step of a skewed partition's two-level aggregation (agg/twolevel.ts);
   * rows: with final, `input` from `from` on holds input rows (`schema`, grouped by `groupBy`)
   * that a combiner passed through (agg/combiner.ts)
   */
  | {
      kind: 'aggregate';
      mode: 'raw' | 'final';
      schema: Schema;
      input: Batch[];
      groupBy: number[];
      aggs: BoundAggregate[];
      outSchema: Schema;
      step?: TwoLevelStep;
      rows?: { schema: Schema; groupBy: number[]; from: number };
      /** the group columns expected to determine the others (agg/group-ids.ts groupsOf) */
      lead?: number;
      /**
       * `input` as consecutive slices, one a shuffle partition (their groups apart): each slice's states, then its
       * rows (`rows.from` then counts within a slice); each slice aggregated on its own
       */
      parts?: { states: number; rows: number }[];
    }
  /**
   * consecutive ranges of a range-partitioned sort, their rows sorted: `ranges`
   * holds how many blocks of `input` each range has, in order (absent: one range)
   */
  | { kind: 'sort'; schema: Schema; input: Batch[]; by: SortKey[]; ranges?: number[] }
  /** a family's own (a window's shuffled partitions, physical/window/source.ts) */
  | FamilySources[keyof FamilySources];

export type { Combine };

export type TaskSink =
  /**
   * sample: also return this many evenly spaced rows of the output (a sort's boundaries come from them);
   * share: the rows in SharedArrayBuffers, copied once (a side to broadcast, see physical/join/broadcast.ts);
   * groupBy: also each output batch's rows grouped by these columns (a broadcast table's,
   * physical/join/table-groups.ts);
   * parquet: the rows encoded as Parquet row groups of these fields (the final stage of a Parquet output,
   * exchange/encode-output.ts), unless too few for a row group of their own;
   * stream: the final stage of a streamed output: the task's batches go to that stream's consumer in task order
   * (scheduler/in-order.ts), not back up the call chain
   */
  | { kind: 'collect'; sample?: number; share?: boolean; groupBy?: number[]; parquet?: Field[]; stream?: number }
  /** range-partition rows by sort keys against sorted boundaries (see shuffle/range.ts) */
  | { kind: 'range'; by: SortKey[]; bounds: Batch; nullSeed: number; spread?: boolean }
  /** count rows and distinct keys (nulls excluded), returning no rows: a sample of a join side */
  | { kind: 'keyStats'; keys: number[]; norms: KeyNorm[] }
  /** hash-partition rows by key (see PartitionSpec) */
  | ({ kind: 'partition' } & PartitionSpec);

export interface TaskSpec {
  source: TaskSource;
  ops: RowOp[];
  combine?: Combine;
  sink: TaskSink;
  /** measure the thread's CPU time over the task (TaskResult.cpuMs; Settings.taskCpuTime) */
  cpuClock?: boolean;
}

export interface TaskResult {
  /** collect: the output batches; partition: one batch (or null) per partition */
  batches: (Batch | null)[];
  inputRows: number;
  /** the input's in-memory bytes (the bytes of physical/kernels.ts inputsOf, or what a scan read) */
  inputBytes?: number;
  outputRows: number;
  partitionRows?: number[];
  partitionBytes?: number[];
  /** epoch ms when the task started, and the thread that ran it (0: the coordinator) */
  start?: number;
  thread?: number;
  /** heavy hitters of the partition keys, when the sink asked for them */
  sketch?: TaskSketch;
  /** keyStats sink: rows with a non-null key, and their distinct keys */
  keyStats?: { rows: number; distinct: number };
  /** what the combiner did: aggregated, or passed rows through because they did not reduce */
  combine?: { mode: 'partial' | 'pass-through'; rowsIn: number; bytesIn: number; rowsOut: number };
  /** collect sink with `parquet`: the output rows as row groups (`batches` empty) */
  encoded?: EncodedRowGroup[];
  /** a `tee` operator's copy of the rows that passed it (the task's ops hold one tee at most) */
  teed?: Batch[];
  /** collect sink with `sample`: evenly spaced output rows */
  sample?: Batch;
  /** collect sink with `groupBy`: the groups of each output batch's rows (ids in shared memory) */
  groups?: Groups[];
  /** bytes of spilled input blocks this task read back */
  spillReadBytes?: number;
  /** what the task's operators measured, each its own (see TaskMetrics) */
  metrics?: TaskMetrics;
  /** a split task that located its hot keys: runs of rows (skew/split.ts hotKeyRuns), no batches */
  runs?: Int32Array;
  ms: number;
  /** the thread's CPU time over the task (runtime/cpu-time.ts; absent where the clock is not available) */
  cpuMs?: number;
}

/**
 * A task's metrics: each operator family's own payload under its name (`scan`: how it read its columns; `join`: the
 * path its join took), made where the task runs and opaque to the scheduler, which hands each to its family's
 * `analyze` (physical/operators.ts) for the task's statistics. A family adds a metric without touching this file.
 */
export type TaskMetrics = { readonly [K in keyof TaskMetric]?: TaskMetric[K] };

/**
 * Each family's task metric by its name. Empty here: a family adds its entry beside its code (join/metrics.ts:
 * `declare module '../task.js' { interface TaskMetric { join: JoinPath } }`), so that this file knows no family.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging, one entry per family
export interface TaskMetric {}

/** What a source kernel hands on: batches for the row operators and the sink, and what it did. */
export interface Produced {
  batches: Batch[];
  rows: number;
  /** the batches are partial states already (the combiner ran inside the source) */
  combined?: boolean;
  /** scanned columns are views into the Parquet module's memory until this is called (after the sink) */
  release?: () => void;
  /** what the source measured (see TaskMetrics) */
  metrics?: TaskMetrics;
  /** a join's output already cut into a range sink's ranges (shuffle/cut-pairs.ts): `batches` is empty */
  cut?: Omit<Partitioned, 'sketch'>;
  /** a split task that located its hot keys: runs of rows (skew/split.ts hotKeyRuns), no batches */
  runs?: Int32Array;
  /** bytes of the input it read, when not those of its in-memory inputs (a scan: the columns decoded) */
  inputBytes?: number;
  /** the batches are the task's output as they are, in their places (a split's pieces, empty ones too): no sink */
  asIs?: boolean;
}

type RangeSink = Extract<TaskSink, { kind: 'range' }>;
/**
 * A range sink a join cuts its matches into itself, `select`ing columns when a projection sits between (see cutSink).
 */
export type CutSink = RangeSink & { select?: number[] };

/** How a source is asked to produce (see physical/kernels.ts). */
interface ProduceOptions {
  /** a combiner right after the source (no row operator between): a join may aggregate from its row indices */
  combine?: Combine;
  /** scanned columns may stay views into the Parquet module's memory until the sink is done */
  inPlace: boolean;
  /** a range sink the rows go to as they are: a join may cut its matches into it itself */
  cut?: CutSink;
}

/** The worker side of one kind of source. */
export interface SourceKernel<S extends TaskSource> {
  /** the in-memory batches the source reads, in one order (spilled blocks among them are read back first) */
  inputs(src: S): Batch[];
  /** the source reading `inputs` instead (as many, in the order `inputs` gave them) */
  withInputs(src: S, inputs: Batch[]): S;
  produce(src: S, o: ProduceOptions): Promise<Produced> | Produced;
  /**
   * the output is held on the coordinator until its consumers are done (within the budget, or spilled), whatever
   * the sink: a split task's rest and hot-key pieces wait for the join tasks of every piece
   */
  holdsOutput?: true;
}

/** The batches a sink receives, after the row operators and the combiner. */
interface SinkInput {
  batches: Batch[];
  /** rows the source read */
  rows: number;
  /** rows the row operators emitted (before the combiner) */
  outputRows: number;
  release?: () => void;
  combine?: TaskResult['combine'];
  task: TaskSpec;
}

/** The worker side of one kind of sink: the task's result from its output batches. */
export interface SinkKernel<K extends TaskSink> {
  /**
   * Whether the coordinator holds this sink's output until its consumer is done, within the budget or in a spill
   * file (shuffle blocks, a sort's sampled input), rather than handing it up as it is.
   */
  held(sink: K): boolean;
  sink(sink: K, out: SinkInput): Omit<TaskResult, 'ms'> | Promise<Omit<TaskResult, 'ms'>>;
}

export function resultBuffers(r: TaskResult): ArrayBuffer[] {
  const buffers = buffersOf([...r.batches.filter((b): b is Batch => b !== null), ...(r.teed ?? [])]);
  for (const g of r.encoded ?? []) buffers.add(g.data.buffer as ArrayBuffer);
  return [...buffers];
}

/** The sink of the i-th task of a stage: shuffle sinks spread null keys from a seed of their own. */
export function withSeed(sink: TaskSink, seed: number): TaskSink {
  return sink.kind === 'partition' || sink.kind === 'range' ? { ...sink, nullSeed: seed * 7919 } : sink;
}
