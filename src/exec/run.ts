// The coordinator: runs pipelines as tasks on the worker pool, collects the
// map-side shuffle statistics, builds the reduce tasks, and materializes
// sort and limit results.
import { ExecutionError } from '../errors.js';
import { type Batch, type Schema, concatBatches, gatherBatch, sliceBatch } from '../kernels/column.js';
import { sortIndices } from '../kernels/sort.js';
import type { PartitionSpec } from '../shuffle/partition.js';
import type { Settings } from '../plan/load.js';
import { normFor } from '../agg/aggregate.js';
import { type Pipeline, defaultPartitions, pipelineOf, scanBytes } from './physical.js';
import { runOnPool } from './pool.js';
import type { ShuffleStats, Stats, TaskStats } from './stats.js';
import { medianOf } from './stats.js';
import { type Combine, type RowOp, type TaskResult, type TaskSink, type TaskSpec, runTask } from './task.js';
import { combinable, partialSchema } from '../agg/partial.js';
import type { BoundNode } from '../plan/bound.js';

type PartitionSink = Extract<TaskSink, { kind: 'partition' }>;

/** Map outputs of one side of a shuffle: blocks[p] holds one batch per map task that wrote to p. */
interface ShuffleOutput { blocks: Batch[][]; stats: ShuffleStats }

export class Executor {
  readonly stats: Stats = { wallMs: 0, shuffles: [], tasks: [] };
  private shuffledBytes = 0;

  constructor(readonly settings: Settings) {}

  private async run(task: TaskSpec, meta: Omit<TaskStats, 'rows' | 'outputRows' | 'ms'>): Promise<TaskResult> {
    const r = task.source.kind === 'batches' && task.sink.kind === 'collect'
      ? await runTask(task)
      : await runOnPool(this.settings.workers, task);
    this.stats.tasks.push({ ...meta, rows: r.inputRows, outputRows: r.outputRows, ms: r.ms });
    return r;
  }

  partitionsFor(node: BoundNode): number {
    return this.settings.partitions ?? defaultPartitions(scanBytes(node), this.settings.workers);
  }

