// The exchange: a node's rows hash-partitioned by map tasks into shuffle blocks, with the statistics the skew
// decisions read (rows and bytes per partition and map task, key sketches, what combiners did).
import type { EagerPlan } from '../agg/eager.js';
import { type Batch, type Schema, emptyBatch } from '../kernels/column.js';
import type { BoundNode } from '../plan/bound.js';
import type { PartitionSpec, TaskSketch } from '../shuffle/partition.js';
import { median } from '../skew/decide.js';
import { blockBytes, packBlocks } from '../spill/block.js';
import type { Groups } from '../agg/groups.js';
import { type Pipeline, pipelineOf } from './pipeline.js';
import type { ShuffleStats } from './stats.js';
import { type Combine, type TaskResult, type TaskSink, withSeed } from './task.js';
import type { Analyze, Downstream, ExecContext } from './operator.js';

/**
 * A side read by a broadcast's `collect` (physical/join/broadcast.ts): its batches, when asked for each batch's groups
 * (see readGroupColumns), and the pipeline of the rest (over a scan's splits
 * not started when the cap was passed; null: the side was read whole).
 */
export interface Collected {
  batches: Batch[];
  groups?: Groups[];
  rest: Pipeline | null;
}

declare module './operator.js' {
  interface RunMetrics {
    /** a hash shuffle's partition sizes, skew test and combiners */
    exchange: ShuffleStats;
  }
}

/** The exchange's metrics into the statistics: each shuffle, in the order they ran. */
export const exchangeAnalyze: Analyze<never, ShuffleStats> = {
  run: (s, into) => {
    into.shuffles.push(s);
  },
};

type PartitionSink = Extract<TaskSink, { kind: 'partition' }>;

/** Map outputs of one side of a shuffle: byTask[t][p] is what map task t wrote to partition p. */
export interface ShuffleOutput {
  byTask: (Batch | null)[][];
  mapBytes: number[][];
  mapRows: number[][];
  sketches: TaskSketch[];
  stats: ShuffleStats;
  /** map tasks whose combiner passed their rows through as they are (agg/combiner.ts `passRows`) */
  rawTasks: boolean[];
  /** the map tasks' results (their metrics: a runtime join filter's rows tested and kept) */
  results?: TaskResult[];
}

/** What the map tasks (all, or those in [from, to)) wrote to partition p. */
export function blocksOf(s: ShuffleOutput, p: number, range: [number, number] | null = null): Batch[] {
  const tasks = range ? s.byTask.slice(range[0], range[1]) : s.byTask;
  return tasks.map((bs) => bs[p]).filter((b): b is Batch => b !== null);
}

/**
 * An aggregate partition's blocks: combiners' states (or the rows, without combiners), and rows combiners passed
 * through.
 */
export interface AggregateBlocks {
  blocks: Batch[];
  raw: Batch[];
  /** with several partitions: each one's blocks and raw blocks, in order (both lists partition by partition) */
  parts?: { blocks: number; raw: number }[];
}
export function aggregateBlocksOf(s: ShuffleOutput, ps: number[]): AggregateBlocks {
  const of = (raw: boolean, p: number) => s.byTask.flatMap((bs, t) => (s.rawTasks[t] === raw && bs[p] ? [bs[p]!] : []));
  const blocks: Batch[] = [],
    raw: Batch[] = [],
    parts: { blocks: number; raw: number }[] = [];
  for (const p of ps) {
    const b = of(false, p),
      r = of(true, p);
    blocks.push(...b);
    raw.push(...r);
    if (b.length + r.length > 0) parts.push({ blocks: b.length, raw: r.length });
  }
  return parts.length > 1 ? { blocks, raw, parts } : { blocks, raw };
}

/** Stands for a map task's missing block in a slice list (slices never point at it: it has no rows). */
export const EMPTY: Batch = { length: 0, columns: [] };

/**
 * Hash-partition a node's rows by `spec` (map tasks of its pipeline, or of the rows `read` already and their
 * rest), record the shuffle's statistics (`id`: `join-1.left`, `aggregate-2.input`) and return the blocks.
 */
