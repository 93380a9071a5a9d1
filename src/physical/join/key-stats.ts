// The keyStats sink: rows with a non-null key and their distinct keys, no rows returned (a sample of a join side,
// to decide on eager aggregation).
import { groupRows } from '../../agg/groups.js';
import { concatBatches } from '../../kernels/column.js';
import { buildKeys } from '../../kernels/keys.js';
import type { SinkKernel, TaskSink } from '../task.js';

type KeyStatsSink = Extract<TaskSink, { kind: 'keyStats' }>;

export const keyStatsKernel: SinkKernel<KeyStatsSink> = {
  held: () => false,
  sink(sink, { batches, rows, outputRows }) {
    const all = concatBatches(batches[0]?.columns.map((c) => ({ name: '', type: c.type })) ?? [], batches);
    let keyRows = 0,
      distinct = 0;
    if (all.length > 0) {
      const keys = buildKeys(all, sink.keys, sink.norms);
      const g = groupRows(keys);
      const nulls = keys.anyNull;
      for (let i = 0; i < all.length; i++) if (nulls === null || !nulls[i]) keyRows++;
      for (let k = 0; k < g.nGroups; k++) if (nulls === null || !nulls[g.first[k]]) distinct++;
    }
    return { batches: [], inputRows: rows, outputRows, keyStats: { rows: keyRows, distinct } };
  },
};
