// Subqueries in WHERE and HAVING, decorrelated into joins: EXISTS and IN as
// semi joins, NOT EXISTS and NOT IN as anti joins (NOT IN with SQL's nulls:
// a null in the list or a null probe leaves no row true), scalar subqueries as
// an aggregate grouped by the correlation keys and joined on them, and one
// non-equality of a correlated EXISTS (q21's l_suppkey <> ...) as min/max per key.
import type { Predicate, QueryNode } from '../plan/spec.js';
import type { Expr, Select } from './ast.js';
import type { Expr as PExpr } from '../plan/spec.js';
import { exprKey } from './ast.js';
import { sqlError } from './lexer.js';
import { type Col, type Scope, children } from './scope.js';
import type { Correlation, Ctx, Rel } from './context.js';
import { filterNode } from './conditions.js';
import { keyable } from './keys.js';
import { Translator } from './translate.js';

/** A subquery condition ready to apply to the relation that has the columns it reads (`needs`). */
export interface Applied {
  needs: Set<string>;
  apply(cur: Rel): Rel;
  factor: number;
  /**
   * applied to its one table before the joins (a semi join, a scalar comparison); an anti join or a
   * min/max test waits until the joins have cut the rows it is applied to (q16, q21 as written by hand)
   */
  early: boolean;
  /** a correlated aggregate: its input may be cut to an enclosing table's keys (join-order.ts reduceBySemiJoin) */
  reduce?: { pairs: Correlation['pairs']; by(outer: QueryNode, on: [string, string][]): void };
}

/** Put a semi join with `outer` below the aggregate of a subquery's plan (under its projection and HAVING). */
function reduceAggregate(sub: Rel, outer: QueryNode, on: [string, string][]): void {
  let n: QueryNode = sub.node;
  while (n.op === 'project' || n.op === 'filter' || n.op === 'sort' || n.op === 'limit') n = n.input;
  if (n.op !== 'aggregate') return;
  n.input = { op: 'join', type: 'semi', left: n.input, right: outer, on };
}

const join = (type: 'inner' | 'left' | 'semi' | 'anti', cur: Rel, sub: Rel, on: [string, string][]): Rel => ({
  node: { op: 'join', type, left: cur.node, right: sub.node, on },
  cols: type === 'semi' || type === 'anti' ? cur.cols : [...cur.cols, ...sub.cols.map((c) => ({ ...c, hidden: true }))],
  rows: cur.rows,
  baseRows: cur.baseRows,
});

type Agg = { fn: 'min' | 'max' | 'count'; column?: string; as: string };

function aggregate(input: Rel, groupBy: string[], aggs: Agg[]): Rel {
  const aggregates = aggs.map((a) => (a.column ? a : { fn: a.fn, as: a.as }));
  const node: QueryNode = { op: 'aggregate', input: input.node, groupBy, aggregates };
  const cols: Col[] = [
    ...groupBy.map((g) => input.cols.find((c) => c.id === g)!),
    ...aggs.map((a) => ({ id: a.as, name: a.as, nullable: a.fn !== 'count' })),
  ];
  return { node, cols, rows: input.rows, baseRows: input.baseRows };
}

function newCorrelation(): Correlation {
  return { pairs: [], residual: [] };
}

/** Plan one WHERE/HAVING conjunct holding a subquery; `tr` translates the enclosing block's side. */
export function planSubqueryCond(ctx: Ctx, c: Expr, scope: Scope, tr: Translator): Applied {
  const neg = c.k === 'not' ? c.e : undefined;
  if (neg && (neg.k === 'exists' || neg.k === 'insub')) {
    return planSubqueryCond(ctx, { ...neg, not: !neg.not }, scope, tr);
  }
  if (c.k === 'exists') return existsCond(ctx, c.q, c.not, scope);
  if (c.k === 'insub') return inCond(ctx, c, scope, tr);
  if (c.k === 'cmp' && (c.r.k === 'subq' || c.l.k === 'subq')) return scalarCond(ctx, c, scope, tr);
  throw sqlError(
    c.pos,
    'this use of a subquery is not supported: EXISTS, IN and comparisons with a scalar subquery, ' +
      'joined to the rest of WHERE by AND',
  );
}

function needsOf(corr: Correlation, extra: string[] = []): Set<string> {
  return new Set([...corr.pairs.map((p) => p.outer), ...extra]);
}

