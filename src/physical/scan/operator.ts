// The scan operator: a pipeline starting at a Parquet source, one map task per split (plan/map-splits.ts), run by
// the scheduler where `Downstream.placement` says.
import type { BoundNode } from '../../plan/bound.js';
import type { PhysicalOperator } from '../operator.js';
import type { ScanRead } from '../stats.js';
import { taskFigures } from '../explain-text.js';

type ScanNode = Extract<BoundNode, { kind: 'scan' }>;

export const scanOperator: PhysicalOperator<ScanNode, ScanRead> = {
  describe(src, x, depth, fused) {
    const files = new Set(src.splits.map((s) => s.path)).size;
    const rows = src.splits.reduce((s, f) => s + f.rows, 0);
    const columns = src.schema.map((f) => f.name).join(', ');
    x.line(
      depth,
      `${src.id}: scan ${src.source} [${columns}], ${files} file(s), ${rows} rows → ${src.splits.length} map ` +
        `task(s)${fused}`,
    );
  },
  execute: async (ctx, p, d) => (await ctx.mapTasks(p, d)).results,
  executeUntil: (ctx, p, d, stop) => ctx.mapTasks(p, d, stop),
  ran: taskFigures,
  analyze: {
    task: ({ read, masks }) => ({ ...(read ? { read } : {}), ...(masks ? { masks } : {}) }),
  },
};
