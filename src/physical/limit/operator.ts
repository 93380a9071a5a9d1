// The limit operator: its rows materialized on the coordinator (limit/stage.ts: top-k over a sort, else the first
// rows of its input streamed in order), then one task runs the operators above over them.
import type { BoundNode } from '../../plan/bound.js';
import type { PhysicalOperator } from '../operator.js';
import { limitRows } from './stage.js';
import { taskFigures } from '../explain-text.js';

type LimitNode = Extract<BoundNode, { kind: 'limit' }>;

export const limitOperator: PhysicalOperator<LimitNode> = {
  describe(src, x, depth, fused) {
    x.line(
      depth,
      `${src.id}: limit ${src.count}${src.offset ? ` offset ${src.offset}` : ''} (on the coordinator)${fused}`,
    );
    x.walk(src.input, depth + 1);
  },
  async execute(ctx, p, { sink, combine, stage }) {
    const src = p.source;
    const b = await limitRows(ctx, src);
    return [
      await ctx.run(
        { source: { kind: 'batches', schema: src.schema, batches: [b] }, ops: p.ops, combine, sink },
        { stage, kind: 'map', partition: 0, source: src.id },
      ),
    ];
  },
  /** no metrics of its own: its tasks' statistics are the scheduler's */
  ran: taskFigures,
  analyze: {},
};
