// How a range condition is searched once a side is chosen to be sorted (the shape, each side's operands, their
// common scale): shared by the range join (physical/join/range.ts) and the keyed band join (physical/join/band*.ts),
// on the coordinator and in the tasks.
import type { BoundExpr } from '../../expr/types.js';
import type { RangeShape } from '../../kernels/range-join.js';
import type { Side } from './decide.js';
import { type Keys, commonScale } from './range-keys.js';

/**
 * How a bound is searched with `built` sorted: the shape, the built side's operands (`a`, and for intervals `b`),
 * the probing side's (`x`, and around `y`), and the common scale of their keys. Also the keyed band join's
 * (physical/join/band.ts), per key.
 */
export interface Search {
  shape: RangeShape;
  built: BoundExpr[];
  probing: BoundExpr[];
  scale: number;
}

/**
 * A range condition's bound (range-condition.ts RangeCondition['bound'], of the same shape): written out here so that
 * the tasks do not load the condition's file, which knows the join node.
 */
export type SearchBound =
  | { kind: 'one'; ineq: { left: BoundExpr; right: BoundExpr; op: '<' | '<=' | '>' | '>=' } }
  | {
      kind: 'interval';
      point: Side;
      value: BoundExpr;
      lo: BoundExpr;
      loStrict: boolean;
      hi: BoundExpr;
      hiStrict: boolean;
    };

export function searchOf(bound: SearchBound, built: Side): Search {
  if (bound.kind === 'one') {
    const q = bound.ineq,
      scale = commonScale([q.left, q.right]);
    const [be, pe] = built === 'right' ? [q.right, q.left] : [q.left, q.right];
    // the probing value `x` against a built key `a`, as `x op a`
    const op = built === 'right' ? q.op : ({ '<': '>', '<=': '>=', '>': '<', '>=': '<=' } as const)[q.op];
    const shape: RangeShape =
      op === '<' || op === '<=' ? { kind: 'above', strict: op === '<' } : { kind: 'below', strict: op === '>' };
    return { shape, built: [be], probing: [pe], scale };
  }
  const scale = commonScale([bound.value, bound.lo, bound.hi]);
  const strict = { loStrict: bound.loStrict, hiStrict: bound.hiStrict };
  if (built === bound.point)
    return { shape: { kind: 'around', ...strict }, built: [bound.value], probing: [bound.lo, bound.hi], scale };
  return { shape: { kind: 'within', ...strict }, built: [bound.lo, bound.hi], probing: [bound.value], scale };
}

/** Where a key is not exact the bounds hold only as <= (the filter above decides). */
export function relaxed(s: RangeShape): RangeShape {
  return 'strict' in s ? { ...s, strict: false } : { ...s, loStrict: false, hiStrict: false };
}

/** Rows valid in every key (null: all). */
export function validIn(ks: (Keys | undefined)[], n: number): Uint8Array | null {
  const vs = ks.flatMap((k) => (k?.valid ? [k.valid] : []));
  if (vs.length === 0) return null;
  const out = new Uint8Array(n).fill(1);
  for (const v of vs) for (let i = 0; i < n; i++) out[i] &= v[i];
  return out;
}
