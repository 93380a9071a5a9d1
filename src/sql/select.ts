// One SELECT block: FROM and WHERE (from.ts and join-order.ts, with subquery conditions from
// subquery.ts), then GROUP BY and aggregates, HAVING, the select list,
// DISTINCT, ORDER BY and LIMIT, as plan nodes over unique column ids.
import type { Expr as PExpr, QueryNode } from '../plan/spec.js';
import { type Expr, type FromItem, type Select, exprKey } from './ast.js';
import { AGGREGATES, aggregateBySql } from '../agg/functions.js';
import { type Pos, sqlError } from './lexer.js';
import { type Col, Scope, children, isAggregateCall, refsOf } from './scope.js';
import type { Correlation, Ctx, Rel } from './context.js';
import { filterNode, splitAnd } from './conditions.js';
import { planFromItem } from './from.js';
import { type Base, joinGraph } from './join-order.js';
import { type Applied, hoistScalars, planSubqueryCond } from './subquery.js';
import { Translator } from './translate.js';
import { keyTypes, keyable } from './keys.js';
import { tagPos } from './positions.js';
import { planSetOp, planValues } from './setops.js';
import { windowBlock, windowsIn, withAliases } from './window.js';

/** What a SELECT without FROM reads, as in DuckDB and PostgreSQL: one row of no columns it could name. */
function oneRow(pos: Pos): FromItem {
  const values = [[{ k: 'num' as const, text: '0', pos }]];
  const q: Select = { with: [], distinct: false, items: [], from: [], groupBy: [], orderBy: [], pos, values };
  return { k: 'sub', q, alias: '$one', cols: ['$one'], pos };
}

/** FROM and WHERE of a block; conditions on an enclosing block's columns go to `corr`. */
export function planWhere(
  ctx: Ctx,
  q: Select,
  parent: Scope | undefined,
  corr?: Correlation,
): { rel: Rel; scope: Scope } {
  const bases: Base[] = [];
  const conds: Expr[] = [];
  for (const f of q.from.length ? q.from : [oneRow(q.pos)]) planFromItem(ctx, f, bases, conds, parent);
  if (q.from.length === 0) bases[0].rel.cols = bases[0].rel.cols.map((c) => ({ ...c, hidden: true }));
  const scope = new Scope(
    bases.flatMap((b) => b.rel.cols),
    parent,
  );
  const owner = new Map<string, number>();
  bases.forEach((b, i) => b.rel.cols.forEach((c) => owner.set(c.id, i)));
  const tr = new Translator(scope, ctx.params);
  const plain: Expr[] = [];
  const onTop: Applied[] = [];
  for (const c of [...conds, ...splitAnd(q.where)]) {
    const refs = refsOf(c, scope);
    if (refs.agg) throw sqlError(c.pos, 'aggregates are not allowed in WHERE; use HAVING');
    if (refs.sub) {
      const a: Applied = planSubqueryCond(ctx, c, scope, tr);
      const rels = new Set([...a.needs].map((x) => owner.get(x)));
      if (a.early && rels.size === 1 && !rels.has(undefined)) {
        const b = bases[[...rels][0]!];
        b.applies.push(a);
        b.factor *= a.factor;
      } else onTop.push(a);
      continue;
    }
    if (refs.outer.size > 0) {
      correlate(c, scope, corr);
      continue;
    }
    plain.push(c);
  }
  return { rel: joinGraph(ctx, bases, plain, scope, onTop), scope };
}

