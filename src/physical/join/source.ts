// The join kernel: a shuffle join's task (one partition or several, a map range, a hot key's piece, a grace piece,
// a cross join's chunk). Streamed a probe block at a time where it can (join/stream.ts); else both sides are
// concatenated and joined at once (eager aggregation, and combiners the streamed form cannot serve).
import { concatBatches, gather } from '../../kernels/column.js';
import { hashJoin } from '../../kernels/join.js';
import { buildKeys } from '../../kernels/keys.js';
import { eagerStates } from '../../agg/eager.js';
import { partialAggregateJoin, partialSchema } from '../../agg/partial.js';
import type { JoinPath } from '../stats.js';
import type { SourceKernel } from '../task.js';
import { joinMetrics } from './metrics.js';
import { type JoinSource, streamJoin } from './stream.js';

export const joinKernel: SourceKernel<JoinSource> = {
  inputs: (src) => [...src.left, ...src.right],
  withInputs: (src, bs) => ({ ...src, left: bs.slice(0, src.left.length), right: bs.slice(src.left.length) }),
  produce(src, { combine, cut }) {
    if (!src.eager) {
      const streamed = streamJoin(src, combine, cut);
      if (streamed) return streamed;
    }
    const l = concatBatches(src.leftSchema, src.left);
    const r = concatBatches(src.rightSchema, src.right);
    const lk = buildKeys(l, src.leftKeys, src.leftNorms);
    const rk = buildKeys(r, src.rightKeys, src.rightNorms);
    const m = hashJoin(src.type, lk, rk);
    const metrics = joinMetrics({ path: 'concatenated', build: 'right', matchChunks: 1 } satisfies JoinPath);
    const rows = l.length + r.length;
    if (src.eager)
      return { batches: [eagerStates(l, r, m.left, m.right, m.n, src.eager)], rows, combined: true, metrics };
    if (combine) {
      const schema = partialSchema(combine.schema, combine.groupBy, combine.aggs);
      const b = partialAggregateJoin(l, r, m.left, m.right, m.n, src.type, combine.groupBy, combine.aggs, schema);
      if (b) return { batches: [b], rows, combined: true, metrics };
    }
    const cols = l.columns.map((c) => gather(c, m.left, m.n));
    if (src.type !== 'semi' && src.type !== 'anti') for (const c of r.columns) cols.push(gather(c, m.right, m.n));
    return { batches: [{ length: m.n, columns: cols }], rows, metrics };
  },
};
