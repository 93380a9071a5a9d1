// The row-wise operators of a task (filter, project, compute, and the families' own: a broadcast probe, a mark, a
// set operation's rows, their kernels given by physical/kernels.ts) fused into one function over batches;
// expressions are compiled once per task.
import { type Batch, gatherSelected, sliceBatch } from '../kernels/column.js';
import { selectRows } from '../expr/filter.js';
import { compileExpr, compileNarrow } from '../expr/compile.js';
import { compileFilter } from '../expr/select.js';
import { DENSE, carry, defer, materialize, selectionOf } from '../expr/deferred.js';
import { countFilter, noteTested, testBatch, worthTesting } from '../kernels/runtime-filter.js';
import type { FamilyRowOp, RowOp, RowOpKernels } from './task.js';

/**
 * The task's row-wise operators as one function over batches, one operator
 * after the other with nothing else materialized; expressions are compiled
 * here, once per task. A probe may turn a batch into several. A tee copies
 * the rows that reach it into `teed`. `family`: the kernels of the families' row operators.
 */
export function compileOps(
  family: RowOpKernels,
  ops: RowOp[],
  deferDense = false,
  sumOnly?: Set<number>,
  teed?: Batch[],
): (b: Batch) => Batch[] {
  const steps = ops.flatMap((op, k): ((b: Batch) => Batch | Batch[])[] => {
    if (op.kind === 'tee')
      return [
        (b0) => {
          const b = materialize(b0);
          // a copy: the rows may be views into the Parquet module's memory, released after the sink
          if (b.length > 0) teed?.push(sliceBatch(b, 0, b.length));
          return b;
        },
      ];
    if (op.kind === 'compute') {
      // columns only the combiner's sums read may come narrowed (agg/narrow.ts): known once a batch's width is;
      // not when a later operator may read them (a CASE over a product computed here: TPC-H q08's volume)
      const narrow = sumOnly && ops.slice(k + 1).every((o) => o.kind === 'project') ? sumOnly : null;
      let ks = narrow ? null : op.exprs.map(compileExpr);
      const add = (b: Batch): Batch => {
        ks ??= op.exprs.map((e, j) =>
          (narrow!.has(finalColumn(ops, k, b.columns.length + j)) ? compileNarrow : compileExpr)(e),
        );
        return { length: b.length, columns: [...b.columns, ...ks.map((f) => f(b))] };
      };
      return [
        (b) => {
          if (!selectionOf(b)) return add(b);
          try {
            return carry(b, add(b));
          } catch {
            return add(materialize(b));
          }
        },
      ];
    }
    if (op.kind === 'rtfilter') return [(b) => keepMatching(materialize(b), op)];
    if (op.kind === 'project')
      return ops[k - 1]?.kind === 'filter'
        ? []
        : [(b) => carry(b, { length: b.length, columns: op.indices.map((i) => b.columns[i]) })];
    if (op.kind !== 'filter') {
      const run = family[op.kind] as (b: Batch, op: FamilyRowOp) => Batch[];
      return [(b) => run(materialize(b), op)];
    }
    const pred = op.pred.kind === 'expr' ? compileFilter(op.pred.expr) : null;
    // a projection right after the filter (its pruned columns): only the columns kept are gathered
    const next = ops[k + 1],
      keep = next?.kind === 'project' ? next.indices : null;
    // only computed columns up to the combiner: a dense selection is carried, not gathered (expr/deferred.ts)
    const carried = deferDense && ops.slice(k + 1).every((o) => o.kind === 'project' || o.kind === 'compute');
    return [
      (b0) => {
        const b = materialize(b0);
        const { idx, n } = pred ? pred(b) : selectRows(b, op.pred);
        const cols = keep ? keep.map((i) => b.columns[i]) : b.columns;
        if (n === b.length) return { length: n, columns: cols };
        if (carried && n >= DENSE * b.length)
          return defer({ length: b.length, columns: cols }, { idx: idx.slice(0, n), n });
        return { length: n, columns: cols.map((c) => gatherSelected(c, idx, n)) };
      },
    ];
  });
  const from = (b: Batch, k0: number): Batch[] => {
    for (let k = k0; k < steps.length; k++) {
      const x = steps[k](b);
      if (!Array.isArray(x)) {
        b = x;
        continue;
      }
      return x.length === 1 ? from(x[0], k + 1) : x.flatMap((y) => from(y, k + 1));
    }
    return [b];
  };
  return (b) => from(b, 0);
}

/** The rows of a batch a runtime join filter keeps (all of them when it is left out on this thread). */
function keepMatching(b: Batch, op: Extract<RowOp, { kind: 'rtfilter' }>): Batch {
  const f = op.filter;
  if (b.length === 0) return b;
  if (!worthTesting(f)) {
    countFilter(f.id, b.length, b.length, true);
    return b;
  }
  const { out, kept } = testBatch(f, b, op.keys, op.norms);
  countFilter(f.id, b.length, kept);
  noteTested(f, b.length, kept);
  if (kept === b.length) return b;
  const idx = new Int32Array(kept + 1);
  for (let i = 0, j = 0; i < b.length; i++) {
    idx[j] = i;
    j += out[i];
  }
  return { length: kept, columns: b.columns.map((c) => gatherSelected(c, idx, kept)) };
}

/** Where column `p` after operator k ends up after the later projections (-1: dropped). */
function finalColumn(ops: RowOp[], k: number, p: number): number {
  for (let j = k + 1; j < ops.length && p >= 0; j++) {
    const o = ops[j];
    if (o.kind === 'project') p = o.indices.indexOf(p);
  }
  return p;
}