/** A condition on an enclosing block's columns: `inner = outer` is a key pair, one other comparison a residual. */
function correlate(c: Expr, scope: Scope, corr: Correlation | undefined): void {
  const side = (e: Expr) => refsOf(e, scope);
  if (corr && c.k === 'cmp') {
    const l = side(c.l),
      r = side(c.r);
    const flip: Record<string, string> = { '=': '=', '!=': '!=', '<': '>', '<=': '>=', '>': '<', '>=': '<=' };
    for (const [inner, outer, op] of [
      [c.l, c.r, c.op],
      [c.r, c.l, flip[c.op]],
    ] as [Expr, Expr, string][]) {
      const ri = inner === c.l ? l : r,
        ro = inner === c.l ? r : l;
      if (inner.k !== 'col' || ri.outer.size > 0 || ro.local.size > 0) continue;
      const id = scope.resolve(inner).col.id;
      if (op === '=' && outer.k === 'col') {
        const [ti, to] = [scope.resolve(inner).col.type, scope.resolve(outer).col.type];
        if (!keyable(ti, to)) throw keyTypes(c, ti, to);
        corr.pairs.push({ inner: id, outer: scope.resolve(outer).col.id });
        return;
      }
      corr.residual.push({ inner: id, op, outer });
      return;
    }
  }
  throw sqlError(
    c.pos,
    'this condition on a column of the enclosing query is not supported: ' +
      'use an equality (inner column = outer column) joined by AND',
  );
}

/** Aggregate calls of an expression, not inside subqueries. */
function aggregatesIn(e: Expr, out: Map<string, Extract<Expr, { k: 'call' }>>): void {
  if (e.k === 'subq' || e.k === 'exists') return;
  if (e.k === 'call' && isAggregateCall(e)) {
    for (const a of e.args) {
      const inner = new Map();
      aggregatesIn(a, inner);
      if (inner.size) throw sqlError(a.pos, 'aggregates cannot be nested');
    }
    out.set(exprKey(e), e);
    return;
  }
  for (const c of children(e)) aggregatesIn(c, out);
}

/** The whole block; `corr` set: a subquery, its correlation keys kept in the output (hidden) and grouped by. */
export function planSelect(ctx: Ctx, q: Select, parent: Scope | undefined, corr?: Correlation, top = false): Rel {
  const saved = ctx.ctes;
  if (q.with.length) {
    ctx.ctes = new Map(saved);
    for (const c of q.with) ctx.ctes.set(c.name, c);
  }
  try {
    if (q.set) return planSetOp(ctx, q, top);
    if (q.values) return planValues(ctx, q, top);
    return planBlock(ctx, q, parent, corr, top);
  } finally {
    ctx.ctes = saved;
  }
}

function planBlock(ctx: Ctx, q: Select, parent: Scope | undefined, corr: Correlation | undefined, top: boolean): Rel {
  let { rel: cur, scope } = planWhere(ctx, q, parent, corr);
  const items = q.items.flatMap((it) => expandStar(it, scope));
  // GROUP BY names an input column first, then a select alias, or a position
  const groupExprs = q.groupBy.map((g) => {
    if (g.k === 'num' && /^\d+$/.test(g.text)) {
      const k = Number(g.text);
      if (k < 1 || k > items.length) {
        throw sqlError(g.pos, `GROUP BY position ${k} is not in the select list (1 to ${items.length})`);
      }
      return items[k - 1].e;
    }
    if (g.k === 'col' && !g.table && !scope.cols.some((c) => c.name === g.name)) {
      const it = items.find((i) => i.alias === g.name);
      if (it) return it.e;
    }
    return g;
  });
  const aggs = new Map<string, Extract<Expr, { k: 'call' }>>();
  for (const it of items) aggregatesIn(it.e, aggs);
  if (q.having) aggregatesIn(q.having, aggs);
  for (const o of q.orderBy) aggregatesIn(o.e, aggs);
  let tr = new Translator(scope, ctx.params);
  const keep: string[] = corr ? corr.pairs.map((p) => p.inner) : [];
  if (aggs.size > 0 || groupExprs.length > 0) {
    // an aggregate the select list names is computed under that name: no renaming projection after it
    const names = new Map(items.filter((i) => i.alias && isAggregateCall(i.e)).map((i) => [exprKey(i.e), i.alias!]));
    ({ cur, tr } = aggregateBlock(ctx, cur, scope, groupExprs, aggs, keep, names, q.groupingSets));
  } else if (q.having) throw sqlError(q.having.pos, 'HAVING needs GROUP BY or an aggregate');
  if (q.having) {
    const plain: Expr[] = [];
    for (const c of splitAnd(q.having)) {
      if (refsOf(c, scope).sub) cur = planSubqueryCond(ctx, c, scope, tr).apply(cur);
      else plain.push(c);
    }
    cur = {
      ...cur,
      node: filterNode(
        cur.node,
        plain.map((c) => tr.pred(c)),
      ),
    };
  }
  // window functions, after aggregation, then QUALIFY (sql/window.ts)
  const qualify = q.qualify && withAliases(q.qualify, items, (n) => scope.cols.some((c) => c.name === n));
  const wins = new Map<string, Extract<Expr, { k: 'window' }>>();
  for (const it of items) windowsIn(it.e, wins);
  windowsIn(qualify, wins);
  for (const o of q.orderBy) windowsIn(o.e, wins);
  if (wins.size > 0) {
    const named = new Map(items.filter((i) => i.alias && i.e.k === 'window').map((i) => [exprKey(i.e), i.alias!]));
    ({ cur, tr } = windowBlock(ctx, cur, tr, wins, q.windows, named));
  } else if (qualify) throw sqlError(qualify.pos, 'QUALIFY needs a window function');
  if (qualify)
    cur = {
      ...cur,
      node: filterNode(
        cur.node,
        splitAnd(qualify).map((c) => tr.pred(c)),
      ),
    };
  return project(ctx, q, cur, items, tr, keep, top);
}

