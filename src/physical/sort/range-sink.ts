// The range sink: rows range-partitioned by sort keys against sorted boundaries (shuffle/range.ts), for a sort's
// range tasks.
import type { SinkKernel, TaskSink } from '../task.js';
import { rangePartition } from '../../shuffle/range-partition.js';

type RangeSink = Extract<TaskSink, { kind: 'range' }>;

export const rangeKernel: SinkKernel<RangeSink> = {
  held: () => true,
  sink(sink, { batches, rows, outputRows }) {
    const {
      blocks,
      rows: partitionRows,
      bytes: partitionBytes,
    } = rangePartition(batches, sink.by, sink.bounds, sink.nullSeed, sink.spread !== false);
    return { batches: blocks, inputRows: rows, outputRows, partitionRows, partitionBytes };
  },
};
