// The coordinator's side of a sort (see shuffle/range.ts for the boundaries):
// cut the input into ranges by sampled boundaries (in the join's reduce tasks
// where the input is a shuffle join, physical/fused-ranges.ts; else by range tasks over
// the collected input), re-cut a range that came out far larger than
// planned, and sort runs of consecutive ranges in their own tasks.
import type { BoundNode } from '../../plan/bound.js';
import { plannedWorkers } from '../../plan/load.js';
import { median } from '../../skew/decide.js';
import { pipelineOf } from '../pipeline.js';
import type { Downstream, ExecContext, RangeRequest } from '../operator.js';
import { packBlocks } from '../../spill/block.js';
import { type RowOp, type TaskResult, type TaskSink, withSeed } from '../task.js';
import { heldBytes } from '../../spill/spiller.js';
import type { Batch } from '../../kernels/column.js';
import { type Ranges, boundsFromSamples, outputBytes, partitionByRanges, rangesOf } from '../range-shuffle.js';

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
 * A sort in parallel and out of core: the input is cut into ranges of about
 * SORT_RANGE_BYTES (held within the budget or spilled, like a hash
 * shuffle's blocks); runs of consecutive ranges of about a task's bytes are
 * sorted by their own task, and the runs are emitted in order.
 */
export async function runSort(
  ex: ExecContext,
  node: SortNode,
  ops: RowOp[],
  { sink, combine }: Downstream,
): Promise<TaskResult[]> {
  const taskBytes = Math.min(SORT_TASK_BYTES, ex.taskShare() / 4);
  const req: RangeRequest = {
    by: node.by,
    schema: node.schema,
    stage: node.id,
    rangeBytes: Math.min(SORT_RANGE_BYTES, taskBytes / RANGES_PER_TASK),
    minRanges: plannedWorkers(ex.settings),
    maxRanges: MAX_RANGES,
    // a hot value's rows dealt over several ranges; off with skew handling (the baseline `skewjoin bench` measures)
    spread: ex.settings.skew.enabled,
  };
  // A shuffle join below cuts its own output into ranges when it is asked to (join/stage.ts runShuffleJoin).
  const collect: TaskSink = { kind: 'collect', sample: SORT_SAMPLE_ROWS };
  const inputs = await ex.execute(pipelineOf(node.input), { stage: node.id, sink: collect, range: req });
  // the stage below cut its rows into ranges itself: its results are a range sink's, a block per range
  const cut = inputs.find((r) => r.partitionRows !== undefined)?.partitionRows?.length;
  let ranges: Ranges;
  if (cut !== undefined) {
    ranges = rangesOf(inputs, cut);
  } else {
    const samples = inputs.flatMap((r) => (r.sample ? [r.sample] : []));
    ranges = await partitionByRanges(
      ex,
      req,
      inputs.map((r) => r.batches),
      boundsFromSamples(req, samples, outputBytes(inputs)),
    );
  }
  const recut = await recutOversized(ex, req, ranges, taskBytes);
  const R = ranges.length;
  const partitionRows = ranges.map((x) => x.rows),
    partitionBytes = ranges.map((x) => x.bytes);
  ex.report('sort', {
    id: `${node.id}.range`,
    partitions: R,
    partitionRows,
    partitionBytes,
    medianBytes: median(partitionBytes),
    thresholdBytes: req.rangeBytes,
    skewedPartitions: [],
    hotKeys: [],
    partitionedBy: cut !== undefined ? 'join' : 'tasks',
    recutRanges: recut,
  });
  const held = heldBytes(ranges.map((x) => x.blocks));
  // started in range order: a streamed output takes them in that order
  const results = await Promise.all(
    rangeRuns(partitionBytes, partitionRows, taskBytes).map(({ first, ranges: run }) => {
      const input: Batch[] = [],
        counts: number[] = [];
      for (const p of run) {
        input.push(...ranges[p].blocks);
        counts.push(ranges[p].blocks.length);
      }
      return ex.run(
        {
          source: { kind: 'sort', schema: node.schema, input, by: node.by, ranges: counts },
          ops,
          combine,
          sink: withSeed(sink, first),
        },
        { stage: node.id, kind: 'reduce', partition: first },
      );
    }),
  );
  ex.memory.release(held);
  ex.memory.discard(ranges.map((x) => x.blocks));
  return results;
}

/**
 * Ranges far larger than planned (more than a sort task's bytes: the
 * boundaries came from a sample of some of the rows, see physical/fused-ranges.ts, or
 * one value holds them) are cut again, in place, by boundaries sampled from
 * their own rows: a hot value among them is then dealt over several ranges.
 * Returns how many ranges were cut.
 */
async function recutOversized(ex: ExecContext, req: RangeRequest, ranges: Ranges, taskBytes: number): Promise<number> {
  // far larger: also several times the mean range (under a tiny budget every range passes a task's bytes)
  const mean = ranges.reduce((a, r) => a + r.bytes, 0) / Math.max(1, ranges.length);
  const limit = Math.max(taskBytes, RECUT_FACTOR * mean);
  // cut into ranges of the mean's size (not of rangeBytes: under a tiny budget that is a row or two)
  const sub = { ...req, minRanges: 2, rangeBytes: Math.max(req.rangeBytes, mean) };
  let recut = 0;
  for (let p = ranges.length - 1; p >= 0; p--) {
    const r = ranges[p];
    if (r.bytes <= limit || r.rows < 2) continue;
    recut++;
    const held = heldBytes([r.blocks]);
    const inputs = await Promise.all(
      packBlocks(r.blocks, taskBytes).map((chunk, i) =>
        ex.run(
          {
            source: { kind: 'batches', schema: req.schema, batches: chunk },
            ops: [],
            sink: { kind: 'collect', sample: SORT_SAMPLE_ROWS },
          },
          { stage: req.stage, kind: 'map', partition: p, split: `range ${p} recut ${i + 1}`, source: req.stage },
        ),
      ),
    );
    ex.memory.release(held);
    const outputs = inputs.map((x) => x.batches);
    const samples = inputs.flatMap((x) => (x.sample ? [x.sample] : []));
    ranges.splice(p, 1, ...(await partitionByRanges(ex, sub, outputs, boundsFromSamples(sub, samples, r.bytes))));
  }
  return recut;
}

/** A range this many times the mean range (and above a task's bytes) is cut again. */
const RECUT_FACTOR = 4;

/**
 * Consecutive non-empty ranges grouped into runs of at most `taskBytes` (a larger range alone); a run is named by its
 * first range.
 */
export function rangeRuns(bytes: number[], rows: number[], taskBytes: number): { first: number; ranges: number[] }[] {
  const runs: { first: number; ranges: number[] }[] = [];
  let run: number[] = [],
    held = 0;
  for (let p = 0; p < bytes.length; p++) {
    if (rows[p] === 0) continue;
    if (run.length > 0 && held + bytes[p] > taskBytes) {
      runs.push({ first: run[0], ranges: run });
      run = [];
      held = 0;
    }
    run.push(p);
    held += bytes[p];
  }
  if (run.length > 0) runs.push({ first: run[0], ranges: run });
  return runs;
}
