// The coordinator: runs pipelines as tasks on the worker pool, collects the
// map-side shuffle statistics, builds the reduce tasks, and materializes
// sort and limit results.
import { normFor } from '../agg/aggregate.js';
import { type EagerPlan, eagerPlan } from '../agg/eager.js';
import { combinable, partialSchema } from '../agg/partial.js';
import { ExecutionError } from '../errors.js';
import { type Batch, type Schema, batchBytes, concatBatches, gatherBatch, rowCount, shareBatch, sliceBatch } from '../kernels/column.js';
import { partitionOf } from '../kernels/keys.js';
import { sortIndices, topIndices } from '../kernels/sort.js';
import type { BoundNode, KeyNorm } from '../plan/bound.js';
import type { Settings } from '../plan/load.js';
import type { PartitionSpec, TaskSketch } from '../shuffle/partition.js';
import { type HotKeySplit, type PlannedTask, type SideStats, median, planReduceTasks, reduceNeeded } from '../skew/decide.js';
import { mergeSketches } from '../skew/sketch.js';
import { type Pipeline, partitionsFor, pipelineOf } from './physical.js';
import { FaultPlan } from './faults.js';
import { ProgressTracker } from './progress.js';
import { runWithRetries } from './retry.js';
import type { ShuffleStats, Stats, TaskStats } from './stats.js';
import { type Combine, type RowOp, type TaskResult, type TaskSink, type TaskSpec, runTask } from './task.js';

type PartitionSink = Extract<TaskSink, { kind: 'partition' }>;

/** Map outputs of one side of a shuffle: byTask[t][p] is what map task t wrote to partition p. */
interface ShuffleOutput {
  byTask: (Batch | null)[][];
  mapBytes: number[][];
  sketches: TaskSketch[];
  stats: ShuffleStats;
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
}

/** What the map tasks (all, or those in [from, to)) wrote to partition p. */
function blocksOf(s: ShuffleOutput, p: number, range: [number, number] | null = null): Batch[] {
  const tasks = range ? s.byTask.slice(range[0], range[1]) : s.byTask;
  return tasks.map((bs) => bs[p]).filter((b): b is Batch => b !== null);
}

/** Consecutive blocks packed into chunks of about `target` bytes (at least one chunk). */
function packBlocks(blocks: Batch[], target: number): Batch[][] {
  const chunks: Batch[][] = [[]];
  let bytes = 0;
  for (const b of blocks) {
    const n = batchBytes(b);
    if (bytes > 0 && bytes + n > target) { chunks.push([]); bytes = 0; }
    chunks[chunks.length - 1].push(b);
    bytes += n;
  }
  return chunks;
}

/** Rows read from each side of a join to decide on eager aggregation. */
const EAGER_SAMPLE_ROWS = 16384;

/** Counters per map task for the heavy-hitter sketch of join keys. */
const SKETCH_CAPACITY = 1000;

export class Executor {
  readonly stats: Stats = { wallMs: 0, shuffles: [], tasks: [], joins: [], eager: [] };
  private shuffledBytes = 0;
  /** epoch ms when the run began: task start times are relative to it */
  private readonly t0 = performance.timeOrigin + performance.now();

  /** fault injection (exec/faults.ts), null when off */
  private readonly faults = FaultPlan.current();
  /** the first task failure: no task starts after it */
  private failure: unknown = null;

  constructor(readonly settings: Settings, readonly progress = new ProgressTracker(undefined, performance.now())) {}

  private async run(task: TaskSpec, meta: Omit<TaskStats, 'rows' | 'outputRows' | 'ms' | 'attempt'>): Promise<TaskResult> {
    if (this.failure) throw this.failure;
    const crash = this.faults?.launch(meta.stage, meta.kind);
    this.progress.scheduled();
    try {
      const r = task.source.kind === 'batches' && task.sink.kind === 'collect' && !this.faults
        ? Object.assign(await runTask(task), { attempt: 1 })
        : await runWithRetries(this.settings.workers, task, {
          label: taskLabel(meta), crash,
          onFailed: (f) => this.stats.tasks.push({ ...meta, rows: 0, outputRows: 0, ms: f.ms, startMs: f.start - this.t0, attempt: f.attempt, error: f.error }),
        });
      this.stats.tasks.push({
        ...meta, rows: r.inputRows, outputRows: r.outputRows, ms: r.ms,
        startMs: (r.start ?? this.t0) - this.t0, thread: r.thread ?? 0, attempt: r.attempt,
        ...(r.join ? { join: r.join } : {}), ...(r.read ? { read: r.read } : {}),
      });
      this.progress.finished({
        stage: `${meta.stage} ${meta.kind}`,
        rowsRead: task.source.kind === 'scan' ? r.inputRows : 0,
        bytesShuffled: r.partitionBytes?.reduce((a, b) => a + b, 0) ?? 0,
        bytesSpilled: r.spilledBytes ?? 0,
      });
      return r;
    } catch (e) {
      this.failure ??= e;
      throw e;
    }
  }