  /** Run a pipeline to its end; each task's result in task order. */
  async runPipeline(p: Pipeline, sink: TaskSink, consumer: string, combine?: Combine): Promise<TaskResult[]> {
    const src = p.source;
    switch (src.kind) {
      case 'scan':
        return Promise.all(src.splits.map((s, i) => this.run(
          { source: { kind: 'scan', path: s.path, rowGroups: s.rowGroups, wholeFile: s.wholeFile, fields: src.schema }, ops: p.ops, combine, sink: withSeed(sink, i) },
          { stage: consumer, kind: 'map', partition: i, source: src.id },
        )));
      case 'join':
        return this.runJoin(src, p.ops, sink, combine);
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
    node: BoundNode, spec: Omit<PartitionSpec, 'nullSeed'>, id: string, consumer: string, combine?: Combine,
  ): Promise<ShuffleOutput> {
    const { partitions } = spec;
    const sink: PartitionSink = { kind: 'partition', ...spec, nullSeed: 0 };
    const results = await this.runPipeline(pipelineOf(node), sink, consumer, combine);
    const blocks: Batch[][] = Array.from({ length: partitions }, () => []);
    const partitionRows = new Array<number>(partitions).fill(0);
    const partitionBytes = new Array<number>(partitions).fill(0);
    for (const r of results) {
      r.batches.forEach((b, i) => { if (b) blocks[i].push(b); });
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
      medianBytes: medianOf(partitionBytes), thresholdBytes: this.settings.skew.thresholdBytes,
      skewedPartitions: [], hotKeys: [],
    };
    this.stats.shuffles.push(stats);
    return { blocks, stats };
  }

  private async runJoin(node: Extract<BoundNode, { kind: 'join' }>, ops: RowOp[], sink: TaskSink, combine?: Combine): Promise<TaskResult[]> {
    const P = this.partitionsFor(node);
    const [l, r] = await Promise.all([
      this.shuffle(node.left, { keys: node.leftKeys, norms: node.leftNorms, partitions: P, spreadNulls: true }, `${node.id}.left`, node.id),
      this.shuffle(node.right, { keys: node.rightKeys, norms: node.rightNorms, partitions: P, spreadNulls: true }, `${node.id}.right`, node.id),
    ]);
    const tasks: { p: number; bytes: number }[] = [];
    for (let p = 0; p < P; p++) {
      if (reduceNeeded(node.type, l.stats.partitionRows[p], r.stats.partitionRows[p])) {
        tasks.push({ p, bytes: l.stats.partitionBytes[p] + r.stats.partitionBytes[p] });
      }
    }
    tasks.sort((a, b) => b.bytes - a.bytes); // largest first
    const results = await Promise.all(tasks.map(({ p }) => this.run({
      source: {
        kind: 'join', type: node.type, leftSchema: node.left.schema, rightSchema: node.right.schema,
        left: l.blocks[p], right: r.blocks[p], leftKeys: node.leftKeys, rightKeys: node.rightKeys,
        leftNorms: node.leftNorms, rightNorms: node.rightNorms,
      },
      ops, combine, sink: withSeed(sink, p),
    }, { stage: node.id, kind: 'reduce', partition: p })));
    return results;
  }

  private async runAggregate(node: Extract<BoundNode, { kind: 'aggregate' }>, ops: RowOp[], sink: TaskSink, combine?: Combine): Promise<TaskResult[]> {
    const inSchema = node.input.schema;
    const P = node.groupBy.length === 0 ? 1 : this.partitionsFor(node);
    const g = node.groupBy.length;
    // With combiners, map tasks ship partial states keyed by their leading g columns.
    const pre: Combine | undefined = this.settings.combiners && combinable(node.aggs)
      ? { groupBy: node.groupBy, aggs: node.aggs, schema: inSchema }
      : undefined;
    const shuffledSchema = pre ? partialSchema(inSchema, node.groupBy, node.aggs) : inSchema;
    const keys = pre ? Array.from({ length: g }, (_, i) => i) : node.groupBy;
    const norms = keys.map((i) => normFor(shuffledSchema[i].type));
    const s = await this.shuffle(node.input, { keys, norms, partitions: P, spreadNulls: false }, `${node.id}.input`, node.id, pre);
    const tasks: number[] = [];
    for (let p = 0; p < P; p++) if (s.stats.partitionRows[p] > 0 || g === 0) tasks.push(p);
    tasks.sort((a, b) => s.stats.partitionBytes[b] - s.stats.partitionBytes[a]);
    return Promise.all(tasks.map((p) => this.run({
      source: {
        kind: 'aggregate', mode: pre ? 'final' : 'raw', schema: shuffledSchema, input: s.blocks[p],
        groupBy: keys, aggs: node.aggs, outSchema: node.schema,
      },
      ops, combine, sink: withSeed(sink, p),
    }, { stage: node.id, kind: 'reduce', partition: p })));
  }

  /** Run a node to one batch on the coordinator (sort and limit need all rows). */
  async materialize(node: BoundNode): Promise<Batch> {
    if (node.kind === 'sort') {
      const b = await this.collect(node.input);
      return gatherBatch(b, sortIndices(b, node.by));
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

/** Whether a join partition can produce rows, given the rows of each side. */
export function reduceNeeded(type: string, leftRows: number, rightRows: number): boolean {
  switch (type) {
    case 'inner': case 'semi': return leftRows > 0 && rightRows > 0;
    case 'left': case 'anti': return leftRows > 0;
    case 'right': return rightRows > 0;
    default: return leftRows > 0 || rightRows > 0;
  }
}

function withSeed(sink: TaskSink, seed: number): TaskSink {
  return sink.kind === 'partition' ? { ...sink, nullSeed: seed * 7919 } : sink;
}

export type { Schema };
