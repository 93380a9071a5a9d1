// The coordinator: runs pipelines as tasks on the worker pool, collects the
// map-side shuffle statistics, builds the reduce tasks, and materializes
// sort and limit results.
import { normFor } from '../agg/aggregate.js';
import { type EagerPlan, eagerPlan } from '../agg/eager.js';
import { combinable, partialSchema } from '../agg/partial.js';
import { type Batch, type Field, type Schema, batchBytes, concatBatches, emptyBatch, gatherBatch, rowCount, shareBatch, sliceBatch } from '../kernels/column.js';
import { partitionOf } from '../kernels/keys.js';
import { topIndices } from '../kernels/sort.js';
import type { BoundNode, KeyNorm } from '../plan/bound.js';
import { type Settings, plannedWorkers } from '../plan/load.js';
import type { PartitionSpec, TaskSketch } from '../shuffle/partition.js';
import {
  BUILD_WEIGHT, type PlannedTask, type SideStats, type SplitInfo, coalesceCap, median, packPartitions, planReduceTasks, reduceNeeded,
} from '../skew/decide.js';
import { keyGrid, restGrid } from '../skew/cut.js';
import { type RowSlice, packRowSlices, runsToSlices, sliceBlocks, sliceLabel } from '../skew/slices.js';
import { mergeSketches } from '../skew/sketch.js';
import { type AggregateInput, aggregateSource, levelOne, planAggregateSplits, rowsInput } from '../skew/aggregate.js';
import { mixPlan } from '../skew/mix.js';
import { type Collect, type Collected, type JoinStrategy, chooseStrategy } from './broadcast.js';
import { mergeProbes } from '../joins/merge.js';
import { runInThread, runsInThread } from './local.js';
import { poolReady, whenPoolReady } from './pool.js';
import { stealTasks, tasksUntil } from './steal.js';
import { blockBytes, isSpilled } from '../spill/block.js';
import { Spiller, heldBytes } from '../spill/spiller.js';
import { runSort } from '../sort/stage.js';
import { runRanged } from '../sort/fused.js';
import type { RangeRequest } from '../sort/scatter.js';
import { MAX_GRACE_PIECES, cutByHash, gracePieces } from '../spill/grace.js';
import { type Pipeline, type Until, partitionsFor, pipelineOf, scanBytes, scanSource } from './physical.js';
import { budgetedSkew, dataBudget, taskShare } from './budget.js';
import { InOrder, type Streamed } from './in-order.js';
import { takeRows } from './limit.js';
import { FaultPlan } from './faults.js';
import { Repeats } from './repeats.js';
import { ProgressTracker } from './progress.js';
import { runWithRetries } from './retry.js';
import type { ShuffleStats, Stats, TaskStats } from './stats.js';
import { type Combine, type RowOp, type TaskResult, type TaskSink, type TaskSpec, runTask } from './task.js';

type PartitionSink = Extract<TaskSink, { kind: 'partition' }>;
/** What the coordinator knows of a task before it runs. */
export type TaskMeta = Omit<TaskStats, 'rows' | 'inputBytes' | 'outputRows' | 'ms' | 'spilledBytes' | 'spillReadBytes' | 'attempt' | 'error'>
  /** a reduce or split task's input as shuffled, when the coordinator knows it (else the task measures its own) */
  & { inputBytes?: number };

/** Map outputs of one side of a shuffle: byTask[t][p] is what map task t wrote to partition p. */
interface ShuffleOutput {
  byTask: (Batch | null)[][];
  mapBytes: number[][];
  mapRows: number[][];
  sketches: TaskSketch[];
  stats: ShuffleStats;
  /** map tasks whose combiner passed their rows through as they are (agg/combiner.ts `passRows`) */
  rawTasks: boolean[];
}

type JoinNode = Extract<BoundNode, { kind: 'join' }>;

/** What the join's reduce tasks read: the sides as shuffled (rows, or eager partial rows). */
interface JoinShape {
  leftSchema: Schema;
  rightSchema: Schema;
  leftKeys: number[];
  rightKeys: number[];
  eager?: EagerPlan;
}

interface JoinContext {
  node: JoinNode;
  shape: JoinShape;
  ops: RowOp[];
  combine?: Combine;
  sink: TaskSink;
  l: ShuffleOutput;
  r: ShuffleOutput;
  /** the reduce plan's target task size */
  targetBytes: number;
  /** partitions of the shuffle the sides come from */
  partitions: number;
}

/** What the map tasks (all, or those in [from, to)) wrote to partition p. */
function blocksOf(s: ShuffleOutput, p: number, range: [number, number] | null = null): Batch[] {
  const tasks = range ? s.byTask.slice(range[0], range[1]) : s.byTask;
  return tasks.map((bs) => bs[p]).filter((b): b is Batch => b !== null);
}

/** An aggregate partition's blocks: combiners' states (or the rows, without combiners), and rows combiners passed through. */
interface AggregateBlocks { blocks: Batch[]; raw: Batch[] }
function aggregateBlocksOf(s: ShuffleOutput, ps: number[]): AggregateBlocks {
  const of = (raw: boolean) => ps.flatMap((p) => s.byTask.flatMap((bs, t) => (s.rawTasks[t] === raw && bs[p] ? [bs[p]!] : [])));
  return { blocks: of(false), raw: of(true) };
}

/** Consecutive blocks packed into chunks of about `target` bytes (at least one chunk). */
export function packBlocks(blocks: Batch[], target: number): Batch[][] {
  const chunks: Batch[][] = [[]];
  let bytes = 0;
  for (const b of blocks) {
    const n = blockBytes(b);
    if (bytes > 0 && bytes + n > target) { chunks.push([]); bytes = 0; }
    chunks[chunks.length - 1].push(b);
    bytes += n;
  }
  return chunks;
}

/** Stands for a map task's missing block in a slice list (slices never point at it: it has no rows). */
const EMPTY: Batch = { length: 0, columns: [] };

/** Runs of rows (of hot keys and the rest) up to which a split task leaves a key's rows in place for the join tasks. */
const MAX_RUNS = 64;

