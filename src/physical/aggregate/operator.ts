// The aggregate operator: `--explain` from the same rules that execution applies (aggregate/stage.ts
// preAggregation: eager aggregation below a join, or combiners), and execution.
import type { BoundNode } from '../../plan/bound.js';
import type { PhysicalOperator } from '../operator.js';
import { partitionsFor } from '../pipeline.js';
import { overJoin, preAggregation, runAggregate } from './stage.js';

type AggregateNode = Extract<BoundNode, { kind: 'aggregate' }>;

export const aggregateOperator: PhysicalOperator<AggregateNode> = {
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
    x.line(depth, `${src.id}: aggregate by [${by.join(', ')}] ${aggs}, ${P} reduce task(s) at most${how}${fused}`);
    x.line(depth + 1, `shuffle ${src.id}.input: hash on [${by.join(', ')}], ${P} partition(s)`);
    x.walk(src.input, depth + 2);
  },
  execute: (ctx, p, d) => runAggregate(ctx, p.source, p.ops, d),
};
