// The coordinator: runs a query's pipelines as tasks (on the worker pool with retries, or on this thread), holds or
// spills their shuffle output, records their statistics and streams the final stage in order. Each pipeline runs
// through
// its source's operator (physical/operators.ts).
// It implements ExecContext (physical/operator.ts), through which the operators reach it.
import { type Batch, type Field, shareBatch } from '../kernels/column.js';
import type { BoundNode } from '../plan/bound.js';
import type { Settings } from '../plan/load.js';
import { runInThread, runsInThread } from '../runtime/local.js';
import { poolReady, whenPoolReady } from '../runtime/pool.js';
import { stealTasks, tasksUntil } from './steal.js';
import { isSpilled } from '../spill/block.js';
import { Spiller } from '../spill/spiller.js';
import { type Pipeline, type StopRule, type Stopped, pipelineOf, readWhole, scanSource } from '../physical/pipeline.js';
import { dataBudget, taskShare } from '../spill/budget.js';
import { InOrder } from './in-order.js';
import type { Streamed } from '../physical/operator.js';
import { FaultPlan } from '../runtime/faults.js';
import { type Repeats, sharedRepeats } from '../physical/repeats.js';
import { ProgressTracker } from './progress.js';
import { runWithRetries } from '../runtime/retry.js';
import { type Stats, type TaskStats, emptyStats } from '../physical/stats.js';
import { type TaskResult, type TaskSink, type TaskSpec, withSeed } from '../physical/task.js';
import { outputHeld } from '../physical/kernels.js';
import { runTask } from '../runtime/task.js';

import type { Downstream, ExecContext, RunMetrics, TaskMeta } from '../physical/operator.js';
import { analyzeRun, analyzeTask, operatorOf } from '../physical/operators.js';
import { batchesOf } from '../physical/shuffle.js';

/** Tasks of a streamed final stage per worker between starting and their output being consumed. */
const STREAM_IN_FLIGHT = 2;

export class Executor implements ExecContext {
  readonly stats: Stats = emptyStats();
  /** epoch ms when the run began: task start times are relative to it */
  private readonly t0 = performance.timeOrigin + performance.now();
  /** streamed outputs by the id their collect sinks carry (see streamBatches): their order and gate */
  private readonly streams = new Map<number, InOrder>();
  private nextStream = 0;
  /** the memory budget and the query's spill folder (created here: an unusable one fails before any work) */
  readonly memory: Spiller;

  /** joins and aggregates whose subtree the plan repeats, computed once (physical/repeats.ts); see shareRepeats */
  private repeats: Repeats | null = null;

  /** fault injection (runtime/faults.ts), null when off */
  private readonly faults = FaultPlan.current();
  /** the first task failure: no task starts after it */
  private failure: unknown = null;

  /** `inThread`: every task runs on the calling thread (a small input, see runtime/local.ts; never with faults) */
  constructor(
    readonly settings: Settings,
    readonly progress = new ProgressTracker(undefined, performance.now()),
    readonly inThread = false,
  ) {
    this.memory = new Spiller(dataBudget(settings.memoryLimit, settings.workers), settings.spillDir);
  }

  /** What one running task may hold (spill/budget.ts). */
  taskShare(): number {
    return taskShare(this.memory.limit, this.settings.workers);
  }

  coldAndSmall(bytes: number): boolean {
    return runsInThread(bytes, this.settings.inThreadBytes) && !poolReady();
  }

  report<K extends keyof RunMetrics>(owner: K, metrics: RunMetrics[K]): void {
    analyzeRun(owner, metrics, this.stats);
  }

  runAside(task: TaskSpec, label: string, here: boolean): Promise<TaskResult> {
    return here ? runInThread(task) : runWithRetries(this.settings.workers, task, { label });
  }

  /** Compute each join or aggregate that `root` repeats once (physical/repeats.ts): call before running it. */
  shareRepeats(root: BoundNode): void {
    this.repeats = sharedRepeats(root, this.memory, this.settings.repeatBytes);
  }

  /** Remove the query's spill files: call once the run is over, however it ended. */
  async close(): Promise<void> {
    this.repeats?.close();
    await this.memory.close();
  }

