// The collect sink: the task's output batches go back to the coordinator (copied out of the Parquet module's
// memory, or into shared memory for a side to broadcast), with a sample of rows for a sort's boundaries, groups
// for a broadcast table, or encoded as Parquet row groups for the final stage of a Parquet output.
import { groupsOf } from '../../agg/aggregate.js';
import { shareBatch, sliceBatch } from '../../kernels/column.js';
import { sampleRows } from '../../shuffle/range-partition.js';
import type { SinkKernel, TaskSink } from '../task.js';
import { encodeOutput, encodesOutput } from './encode-output.js';

type CollectSink = Extract<TaskSink, { kind: 'collect' }>;

export const collectKernel: SinkKernel<CollectSink> = {
  // a sort's input (sampled for its boundaries) waits for the range tasks that cut it
  held: (sink) => sink.sample !== undefined && sink.sample > 0,
  sink(sink, { batches, rows, outputRows, release }) {
    let out = batches;
    // copied out of the module's memory (or the task's) once, with no loop in JS
    if (sink.share) out = out.map(shareBatch);
    // copies out of the module's memory (rows to encode are encoded from it, see encodeOutput)
    else if (release && !encodesOutput(sink, out)) out = out.map((b) => sliceBatch(b, 0, b.length));
    const sample = sink.sample ? sampleRows(out, sink.sample) : undefined;
    const groupBy = sink.groupBy,
      groups = groupBy ? out.map((b) => groupsOf(b, groupBy, undefined, true)) : undefined;
    // encoded before the scanned columns (views into the module's memory) are released
    return encodeOutput(sink, {
      batches: out,
      inputRows: rows,
      outputRows,
      ms: 0,
      ...(sample ? { sample } : {}),
      ...(groups ? { groups } : {}),
    });
  },
};