function expandStar(it: Select['items'][number], scope: Scope): Select['items'] {
  if (it.e.k !== 'star') return [it];
  const t = it.e.table;
  const cols = scope.cols.filter((c) => !c.hidden && (t === undefined || c.table === t));
  if (t !== undefined && cols.length === 0) throw sqlError(it.pos, `table "${t}" is not in FROM`);
  if (cols.length === 0) throw sqlError(it.pos, 'SELECT * needs a FROM clause');
  return cols.map((c) => ({ e: { k: 'col', table: c.table, name: c.name, pos: it.pos }, text: c.name, pos: it.pos }));
}

function aggregateBlock(
  ctx: Ctx,
  cur: Rel,
  scope: Scope,
  groupExprs: Expr[],
  aggs: Map<string, Extract<Expr, { k: 'call' }>>,
  keep: string[],
  names: Map<string, string>,
  groupingSets?: Expr[][],
): { cur: Rel; tr: Translator } {
  const pre = new Translator(scope, ctx.params, new Map(), 'aggregates cannot be nested');
  const computed: { name: string; expr: PExpr }[] = [];
  const subst = new Map<string, PExpr>();
  const groupBy: string[] = [...keep];
  const outCols: Col[] = keep.map((k) => cur.cols.find((c) => c.id === k)!);
  for (const g of groupExprs) {
    if (refsOf(g, scope).agg) throw sqlError(g.pos, 'GROUP BY cannot hold an aggregate');
    let id: string;
    if (g.k === 'col') {
      const c = scope.resolve(g).col;
      id = c.id;
      if (!groupBy.includes(id)) outCols.push(c);
    } else {
      id = ctx.namer.fresh('group');
      computed.push({ name: id, expr: pre.expr(g) });
      outCols.push({ id, name: id, nullable: true });
    }
    if (!groupBy.includes(id)) groupBy.push(id);
    subst.set(exprKey(g), { column: id });
  }
  const specs = [...aggs.values()].map((a) => {
    if (!isAggregateCall(a)) throw sqlError(a.pos, `${a.name}() is not an aggregate`);
    const as = ctx.namer.fresh(names.get(exprKey(a)) ?? (a.star ? 'count_star' : a.name));
    subst.set(exprKey(a), { column: as });
    outCols.push({ id: as, name: as, nullable: a.name === 'grouping' || AGGREGATES[aggregateBySql(a.name)!].nullable });
    if (a.name === 'grouping') {
      // grouping(keys): a bit per key, 1 where the row's grouping set lacks it
      const columns = a.args.map((g) => {
        const k = subst.get(exprKey(g));
        if (!k || !('column' in k)) throw sqlError(g.pos, 'grouping() takes expressions of GROUP BY');
        return k.column;
      });
      if (columns.length === 0) throw sqlError(a.pos, 'grouping() needs a GROUP BY expression');
      return { fn: 'grouping' as const, columns, as };
    }
    const filter = a.filter ? { filter: pre.pred(a.filter) } : {};
    if (a.star) return { fn: 'count' as const, as, ...filter };
    const def = AGGREGATES[aggregateBySql(a.name)!];
    const q = def.q === 'param' ? { q: fraction(a) } : {};
    if (def.q !== 'param' && a.args.length !== 1) throw sqlError(a.pos, `${a.name}() takes one argument`);
    // count(DISTINCT x) stays the engine's count_distinct; the others take "distinct" (plan/bind-grouping.ts)
    const fn = a.distinct && a.name === 'count' ? ('count_distinct' as const) : aggregateBySql(a.name)!;
    const more = { ...filter, ...q, ...(a.distinct && a.name !== 'count' ? { distinct: true } : {}) };
    const e = pre.expr(a.args[0]);
    const spec = 'column' in e ? { fn, column: e.column, as, ...more } : { fn, expr: e, as, ...more };
    return tagPos(spec, a.pos, { column: a.args[0].pos });
  });
  let input = cur.node;
  if (computed.length) input = { op: 'project', input, columns: [...cur.cols.map((c) => c.id), ...computed] };
  // ROLLUP, CUBE, GROUPING SETS: each set's key ids (the correlation keys in every one)
  const sets = groupingSets?.map((s) => [
    ...keep,
    ...new Set(s.map((g) => (subst.get(exprKey(g)) as { column: string }).column)),
  ]);
  const node: QueryNode = sets
    ? { op: 'aggregate', input, groupingSets: sets, aggregates: specs }
    : { op: 'aggregate', input, groupBy, aggregates: specs };
  const groups = Math.max(1, Math.min(cur.rows, groupBy.length ? cur.rows / 10 : 1));
  // after the aggregate only its columns exist: a plain column outside GROUP BY is an error (checkGrouped)
  const tr = new Translator(scope, ctx.params, subst, 'aggregates are not allowed here');
  return { cur: { node, cols: outCols, rows: groups, baseRows: groups }, tr };
}

