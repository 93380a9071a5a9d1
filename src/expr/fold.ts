// Constant folding: a subexpression that reads no column (`date_add(DATE, 1,
// 'year')`, `DISCOUNT - 0.01`) is computed once when a task compiles its
// expressions and becomes a literal, instead of a column of equal values
// computed again for every batch.
import type { Batch, Column } from '../kernels/column.js';
import type { BoundExpr } from './types.js';
import { scalarAt } from './vector.js';

const NO_ROWS_READ: Batch = { length: 1, columns: [] };

type Evaluate = (e: BoundExpr, b: Batch) => Column;

/**
 * `e` with every constant subexpression replaced by its value. `evaluate`
 * compiles and runs one (the compiler passes itself); a subexpression whose
 * evaluation fails (an overflow, say) is left as it is, so the error is
 * raised where the unfolded expression would raise it.
 */
export function foldConstants(e: BoundExpr, evaluate: Evaluate): BoundExpr {
  switch (e.k) {
    case 'col':
    case 'lit':
      return e;
    case 'cast': {
      const arg = foldConstants(e.arg, evaluate);
      return arg.k === 'lit' ? fold({ ...e, arg }, evaluate) : { ...e, arg };
    }
    case 'fn': {
      const args = e.args.map((a) => foldConstants(a, evaluate));
      const out = { ...e, args };
      return args.every((a) => a.k === 'lit') ? fold(out, evaluate) : out;
    }
    case 'case': {
      const whens = e.whens.map((a) => foldConstants(a, evaluate)),
        thens = e.thens.map((a) => foldConstants(a, evaluate));
      const els = e.else && foldConstants(e.else, evaluate);
      const out = { ...e, whens, thens, else: els };
      return [...whens, ...thens, ...(els ? [els] : [])].every((a) => a.k === 'lit') ? fold(out, evaluate) : out;
    }
  }
}

function fold(e: BoundExpr, evaluate: Evaluate): BoundExpr {
  try {
    return { k: 'lit', value: scalarAt(evaluate(e, NO_ROWS_READ), 0), type: e.type };
  } catch {
    return e;
  }
}
