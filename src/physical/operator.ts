// The contract between the coordinator (scheduler/executor.ts, `Executor`) and the operator code it calls (the join and
// aggregate stages, the exchange, sort, two-level aggregation, grace cuts, limit): what an operator may ask of a
// running query. Operators import this interface, never the coordinator, so no operator file sits in an import
// circle with it; the coordinator implements it, and a test can fake it (test/operator-context.test.ts).
import type { EagerPlan } from '../agg/eager.js';
import type { Batch, Field, Schema } from '../kernels/column.js';
import type { BoundNode } from '../plan/bound.js';
import type { Settings } from '../plan/load.js';
import type { SortKey } from '../kernels/sort.js';
import type { Spiller } from '../spill/spiller.js';
import type { EncodedRowGroup } from '../io/parquet-encode.js';
import type { Pipeline, SourceNode, StopRule, Stopped } from './pipeline.js';
import type { Stats, TaskStats } from './stats.js';
import type { Combine, RowOp, TaskResult, TaskSink, TaskSpec } from './task.js';

/** What a task's statistics carry besides what its run measures. */
export type TaskMeta = Omit<
  TaskStats,
  'rows' | 'inputBytes' | 'outputRows' | 'ms' | 'spilledBytes' | 'spillReadBytes' | 'attempt' | 'error'
> & { inputBytes?: number };

/** Where a pipeline's scan tasks run: on the pool, on this thread, or shared between them (scheduler/steal.ts). */
type Placement = boolean | 'steal';

/** One task's output streamed to the consumer: its batches, or its rows as Parquet row groups (`parquet` sinks). */
export interface Streamed {
  batches: Batch[];
  encoded?: EncodedRowGroup[];
}

/** What a sort asks of the stage below it: ranges of about `rangeBytes` by its keys. A stage that cuts them itself (a
 * join's reduce tasks, physical/fused-ranges.ts) answers with range-sink results, not by writing into the request. */
export interface RangeRequest {
  by: SortKey[];
  schema: Schema;
  stage: string;
  rangeBytes: number;
  minRanges: number;
  maxRanges: number;
  /** rows equal to boundaries dealt over their ranges (false: skew handling off) */
  spread: boolean;
}

/**
 * What the operator above asks of a pipeline's tasks: where their rows go and how. Passed down whole, so that
 * what a request carries (a sort's range request, a streamed output's sink) reaches the tasks that serve it,
 * and an operator that asks something else makes a new one.
 */
export interface Downstream {
  /** the consuming stage ('output', 'join-1'): the tasks' stage in the statistics */
  readonly stage: string;
  readonly sink: TaskSink;
  /** a partial aggregate in each task before the sink (agg/combiner.ts) */
  readonly combine?: Combine;
  /** a join's sides pre-aggregated by their keys, its tasks emitting the aggregate's states (agg/eager.ts) */
  readonly eager?: EagerPlan;
  /**
   * a sort above whose input a shuffle join below may cut into the sort's ranges itself (physical/fused-ranges.ts):
   * the join answers with range-sink results
   */
  readonly range?: RangeRequest;
  /** where a scan's tasks run: on the pool (default), on this thread, or both (scheduler/steal.ts) */
  readonly placement?: Placement;
}

/**
 * What each owner reports of a run (ExecContext.report), by its name: an operator family (physical/operators.ts), the
 * exchange between them, or a repeated subtree (physical/repeats.ts). Empty here: each owner adds its entry beside
 * its code (`declare module '../operator.js' { interface RunMetrics { join: JoinStats } }`), so that this file
 * knows no family's metrics and a report of the wrong shape does not compile.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging, one entry per owner
export interface RunMetrics {}

/**
 * How an owner's metrics become the run's statistics (shared/PLAN-SPEC.md "Statistics", docs/statistics.md: the
 * format stays as documented): a task's metric under the owner's name (TaskMetrics, made where the task ran) as
 * fields of that task's statistics, and what the owner reported of the run (ExecContext.report) into the run's.
 * `--explain --analyze` is written from those statistics (physical/explain.ts).
 */
export interface Analyze<T = never, R = never> {
  task?(m: T): Partial<TaskStats>;
  run?(m: R, into: Stats): void;
}