/** Every column id a plan expression reads must be one the relation has (a grouped query's check). */
function checkGrouped(e: unknown, have: Set<string>, pos: Expr['pos'], scope: Scope): void {
  const walk = (x: unknown): void => {
    if (!x || typeof x !== 'object') return;
    const o = x as Record<string, unknown>;
    if (typeof o.column === 'string' && !have.has(o.column)) {
      const c = scope.cols.find((k) => k.id === o.column);
      throw sqlError(pos, `column "${c?.name ?? o.column}" must appear in GROUP BY or be used in an aggregate`);
    }
    for (const v of Object.values(o)) walk(v);
  };
  walk(e);
}

/** The select list, DISTINCT, ORDER BY and LIMIT; a subquery's output gets fresh ids, the top level SQL's names. */
function project(
  ctx: Ctx,
  q: Select,
  cur: Rel,
  items: Select['items'],
  tr: Translator,
  keep: string[],
  top: boolean,
): Rel {
  for (const it of items) cur = hoistScalars(ctx, it.e, tr.scope, cur, tr);
  const have = new Set(cur.cols.map((c) => c.id));
  const names = new Set<string>();
  const out: Col[] = [];
  const columns: ProjectColumn[] = [];
  for (const it of items) {
    const e = tr.expr(it.e);
    checkGrouped(e, have, it.pos, tr.scope);
    const src = 'column' in e ? cur.cols.find((c) => c.id === e.column) : undefined;
    // an unnamed expression is named by its text, as DuckDB names it (count(*): count_star())
    let name =
      it.alias ?? (it.e.k === 'col' ? it.e.name : it.e.k === 'call' && it.e.star ? `${it.e.name}_star()` : it.text);
    if (top) {
      const base = name;
      for (let k = 1; names.has(name); k++) name = `${base}_${k}`;
    }
    names.add(name);
    // below the top, a column passed through keeps its id: no renaming projection
    const id = top
      ? name
      : src && !out.some((c) => c.id === src.id)
        ? src.id
        : ctx.namer.fresh(name.replace(/[^A-Za-z0-9_]/g, '_').replace(/^_+|_+$/g, '') || 'col');
    columns.push('column' in e ? (e.column === id ? id : { name: id, column: e.column }) : { name: id, expr: e });
    out.push({ id, name, nullable: src?.nullable ?? true, type: src?.type, stats: src?.stats, table: undefined });
  }
  for (const k of keep) {
    if (out.some((c) => c.id === k)) continue;
    columns.push(k);
    out.push({ ...cur.cols.find((c) => c.id === k)!, hidden: true });
  }
  // ORDER BY: an output name or position, an expression of the list, or one computed as a hidden column
  const by: { column: string; desc?: boolean; nulls?: 'first' | 'last' }[] = [];
  const hidden: string[] = [];
  for (const o of q.orderBy) {
    let id: string | undefined;
    if (o.e.k === 'num' && /^\d+$/.test(o.e.text)) {
      const k = Number(o.e.text);
      if (k < 1 || k > items.length) {
        throw sqlError(o.e.pos, `ORDER BY position ${k} is not in the select list (1 to ${items.length})`);
      }
      id = out[k - 1].id;
    } else if (o.e.k === 'col' && !o.e.table && outputNamed(out, o.e.name)) {
      id = outputNamed(out, o.e.name)!.id;
    } else {
      const i = items.findIndex((it) => exprKey(it.e) === exprKey(o.e));
      if (i >= 0) id = out[i].id;
    }
    if (id === undefined) {
      if (q.distinct) throw sqlError(o.pos, 'with SELECT DISTINCT, ORDER BY must name a column of the select list');
      const e = tr.expr(o.e);
      checkGrouped(e, have, o.pos, tr.scope);
      id = ctx.namer.fresh('order_key');
      columns.push({ name: id, expr: e });
      hidden.push(id);
    }
    by.push({ column: id, ...(o.desc ? { desc: true } : {}), ...(o.nulls ? { nulls: o.nulls } : {}) });
  }
  let node: QueryNode = { op: 'project', input: cur.node, columns };
  if (q.distinct) node = { op: 'aggregate', input: node, groupBy: out.map((c) => c.id), aggregates: [] };
  if (by.length) node = { op: 'sort', input: node, by };
  if (q.limit !== undefined || q.offset !== undefined) {
    const count = q.limit ?? Number.MAX_SAFE_INTEGER;
    node = { op: 'limit', input: node, count, ...(q.offset ? { offset: q.offset } : {}) };
  }
  if (hidden.length) node = { op: 'project', input: node, columns: out.map((c) => c.id) };
  return { node, cols: out, rows: cur.rows, baseRows: cur.baseRows };
}

const outputNamed = (out: Col[], name: string) => out.find((c) => c.name === name && !c.hidden);

type ProjectColumn = Extract<QueryNode, { op: 'project' }>['columns'][number];

/** A quantile's fraction: its second argument, a number from 0 to 1 (quantile_cont(x, 0.9)). */
function fraction(a: Extract<Expr, { k: 'call' }>): number {
  if (a.args.length !== 2) throw sqlError(a.pos, `${a.name}() takes two arguments: the value and the fraction`);
  const f = a.args[1];
  const q = f.k === 'num' ? Number(f.text) : Number.NaN;
  if (!(q >= 0 && q <= 1))
    throw sqlError(
      f.pos,
      `${a.name}(): the fraction must be a number from 0 to 1, got ${f.k === 'num' ? f.text : f.k}`,
    );
  return q;
}