/** Rows read from each side of a join to decide on eager aggregation. */
const EAGER_SAMPLE_ROWS = 16384;

/** Rows read to measure a side (exec/broadcast.ts) go on in tasks of at least this many bytes. */
const READ_TASK_BYTES = 1024 * 1024;

/** Tasks of a streamed final stage per worker between starting and their output being consumed. */
const STREAM_IN_FLIGHT = 2;

/** Counters per map task for the heavy-hitter sketch of join keys. */
const SKETCH_CAPACITY = 1000;

export class Executor {
  readonly stats: Stats = { wallMs: 0, shuffles: [], tasks: [], joins: [], aggregates: [], eager: [], spilledBytes: 0, spillReadBytes: 0 };
  /** epoch ms when the run began: task start times are relative to it */
  private readonly t0 = performance.timeOrigin + performance.now();
  /** sinks of stages whose results stream (see streamBatches): their order and gate */
  private readonly streams = new Map<TaskSink, InOrder>();
  /** sinks of sorts whose input a shuffle join may cut into ranges itself (sort/fused.ts) */
  readonly rangeRequests = new Map<TaskSink, RangeRequest>();
  /** the memory budget and the query's spill folder (created here: an unusable one fails before any work) */
  readonly spill: Spiller;

  /** aggregates whose subtree the plan repeats, computed once (exec/repeats.ts); see shareRepeats */
  private repeats: Repeats | null = null;

  /** fault injection (exec/faults.ts), null when off */
  private readonly faults = FaultPlan.current();
  /** the first task failure: no task starts after it */
  private failure: unknown = null;

  /** `inThread`: every task runs on the calling thread (a small input, see exec/local.ts; never with faults) */
  constructor(readonly settings: Settings, readonly progress = new ProgressTracker(undefined, performance.now()), private readonly inThread = false) {
    this.spill = new Spiller(dataBudget(settings.memoryLimit, settings.workers), settings.spillDir);
  }

  /** What one running task may hold (exec/budget.ts). */
  taskShare(): number {
    return taskShare(this.spill.limit, this.settings.workers);
  }

  /** Compute each aggregate that `root` repeats once (exec/repeats.ts): call before running it. */
  shareRepeats(root: BoundNode): void {
    const r = new Repeats(root, this.spill);
    this.repeats = r.size > 0 ? r : null;
  }

  /** Remove the query's spill files: call once the run is over, however it ended. */
  async close(): Promise<void> {
    this.repeats?.close();
    await this.spill.close();
  }

  /**
   * Run one task (on the pool with retries, or here for in-memory batches
   * collected), hold or spill its shuffle output, record its statistics.
   * `here`: on this thread, as for a run in the thread (a side to broadcast, see runJoin).
   */
  async run(task0: TaskSpec, meta: TaskMeta, here = false): Promise<TaskResult> {
    if (this.failure) throw this.failure;
    const task = this.settings.taskCpuTime ? { ...task0, cpuClock: true } : task0;
    const order = this.streams.get(task.sink);
    const ticket = order ? order.ticket() : -1;
    if (order && !(await order.admit())) {
      // the consumer has all the rows it wants: the task is not run
      order.done(ticket, { batches: [] });
      return { batches: [], inputRows: 0, outputRows: 0, ms: 0 };
    }
    if (this.failure) throw this.failure;
    const crash = this.faults?.launch(meta.stage, meta.kind);
    this.progress.scheduled();
    try {
      const local = this.inThread || here;
      const r = local || (task.source.kind === 'batches' && task.sink.kind === 'collect' && !this.faults)
        ? Object.assign(await (local ? runInThread(task) : runTask(task)), { attempt: 1 })
        : await runWithRetries(this.settings.workers, task, {
          label: taskLabel(meta), crash,
          onFailed: (f) => this.stats.tasks.push({
            ...meta, rows: 0, inputBytes: meta.inputBytes ?? 0, outputRows: 0, ms: f.ms, startMs: f.start - this.t0, attempt: f.attempt, error: f.error, spilledBytes: 0, spillReadBytes: 0,
          }),
        });
      // Shuffle output is held until its consumer is done: within the budget, or in a spill file.
      // (a split task's rest and hot-key pieces too: they wait for the join tasks of every piece)
      const held = task.sink.kind === 'partition' || task.sink.kind === 'range' || (task.sink.kind === 'collect' && task.sink.sample)
        || task.source.kind === 'split';
      const { blocks, spilled } = held ? this.spill.admit(r.batches) : { blocks: r.batches, spilled: 0 };
      r.batches = blocks;
      if (order) {
        // the final stage streams: its rows go to the output now, not back up the call chain
        order.done(ticket, { batches: r.batches.filter((b): b is Batch => b !== null), encoded: r.encoded });
        r.batches = [];
        r.encoded = undefined;
      }
      const read = r.spillReadBytes ?? 0;
      this.stats.spilledBytes += spilled;
      this.stats.spillReadBytes += read;
      this.stats.tasks.push({
        ...meta, rows: r.inputRows, inputBytes: meta.inputBytes ?? r.inputBytes ?? 0, outputRows: r.outputRows, ms: r.ms,
        ...(r.cpuMs !== undefined ? { cpuMs: r.cpuMs } : {}), startMs: (r.start ?? this.t0) - this.t0, thread: r.thread ?? 0, attempt: r.attempt, spilledBytes: spilled, spillReadBytes: read,
        ...(r.join ? { join: r.join } : {}), ...(r.read ? { read: r.read } : {}),
      });
      this.progress.finished({
        stage: `${meta.stage} ${meta.kind}`,
        rowsRead: task.source.kind === 'scan' ? r.inputRows : 0,
        bytesShuffled: r.partitionBytes?.reduce((a, b) => a + b, 0) ?? 0,
        bytesSpilled: spilled,
      });
      return r;
    } catch (e) {
      this.failure ??= e;
      throw e;
    }
  }