export interface ExecContext {
  readonly settings: Settings;
  /**
   * What an operator measured of the run (a shuffle's sizes, a join's strategy, an aggregate's split partitions),
   * its own payload, for its owner's `analyze` (physical/operators.ts).
   */
  report<K extends keyof RunMetrics>(owner: K, metrics: RunMetrics[K]): void;
  /** the memory service: the query's share of the process's one budget (spill/spiller.ts), and its spill folder */
  readonly memory: Spiller;
  /** every task of the query runs on the calling thread (a small input, runtime/local.ts) */
  readonly inThread: boolean;
  /**
   * Whether a read of `bytes` is best done on this thread: small enough for a run in the thread
   * (runtime/local.ts) and the pool's threads not ready yet (they are cold; this one is loaded).
   */
  coldAndSmall(bytes: number): boolean;
  /** Run a task outside the query's statistics and streams (a sample): on this thread, or on the pool with retries. */
  runAside(task: TaskSpec, label: string, here: boolean): Promise<TaskResult>;
  /** What one running task may hold (spill/budget.ts). */
  taskShare(): number;
  /** Run one task: on the pool with retries, or on this thread (`here`); its shuffle output held or spilled. */
  run(task: TaskSpec, meta: TaskMeta, here?: boolean): Promise<TaskResult>;
  /** Run a pipeline to its end for the operator above (`d`); each task's result in task order. */
  execute(p: Pipeline, d: Downstream): Promise<TaskResult[]>;
  /**
   * Run a pipeline whose scan tasks (or those of a broadcast probe's scan below) start in order, a few at a time, and
   * none once `stop` says so: the results of the tasks started and the pipeline of the rest. A pipeline whose operator
   * cannot stop (no `executeUntil`) runs to its end.
   */
  executeUntil(p: Pipeline, d: Downstream, stop: StopRule): Promise<Stopped>;
  /** Run a scan's map tasks, placed as `d` asks (on the pool, this thread or both: the scheduler's), under `stop`. */
  mapTasks(p: Pipeline<Extract<BoundNode, { kind: 'scan' }>>, d: Downstream, stop?: StopRule): Promise<Stopped>;
  /** All rows of a node, as its tasks collected them. */
  collectBatches(node: BoundNode): Promise<Batch[]>;
  /**
   * Whether the rows of a pipeline starting at `source` are, or will be, held for several readers (a repeated
   * subtree, physical/repeats.ts): not when the plan reads it once, nor once they were found too many to hold (a
   * first reader computing them is waited for).
   */
  sharesRows?(source: BoundNode): Promise<boolean>;
  /**
   * Whether a pipeline starting at `source` reads a repeated subtree (physical/repeats.ts): its rows may be held for
   * other readers, so no reader's runtime join filter may enter it.
   */
  readsRepeated?(source: BoundNode): boolean;
  /** A block in shared memory (read by several tasks), converted once however many ask. */
  share(b: Batch): Batch;
  /** Run a node, handing its batches to `emit` in task order as its final tasks finish. */
  streamBatches(
    node: BoundNode,
    emit: (out: Streamed) => Promise<unknown> | boolean | void,
    parquet?: Field[],
  ): Promise<void>;
}

/** What `--explain` writes into: a line at a depth, and the plan below a node, from a depth on. */
export interface Explain {
  readonly settings: Settings;
  line(depth: number, text: string): void;
  walk(node: BoundNode, depth: number): void;
  /** Text said once after the tree however many operators refer to it; returns the reference ("see note 1"). */
  note(text: string): string;
}

/**
 * One operator family (physical/operators.ts holds the table): how a pipeline starting at its node is explained
 * (`describe`, from the same decide functions its execution calls) and run for the operator above (`execute`).
 */
export interface PhysicalOperator<N extends SourceNode, T = never, R = never> {
  /**
   * `fused`: the row operators fused above the node, as text (" → filter-1[...]"); `ops`: those operators, as
   * `execute` receives them in its pipeline (a strategy chosen from the filter above, physical/join/range-condition.ts)
   */
  describe(node: N, x: Explain, depth: number, fused: string, ops: readonly RowOp[]): void;
  execute(ctx: ExecContext, p: Pipeline<N>, d: Downstream): Promise<TaskResult[]>;
  /** `execute` with its scan tasks stopped by `stop` (ExecContext.executeUntil), for operators that can stop early */
  executeUntil?(ctx: ExecContext, p: Pipeline<N>, d: Downstream, stop: StopRule): Promise<Stopped>;
  /** its tasks' metrics (T) and what it reported of the run (R), into the statistics */
  analyze: Analyze<T, R>;
  /**
   * What its tasks did (their statistics: map tasks that read from it, its stage's reduce and split tasks), as the
   * `ran:` line `--explain --analyze` puts under its first line
   */
  ran(tasks: TaskStats[]): string;
}