function existsCond(ctx: Ctx, q: Select, not: boolean, scope: Scope): Applied {
  const corr = newCorrelation();
  const sub = ctx.planWhere(q, scope, corr);
  const on = corr.pairs.map((p) => [p.outer, p.inner] as [string, string]);
  if (corr.residual.length > 1) {
    throw sqlError(q.pos, 'a correlated EXISTS with more than one condition other than equality is not supported');
  }
  const needs = needsOf(corr);
  const res = corr.residual[0];
  if (res) {
    const ids = new Set<string>();
    // the enclosing side of the residual comparison: read after the join
    collectOuter(res.outer, scope, ids);
    for (const x of ids) needs.add(x);
  }
  if (on.length === 0 && !res) {
    // uncorrelated: one count, cross-joined
    return {
      needs,
      factor: 0.5,
      early: false,
      apply(cur) {
        const n = ctx.namer.fresh('exists_count');
        const agg = aggregate(sub, [], [{ fn: 'count', as: n }]);
        const j = join('inner', cur, agg, []);
        return { ...j, node: filterNode(j.node, [{ column: n, cmp: not ? '=' : '>', value: 0 }]) };
      },
    };
  }
  if (!res) return { needs, factor: 0.5, early: !not, apply: (cur) => join(not ? 'anti' : 'semi', cur, sub, on) };
  return {
    needs,
    factor: 0.5,
    early: false,
    apply(cur) {
      // exists x <> v  <=>  min(x) <> v or max(x) <> v;  x < v <=> min(x) < v;  x > v <=> max(x) > v
      const mn = ctx.namer.fresh('min_' + res.inner),
        mx = ctx.namer.fresh('max_' + res.inner);
      const agg = aggregate(
        sub,
        corr.pairs.map((p) => p.inner),
        [
          { fn: 'min', column: res.inner, as: mn },
          { fn: 'max', column: res.inner, as: mx },
        ],
      );
      const j = join(not ? 'left' : 'inner', cur, agg, on);
      const tr = new Translator(scope, ctx.params);
      const v = tr.expr(res.outer);
      const cmp = (col: string, op: string): Predicate => ({ left: { column: col }, cmp: op as '<', right: v });
      const op = res.op;
      const exists: Predicate =
        op === '!=' ? { or: [cmp(mn, '!='), cmp(mx, '!=')] } : op === '<' || op === '<=' ? cmp(mn, op) : cmp(mx, op);
      const where: Predicate = not
        ? { or: [{ column: mn, isNull: true }, { expr: v, isNull: true }, { not: exists }] }
        : exists;
      return { ...j, node: filterNode(j.node, [where]) };
    },
  };
}

function collectOuter(e: Expr, scope: Scope, out: Set<string>) {
  if (e.k === 'col') {
    out.add(scope.resolve(e).col.id);
    return;
  }
  for (const v of Object.values(e)) {
    if (v && typeof v === 'object' && 'k' in v) collectOuter(v as Expr, scope, out);
  }
}

/** The enclosing side of an IN as a column: a plain column, or one computed onto the relation. */
interface Probe {
  id: string;
  nullable: boolean;
  compute?: (cur: Rel) => Rel;
  needs: string[];
}

function probeColumn(ctx: Ctx, e: Expr, scope: Scope, tr: Translator): Probe {
  if (e.k === 'col' && !tr.subst.has(exprKey(e))) {
    const c = scope.resolve(e).col;
    return { id: c.id, nullable: c.nullable, needs: [c.id] };
  }
  const id = ctx.namer.fresh('in_key');
  const ids = new Set<string>();
  collectOuter(e, scope, ids);
  return {
    id,
    nullable: true,
    needs: [...ids],
    compute: (cur) => ({
      ...cur,
      node: { op: 'project', input: cur.node, columns: [...cur.cols.map((c) => c.id), { name: id, expr: tr.expr(e) }] },
      cols: [...cur.cols, { id, name: id, nullable: true, hidden: true }],
    }),
  };
}

function inCond(ctx: Ctx, c: Extract<Expr, { k: 'insub' }>, scope: Scope, tr: Translator): Applied {
  const corr = newCorrelation();
  const sub = ctx.planSelect(c.q, scope, corr);
  const visible = sub.cols.filter((x) => !x.hidden);
  if (visible.length !== 1) throw sqlError(c.q.pos, `the subquery of IN must return one column, not ${visible.length}`);
  if (corr.residual.length) throw sqlError(c.q.pos, 'a correlated IN subquery supports equalities only');
  const v = visible[0];
  const probe = probeColumn(ctx, c.e, scope, tr);
  const on: [string, string][] = [[probe.id, v.id], ...corr.pairs.map((p) => [p.outer, p.inner] as [string, string])];
  const needs = needsOf(corr, probe.needs);
  return {
    needs,
    factor: c.not ? 0.9 : 0.5,
    early: !c.not,
    apply(cur0) {
      const cur = probe.compute ? probe.compute(cur0) : cur0;
      if (!c.not) return join('semi', cur, sub, on);
      const anti = join('anti', cur, sub, on);
      if (!probe.nullable && !v.nullable) return anti;
      // x NOT IN S is true only when S holds no null and x is not null, or S is empty (per correlation key)
      const n = ctx.namer.fresh('in_rows'),
        nv = ctx.namer.fresh('in_values');
      const keys = corr.pairs.map((p) => p.inner);
      const counts = aggregate(sub, keys, [
        { fn: 'count', as: n },
        { fn: 'count', column: v.id, as: nv },
      ]);
      const j = join(
        keys.length ? 'left' : 'inner',
        anti,
        counts,
        corr.pairs.map((p) => [p.outer, p.inner]),
      );
      const where: Predicate = {
        or: [
          { column: n, isNull: true },
          { column: n, cmp: '=', value: 0 },
          {
            and: [
              { left: { column: nv }, cmp: '=', right: { column: n } },
              { column: probe.id, isNull: false },
            ],
          },
        ],
      };
      return { ...j, node: filterNode(j.node, [where]) };
    },
  };
}