  /**
   * Run a pipeline to its end; each task's result in task order. `here`: its scan tasks on this thread (see run).
   * `until`: a scan's tasks (or those of a broadcast probe's scan below) start in order, a few at a time, and
   * none once it says stop; the results are then of the first splits only, and `until.rest` the pipeline of the rest.
   */
  async runPipeline(
    p: Pipeline, sink: TaskSink, consumer: string, combine?: Combine, eager?: EagerPlan,
    here: boolean | 'steal' = false, until?: Until,
  ): Promise<TaskResult[]> {
    const src = p.source;
    switch (src.kind) {
      case 'scan': {
        let stop = false;
        const scan = async (i: number, local: boolean) => {
          const r = await this.run(
            { source: scanSource(src.splits[i], src.schema), ops: p.ops, combine, sink: withSeed(sink, i) },
            { stage: consumer, kind: 'map', partition: i, source: src.id }, local,
          );
          if (until?.stop(r)) stop = true;
          return r;
        };
        if (!until && here !== 'steal') return Promise.all(src.splits.map((_, i) => scan(i, here)));
        // 'steal': here, and on the pool's threads as soon as they are ready (exec/steal.ts); else one task more
        // than the workers: each finds the next one queued when it ends
        const n = src.splits.length;
        const results = here === 'steal' ? await stealTasks(n, scan, whenPoolReady(this.settings.workers), () => stop)
          : await tasksUntil(n, (i) => scan(i, here), this.settings.workers + 1, () => stop);
        if (until && results.length < n) until.rest = { ...p, source: { ...src, splits: src.splits.slice(results.length) } };
        return results;
      }
      case 'join':
        return this.runJoin(src, p.ops, sink, consumer, combine, eager, until);
      case 'aggregate':
        if (this.repeats?.has(src)) return this.runRepeated(src, p.ops, sink, consumer, combine);
        return this.runAggregate(src, p.ops, sink, combine);
      case 'sort':
        return runSort(this, src, p.ops, sink, combine);
      case 'limit': {
        const b = await this.materialize(src);
        return [await this.run({ source: { kind: 'batches', schema: src.schema, batches: [b] }, ops: p.ops, combine, sink },
          { stage: consumer, kind: 'map', partition: 0, source: src.id })];
      }
    }
  }

  /** An aggregate the plan repeats: its rows computed once (exec/repeats.ts), then a task per batch runs this reader's operators. */
  private async runRepeated(node: Extract<BoundNode, { kind: 'aggregate' }>, ops: RowOp[], sink: TaskSink, consumer: string, combine?: Combine): Promise<TaskResult[]> {
    const rows = await this.repeats!.rows(node, async () => batchesOf(await this.runAggregate(node, [], { kind: 'collect' })));
    const bs = rows.length > 0 ? rows : [emptyBatch(node.schema)];
    return Promise.all(bs.map((b, i) => this.run(
      { source: { kind: 'batches', schema: node.schema, batches: [b] }, ops, combine, sink: withSeed(sink, i) },
      { stage: consumer, kind: 'map', partition: i, source: node.id })));
  }

  /**
   * A pipeline whose first rows were read already (`read`, measured for a broadcast): those rows go through
   * its operators from `at` on (`schema`: theirs), and so does the rest the pipeline `read.rest` makes.
   */
  private async runFromRead(
    p: Pipeline, read: Collected, at: number, schema: Schema, sink: TaskSink, consumer: string, combine?: Combine,
  ): Promise<TaskResult[]> {
    const ops = p.ops.slice(at);
    // at least one task, as a pipeline over no rows has (an aggregate without groups still emits its row)
    const rows = read.batches.length > 0 || read.rest ? read.batches : [emptyBatch(schema)];
    // batches packed into a few tasks a worker: q17 at SF 10 probed the 480 small batches of its semi join's
    // output (60K rows) in 480 tasks
    const bytes = rows.reduce((a, b) => a + blockBytes(b), 0);
    const chunks = packBlocks(rows, Math.max(READ_TASK_BYTES, bytes / (2 * this.settings.workers)));
    const [fromRows, fromRest] = await Promise.all([
      Promise.all(chunks.map((bs, i) => this.run(
        { source: { kind: 'batches', schema, batches: bs }, ops, combine, sink: withSeed(sink, i) },
        { stage: consumer, kind: 'map', partition: i, source: p.source.id }))),
      read.rest ? this.runPipeline({ ...read.rest, ops: [...read.rest.ops, ...ops], schema: p.schema }, sink, consumer, combine)
        : [],
    ]);
    return [...fromRows, ...fromRest];
  }

  private async shuffle(
    node: BoundNode, spec: Omit<PartitionSpec, 'nullSeed'>, id: string, consumer: string, combine?: Combine, eager?: EagerPlan,
    read?: Collected,
  ): Promise<ShuffleOutput> {
    const { partitions } = spec;
    const sink: PartitionSink = { kind: 'partition', ...spec, nullSeed: 0 };
    // A side read already (measured for a broadcast that did not fit) is partitioned from its rows, its rest read.
    const p = pipelineOf(node);
    const results = read
      ? await this.runFromRead(p, read, p.ops.length, node.schema, sink, consumer, combine)
      : await this.runPipeline(p, sink, consumer, combine, eager);
    const partitionRows = new Array<number>(partitions).fill(0);
    const partitionBytes = new Array<number>(partitions).fill(0);
    for (const r of results) {
      r.partitionRows!.forEach((x, i) => { partitionRows[i] += x; });
      r.partitionBytes!.forEach((x, i) => { partitionBytes[i] += x; });
    }
    const total = partitionBytes.reduce((a, b) => a + b, 0);
    const stats: ShuffleStats = {
      id, partitions, partitionRows, partitionBytes,
      medianBytes: median(partitionBytes), thresholdBytes: this.settings.skew.thresholdBytes,
      skewedPartitions: [], hotKeys: [],
    };
    const combined = results.filter((r) => r.combine);
    if (combined.length) {
      stats.combine = {
        rowsBefore: combined.reduce((a, r) => a + r.combine!.rowsIn, 0),
        bytesBefore: combined.reduce((a, r) => a + r.combine!.bytesIn, 0),
        rowsAfter: partitionRows.reduce((a, b) => a + b, 0),
        bytesAfter: total,
        partialTasks: combined.filter((r) => r.combine!.mode === 'partial').length,
        passThroughTasks: combined.filter((r) => r.combine!.mode === 'pass-through').length,
      };
    }
    this.stats.shuffles.push(stats);
    return {
      byTask: results.map((r) => r.batches),
      mapBytes: results.map((r) => r.partitionBytes!),
      mapRows: results.map((r) => r.partitionRows!),
      sketches: results.flatMap((r) => (r.sketch ? [r.sketch] : [])),
      stats,
      rawTasks: results.map((r) => combine?.passRows === true && r.combine?.mode === 'pass-through'),
    };
  }

