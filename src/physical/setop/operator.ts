// The set operations' pipeline sources: a union of all rows runs each input's pipeline with the operators above
// the union appended (the inputs already converted to the union's types), all for the same consumer, their
// tasks' results in input order; a literal table is one task over its rows. Distinct unions, INTERSECT and
// EXCEPT were compiled onto these, aggregates and filters when the plan was bound (plan/bind-setops.ts).
import { type Batch, concatBatches } from '../../kernels/column.js';
import { compileExpr } from '../../expr/compile.js';
import type { BoundNode } from '../../plan/bound.js';
import type { PhysicalOperator } from '../operator.js';
import { pipelineOf } from '../pipeline.js';
import { taskFigures } from '../explain-text.js';

type UnionNode = Extract<BoundNode, { kind: 'union' }>;
type ValuesNode = Extract<BoundNode, { kind: 'values' }>;

export const unionOperator: PhysicalOperator<UnionNode> = {
  describe(src, x, depth, fused) {
    x.line(depth, `${src.id}: union of all rows of ${src.inputs.length} inputs${fused}`);
    for (const n of src.inputs) x.walk(n, depth + 1);
  },
  async execute(ctx, p, d) {
    // a sort's range request is answered by one pipeline's tasks: not passed on
    const down = { ...d, range: undefined, eager: undefined };
    const results = await Promise.all(
      p.source.inputs.map((n) => {
        const q = pipelineOf(n);
        return ctx.execute(
          { ...q, ops: [...q.ops, ...p.ops], fused: [...q.fused, ...p.fused], schema: p.schema },
          down,
        );
      }),
    );
    return results.flat();
  },
  /** no metrics of its own: its tasks' statistics are the scheduler's */
  ran: taskFigures,
  analyze: {},
};

/** A literal table's rows: each cell's expression evaluated once. */
function valuesBatch(node: ValuesNode): Batch {
  const one: Batch = { length: 1, columns: [] };
  const rows = node.rows.map((r) => ({ length: 1, columns: r.map((e) => compileExpr(e)(one)) }));
  return concatBatches(node.schema, rows);
}

export const valuesOperator: PhysicalOperator<ValuesNode> = {
  describe(src, x, depth, fused) {
    x.line(depth, `${src.id}: ${src.rows.length} literal row(s) (on the coordinator)${fused}`);
  },
  async execute(ctx, p, { sink, combine, stage }) {
    const src = p.source;
    return [
      await ctx.run(
        { source: { kind: 'batches', schema: src.schema, batches: [valuesBatch(src)] }, ops: p.ops, combine, sink },
        { stage, kind: 'map', partition: 0, source: src.id },
      ),
    ];
  },
  /** no metrics of its own: its tasks' statistics are the scheduler's */
  ran: taskFigures,
  analyze: {},
};