interface Scalar {
  sub: Rel;
  v: Col;
  corr: Correlation;
  isCount: boolean;
}

/** A scalar subquery: one column, one aggregate row (per correlation key when correlated). */
function planScalar(ctx: Ctx, subAst: Extract<Expr, { k: 'subq' }>, scope: Scope): Scalar {
  const corr = newCorrelation();
  const sub = ctx.planSelect(subAst.q, scope, corr);
  const visible = sub.cols.filter((x) => !x.hidden);
  if (visible.length !== 1) {
    throw sqlError(subAst.pos, `a scalar subquery must return one column, not ${visible.length}`);
  }
  if (corr.residual.length) throw sqlError(subAst.pos, 'a correlated scalar subquery supports equalities only');
  const q = subAst.q;
  const aggregated = q.items.some((i) => /"k":"call","name":"(count|sum|min|max|avg)"/.test(JSON.stringify(i.e)));
  if (!aggregated || q.groupBy.length > 0) {
    throw sqlError(
      subAst.pos,
      'a scalar subquery must be an aggregate without GROUP BY (one row), such as (SELECT max(x) FROM t)',
    );
  }
  const isCount = q.items[0].e.k === 'call' && q.items[0].e.name === 'count';
  return { sub, v: visible[0], corr, isCount };
}

/**
 * Join a scalar subquery's rows to `cur`: a missing key's value is null (an inner join drops it, as a
 * comparison in WHERE would), but count's is 0 (a left join and coalesce). `outerJoin`: keep every row.
 */
function joinScalar(cur: Rel, s: Scalar, outerJoin: boolean): { rel: Rel; value: PExpr } {
  const on = s.corr.pairs.map((p) => [p.outer, p.inner] as [string, string]);
  const left = on.length > 0 && (s.isCount || outerJoin);
  const value: PExpr =
    s.isCount && on.length ? { fn: 'coalesce', args: [{ column: s.v.id }, { value: 0 }] } : { column: s.v.id };
  return { rel: join(left ? 'left' : 'inner', cur, s.sub, on), value };
}

function scalarCond(ctx: Ctx, c: Extract<Expr, { k: 'cmp' }>, scope: Scope, tr: Translator): Applied {
  const subAst = (c.r.k === 'subq' ? c.r : c.l) as Extract<Expr, { k: 'subq' }>;
  const other = subAst === c.r ? c.l : c.r;
  const s = planScalar(ctx, subAst, scope);
  const ids = new Set<string>();
  collectOuter(other, scope, ids);
  const needs = needsOf(s.corr, [...ids]);
  return {
    needs,
    factor: 0.5,
    early: true,
    reduce: s.corr.pairs.length
      ? { pairs: s.corr.pairs, by: (outer, on) => reduceAggregate(s.sub, outer, on) }
      : undefined,
    apply(cur) {
      if (s.corr.pairs.length === 0 && c.op === '=' && other.k === 'col' && !tr.subst.has(exprKey(other))) {
        const o = scope.resolve(other).col;
        // a join key only where the plan's keys compare as SQL does (never a float with an exact number)
        if (keyable(o.type, s.v.type, false)) return join('inner', cur, s.sub, [[o.id, s.v.id]]);
      }
      const { rel, value } = joinScalar(cur, s, false);
      const t2 = new Translator(tr.scope, ctx.params, new Map([...tr.subst, [exprKey(subAst), value]]));
      return { ...rel, node: filterNode(rel.node, [t2.pred(c)]) };
    },
  };
}

/**
 * Scalar subqueries inside an expression of the select list: each joined to `cur` (every row kept)
 * and read as a column through `tr`'s substitutions.
 */
export function hoistScalars(ctx: Ctx, e: Expr, scope: Scope, cur: Rel, tr: Translator): Rel {
  const found: Extract<Expr, { k: 'subq' }>[] = [];
  const walk = (x: Expr) => {
    if (x.k === 'subq') {
      found.push(x);
      return;
    }
    if (x.k === 'exists' || x.k === 'insub') {
      const what = x.k === 'exists' ? 'EXISTS' : 'IN (SELECT ...)';
      throw sqlError(x.pos, `${what} is supported only as a condition of WHERE or HAVING`);
    }
    for (const c of children(x)) walk(c);
  };
  walk(e);
  for (const subAst of found) {
    const { rel, value } = joinScalar(cur, planScalar(ctx, subAst, scope), true);
    cur = rel;
    tr.subst.set(exprKey(subAst), value);
  }
  return cur;
}
