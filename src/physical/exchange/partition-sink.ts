// The partition sink: rows hash-partitioned by key for the next shuffle (shuffle/partition.ts), with the
// heavy-hitter sketch of the keys when asked. Rows a combiner passed through are keyed by the group columns.
import { partitionBatches } from '../../shuffle/partition.js';
import type { SinkKernel, TaskSink } from '../task.js';

type PartitionSink = Extract<TaskSink, { kind: 'partition' }>;

export const partitionKernel: SinkKernel<PartitionSink> = {
  held: () => true,
  sink(sink0, { batches, rows, outputRows, combine, task }) {
    // (the leading group columns the shuffle hashes: all of them, or those expected to determine the rest)
    const passed = combine?.mode === 'pass-through' && task.combine!.passRows;
    const sink = passed ? { ...sink0, keys: task.combine!.groupBy.slice(0, sink0.keys.length) } : sink0;
    const { blocks, rows: partitionRows, bytes: partitionBytes, sketch } = partitionBatches(batches, sink);
    return { batches: blocks, inputRows: rows, outputRows, partitionRows, partitionBytes, sketch, combine };
  },
};
