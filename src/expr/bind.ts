// Type-checking the plan's expressions: each JSON expression or predicate
// becomes a typed BoundExpr, with implicit conversions as explicit casts and
// literals parsed for the type they meet. Every mistake is a PlanError with
// the JSON path of the offending field.
import { type Schema, isFloat } from '../kernels/column.js';
import type { Expr, Predicate } from '../plan/spec.js';
import { convertScalar } from './scalar.js';
import { bindFn } from './bind-fn.js';
import {
  type P,
  castTo,
  castable,
  comparable,
  describe,
  err,
  fn,
  isNullLit,
  lit,
  literal,
  need,
} from './bind-rules.js';

import { BOOL, type BoundExpr, isNum, parseTypeName, planTypeName, unify } from './types.js';

export { castTo };

type Operand = string | number | boolean | null | Expr;

export function bindExpr(e: Expr, schema: Schema, at: P): BoundExpr {
  if ('column' in e) {
    const i = schema.findIndex((f) => f.name === e.column);
    if (i < 0)
      throw err(
        [...at, 'column'],
        `column "${e.column}" not found in input; columns are: ${schema.map((f) => f.name).join(', ')}`,
      );
    return { k: 'col', col: i, type: schema[i].type, name: e.column };
  }
  if ('param' in e)
    throw err(
      [...at, 'param'],
      `parameter "${e.param}" has no value (parameters are replaced before the plan is bound)`,
    );
  if ('value' in e) {
    if (e.type === undefined) return literal(e.value, [...at, 'value']);
    const t = parseTypeName(e.type);
    if (!t) throw err([...at, 'type'], `unknown type "${e.type}"`);
    if (e.value === null) return lit(null, t);
    const src = literal(e.value, [...at, 'value']);
    const v = convertScalar(src.value, src.type, t);
    if (v === undefined)
      throw err([...at, 'value'], `value ${JSON.stringify(e.value)} cannot be read as ${planTypeName(t)}`);
    return lit(v, t);
  }
  if ('cast' in e) {
    const t = parseTypeName(e.to);
    if (!t) throw err([...at, 'to'], `unknown type "${e.to}"`);
    const arg = bindExpr(e.cast, schema, [...at, 'cast']);
    if (isNullLit(arg)) return lit(null, t);
    if (!castable(arg.type, t)) throw err([...at, 'cast'], `cannot cast ${describe(arg)} to ${planTypeName(t)}`);
    return castTo(arg, t, [...at, 'cast']);
  }
  if ('case' in e) {
    const whens = e.case.map((c, i) => bindPredicateExpr(c.when, schema, [...at, 'case', i, 'when']));
    const thens = e.case.map((c, i) => bindExpr(c.then, schema, [...at, 'case', i, 'then']));
    const els = e.else === undefined ? null : bindExpr(e.else, schema, [...at, 'else']);
    const all = els ? [...thens, els] : thens;
    const t = unify(all);
    if (t === null) throw err(at, `case branches do not share a type: ${all.map(describe).join(', ')}`);
    return {
      k: 'case',
      whens,
      type: t,
      thens: thens.map((x, i) => castTo(x, t, [...at, 'case', i, 'then'])),
      else: els && castTo(els, t, [...at, 'else']),
    };
  }
  return bindFn(e, schema, at, bindExpr);
}

function operand(v: Operand, schema: Schema, at: P): BoundExpr {
  if (v !== null && typeof v === 'object') return bindExpr(v, schema, at);
  return literal(v, at);
}

/** A predicate as a bool expression (SQL three-valued logic: null is not true). */
export function bindPredicateExpr(p: Predicate, schema: Schema, at: P): BoundExpr {
  if ('and' in p || 'or' in p) {
    const k = 'and' in p ? 'and' : 'or';
    const list = 'and' in p ? p.and : (p as { or: Predicate[] }).or;
    return fn(
      k,
      list.map((q, i) => bindPredicateExpr(q, schema, [...at, k, i])),
      BOOL,
      at,
    );
  }
  if ('not' in p) return fn('not', [bindPredicateExpr(p.not, schema, [...at, 'not'])], BOOL, at);
  if ('left' in p) {
    const l = bindExpr(p.left, schema, [...at, 'left']),
      r = bindExpr(p.right, schema, [...at, 'right']);
    return fn(p.cmp, comparable(l, r, [...at, 'left'], [...at, 'right'], p.cmp), BOOL, at);
  }
  const subjAt: P = 'column' in p ? [...at, 'column'] : [...at, 'expr'];
  const x = 'column' in p ? bindExpr({ column: p.column }, schema, at) : bindExpr(p.expr, schema, subjAt);
  if ('isNull' in p) {
    const e = fn('is_null', [x], BOOL, at);
    return p.isNull ? e : fn('not', [e], BOOL, at);
  }
  if ('cmp' in p) {
    const v = operand(p.value as Operand, schema, [...at, 'value']);
    return fn(p.cmp, comparable(x, v, subjAt, [...at, 'value'], p.cmp), BOOL, at);
  }
  if ('in' in p) {
    const vals = p.in.map((v, i) => operand(v as Operand, schema, [...at, 'in', i]));
    const items = vals.map((v, i) => comparable(x, v, subjAt, [...at, 'in', i], 'in')[1]);
    const t = unify([x, ...items]);
    if (t === null) throw err([...at, 'in'], `"in" values do not fit ${describe(x)}`);
    const sameAll = isNum(t) && !isFloat(t) ? items : items.map((v, i) => castTo(v, t, [...at, 'in', i]));
    return fn('$in', [isNum(t) && !isFloat(t) ? x : castTo(x, t, subjAt), ...sameAll], BOOL, at);
  }
  if ('like' in p) {
    const pat = operand(p.like, schema, [...at, 'like']);
    need(x.type.id === 'utf8' || isNullLit(x), 'like', 'a string', x, subjAt);
    need(pat.type.id === 'utf8' || isNullLit(pat), 'like', 'a string pattern', pat, [...at, 'like']);
    return fn('$like', [x, pat], BOOL, at);
  }
  const [lo, hi] = p.between.map((v, i) => operand(v, schema, [...at, 'between', i]));
  const [a1, b1] = comparable(x, lo, subjAt, [...at, 'between', 0], 'between');
  const [a2, b2] = comparable(x, hi, subjAt, [...at, 'between', 1], 'between');
  return fn('and', [fn('>=', [a1, b1], BOOL, at), fn('<=', [a2, b2], BOOL, at)], BOOL, at);
}