export async function shuffle(
  ex: ExecContext,
  node: BoundNode,
  spec: Omit<PartitionSpec, 'nullSeed'>,
  id: string,
  consumer: string,
  combine?: Combine,
  eager?: EagerPlan,
  read?: Collected,
  from?: Pipeline,
): Promise<ShuffleOutput> {
  const { partitions } = spec;
  const sink: PartitionSink = { kind: 'partition', ...spec, nullSeed: 0 };
  // A side read already (measured for a broadcast that did not fit) is partitioned from its rows, its rest read.
  // `from`: the node's pipeline with operators put first (a runtime join filter, physical/join/filters.ts)
  const p = from ?? pipelineOf(node);
  const d: Downstream = { stage: consumer, sink, combine, eager };
  const results = read ? await runFromRead(ex, p, read, p.ops.length, node.schema, d) : await ex.execute(p, d);
  const partitionRows = new Array<number>(partitions).fill(0);
  const partitionBytes = new Array<number>(partitions).fill(0);
  for (const r of results) {
    r.partitionRows!.forEach((x, i) => {
      partitionRows[i] += x;
    });
    r.partitionBytes!.forEach((x, i) => {
      partitionBytes[i] += x;
    });
  }
  const total = partitionBytes.reduce((a, b) => a + b, 0);
  const stats: ShuffleStats = {
    id,
    partitions,
    partitionRows,
    partitionBytes,
    medianBytes: median(partitionBytes),
    thresholdBytes: ex.settings.skew.thresholdBytes,
    skewedPartitions: [],
    hotKeys: [],
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
  ex.report('exchange', stats);
  return {
    byTask: results.map((r) => r.batches),
    mapBytes: results.map((r) => r.partitionBytes!),
    mapRows: results.map((r) => r.partitionRows!),
    sketches: results.flatMap((r) => (r.sketch ? [r.sketch] : [])),
    stats,
    rawTasks: results.map((r) => combine?.passRows === true && r.combine?.mode === 'pass-through'),
    results,
  };
}

/** The collected batches of tasks, in task order. */
export const batchesOf = (results: TaskResult[]) =>
  results.flatMap((r) => r.batches.filter((b): b is Batch => b !== null));

/** Rows read to measure a side (physical/join/broadcast.ts) go on in tasks of at least this many bytes. */
const READ_TASK_BYTES = 1024 * 1024;

/**
 * A pipeline whose first rows were read already (`read`, measured for a broadcast): those rows go through
 * its operators from `at` on (`schema`: theirs), and so does the rest the pipeline `read.rest` makes.
 */
export async function runFromRead(
  ex: ExecContext,
  p: Pipeline,
  read: Collected,
  at: number,
  schema: Schema,
  d: Downstream,
): Promise<TaskResult[]> {
  const { sink, combine } = d;
  const ops = p.ops.slice(at);
  // at least one task, as a pipeline over no rows has (an aggregate without groups still emits its row)
  const rows = read.batches.length > 0 || read.rest ? read.batches : [emptyBatch(schema)];
  // batches packed into a few tasks a worker: q17 at SF 10 probed the 480 small batches of its semi join's
  // output (60K rows) in 480 tasks
  const bytes = rows.reduce((a, b) => a + blockBytes(b), 0);
  const chunks = packBlocks(rows, Math.max(READ_TASK_BYTES, bytes / (2 * ex.settings.workers)));
  const [fromRows, fromRest] = await Promise.all([
    Promise.all(
      chunks.map((bs, i) =>
        ex.run(
          { source: { kind: 'batches', schema, batches: bs }, ops, combine, sink: withSeed(sink, i) },
          { stage: d.stage, kind: 'map', partition: i, source: p.source.id },
        ),
      ),
    ),
    read.rest
      ? ex.execute(
          { ...read.rest, ops: [...read.rest.ops, ...ops], schema: p.schema },
          { ...d, eager: undefined, placement: false },
        )
      : [],
  ]);
  return [...fromRows, ...fromRest];
}
