// The coordinator's side of a sort (see sort/range.ts for the boundaries):
// sample the input, cut it into ranges, sort each range in its own task.
import { type Batch, concatBatches } from '../kernels/column.js';
import type { BoundNode } from '../plan/bound.js';
import { plannedWorkers } from '../plan/load.js';
import { median } from '../skew/decide.js';
import { blockBytes } from '../spill/block.js';
import { heldBytes } from '../spill/spiller.js';
import { pipelineOf } from '../exec/physical.js';
import { type Executor, withSeed } from '../exec/run.js';
import type { Combine, RowOp, TaskResult, TaskSink } from '../exec/task.js';
import { chooseBounds } from './range.js';

type SortNode = Extract<BoundNode, { kind: 'sort' }>;

/** Rows of each task's output sampled for a sort's boundaries. */
const SORT_SAMPLE_ROWS = 1000;
/**
 * Target size of a sort's range (smaller under a small budget: a range is
 * sorted in memory, its task holding the rows, their sort words and order, and
 * the sorted copy: about 3x the range).
 */
const SORT_RANGE_BYTES = 32 * 1024 * 1024;

/**
 * Most ranges of one sort: with ranges of a quarter of a task's share, the
 * cap binds only past MAX_RANGES x rangeBytes of input (1 GB budget, 2
 * workers: 4096 x 26 MB, about 100 GB); beyond it a range outgrows its share.
 */
const MAX_RANGES = 4096;

/**
 * A sort in parallel and out of core: the input's tasks return their rows
 * (held within the budget or spilled) and a sample; boundaries from the
 * sample cut the rows into ranges of about SORT_RANGE_BYTES (range tasks,
 * a shuffle like a hash one); each range is sorted by its own task, and
 * the ranges are emitted in order.
 */
export async function runSort(ex: Executor, node: SortNode, ops: RowOp[], sink: TaskSink, combine?: Combine): Promise<TaskResult[]> {
  const inputs = await ex.runPipeline(pipelineOf(node.input), { kind: 'collect', sample: SORT_SAMPLE_ROWS }, node.id);
  const samples = inputs.flatMap((r) => (r.sample ? [r.sample] : []));
  const inputBytes = inputs.reduce((a, r) => a + r.batches.reduce((x, b) => x + (b ? blockBytes(b) : 0), 0), 0);
  const rangeBytes = Math.min(SORT_RANGE_BYTES, ex.taskShare() / 4);
  const bounds = chooseBounds(concatBatches(node.schema, samples), node.by, inputBytes, rangeBytes, plannedWorkers(ex.settings), MAX_RANGES);
  const R = bounds.length + 1;
  const held = heldBytes(inputs.map((r) => r.batches));
  const parts = await Promise.all(inputs.filter((r) => r.batches.length > 0).map((r, i) => ex.run({
    source: { kind: 'batches', schema: node.schema, batches: r.batches as Batch[] }, ops: [],
    sink: { kind: 'range', by: node.by, bounds, nullSeed: i * 7919 },
  }, { stage: node.id, kind: 'map', partition: i, source: node.id })));
  ex.spill.release(held);
  const partitionRows = Array.from({ length: R }, (_, p) => parts.reduce((a, r) => a + r.partitionRows![p], 0));
  const partitionBytes = Array.from({ length: R }, (_, p) => parts.reduce((a, r) => a + r.partitionBytes![p], 0));
  ex.stats.shuffles.push({
    id: `${node.id}.range`, partitions: R, partitionRows, partitionBytes, medianBytes: median(partitionBytes),
    thresholdBytes: rangeBytes, skewedPartitions: [], hotKeys: [],
  });
  const ranges = Array.from({ length: R }, (_, p) => p).filter((p) => partitionRows[p] > 0);
  // started in range order: a streamed output takes them in that order
  const results = await Promise.all(ranges.map((p) => ex.run({
    source: { kind: 'sort', schema: node.schema, input: parts.map((r) => r.batches[p]).filter((b): b is Batch => b !== null), by: node.by },
    ops, combine, sink: withSeed(sink, p),
  }, { stage: node.id, kind: 'reduce', partition: p })));
  ex.spill.release(heldBytes(parts.map((r) => r.batches)));
  return results;
}