  /**
   * Run one task (on the pool with retries, or here for in-memory batches
   * collected), hold or spill its shuffle output, record its statistics.
   * `here`: on this thread, as for a run in the thread (a side to broadcast, see runJoin).
   */
  async run(task0: TaskSpec, meta: TaskMeta, here = false): Promise<TaskResult> {
    if (this.failure) throw this.failure;
    const order = this.streamOf(task0, meta);
    const ticket = order ? order.ticket() : -1;
    if (order && !(await order.admit())) {
      // the consumer has all the rows it wants: the task is not run
      order.done(ticket, { batches: [] });
      this.repeats?.skippedTask(task0);
      return { batches: [], inputRows: 0, outputRows: 0, ms: 0 };
    }
    // a repeated subtree's tee (physical/repeats.ts) off the task once its rows passed their cap
    const teeing = this.repeats ? this.repeats.before(task0) : task0;
    const task = this.settings.taskCpuTime ? { ...teeing, cpuClock: true } : teeing;
    if (this.failure) throw this.failure;
    const progressId = this.progress.scheduled(`${meta.stage} ${meta.kind}`, task.source);
    try {
      const r = await this.attempt(task, meta, this.inThread || here);
      // a worker's output buffers are the coordinator's alone (transferred), unless a tee handed the same rows back
      const owned = r.pooled === true && r.teed === undefined;
      this.repeats?.after(task, r);
      // output its sink (or source) says is held waits for its consumer: within the budget, or in a spill file
      const held = outputHeld(task);
      const { blocks, spilled } = held ? this.memory.admit(r.batches, owned) : { blocks: r.batches, spilled: 0 };
      r.batches = blocks;
      if (order) {
        // the final stage streams: its rows go to the output now, not back up the call chain
        order.done(ticket, { batches: r.batches.filter((b): b is Batch => b !== null), encoded: r.encoded });
        r.batches = [];
        r.encoded = undefined;
      }
      this.record(task, meta, r, spilled, progressId);
      return r;
    } catch (e) {
      this.failure ??= e;
      throw e;
    }
  }

  /** The streamed output a task's sink names, if any (see streamBatches). */
  private streamOf(task: TaskSpec, meta: TaskMeta): InOrder | undefined {
    if (task.sink.kind !== 'collect' || task.sink.stream === undefined) return undefined;
    const order = this.streams.get(task.sink.stream);
    if (!order)
      throw new Error(`internal: a task of ${meta.stage} streams to output ${task.sink.stream}, which is closed`);
    return order;
  }

  /**
   * One task's attempts: here, or on the pool with retries (each failed attempt in the statistics). `pooled`: it ran
   * on a worker, its output buffers moved here (nothing on this thread views them).
   */
  private async attempt(
    task: TaskSpec,
    meta: TaskMeta,
    local: boolean,
  ): Promise<TaskResult & { attempt: number; pooled?: true }> {
    const crash = this.faults?.launch(meta.stage, meta.kind);
    if (local || (task.source.kind === 'batches' && task.sink.kind === 'collect' && !this.faults))
      return Object.assign(await (local ? runInThread(task) : runTask(task)), { attempt: 1 });
    const r = await runWithRetries(this.settings.workers, task, {
      label: taskLabel(meta),
      crash,
      onFailed: (f) =>
        this.stats.tasks.push({
          ...meta,
          rows: 0,
          inputBytes: meta.inputBytes ?? 0,
          outputRows: 0,
          ms: f.ms,
          startMs: f.start - this.t0,
          attempt: f.attempt,
          error: f.error,
          spilledBytes: 0,
          spillReadBytes: 0,
        }),
    });
    return Object.assign(r, { pooled: true as const });
  }

  /** A finished task's statistics and progress. */
  private record(
    task: TaskSpec,
    meta: TaskMeta,
    r: TaskResult & { attempt: number },
    spilled: number,
    progressId: number,
  ): void {
    const read = r.spillReadBytes ?? 0;
    this.stats.spilledBytes += spilled;
    this.stats.spillReadBytes += read;
    this.stats.tasks.push({
      ...meta,
      rows: r.inputRows,
      inputBytes: meta.inputBytes ?? r.inputBytes ?? 0,
      outputRows: r.outputRows,
      ms: r.ms,
      ...(r.cpuMs !== undefined ? { cpuMs: r.cpuMs } : {}),
      startMs: (r.start ?? this.t0) - this.t0,
      thread: r.thread ?? 0,
      attempt: r.attempt,
      spilledBytes: spilled,
      spillReadBytes: read,
      // what the task's operators measured, each folded by its own analyze
      ...analyzeTask(r.metrics),
    });
    this.progress.finished(
      {
        stage: `${meta.stage} ${meta.kind}`,
        rowsRead: task.source.kind === 'scan' ? r.inputRows : 0,
        bytesShuffled: r.partitionBytes?.reduce((a, b) => a + b, 0) ?? 0,
        bytesSpilled: spilled,
        rowsShuffled: r.partitionRows?.reduce((a, b) => a + b, 0) ?? 0,
      },
      progressId,
    );
  }