  /** Run a pipeline to its end; each task's result in task order. */
  async runPipeline(p: Pipeline, sink: TaskSink, consumer: string, combine?: Combine, eager?: EagerPlan): Promise<TaskResult[]> {
    const src = p.source;
    switch (src.kind) {
      case 'scan':
        return Promise.all(src.splits.map((s, i) => this.run(
          { source: { kind: 'scan', path: s.path, rowGroups: s.rowGroups, wholeFile: s.wholeFile, fields: src.schema }, ops: p.ops, combine, sink: withSeed(sink, i) },
          { stage: consumer, kind: 'map', partition: i, source: src.id },
        )));
      case 'join':
        return this.runJoin(src, p.ops, sink, combine, eager);
      case 'aggregate':
        return this.runAggregate(src, p.ops, sink, combine);
      case 'sort':
      case 'limit': {
        const b = await this.materialize(src);
        return [await this.run({ source: { kind: 'batches', schema: src.schema, batches: [b] }, ops: p.ops, combine, sink },
          { stage: consumer, kind: 'map', partition: 0, source: src.id })];
      }
    }
  }

  private async shuffle(
    node: BoundNode, spec: Omit<PartitionSpec, 'nullSeed'>, id: string, consumer: string, combine?: Combine, eager?: EagerPlan,
  ): Promise<ShuffleOutput> {
    const { partitions } = spec;
    const sink: PartitionSink = { kind: 'partition', ...spec, nullSeed: 0 };
    const results = await this.runPipeline(pipelineOf(node), sink, consumer, combine, eager);
    const partitionRows = new Array<number>(partitions).fill(0);
    const partitionBytes = new Array<number>(partitions).fill(0);
    for (const r of results) {
      r.partitionRows!.forEach((x, i) => { partitionRows[i] += x; });
      r.partitionBytes!.forEach((x, i) => { partitionBytes[i] += x; });
    }
    const total = partitionBytes.reduce((a, b) => a + b, 0);
    this.shuffledBytes += total;
    if (this.shuffledBytes > this.settings.memoryLimit) {
      throw new ExecutionError(`shuffle data (${this.shuffledBytes} bytes) exceeds the memory limit (${this.settings.memoryLimit} bytes); raise execution.memoryLimit or --memory-limit`);
    }
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
      sketches: results.flatMap((r) => (r.sketch ? [r.sketch] : [])),
      stats,
    };
  }

  /**
   * A shuffle join. With `eager`, each side is first aggregated by its join key
   * (and the group columns it provides) and the reduce tasks emit the states of
   * the aggregate above the join (see agg/eager.ts).
   */
  private async runJoin(node: JoinNode, ops: RowOp[], sink: TaskSink, combine?: Combine, eager?: EagerPlan): Promise<TaskResult[]> {
    if (node.leftKeys.length === 0) return this.runCross(node, ops, sink, combine);
    const P = partitionsFor(node, this.settings);
    const skew = this.settings.skew;
    const sketch = skew.enabled && skew.strategy !== 'partition' ? SKETCH_CAPACITY : 0;
    const shape: JoinShape = eager
      ? { leftSchema: eager.left.schema, rightSchema: eager.right.schema, leftKeys: eager.left.keys, rightKeys: eager.right.keys, eager }
      : { leftSchema: node.left.schema, rightSchema: node.right.schema, leftKeys: node.leftKeys, rightKeys: node.rightKeys };
    const sideCombine = (side: 'left' | 'right'): Combine | undefined => eager
      && { groupBy: eager[side].groupBy, aggs: eager[side].aggs, schema: (side === 'left' ? node.left : node.right).schema };
    const [l, r] = await Promise.all([
      this.shuffle(node.left, { keys: shape.leftKeys, norms: node.leftNorms, partitions: P, spreadNulls: true, sketch }, `${node.id}.left`, node.id, sideCombine('left')),
      this.shuffle(node.right, { keys: shape.rightKeys, norms: node.rightNorms, partitions: P, spreadNulls: true, sketch }, `${node.id}.right`, node.id, sideCombine('right')),
    ]);
    const sideStats = (s: ShuffleOutput): SideStats => ({
      partitionRows: s.stats.partitionRows, partitionBytes: s.stats.partitionBytes, mapBytes: s.mapBytes,
      hotKeys: mergeSketches(s.sketches, SKETCH_CAPACITY).map((e) => ({
        hash: e.hash, match: e.match, display: e.display, rows: e.count, partition: partitionOf(e.hash, P),
      })),
    });
    const ls = sideStats(l), rs = sideStats(r);
    const plan = planReduceTasks(ls, rs, node.type, skew, this.settings.workers);
    for (const [out, side, d] of [[l, ls, plan.left], [r, rs, plan.right]] as const) {
      out.stats.medianBytes = d.medianBytes;
      out.stats.thresholdBytes = d.thresholdBytes;
      out.stats.skewedPartitions = d.skewedPartitions;
      const skewed = new Set(d.skewedPartitions);
      out.stats.hotKeys = side.hotKeys.filter((h) => skewed.has(h.partition)).slice(0, 20)
        .map((h) => ({ key: h.display, rows: h.rows, partition: h.partition }));
    }
    this.stats.joins.push({ id: node.id, type: node.type, targetBytes: plan.targetBytes, tasks: plan.tasks.length, splits: plan.splits });
    const ctx: JoinContext = { node, shape, ops, combine: eager ? undefined : combine, sink, l, r, targetBytes: plan.targetBytes };
    const results = await Promise.all(plan.tasks.map((t) => this.runPlanned(ctx, t)));
    return results.flat();
  }

  /**
   * A cross join (no keys): both sides are run to the coordinator, the smaller
   * one is put in shared memory and replicated to one task per chunk of the
   * larger one (about advisoryPartitionBytes each). How scalar subqueries are planned.
   */
  private async runCross(node: JoinNode, ops: RowOp[], sink: TaskSink, combine?: Combine): Promise<TaskResult[]> {
    const [l, r] = await Promise.all([this.collectBatches(node.left), this.collectBatches(node.right)]);
    const leftSmall = rowCount(l) <= rowCount(r);
    const small = [concatBatches(leftSmall ? node.left.schema : node.right.schema, leftSmall ? l : r)].map(shareBatch);
    const chunks = packBlocks(leftSmall ? r : l, this.settings.skew.advisoryPartitionBytes);
    this.stats.joins.push({ id: node.id, type: node.type, targetBytes: this.settings.skew.advisoryPartitionBytes, tasks: chunks.length, splits: [] });
    return Promise.all(chunks.map((chunk, i) => this.run({
      source: {
        kind: 'join', type: 'inner', leftSchema: node.left.schema, rightSchema: node.right.schema,
        left: leftSmall ? small : chunk, right: leftSmall ? chunk : small, leftKeys: [], rightKeys: [], leftNorms: [], rightNorms: [],
      },
      ops, combine, sink: withSeed(sink, i),
    }, { stage: node.id, kind: 'reduce', partition: i, split: `cross join: ${leftSmall ? 'left' : 'right'} side replicated` })));
  }

  private joinTask(
    ctx: JoinContext, left: Batch[], right: Batch[], meta: Omit<TaskStats, 'stage' | 'rows' | 'outputRows' | 'ms' | 'attempt'>, seed: number,
    parts?: [number, number][],
  ) {
    const { node, shape } = ctx;
    return this.run({
      source: {
        kind: 'join', type: node.type, ...shape, left, right, leftNorms: node.leftNorms, rightNorms: node.rightNorms, ...(parts ? { parts } : {}),
      },
      ops: ctx.ops, combine: ctx.combine, sink: withSeed(ctx.sink, seed),
    }, { stage: node.id, ...meta });
  }

  private async runPlanned(ctx: JoinContext, t: PlannedTask): Promise<TaskResult[]> {
    const { l, r, node } = ctx;
    if (t.kind === 'partitions') {
      const ls = t.partitions.map((p) => blocksOf(l, p)), rs = t.partitions.map((p) => blocksOf(r, p));
      const many = t.partitions.length > 1;
      return [await this.joinTask(ctx, ls.flat(), rs.flat(), { kind: 'reduce', partition: t.partitions[0], ...(many ? { partitions: t.partitions } : {}) },
        t.partitions[0], many ? ls.map((b, i) => [b.length, rs[i].length]) : undefined)];
    }
    if (t.kind === 'map-range') {
      // Blocks read by several range tasks (a whole side, or a range in a cross product) are shared, not copied.
      const left = blocksOf(l, t.partition, t.left).map((b) => this.shared(b));
      const right = blocksOf(r, t.partition, t.right).map((b) => this.shared(b));
      const detail = `map-range left ${t.left ? t.left.join('-') : 'all'} right ${t.right ? t.right.join('-') : 'all'}`;
      return [await this.joinTask(ctx, left, right, { kind: 'reduce', partition: t.partition, split: detail }, t.partition)];
    }
    // Hot keys: cut them out of both sides of the partition, then the rest as one task and each key as a grid.
    // The cutting itself is split too: one split task per chunk of map outputs of about the target size,
    // so that no task reads the whole hot partition.
    const p = t.partition;
    const splitSide = async (s: ShuffleOutput, side: 'left' | 'right', pieces: (k: HotKeySplit) => number) => {
      const blocks = blocksOf(s, p);
      const chunks = packBlocks(blocks, ctx.targetBytes);
      const total = blocks.reduce((a, b) => a + batchBytes(b), 0) || 1;
      const outs = await Promise.all(chunks.map(async (chunk, c) => {
        const share = chunk.reduce((a, b) => a + batchBytes(b), 0) / total;
        const counts = t.keys.map((k) => Math.max(1, Math.round(pieces(k) * share)));
        const r = await this.run({
          source: {
            kind: 'split', schema: side === 'left' ? ctx.shape.leftSchema : ctx.shape.rightSchema, blocks: chunk,
            keys: side === 'left' ? ctx.shape.leftKeys : ctx.shape.rightKeys, norms: side === 'left' ? node.leftNorms : node.rightNorms,
            hot: t.keys.map((k, i) => ({ hash: k.hash, match: k.match, pieces: counts[i] })),
          },
          ops: [], sink: { kind: 'collect' },
        }, { stage: node.id, kind: 'split', partition: p, split: `${side} chunk ${c + 1}/${chunks.length}` });
        return { batches: r.batches as Batch[], pieces: counts };
      }));
      // [rest batches, pieces of key 0, pieces of key 1, ...], gathered from every chunk
      const rest = outs.map((o) => o.batches[0]);
      const keyPieces = t.keys.map((_, i) => outs.flatMap((o) => {
        const from = 1 + o.pieces.slice(0, i).reduce((a, b) => a + b, 0);
        return o.batches.slice(from, from + o.pieces[i]);
      }));
      return { rest, keyPieces };
    };
    const [ls, rs] = await Promise.all([splitSide(l, 'left', (k) => k.leftPieces), splitSide(r, 'right', (k) => k.rightPieces)]);
    const jobs: Promise<TaskResult>[] = [];
    if (reduceNeeded(node.type, rowCount(ls.rest), rowCount(rs.rest))) {
      jobs.push(this.joinTask(ctx, ls.rest, rs.rest, { kind: 'reduce', partition: p, split: 'hot-key rest' }, p));
    }
    t.keys.forEach((k, ki) => {
      // Estimates may exceed the rows found: drop empty pieces (an empty piece facing rows would
      // emit them as unmatched), keeping one when a side has no rows of the key at all.
      const nonEmpty = (xs: Batch[]) => (xs.some((x) => x.length > 0) ? xs.filter((x) => x.length > 0) : xs.slice(0, 1));
      // A piece is a list of batches. Semi and anti joins must see all right rows of a key at once.
      const a = nonEmpty(ls.keyPieces[ki]).map((x) => [x]);
      const b = node.type === 'semi' || node.type === 'anti' ? [rs.keyPieces[ki]] : nonEmpty(rs.keyPieces[ki]).map((x) => [x]);
      const as = b.length > 1 ? a.map((x) => x.map(shareBatch)) : a, bs = a.length > 1 ? b.map((x) => x.map(shareBatch)) : b;
      as.forEach((x, i) => bs.forEach((y, j) => {
        if (reduceNeeded(node.type, rowCount(x), rowCount(y))) {
          jobs.push(this.joinTask(ctx, x, y, { kind: 'reduce', partition: p, split: `hot-key ${k.display.join(',')} piece ${i},${j}` }, p + i + j));
        }
      }));
    });
    return Promise.all(jobs);
  }

  /** A block in shared memory, converted once however many tasks read it. */
  private sharedCopies = new WeakMap<Batch, Batch>();
  private shared(b: Batch): Batch {
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
    const pre: Combine | undefined = !eager && this.settings.combiners && combinable(node.aggs)
      ? { groupBy: node.groupBy, aggs: node.aggs, schema: inSchema }
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
    return Promise.all(tasks.map((p) => this.run({
      source: {
        kind: 'aggregate', mode: partial ? 'final' : 'raw', schema: shuffledSchema,
        input: blocksOf(s, p),
        groupBy: keys, aggs: node.aggs, outSchema: node.schema,
      },
      ops, combine, sink: withSeed(sink, p),
    }, { stage: node.id, kind: 'reduce', partition: p })));
  }

  /**
   * Whether a join repeats keys on both sides (rows per key >= 1.5 in a
   * sample: the first rows of the first map task of each side), where eager aggregation pays:
   * against a side with unique keys it only adds work. Sides that do not
   * start with a scan are assumed to repeat keys.
   */
  private async joinMultiplies(join: JoinNode): Promise<boolean> {
    const sample = async (node: BoundNode, keys: number[], norms: KeyNorm[]) => {
      const p = pipelineOf(node);
      if (p.source.kind !== 'scan' || p.source.splits.length === 0) return Infinity;
      const s = p.source.splits[0];
      const r = await runWithRetries(this.settings.workers, {
        source: { kind: 'scan', path: s.path, rowGroups: s.rowGroups, wholeFile: s.wholeFile, fields: p.source.schema, limit: EAGER_SAMPLE_ROWS },
        ops: p.ops, sink: { kind: 'keyStats', keys, norms },
      }, { label: `${join.id} key sample` });
      const k = r.keyStats!;
      return k.distinct === 0 ? Infinity : k.rows / k.distinct;
    };
    const [l, r] = await Promise.all([sample(join.left, join.leftKeys, join.leftNorms), sample(join.right, join.rightKeys, join.rightNorms)]);
    return l >= 1.5 && r >= 1.5;
  }

  /** Run a node to one batch on the coordinator (sort and limit need all rows). */
  async materialize(node: BoundNode): Promise<Batch> {
    if (node.kind === 'sort') {
      const b = await this.collect(node.input);
      return gatherBatch(b, sortIndices(b, node.by));
    }
    if (node.kind === 'limit' && node.input.kind === 'sort') {
      // top-k: only the rows the limit keeps are sorted
      const b = await this.collect(node.input.input);
      return sliceBatch(gatherBatch(b, topIndices(b, node.input.by, node.offset + node.count)), node.offset, node.offset + node.count);
    }
    if (node.kind === 'limit') {
      const b = await this.collect(node.input);
      return sliceBatch(b, node.offset, node.offset + node.count);
    }
    return this.collect(node);
  }

  /** All rows of a node in one batch. */
  async collect(node: BoundNode): Promise<Batch> {
    if (node.kind === 'sort' || node.kind === 'limit') return this.materialize(node);
    return concatBatches(node.schema, await this.collectBatches(node));
  }

  async collectBatches(node: BoundNode): Promise<Batch[]> {
    const results = await this.runPipeline(pipelineOf(node), { kind: 'collect' }, 'output');
    return results.flatMap((r) => r.batches.filter((b): b is Batch => b !== null));
  }
}

/** A task named in errors: "join-1 reduce task (partition 3, hot-key rest)". */
function taskLabel(m: Pick<TaskStats, 'stage' | 'kind' | 'partition' | 'split'>): string {
  return `${m.stage} ${m.kind} task (${m.kind === 'map' ? 'split' : 'partition'} ${m.partition}${m.split ? `, ${m.split}` : ''})`;
}

function withSeed(sink: TaskSink, seed: number): TaskSink {
  return sink.kind === 'partition' ? { ...sink, nullSeed: seed * 7919 } : sink;
}

