// Which equalities between two columns may become join keys: those whose types the plan's joins compare as SQL
// does (plan/bind.ts keyNorms; a float with an exact number as floats). Any other equality (a date with a
// timestamp) stays a condition, computed by the expression binder as SQL compares the two, or refused there with
// its position.
import { type DataType, isDecimal, isFloat, isInteger, typeName } from '../kernels/column.js';
import type { PlanError } from '../errors.js';
import type { Expr } from './ast.js';
import { sqlTypeError } from './positions.js';

// numbers of any kind: a float against an exact number joins as floats (plan/bind.ts casts the exact side)
const family = (t: DataType) => (isInteger(t) || isDecimal(t) || isFloat(t) ? 'number' : t.id);

/**
 * Whether columns of these types are join keys of one kind: numbers, strings, dates, timestamps.
 * A type the SQL planner does not know (a computed column) counts as `unknown` says.
 */
export function keyable(a: DataType | undefined, b: DataType | undefined, unknown = true): boolean {
  return !a || !b ? unknown : family(a) === family(b);
}

const typeText = (t: DataType | undefined) => (t ? typeName(t).replace('date32', 'date') : 'an unknown type');

/** An equality that must be a join key (an outer join's, a correlation's) between columns of two kinds. */
export function keyTypes(c: Expr, a: DataType | undefined, b: DataType | undefined): PlanError {
  return sqlTypeError(
    c.pos,
    `"=" compares ${typeText(a)} with ${typeText(b)}: they do not join as keys; CAST one side`,
  );
}