  /**
   * A shuffle join. With `eager`, each side is first aggregated by its join key
   * (and the group columns it provides) and the reduce tasks emit the states of
   * the aggregate above the join (see agg/eager.ts).
   */
  /** `until`: see runPipeline (a broadcast probe's map tasks stop there; others run to the end) */
  private async runJoin(
    node: JoinNode, ops: RowOp[], sink: TaskSink, consumer: string, combine?: Combine, eager?: EagerPlan, until?: Until,
  ): Promise<TaskResult[]> {
    if (node.leftKeys.length === 0) return this.runCross(node, ops, sink, combine);
    // Broadcast (exec/broadcast.ts): the probing side's map tasks join, and go on with our operators and sink.
    // A side small enough for a run in the thread is read here while the pool's threads start (their modules,
    // WebAssembly), and by them too once they are ready (exec/steal.ts); by them alone when they are ready already
    // (warm: this thread's first decode is not). Then the coordinator builds the table.
    // Each read task groups its rows for the aggregate fused with the probe, if any (exec/table-groups.ts).
    // A scan's tasks stop starting once the rows read pass the cap (the rest of its splits left to the consumer).
    const collect: Collect = async (n, cap, groupBy) => {
      const here = runsInThread(scanBytes(n), this.settings.inThreadBytes) && !poolReady() && 'steal';
      let bytes = 0;
      const until: Until = { stop: (r) => (bytes += r.batches.reduce((a, b) => a + (b ? batchBytes(b) : 0), 0)) > cap };
      const sink: TaskSink = { kind: 'collect', share: true, ...(groupBy ? { groupBy } : {}) };
      const results = await this.runPipeline(pipelineOf(n), sink, node.id, undefined, undefined, here, until);
      const groups = groupBy && results.flatMap((r) => r.groups ?? []);
      return { batches: batchesOf(results), groups, rest: until.rest ?? null };
    };
    const how: JoinStrategy = eager
      ? { decision: { strategy: 'shuffle', reason: 'eager aggregation: both sides pre-aggregated by their join keys' }, heldBytes: 0 }
      : await chooseStrategy(node, this.settings.broadcastBytes, collect, this.spill, ops.length === 0 ? combine : undefined);
    const strategy = { strategy: how.decision.strategy, reason: how.decision.reason };
    if (how.pipeline) {
      this.stats.joins.push({
        id: node.id, type: node.type, ...strategy, broadcast: { side: how.decision.side!, rows: how.rows!, bytes: how.bytes! },
        targetBytes: 0, tasks: 0, splits: [],
      });
      try {
        // the next probe's table joined into this one where it joins this table's rows (joins/merge.ts); a
        // merged table is grouped by the threads (grouping it here, before the first probe, measured slower on q10)
        let pipeline = how.pipeline, after = ops;
        for (let m = mergeProbes(pipeline, after); m; m = mergeProbes(pipeline, after)) ({ pipeline, after } = m);
        const full = { ...pipeline, ops: [...pipeline.ops, ...after] };
        // the probing side's rows read to measure it are probed as they are
        const probed = how.read?.[how.decision.side === 'left' ? 'right' : 'left'];
        const probing = how.decision.side === 'left' ? node.right : node.left;
        if (probed) return await this.runFromRead(full, probed, how.probeAt!, probing.schema, sink, consumer, combine);
        return await this.runPipeline(full, sink, consumer, combine, undefined, false, until);
      } finally {
        this.spill.release(how.heldBytes);
      }
    }
    const pre = (side: 'left' | 'right') => how.read?.[side];
    const P = partitionsFor(node, this.settings);
    const skew = this.settings.skew;
    const sketch = skew.enabled && skew.strategy !== 'partition' ? SKETCH_CAPACITY : 0;
    const shape: JoinShape = eager
      ? { leftSchema: eager.left.schema, rightSchema: eager.right.schema, leftKeys: eager.left.keys, rightKeys: eager.right.keys, eager }
      : { leftSchema: node.left.schema, rightSchema: node.right.schema, leftKeys: node.leftKeys, rightKeys: node.rightKeys };
    const sideCombine = (side: 'left' | 'right'): Combine | undefined => eager
      && { groupBy: eager[side].groupBy, aggs: eager[side].aggs, schema: (side === 'left' ? node.left : node.right).schema };
    const shuffled = Promise.all([
      this.shuffle(node.left, { keys: shape.leftKeys, norms: node.leftNorms, partitions: P, spreadNulls: true, sketch }, `${node.id}.left`, node.id, sideCombine('left'), undefined, pre('left')),
      this.shuffle(node.right, { keys: shape.rightKeys, norms: node.rightNorms, partitions: P, spreadNulls: true, sketch }, `${node.id}.right`, node.id, sideCombine('right'), undefined, pre('right')),
    ]);
    // the measured side's rows are held until its map tasks have partitioned them
    const [l, r] = await shuffled.finally(() => this.spill.release(how.heldBytes));
    const sideStats = (s: ShuffleOutput): SideStats => ({
      partitionRows: s.stats.partitionRows, partitionBytes: s.stats.partitionBytes, mapBytes: s.mapBytes, mapRows: s.mapRows,
      hotKeys: mergeSketches(s.sketches, SKETCH_CAPACITY).map((e) => ({
        hash: e.hash, match: e.match, display: e.display, rows: e.count, partition: partitionOf(e.hash, P),
      })),
    });
    const ls = sideStats(l), rs = sideStats(r);
    // tasks sized by cost: the side each partition builds weighs more (skew/decide.ts BUILD_WEIGHT)
    const planned = planReduceTasks(ls, rs, node.type, budgetedSkew(skew, this.taskShare()), plannedWorkers(this.settings), BUILD_WEIGHT);
    // plain partitions ride in the tasks of hot keys' pieces, so that every task holds some built rows (skew/mix.ts)
    const plan = mixPlan(planned, ls, rs, node.type);
    for (const [out, side, d] of [[l, ls, plan.left], [r, rs, plan.right]] as const) {
      out.stats.medianBytes = d.medianBytes;
      out.stats.thresholdBytes = d.thresholdBytes;
      out.stats.skewedPartitions = d.skewedPartitions;
      const skewed = new Set(d.skewedPartitions);
      out.stats.hotKeys = side.hotKeys.filter((h) => skewed.has(h.partition)).slice(0, 20)
        .map((h) => ({ key: h.display, rows: h.rows, partition: h.partition }));
    }
    this.stats.joins.push({ id: node.id, type: node.type, ...strategy, targetBytes: plan.targetBytes, tasks: plan.tasks.length, splits: plan.splits });
    const ctx: JoinContext = { node, shape, ops, combine: eager ? undefined : combine, sink, l, r, targetBytes: plan.targetBytes, partitions: P };
    const splitOf = (t: PlannedTask) => (t.kind === 'partitions' ? undefined : plan.splits.find((sp) => sp.partition === t.partition));
    const runOne = (t: PlannedTask, s: TaskSink) => this.runPlanned({ ...ctx, sink: s }, t, splitOf(t));
    const ranged = eager ? undefined : this.rangeRequests.get(sink);
    const results = ranged
      ? await runRanged(this, ranged, plan.tasks, (t) => t.kind === 'partitions', runOne)
      : (await Promise.all(plan.tasks.map((t) => runOne(t, sink)))).flat();
    this.spill.done([...l.byTask, ...r.byTask]);
    return results;
  }