  /**
   * Run a pipeline to its end for the operator above; each task's result in task order. `d.placement`: its scan
   * tasks on this thread, on the pool or both (see run).
   */
  async execute(p: Pipeline, d: Downstream): Promise<TaskResult[]> {
    const op = operatorOf(p.source);
    // a repeated subtree is an operator wrapping its own (physical/repeats.ts)
    const u = this.repeats?.reads(p);
    if (!u) return op.execute(this, p, d);
    return (await this.repeats!.execute(this, p, d, u, async (q) => readWhole(await op.execute(this, q, d)))).results;
  }

  /**
   * A pipeline whose scan tasks (or those of a broadcast probe's scan below) start in order, a few at a time, and
   * none once `stop` says so: the results are then of the first splits only, and `rest` the pipeline of the others.
   */
  async executeUntil(p: Pipeline, d: Downstream, stop: StopRule): Promise<Stopped> {
    const op = operatorOf(p.source);
    const run = async (q: Pipeline): Promise<Stopped> =>
      op.executeUntil ? op.executeUntil(this, q, d, stop) : readWhole(await op.execute(this, q, d));
    const u = this.repeats?.reads(p);
    return u ? this.repeats!.execute(this, p, d, u, run) : run(p);
  }

  /** A scan's map tasks (see execute), stopped by `stop` if given (see executeUntil). */
  async mapTasks(p: Pipeline<Extract<BoundNode, { kind: 'scan' }>>, d: Downstream, until?: StopRule): Promise<Stopped> {
    const src = p.source;
    const { sink, combine, placement: here = false } = d;
    let stop = false;
    const scan = async (i: number, local: boolean) => {
      const r = await this.run(
        { source: scanSource(src.splits[i], src.schema), ops: p.ops, combine, sink: withSeed(sink, i) },
        { stage: d.stage, kind: 'map', partition: i, source: src.id },
        local,
      );
      if (until?.(r)) stop = true;
      return r;
    };
    if (!until && here !== 'steal') return readWhole(await Promise.all(src.splits.map((_, i) => scan(i, here))));
    // 'steal': here, and on the pool's threads as soon as they are ready (scheduler/steal.ts); else one task more
    // than the workers: each finds the next one queued when it ends
    const n = src.splits.length;
    const results =
      here === 'steal'
        ? await stealTasks(n, scan, whenPoolReady(this.settings.workers), () => stop)
        : await tasksUntil(
            n,
            (i) => scan(i, here),
            this.settings.workers + 1,
            () => stop,
          );
    const rest = results.length < n ? { ...p, source: { ...src, splits: src.splits.slice(results.length) } } : null;
    return { results, rest };
  }

  readsRepeated(source: BoundNode): boolean {
    return this.repeats?.unitOf(source) !== undefined;
  }

  async sharesRows(source: BoundNode): Promise<boolean> {
    const u = this.repeats?.unitOf(source);
    return u !== undefined && u.ops === 0 && (await this.repeats!.sharing(u));
  }

  /** A block in shared memory, converted once however many tasks read it. */
  private sharedCopies = new WeakMap<Batch, Batch>();
  share(b: Batch): Batch {
    if (isSpilled(b)) return b; // read back by each task on its own
    let s = this.sharedCopies.get(b);
    if (!s) {
      s = shareBatch(b);
      this.sharedCopies.set(b, s);
    }
    return s;
  }

  /** All rows of a node, as its tasks collected them. */
  async collectBatches(node: BoundNode): Promise<Batch[]> {
    return batchesOf(await this.execute(pipelineOf(node), { stage: 'output', sink: { kind: 'collect' } }));
  }

  /**
   * Run a node, handing its batches to `emit` as its final tasks finish (in
   * task order), none kept. At most STREAM_IN_FLIGHT tasks per worker run
   * ahead of the consumer (`emit` returns a promise while it writes); once
   * `emit` returns true, the tasks not started yet are skipped. `parquet`:
   * the tasks encode their rows as Parquet row groups of these fields (see TaskSink).
   */
  async streamBatches(
    node: BoundNode,
    emit: (out: Streamed) => Promise<unknown> | boolean | void,
    parquet?: Field[],
  ): Promise<void> {
    const stream = this.nextStream++;
    const sink: TaskSink = parquet ? { kind: 'collect', parquet, stream } : { kind: 'collect', stream };
    this.streams.set(stream, new InOrder(emit, STREAM_IN_FLIGHT * this.settings.workers));
    try {
      await this.execute(pipelineOf(node), { stage: 'output', sink });
    } finally {
      this.streams.delete(stream);
    }
  }
}

/** A task named in errors: "join-1 reduce task (partition 3, hot-key rest)". */
function taskLabel(m: Pick<TaskStats, 'stage' | 'kind' | 'partition' | 'split'>): string {
  return (
    `${m.stage} ${m.kind} task (${m.kind === 'map' ? 'split' : 'partition'} ` +
    `${m.partition}${m.split ? `, ${m.split}` : ''})`
  );
}
