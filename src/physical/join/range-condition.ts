// Which keyless joins run as range joins (physical/join/range.ts): an inner join without keys whose filter right
// above compares a column of one side with a column of the other by <, <=, > or >= (BETWEEN binds to two of them).
// Pure, from the join node and the row operators fused above it: --explain and execution call the same function.
import { isNum } from '../../expr/types.js';
import type { BoundExpr } from '../../expr/types.js';
import type { BoundPredicate } from '../../plan/bound.js';
import type { RowOp } from '../task.js';
import type { Side } from './decide.js';
import type { JoinNode } from './tasks.js';

type Cmp = '<' | '<=' | '>' | '>=';
const CMPS = new Set<string>(['<', '<=', '>', '>=']);

/** One side's operand: a column of that side (or a cast of one), its index in the side's own schema. */
type Operand = BoundExpr;

/** An inequality conjunct as `left op right`, each operand over its own side's columns. */
interface Inequality {
  left: Operand;
  right: Operand;
  op: Cmp;
}

type RangeBound =
  | { kind: 'one'; ineq: Inequality }
  /** the `point` side's value between the other side's `lo` and `hi` */
  | {
      kind: 'interval';
      point: Side;
      value: Operand;
      lo: Operand;
      loStrict: boolean;
      hi: Operand;
      hiStrict: boolean;
    };

export interface RangeCondition {
  bound: RangeBound;
  /** the index in `ops` of the filter the bound came from */
  at: number;
  /** that filter's other conjuncts (null: none) */
  rest: BoundPredicate | null;
  /** the conjuncts used, for --explain and the statistics ("ts >= start_ts and ts < end_ts") */
  text: string;
}

/** The conjuncts of a predicate, `and`s flattened (a bound expression's too). */
function conjuncts(p: BoundPredicate, out: BoundPredicate[] = []): BoundPredicate[] {
  if (p.kind === 'and') for (const q of p.preds) conjuncts(q, out);
  else if (p.kind === 'expr' && p.expr.k === 'fn' && p.expr.fn === 'and')
    for (const e of p.expr.args) conjuncts({ kind: 'expr', expr: e }, out);
  else out.push(p);
  return out;
}

/** The types a range join compares: numbers, dates and timestamps (not strings or booleans). */
const rangeType = (e: BoundExpr) => isNum(e.type) || e.type.id === 'date32' || e.type.id === 'timestamp';

/** The side a column or a cast of one reads (`nl`: the left side's columns), and the operand on that side's schema. */
function operandOf(e: BoundExpr, nl: number): { side: Side; e: Operand } | null {
  if (e.k === 'col') return e.col < nl ? { side: 'left', e } : { side: 'right', e: { ...e, col: e.col - nl } };
  if (e.k === 'cast' && (e.arg.k === 'col' || e.arg.k === 'cast')) {
    const a = operandOf(e.arg, nl);
    return a && { side: a.side, e: { ...e, arg: a.e } };
  }
  return null;
}

const FLIP: Record<Cmp, Cmp> = { '<': '>', '<=': '>=', '>': '<', '>=': '<=' };

/** A conjunct comparing one side with the other, as `left op right`; null for any other. */
function inequalityOf(p: BoundPredicate, nl: number): Inequality | null {
  if (p.kind !== 'expr' || p.expr.k !== 'fn' || !CMPS.has(p.expr.fn) || p.expr.args.length !== 2) return null;
  const [a, b] = p.expr.args.map((x) => operandOf(x, nl));
  if (!a || !b || a.side === b.side || !rangeType(a.e) || !rangeType(b.e)) return null;
  const op = p.expr.fn as Cmp;
  return a.side === 'left' ? { left: a.e, right: b.e, op } : { left: b.e, right: a.e, op: FLIP[op] };
}

/** Two operands alike (casts compared by their types, not by where they stand in the plan). */
function same(a: BoundExpr, b: BoundExpr): boolean {
  if (a.k === 'col' && b.k === 'col') return a.col === b.col;
  if (a.k === 'cast' && b.k === 'cast') return JSON.stringify(a.type) === JSON.stringify(b.type) && same(a.arg, b.arg);
  return false;
}

/** From the `point` side's view: the other side's operand as its lower or upper bound, and whether strictly. */
function boundOf(q: Inequality, point: Side): { point: Operand; other: Operand; upper: boolean; strict: boolean } {
  const op = point === 'left' ? q.op : FLIP[q.op];
  const [p, o] = point === 'left' ? [q.left, q.right] : [q.right, q.left];
  return { point: p, other: o, upper: op === '<' || op === '<=', strict: op === '<' || op === '>' };
}

/**
 * The range condition of a keyless inner join from the filter right above it (runtime filters before it skipped),
 * or null: an interval (a value of one side between two bounds of the other) where the conjuncts make one, else
 * the first inequality.
 */
export function rangeCondition(node: JoinNode, ops: readonly RowOp[]): RangeCondition | null {
  if (node.type !== 'inner' || node.leftKeys.length > 0) return null;
  let at = 0;
  while (ops[at]?.kind === 'rtfilter') at++;
  const f = ops[at];
  if (f?.kind !== 'filter') return null;
  const nl = node.left.schema.length;
  const cs = conjuncts(f.pred);
  const ineqs = cs.map((c) => inequalityOf(c, nl));
  const names = (e: BoundExpr, side: Side): string =>
    e.k === 'col' ? node.schema[e.col + (side === 'left' ? 0 : nl)].name : e.k === 'cast' ? names(e.arg, side) : '?';
  const textOf = (q: Inequality) => `${names(q.left, 'left')} ${q.op} ${names(q.right, 'right')}`;
  const result = (bound: RangeBound, used: number[]): RangeCondition => {
    const rest = cs.filter((_, i) => !used.includes(i));
    return {
      bound,
      at,
      rest: rest.length === 0 ? null : rest.length === 1 ? rest[0] : { kind: 'and', preds: rest },
      text: used.map((i) => textOf(ineqs[i]!)).join(' and '),
    };
  };
  for (let i = 0; i < ineqs.length; i++) {
    const qi = ineqs[i];
    if (!qi) continue;
    for (let j = i + 1; j < ineqs.length; j++) {
      const qj = ineqs[j];
      if (!qj) continue;
      for (const point of ['left', 'right'] as const) {
        const a = boundOf(qi, point),
          b = boundOf(qj, point);
        if (a.upper === b.upper || !same(a.point, b.point)) continue;
        const [lo, hi] = a.upper ? [b, a] : [a, b];
        const bound: RangeBound = {
          kind: 'interval',
          point,
          value: a.point,
          lo: lo.other,
          loStrict: lo.strict,
          hi: hi.other,
          hiStrict: hi.strict,
        };
        return result(bound, [i, j]);
      }
    }
  }
  const first = ineqs.findIndex((q) => q !== null);
  return first < 0 ? null : result({ kind: 'one', ineq: ineqs[first]! }, [first]);
}