  /**
   * A cross join (no keys): both sides are run to the coordinator, the smaller
   * one is put in shared memory and replicated to one task per chunk of the
   * larger one (about advisoryPartitionBytes each). How scalar subqueries are planned.
   */
  private async runCross(node: JoinNode, ops: RowOp[], sink: TaskSink, combine?: Combine): Promise<TaskResult[]> {
    const [l, r] = await Promise.all([this.collectBatches(node.left), this.collectBatches(node.right)]);
    const leftSmall = rowCount(l) <= rowCount(r);
    const small = [concatBatches(leftSmall ? node.left.schema : node.right.schema, leftSmall ? l : r, true)];
    const chunks = packBlocks(leftSmall ? r : l, this.settings.skew.advisoryPartitionBytes);
    // the smaller side is replicated whatever broadcastBytes says: there is no key to shuffle by
    const side = leftSmall ? 'left' : 'right';
    this.stats.joins.push({
      id: node.id, type: node.type, strategy: 'broadcast', reason: `cross join: the smaller side (${side}) replicated to every task of the larger`,
      broadcast: { side, rows: small[0].length, bytes: batchBytes(small[0]) },
      targetBytes: this.settings.skew.advisoryPartitionBytes, tasks: chunks.length, splits: [],
    });
    return Promise.all(chunks.map((chunk, i) => this.run({
      source: {
        kind: 'join', type: 'inner', leftSchema: node.left.schema, rightSchema: node.right.schema,
        left: leftSmall ? small : chunk, right: leftSmall ? chunk : small, leftKeys: [], rightKeys: [], leftNorms: [], rightNorms: [],
      },
      ops, combine, sink: withSeed(sink, i),
    }, { stage: node.id, kind: 'reduce', partition: i, split: `cross join: ${leftSmall ? 'left' : 'right'} side replicated` })));
  }

  private joinTask(
    ctx: JoinContext, left: Batch[], right: Batch[], meta: Omit<TaskMeta, 'stage'>, seed: number,
    parts?: [number, number][],
  ) {
    const { node, shape } = ctx;
    const inputBytes = [...left, ...right].reduce((a, b) => a + blockBytes(b), 0);
    return this.run({
      source: {
        kind: 'join', type: node.type, ...shape, left, right, leftNorms: node.leftNorms, rightNorms: node.rightNorms, ...(parts ? { parts } : {}),
      },
      ops: ctx.ops, combine: ctx.combine, sink: withSeed(ctx.sink, seed),
    }, { stage: node.id, ...meta, inputBytes });
  }

