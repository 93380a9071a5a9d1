// The range shuffle of a sort: boundaries from samples of the rows, and the
// rows cut into ranges by them, either by range tasks over rows already
// produced (partitionByRanges) or by the tasks that produce them (a range
// sink, see physical/fused-ranges.ts). Ranges are what the sort tasks read.
import { type Batch, concatBatches } from '../kernels/column.js';
import { blockBytes } from '../spill/block.js';
import { heldBytes } from '../spill/spiller.js';
import type { ExecContext, RangeRequest } from './operator.js';
import type { TaskResult } from './task.js';
import { chooseBounds } from '../shuffle/range.js';

/** The rows of each range, in range order (blocks held in memory or spilled). */
export type Ranges = { blocks: Batch[]; rows: number; bytes: number }[];

/** Bytes of the tasks' output blocks (in memory or in spill files). */
export const outputBytes = (results: Pick<TaskResult, 'batches'>[]): number =>
  results.reduce((a, r) => a + r.batches.reduce((x, b) => x + (b ? blockBytes(b) : 0), 0), 0);

/** Boundaries for `totalBytes` of rows from samples of them (none: one range). */
export function boundsFromSamples(req: RangeRequest, samples: Batch[], totalBytes: number): Batch {
  return chooseBounds(
    concatBatches(req.schema, samples),
    req.by,
    totalBytes,
    req.rangeBytes,
    req.minRanges,
    req.maxRanges,
  );
}

/** The ranges of range-sink results (batches[p]: a task's rows of range p). */
export function rangesOf(
  results: Pick<TaskResult, 'batches' | 'partitionRows' | 'partitionBytes'>[],
  R: number,
): Ranges {
  return Array.from({ length: R }, (_, p) => ({
    blocks: results.map((r) => r.batches[p]).filter((b): b is Batch => b !== null && b.length > 0),
    rows: results.reduce((a, r) => a + r.partitionRows![p], 0),
    bytes: results.reduce((a, r) => a + r.partitionBytes![p], 0),
  }));
}

/**
 * Range tasks over produced rows (each task's output cut by the boundaries); the rows' held bytes go back to the
 * budget.
 */
export async function rangeTasks(
  ex: ExecContext,
  req: RangeRequest,
  outputs: (Batch | null)[][],
  bounds: Batch,
  seed = 0,
): Promise<TaskResult[]> {
  const held = heldBytes(outputs);
  const parts = await Promise.all(
    outputs
      .map((bs) => bs.filter((b): b is Batch => b !== null))
      .filter((bs) => bs.length > 0)
      .map((batches, i) =>
        ex.run(
          {
            source: { kind: 'batches', schema: req.schema, batches },
            ops: [],
            sink: { kind: 'range', by: req.by, bounds, nullSeed: (seed + i) * 7919, spread: req.spread },
          },
          { stage: req.stage, kind: 'map', partition: seed + i, source: req.stage },
        ),
      ),
  );
  ex.memory.release(held);
  return parts;
}

/** partitionByRanges: rangeTasks' output as ranges. */
export async function partitionByRanges(
  ex: ExecContext,
  req: RangeRequest,
  outputs: (Batch | null)[][],
  bounds: Batch,
): Promise<Ranges> {
  return rangesOf(await rangeTasks(ex, req, outputs, bounds), bounds.length + 1);
}
