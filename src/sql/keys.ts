// Which equalities between two columns may become join keys: those whose types the plan's joins compare as SQL
// does (plan/bind.ts keyNorms). Any other equality (a float with an integer, a date with a timestamp) stays a
// condition, computed by the expression binder as SQL compares the two, or refused there with its position.
import { type DataType, isDecimal, isFloat, isInteger } from '../kernels/column.js';

const family = (t: DataType) => (isInteger(t) || isDecimal(t) ? 'exact' : isFloat(t) ? 'float' : t.id);

/**
 * Whether columns of these types are join keys of one kind: exact numbers, floats, strings, dates, timestamps.
 * A type the SQL planner does not know (a computed column) counts as `unknown` says.
 */
export function keyable(a: DataType | undefined, b: DataType | undefined, unknown = true): boolean {
  return !a || !b ? unknown : family(a) === family(b);
}