  /** `split`: the skewed partition's entry in joins[].splits, its task counts set to what ran */
  private async runPlanned(ctx: JoinContext, t: PlannedTask, split?: SplitInfo): Promise<TaskResult[]> {
    const { l, r, node } = ctx;
    if (t.kind === 'partitions') {
      const ls = t.partitions.map((p) => blocksOf(l, p)), rs = t.partitions.map((p) => blocksOf(r, p));
      const many = t.partitions.length > 1;
      const meta = { kind: 'reduce', partition: t.partitions[0], ...(many ? { partitions: t.partitions } : {}) } as const;
      const grace = await this.graceJoin(ctx, ls.flat(), rs.flat(), meta);
      if (grace) return grace;
      return [await this.joinTask(ctx, ls.flat(), rs.flat(), meta, t.partitions[0], many ? ls.map((b, i) => [b.length, rs[i].length]) : undefined)];
    }
    if (t.kind === 'map-range') {
      // Row ranges of the map outputs (views, no copy); blocks read by several tasks are shared.
      const side = (s: ShuffleOutput, slices: RowSlice[] | null) => {
        if (slices === null) return { blocks: blocksOf(s, t.partition).map((b) => this.shared(b)), label: 'all' };
        const blocks = this.mapOutputs(s, t.partition);
        return { blocks: sliceBlocks(blocks, slices), label: sliceLabel(slices, (i) => blocks[i].length) };
      };
      const left = side(l, t.left), right = side(r, t.right);
      const detail = `map-range left ${left.label} right ${right.label}`;
      return [await this.joinTask(ctx, left.blocks, right.blocks, { kind: 'reduce', partition: t.partition, split: detail }, t.partition)];
    }
    // Hot keys: find them in both sides of the partition, then join the rest and each key's grid.
    // The split tasks read row ranges of about the target size, so no task reads a whole map output.
    // Where a range holds few runs of each key (sorted input), the join tasks read those runs in
    // place; otherwise the split task cuts the keys out (a copy). The grids are cut from the rows
    // found (exact), not from the sketches' estimates.
    const p = t.partition;
    const H = t.keys.length;
    let held = 0;
    const modes = { located: 0, scattered: 0 };
    const splitSide = async (s: ShuffleOutput, side: 'left' | 'right') => {
      const blocks = this.mapOutputs(s, p);
      const chunks = packRowSlices(blocks.map((b) => b.length), blocks.map(blockBytes), ctx.targetBytes);
      const outs = await Promise.all(chunks.map(async (slices, c) => {
        const chunk = sliceBlocks(blocks, slices);
        // a spilled block is cut out once rather than read back by every task of the grid
        const locate = chunk.some(isSpilled) ? undefined : MAX_RUNS;
        const res = await this.run({
          source: {
            kind: 'split', schema: side === 'left' ? ctx.shape.leftSchema : ctx.shape.rightSchema, blocks: chunk,
            keys: side === 'left' ? ctx.shape.leftKeys : ctx.shape.rightKeys, norms: side === 'left' ? node.leftNorms : node.rightNorms,
            hot: t.keys.map((k) => ({ hash: k.hash, match: k.match })), locate,
          },
          ops: [], sink: { kind: 'collect' },
        }, {
          stage: node.id, kind: 'split', partition: p, split: `${side} cut ${c + 1}/${chunks.length} ${sliceLabel(slices, (i) => blocks[i].length)}`,
          inputBytes: chunk.reduce((a, b) => a + blockBytes(b), 0),
        });
        modes[res.runs ? 'located' : 'scattered']++;
        held += heldBytes([res.batches]);
        return res.runs ? runsToSlices(slices, res.runs, 1 + H).map((sl) => sliceBlocks(blocks, sl)) : (res.batches as Batch[]).map((b) => [b]);
      }));
      // [rest, key 0, key 1, ...] from every chunk, empty outputs dropped
      const gather = (i: number) => outs.flatMap((o) => o[i]).filter((b) => b.length > 0);
      return { rest: gather(0), keys: Array.from({ length: H }, (_, i) => gather(1 + i)) };
    };
    const [ls, rs] = await Promise.all([splitSide(l, 'left'), splitSide(r, 'right')]);
    const jobs: Promise<TaskResult | TaskResult[]>[] = [];
    let tasks = 0;
    // the plain partitions each cell of the keys' grids carries (skew/mix.ts), in order
    let cell = 0;
    const riders = t.riders ?? [];
    const plainTask = (ps: number[]) => this.runPlanned(ctx, { kind: 'partitions', partitions: ps, bytes: 0 });
    const pairs = (g: { left: Batch[][]; right: Batch[][] }, label: (i: number, j: number) => string, grace: boolean) => {
      g.left.forEach((x, i) => g.right.forEach((y, j) => {
        const rides = grace ? [] : riders[cell++] ?? [];
        if (!reduceNeeded(node.type, rowCount(x), rowCount(y))) {
          if (rides.length) jobs.push(plainTask(rides));
          return;
        }
        tasks++;
        // the rest may still not fit the memory budget (grace pieces); a hot key's pieces are never cut by hash
        if (grace) {
          const meta = { kind: 'reduce', partition: p, split: label(i, j) } as const;
          jobs.push(this.graceJoin(ctx, x, y, meta).then((r): Promise<TaskResult | TaskResult[]> | TaskResult[] => r ?? this.joinTask(ctx, x, y, meta, p + i + j)));
          return;
        }
        const ql = rides.map((q) => blocksOf(l, q)), qr = rides.map((q) => blocksOf(r, q));
        const meta = { kind: 'reduce', partition: p, split: label(i, j), ...(rides.length ? { partitions: [p, ...rides] } : {}) } as const;
        jobs.push(this.joinTask(ctx, [...x, ...ql.flat()], [...y, ...qr.flat()], meta, p + i + j,
          rides.length ? [[x.length, y.length], ...ql.map((b, k): [number, number] => [b.length, qr[k].length])] : undefined));
      }));
    };
    const rest = restGrid(node.type, ls.rest, rs.rest, ctx.targetBytes);
    pairs(rest, (i, j) => (rest.left.length * rest.right.length > 1 ? `hot-key rest piece ${i},${j}` : 'hot-key rest'), true);
    t.keys.forEach((k, ki) => {
      const g = keyGrid(node.type, ls.keys[ki], rs.keys[ki], ctx.targetBytes, [k.leftPieces, k.rightPieces]);
      const before = tasks;
      pairs(g, (i, j) => `hot-key ${k.display.join(',')} piece ${i},${j}`, false);
      const info = split?.keys?.[ki];
      if (info) info.tasks = tasks - before;
    });
    // cells planned but not made (the rows found cut into fewer pieces): their partitions on their own
    for (const ps of riders.slice(cell)) if (ps.length) jobs.push(plainTask(ps));
    if (split) Object.assign(split, { tasks, cut: modes });
    const results = (await Promise.all(jobs)).flat();
    this.spill.release(held);
    return results;
  }

  /**
   * Grace hash join: when the build side of a reduce task does not fit its
   * share of the budget, both sides are cut into pieces by further bits of
   * the key hash (re-partition tasks, their output held or spilled like any
   * shuffle) and each piece is joined by its own task. Null when the task fits.
   */
  private async graceJoin(ctx: JoinContext, left: Batch[], right: Batch[], meta: Omit<TaskMeta, 'stage'>): Promise<TaskResult[] | null> {
    const size = (bs: Batch[]) => ({ rows: rowCount(bs), bytes: bs.reduce((a, b) => a + blockBytes(b), 0) });
    const K = gracePieces(ctx.node.type, size(left), size(right), this.taskShare());
    if (K <= 1) return null;
    const { node, shape } = ctx;
    const [ls, rs] = await Promise.all([
      cutByHash(this, left, shape.leftSchema, shape.leftKeys, node.leftNorms, K, ctx.partitions, { stage: node.id, partition: meta.partition, label: 'grace left' }, true),
      cutByHash(this, right, shape.rightSchema, shape.rightKeys, node.rightNorms, K, ctx.partitions, { stage: node.id, partition: meta.partition, label: 'grace right' }, true),
    ]);
    const jobs: Promise<TaskResult>[] = [];
    for (let k = 0; k < K; k++) {
      const a = ls.pieces[k], b = rs.pieces[k];
      if (reduceNeeded(node.type, rowCount(a), rowCount(b))) {
        jobs.push(this.joinTask(ctx, a, b, { ...meta, split: `${meta.split ? meta.split + ', ' : ''}grace piece ${k + 1}/${K}` }, meta.partition + k));
      }
    }
    const results = await Promise.all(jobs);
    this.spill.release(ls.held + rs.held);
    return results;
  }

