// The exchange: a node's rows hash-partitioned by map tasks into shuffle blocks, with the statistics the skew
// decisions read (rows and bytes per partition and map task, key sketches, what combiners did).
import type { EagerPlan } from '../agg/eager.js';
import type { Batch } from '../kernels/column.js';
import type { BoundNode } from '../plan/bound.js';
import type { PartitionSpec, TaskSketch } from '../shuffle/partition.js';
import { median } from '../skew/decide.js';
import { pipelineOf } from './physical.js';
import type { ShuffleStats } from './stats.js';
import { type Combine, type TaskResult, type TaskSink, withSeed } from './task.js';
import type { ExecContext } from './context.js';

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
}

/** What the map tasks (all, or those in [from, to)) wrote to partition p. */
export function blocksOf(s: ShuffleOutput, p: number, range: [number, number] | null = null): Batch[] {
  const tasks = range ? s.byTask.slice(range[0], range[1]) : s.byTask;
  return tasks.map((bs) => bs[p]).filter((b): b is Batch => b !== null);
}

/** An aggregate partition's blocks: combiners' states (or the rows, without combiners), and rows combiners passed through. */
export interface AggregateBlocks {
  blocks: Batch[];
  raw: Batch[];
}
export function aggregateBlocksOf(s: ShuffleOutput, ps: number[]): AggregateBlocks {
  const of = (raw: boolean) =>
    ps.flatMap((p) => s.byTask.flatMap((bs, t) => (s.rawTasks[t] === raw && bs[p] ? [bs[p]!] : [])));
  return { blocks: of(false), raw: of(true) };
}

/** Stands for a map task's missing block in a slice list (slices never point at it: it has no rows). */
export const EMPTY: Batch = { length: 0, columns: [] };

export async function shuffle(
  ex: ExecContext,
  node: BoundNode,
  spec: Omit<PartitionSpec, 'nullSeed'>,
  id: string,
  consumer: string,
  combine?: Combine,
  eager?: EagerPlan,
  collected?: Batch[],
): Promise<ShuffleOutput> {
  const { partitions } = spec;
  const sink: PartitionSink = { kind: 'partition', ...spec, nullSeed: 0 };
  // A side already collected (measured for a broadcast that did not fit) is partitioned from its rows.
  const results = collected
    ? await Promise.all(
        collected.map((b, i) =>
          ex.run(
            {
              source: { kind: 'batches', schema: node.schema, batches: [b] },
              ops: [],
              combine,
              sink: withSeed(sink, i),
            },
            { stage: consumer, kind: 'map', partition: i, source: node.id },
          ),
        ),
      )
    : await ex.runPipeline(pipelineOf(node), sink, consumer, combine, eager);
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
  ex.stats.shuffles.push(stats);
  return {
    byTask: results.map((r) => r.batches),
    mapBytes: results.map((r) => r.partitionBytes!),
    mapRows: results.map((r) => r.partitionRows!),
    sketches: results.flatMap((r) => (r.sketch ? [r.sketch] : [])),
    stats,
    rawTasks: results.map((r) => combine?.passRows === true && r.combine?.mode === 'pass-through'),
  };
}

/** The collected batches of tasks, in task order. */
export const batchesOf = (results: TaskResult[]) =>
  results.flatMap((r) => r.batches.filter((b): b is Batch => b !== null));
