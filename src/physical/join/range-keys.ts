// A range join's keys: one side's operand (a column, or the cast the comparison applies to it) evaluated over the
// side's rows and read as float64 in an order-preserving way, exact numbers at one common scale. `exact`: every
// key is its value (no 64-bit integer past 2^53, no NaN): the join's bounds are then the comparisons themselves;
// otherwise they hold only as <= and the filter above still decides (kernels/range-join.ts).
import { compileExpr } from '../../expr/compile.js';
import { isExact, scaleOf } from '../../expr/types.js';
import type { BoundExpr } from '../../expr/types.js';
import { bigAt, exactNums } from '../../expr/vector.js';
import type { Batch } from '../../kernels/column.js';
import { pow10 } from '../../kernels/decimal.js';

export interface Keys {
  keys: Float64Array;
  /** 0 where the operand is null (never matches) */
  valid: Uint8Array | null;
  exact: boolean;
}

const SAFE = 2 ** 53;

/** The common scale of the compared operands (exact numbers; 0 for the other types). */
export const commonScale = (es: BoundExpr[]): number =>
  Math.max(0, ...es.map((e) => (isExact(e.type) ? scaleOf(e.type) : 0)));

/** `e` over `b`'s rows as keys, exact numbers multiplied to `scale`. */
export function rangeKeys(b: Batch, e: BoundExpr, scale: number): Keys {
  const c = compileExpr(e)(b);
  const n = b.length,
    id = c.type.id;
  let exact = true;
  let keys: Float64Array;
  if (id === 'float32' || id === 'float64') {
    keys = Float64Array.from(c.values as Float32Array | Float64Array);
    // NaN sorts above every number (kernels/data-type.ts floatOrder): as +Infinity, then no longer exact
    for (let i = 0; i < n; i++)
      if (keys[i] !== keys[i]) {
        keys[i] = Infinity;
        exact = false;
      }
  } else {
    const wide = id === 'int64' || id === 'uint64' || id === 'timestamp' || id === 'decimal';
    keys = wide ? exactNums(c) : Float64Array.from(c.values as Int32Array);
    const j = isExact(c.type) ? scale - scaleOf(c.type) : 0;
    // a power of ten past 10^22 is not a double: those keys are scaled as bigints
    const f = j > 22 ? Number.NaN : 10 ** j,
      F = pow10(j);
    for (let i = 0; i < n; i++) {
      let k = keys[i];
      if (c.valid !== null && c.valid[i] === 0) k = 0;
      else if (k !== k || f !== f) {
        // past 2^53: the exact scaled value's nearest double (rounding once keeps the order, not always equality)
        k = Number(bigAt(c, i) * F);
        if (k > SAFE || k < -SAFE) exact = false;
      } else if (j > 0) {
        k *= f;
        if (k > SAFE || k < -SAFE) exact = false;
      }
      keys[i] = k;
    }
  }
  return { keys, valid: c.valid, exact };
}