  /** Partition p's block of every map task (by map task; EMPTY where it wrote none), shared: row slices index it. */
  private mapOutputs(s: ShuffleOutput, p: number): Batch[] {
    return s.byTask.map((bs) => (bs[p] ? this.shared(bs[p]) : EMPTY));
  }

  /** A block in shared memory, converted once however many tasks read it. */
  private sharedCopies = new WeakMap<Batch, Batch>();
  private shared(b: Batch): Batch {
    if (isSpilled(b)) return b; // read back by each task on its own
    let s = this.sharedCopies.get(b);
    if (!s) { s = shareBatch(b); this.sharedCopies.set(b, s); }
    return s;
  }

  private async runAggregate(node: Extract<BoundNode, { kind: 'aggregate' }>, ops: RowOp[], sink: TaskSink, combine?: Combine): Promise<TaskResult[]> {
    const inSchema = node.input.schema;
    const P = node.groupBy.length === 0 ? 1 : partitionsFor(node, this.settings);
    const g = node.groupBy.length;
    // Eager aggregation: partial aggregates below the join, whose reduce tasks emit our partial states.
    const eager = this.settings.combiners && this.settings.eagerAggregation && node.input.kind === 'join'
      && await this.joinMultiplies(node.input) ? eagerPlan(node, node.input) ?? undefined : undefined;
    // With combiners, map tasks ship partial states keyed by their leading g columns.
    // A map task whose rows barely group ships them as they are, beside other tasks' states.
    const pre: Combine | undefined = !eager && this.settings.combiners && combinable(node.aggs)
      ? { groupBy: node.groupBy, aggs: node.aggs, schema: inSchema, passRows: true }
      : undefined;
    const partial = pre !== undefined || eager !== undefined;
    const shuffledSchema = partial ? partialSchema(inSchema, node.groupBy, node.aggs) : inSchema;
    const keys = partial ? Array.from({ length: g }, (_, i) => i) : node.groupBy;
    const norms = keys.map((i) => normFor(shuffledSchema[i].type));
    if (eager) this.stats.eager.push(node.id);
    const s = await this.shuffle(node.input, { keys, norms, partitions: P, spreadNulls: false }, `${node.id}.input`, node.id, pre, eager);
    const tasks: number[] = [];
    for (let p = 0; p < P; p++) if (s.stats.partitionRows[p] > 0 || g === 0) tasks.push(p);
    tasks.sort((a, b) => s.stats.partitionBytes[b] - s.stats.partitionBytes[a]);
    const share = this.taskShare();
    // A skewed partition is aggregated in two levels (skew/aggregate.ts).
    const skew = planAggregateSplits(s.stats.partitionRows, s.stats.partitionBytes, this.settings.skew, node.aggs, share);
    Object.assign(s.stats, skew.decision);
    this.stats.aggregates.push({ id: node.id, targetBytes: skew.targetBytes, splits: skew.splits });
    const twoLevel = new Map(skew.splits.filter((x) => x.method === 'two-level').map((x) => [x.partition, x]));
    const shuffled: AggregateInput = {
      stage: node.id, mode: partial ? 'final' : 'raw', schema: shuffledSchema, groupBy: keys, aggs: node.aggs, outSchema: node.schema,
      ...(pre ? { rows: { schema: inSchema, groupBy: node.groupBy } } : {}),
    };
    const rows = rowsInput(shuffled);
    // A partition larger than a worker's share of the budget is cut by further bits of the group
    // hash: each group lies in one piece, aggregated by its own task (no merge needed).
    const reduce = async (a: AggregateInput, input: AggregateBlocks, p: number, step?: 'merge', partitions?: number[]): Promise<TaskResult[]> => {
      const run = (x: AggregateBlocks, split?: string) => this.run({ source: aggregateSource(a, x.blocks, step, x.raw), ops, combine, sink: withSeed(sink, p) },
        { stage: node.id, kind: 'reduce', partition: p, ...(partitions && partitions.length > 1 ? { partitions } : {}), ...(split ? { split } : {}) });
      const label = step ? 'two-level merge' : undefined;
      const bytes = [...input.blocks, ...input.raw].reduce((x, b) => x + blockBytes(b), 0);
      if (g === 0 || bytes <= share) return [await run(input, label)];
      const K = Math.min(MAX_GRACE_PIECES, Math.ceil(bytes / Math.max(1, share)));
      // states and passed-through rows are cut apart by the same hash bits: piece k of both holds the same groups
      const cutOf = (bs: Batch[], x: AggregateInput, what: string) => (bs.length === 0 ? { pieces: Array.from({ length: K }, (): Batch[] => []), held: 0 }
        : cutByHash(this, bs, x.schema, x.groupBy, norms, K, P, { stage: node.id, partition: p, label: `${label ? `${label} ` : ''}grace ${what}` }, false));
      const [cut, rawCut] = await Promise.all([cutOf(input.blocks, a, 'input'), cutOf(input.raw, rows ?? a, 'rows')]);
      const out = await Promise.all(cut.pieces.map((piece, k) => (piece.length || rawCut.pieces[k].length
        ? run({ blocks: piece, raw: rawCut.pieces[k] }, `${label ? `${label}, ` : ''}grace piece ${k + 1}/${K}`) : null)));
      this.spill.release(cut.held + rawCut.held);
      return out.filter((r): r is TaskResult => r !== null);
    };
    // Small partitions are packed into tasks as a join's are (skew/decide.ts): a task over several
    // partitions aggregates them together (each group lies in one partition).
    const bytesOf = (p: number) => s.stats.partitionBytes[p];
    const plain = tasks.filter((p) => !twoLevel.has(p));
    const packed = this.settings.skew.enabled && g > 0
      ? packPartitions(plain, bytesOf, coalesceCap(plain.reduce((a, p) => a + bytesOf(p), 0), Math.min(skew.targetBytes, share), plannedWorkers(this.settings)))
        .map((t) => t.partitions)
      : plain.map((p) => [p]);
    const jobs = [...packed, ...[...twoLevel.keys()].map((p) => [p])]
      .map((ps) => ({ ps, bytes: ps.reduce((a, p) => a + bytesOf(p), 0) })).sort((a, b) => b.bytes - a.bytes);
    const results = await Promise.all(jobs.map(async ({ ps }) => {
      const p = ps[0], split = twoLevel.get(p);
      if (!split) return reduce(shuffled, aggregateBlocksOf(s, ps), p, undefined, ps);
      const { blocks, raw } = aggregateBlocksOf(s, [p]);
      const one = await levelOne(this, shuffled, blocks, split, raw);
      const out = await reduce(one.input, { blocks: one.blocks, raw: [] }, p, 'merge');
      this.spill.release(one.held);
      return out;
    }));
    this.spill.done(s.byTask);
    return results.flat();
  }



