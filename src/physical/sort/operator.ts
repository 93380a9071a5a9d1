// The sort operator: `--explain` and execution (sort/stage.ts: ranges by sampled boundaries, or cut by a shuffle
// join below, physical/fused-ranges.ts).
import type { BoundNode } from '../../plan/bound.js';
import type { PhysicalOperator } from '../operator.js';
import type { ShuffleStats } from '../stats.js';
import { runSort } from './stage.js';
import { taskFigures } from '../explain-text.js';

type SortNode = Extract<BoundNode, { kind: 'sort' }>;

declare module '../operator.js' {
  interface RunMetrics {
    /** a sort's range shuffle */
    sort: ShuffleStats;
  }
}

export const sortOperator: PhysicalOperator<SortNode, never, ShuffleStats> = {
  describe(src, x, depth, fused) {
    const by = src.by
      .map((k) => `${src.schema[k.col].name}${k.desc ? ' desc' : ''}${k.nullsFirst ? ' nulls first' : ''}`)
      .join(', ');
    x.line(
      depth,
      `${src.id}: sort by ${by} (ranges by sampled boundaries, a task per run of consecutive ranges)${fused}`,
    );
    x.walk(src.input, depth + 1);
  },
  execute: (ctx, p, d) => runSort(ctx, p.source, p.ops, d),
  ran: taskFigures,
  analyze: {
    run: (s, into) => {
      into.shuffles.push(s);
    },
  },
};
