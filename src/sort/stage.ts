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
 * Target size of a sort task's rows (smaller under a small budget: the task
 * holds its rows, their sort words and order, and the sorted copy: about 3x).
 */
const SORT_TASK_BYTES = 32 * 1024 * 1024;
/**
 * Target size of a range (at most an eighth of a task's): a task sorts its
 * ranges one at a time, and the gather in sort order is a random read of the
 * range's rows, several times cheaper a row when they fit the cache (on 50M
 * joined rows, ranges of 26 MB made the gather most of the sort's time).
 */
const SORT_RANGE_BYTES = 1024 * 1024;
const RANGES_PER_TASK = 8;

/**
 * Most ranges of one sort: the cap binds past MAX_RANGES x SORT_RANGE_BYTES
 * of input (4 GB); beyond it ranges grow, and past MAX_RANGES x taskBytes
 * (1 GB budget, 2 workers: 4096 x 26 MB, about 100 GB) one outgrows its task's share.
 */
const MAX_RANGES = 4096;

/**
 * A sort in parallel and out of core: the input's tasks return their rows
 * (held within the budget or spilled) and a sample; boundaries from the
 * sample cut the rows into ranges of about SORT_RANGE_BYTES (range tasks,
 * a shuffle like a hash one); runs of consecutive ranges of about a task's
 * bytes are sorted by their own task, and the runs are emitted in order.
 */
export async function runSort(ex: Executor, node: SortNode, ops: RowOp[], sink: TaskSink, combine?: Combine): Promise<TaskResult[]> {
  const inputs = await ex.runPipeline(pipelineOf(node.input), { kind: 'collect', sample: SORT_SAMPLE_ROWS }, node.id);
  const samples = inputs.flatMap((r) => (r.sample ? [r.sample] : []));
  const inputBytes = inputs.reduce((a, r) => a + r.batches.reduce((x, b) => x + (b ? blockBytes(b) : 0), 0), 0);
  const taskBytes = Math.min(SORT_TASK_BYTES, ex.taskShare() / 4);
  const rangeBytes = Math.min(SORT_RANGE_BYTES, taskBytes / RANGES_PER_TASK);
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
  // started in range order: a streamed output takes them in that order
  const results = await Promise.all(rangeRuns(partitionBytes, partitionRows, taskBytes).map(({ first, ranges }) => {
    const input: Batch[] = [], counts: number[] = [];
    for (const p of ranges) {
      const blocks = parts.map((r) => r.batches[p]).filter((b): b is Batch => b !== null);
      input.push(...blocks);
      counts.push(blocks.length);
    }
    return ex.run({ source: { kind: 'sort', schema: node.schema, input, by: node.by, ranges: counts }, ops, combine, sink: withSeed(sink, first) },
      { stage: node.id, kind: 'reduce', partition: first });
  }));
  ex.spill.release(heldBytes(parts.map((r) => r.batches)));
  return results;
}

/** Consecutive non-empty ranges grouped into runs of at most `taskBytes` (a larger range alone); a run is named by its first range. */
export function rangeRuns(bytes: number[], rows: number[], taskBytes: number): { first: number; ranges: number[] }[] {
  const runs: { first: number; ranges: number[] }[] = [];
  let run: number[] = [], held = 0;
  for (let p = 0; p < bytes.length; p++) {
    if (rows[p] === 0) continue;
    if (run.length > 0 && held + bytes[p] > taskBytes) { runs.push({ first: run[0], ranges: run }); run = []; held = 0; }
    run.push(p);
    held += bytes[p];
  }
  if (run.length > 0) runs.push({ first: run[0], ranges: run });
  return runs;
}