  /**
   * Whether a join repeats keys on both sides (rows per key >= 1.5 in a
   * sample: the first rows of the first map task of each side), where eager aggregation pays:
   * against a side with unique keys it only adds work. Sides that do not
   * start with a scan are assumed to repeat keys.
   */
  private async joinMultiplies(join: JoinNode): Promise<boolean> {
    // a sample is small: read on this thread, unless runs are kept off it (inThreadBytes 0, faults) or the
    // pool's threads are ready (they have warmed WebAssembly: this one has not, see cli/prestart.ts)
    const here = this.inThread || (!poolReady() && runsInThread(1, this.settings.inThreadBytes));
    const sample = async (node: BoundNode, keys: number[], norms: KeyNorm[]) => {
      const p = pipelineOf(node);
      if (p.source.kind !== 'scan' || p.source.splits.length === 0) return Infinity;
      const s = p.source.splits[0];
      const task: TaskSpec = {
        source: scanSource(s, p.source.schema, EAGER_SAMPLE_ROWS),
        ops: p.ops, sink: { kind: 'keyStats', keys, norms },
      };
      const r = here ? await runInThread(task) : await runWithRetries(this.settings.workers, task, { label: `${join.id} key sample` });
      const k = r.keyStats!;
      return k.distinct === 0 ? Infinity : k.rows / k.distinct;
    };
    const left = () => sample(join.left, join.leftKeys, join.leftNorms), right = () => sample(join.right, join.rightKeys, join.rightNorms);
    if (!here) {
      const [l, r] = await Promise.all([left(), right()]);
      return l >= 1.5 && r >= 1.5;
    }
    // one after the other on this thread anyway: the smaller side first (a dimension's unique keys, often),
    // and the other only when it repeats keys
    const [first, then] = scanBytes(join.left) <= scanBytes(join.right) ? [left, right] : [right, left];
    return await first() >= 1.5 && await then() >= 1.5;
  }

  /** Run a node to one batch on the coordinator (a limit needs all rows before it). */
  async materialize(node: BoundNode): Promise<Batch> {
    if (node.kind === 'limit' && node.input.kind === 'sort') {
      // top-k: only the rows the limit keeps are sorted
      const b = await this.collect(node.input.input);
      return sliceBatch(gatherBatch(b, topIndices(b, node.input.by, node.offset + node.count)), node.offset, node.offset + node.count);
    }
    if (node.kind === 'limit') return takeRows(this, node);
    return this.collect(node);
  }

  /** All rows of a node in one batch. */
  async collect(node: BoundNode): Promise<Batch> {
    if (node.kind === 'limit') return this.materialize(node);
    return concatBatches(node.schema, await this.collectBatches(node));
  }

  /** All rows of a node, as its tasks collected them. */
  async collectBatches(node: BoundNode): Promise<Batch[]> {
    return batchesOf(await this.runPipeline(pipelineOf(node), { kind: 'collect' }, 'output'));
  }

  /**
   * Run a node, handing its batches to `emit` as its final tasks finish (in
   * task order), none kept. At most STREAM_IN_FLIGHT tasks per worker run
   * ahead of the consumer (`emit` returns a promise while it writes); once
   * `emit` returns true, the tasks not started yet are skipped. `parquet`:
   * the tasks encode their rows as Parquet row groups of these fields (see TaskSink).
   */
  async streamBatches(node: BoundNode, emit: (out: Streamed) => Promise<unknown> | boolean | void, parquet?: Field[]): Promise<void> {
    const sink: TaskSink = parquet ? { kind: 'collect', parquet } : { kind: 'collect' };
    this.streams.set(sink, new InOrder(emit, STREAM_IN_FLIGHT * this.settings.workers));
    try {
      await this.runPipeline(pipelineOf(node), sink, 'output');
    } finally {
      this.streams.delete(sink);
    }
  }
}

/** The collected batches of tasks, in task order. */
const batchesOf = (results: TaskResult[]) => results.flatMap((r) => r.batches.filter((b): b is Batch => b !== null));

/** A task named in errors: "join-1 reduce task (partition 3, hot-key rest)". */
function taskLabel(m: Pick<TaskStats, 'stage' | 'kind' | 'partition' | 'split'>): string {
  return `${m.stage} ${m.kind} task (${m.kind === 'map' ? 'split' : 'partition'} ${m.partition}${m.split ? `, ${m.split}` : ''})`;
}

export function withSeed(sink: TaskSink, seed: number): TaskSink {
  return sink.kind === 'partition' || sink.kind === 'range' ? { ...sink, nullSeed: seed * 7919 } : sink;
}

