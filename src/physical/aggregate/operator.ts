// The aggregate operator: `--explain` from the same rules that execution applies (aggregate/stage.ts
// preAggregation: eager aggregation below a join, or combiners), and execution.
import type { BoundNode } from '../../plan/bound.js';
import type { AggregateStats } from '../../skew/aggregate.js';
import type { PhysicalOperator } from '../operator.js';
import { partitionsFor } from '../pipeline.js';
import { overJoin, preAggregation, runAggregate } from './stage.js';
import { taskFigures } from '../explain-text.js';

type AggregateNode = Extract<BoundNode, { kind: 'aggregate' }>;

/** An aggregate's skewed partitions and how they were split, or that it was computed eagerly below its join. */
type AggregateReport = { split: AggregateStats } | { eager: string };

declare module '../operator.js' {
  interface RunMetrics {
    aggregate: AggregateReport;
  }
}

export const aggregateOperator: PhysicalOperator<AggregateNode, never, AggregateReport> = {
  describe(src, x, depth, fused) {
    const P = src.groupBy.length ? partitionsFor(src, x.settings) : 1;
    const by = src.groupBy.map((k) => src.input.schema[k].name);
    const pre = preAggregation(src, x.settings);
    const how =
      pre === 'eager'
        ? ` (eager when a sample shows join keys repeating on both sides: each side of ${overJoin(src).input.id} ` +
          `pre-aggregated by its join key)`
        : pre === 'combiners'
          ? ' (combiners before the shuffle)'
          : '';
    const aggs = src.aggs.map((a) => `${a.fn}→${a.as}`).join(', ');
    // a lead (plan/eager-push.ts): grouped by the leading columns, the others checked to hold one value a group
    const lead = src.lead ? by.slice(0, src.lead) : by;
    const led = src.lead
      ? `; groups found by [${lead.join(', ')}], the other group columns checked to hold one value in each (else grouped by all)`
      : '';
    x.line(
      depth,
      `${src.id}: aggregate by [${by.join(', ')}] ${aggs}, ${P} reduce task(s) at most${how}${led}${fused}`,
    );
    x.line(depth + 1, `shuffle ${src.id}.input: hash on [${lead.join(', ')}], ${P} partition(s)`);
    x.walk(src.input, depth + 2);
  },
  execute: (ctx, p, d) => runAggregate(ctx, p.source, p.ops, d),
  ran: taskFigures,
  analyze: {
    run: (m, into) => {
      if ('eager' in m) into.eager.push(m.eager);
      else into.aggregates.push(m.split);
    },
  },
};
