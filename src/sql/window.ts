// Window functions of a SELECT block (fn(...) OVER (...), named windows, QUALIFY) as `window` plan nodes: after
// WHERE, GROUP BY and HAVING (a window over aggregates reads the aggregated columns), before the select list. The
// calls over one window (same partition and order) share one node; expressions they read are computed first.
import type { Expr as PExpr, WindowFnName, WindowFnSpec, WindowNode } from '../plan/spec.js';
import { WINDOW_FNS } from '../plan/window-fns.js';
import { type Expr, type Select, type WindowSpec, exprKey } from './ast.js';
import type { Ctx, Rel } from './context.js';
import { sqlError } from './lexer.js';
import { type Col, children } from './scope.js';
import { Translator } from './translate.js';

type WindowExpr = Extract<Expr, { k: 'window' }>;

/** Window calls of an expression (not inside subqueries), by structural key. */
export function windowsIn(e: Expr | undefined, out: Map<string, WindowExpr>): void {
  if (!e || e.k === 'subq' || e.k === 'exists' || e.k === 'insub') return;
  if (e.k === 'window') {
    for (const c of children(e)) {
      const inner = new Map<string, WindowExpr>();
      windowsIn(c, inner);
      if (inner.size) throw sqlError(c.pos, 'window functions cannot be nested');
    }
    out.set(exprKey(e), e);
    return;
  }
  for (const c of children(e)) windowsIn(c, out);
}

/** OVER name, or OVER (name ...): the WINDOW clause's window, with this call's own ORDER BY and frame added. */
function resolveSpec(spec: WindowSpec, named: Select['windows']): WindowSpec {
  if (!spec.name) return spec;
  const base = named?.get(spec.name);
  if (!base) throw sqlError(spec.pos, `window "${spec.name}" is not defined in a WINDOW clause`);
  const b = resolveSpec(base, named);
  if (spec.partitionBy.length) throw sqlError(spec.pos, `a window over "${spec.name}" cannot add PARTITION BY`);
  if (spec.orderBy.length && b.orderBy.length)
    throw sqlError(spec.pos, `window "${spec.name}" has an ORDER BY already`);
  return {
    ...b,
    name: undefined,
    orderBy: spec.orderBy.length ? spec.orderBy : b.orderBy,
    frame: spec.frame ?? b.frame,
  };
}

/** A whole-number literal argument (ntile's buckets, nth_value's n, lag's offset). */
function wholeArg(e: Expr, what: string): number {
  if (e.k !== 'num' || !/^\d+$/.test(e.text)) throw sqlError(e.pos, `${what} must be a whole number`);
  return Number(e.text);
}

/** lag/lead's default: a literal. */
function literalArg(e: Expr): string | number | boolean | null {
  if (e.k === 'null') return null;
  if (e.k === 'str') return e.v;
  if (e.k === 'bool') return e.v;
  if (e.k === 'num') return Number(e.text);
  if (e.k === 'neg' && e.e.k === 'num') return -Number(e.e.text);
  throw sqlError(e.pos, 'the default of lag/lead must be a literal');
}

/**
 * The block's window calls computed over `cur`: the relation with one column per call, and a translator that
 * reads each call as its column.
 */
export function windowBlock(
  ctx: Ctx,
  cur: Rel,
  tr: Translator,
  calls: Map<string, WindowExpr>,
  named: Select['windows'],
  names: Map<string, string>,
): { cur: Rel; tr: Translator } {
  const computed: { name: string; expr: PExpr }[] = [];
  const cols: Col[] = [...cur.cols];
  /** a column id for an expression: its column, or one computed before the windows */
  const columnOf = (e: Expr): string => {
    const x = tr.expr(e);
    if ('column' in x) return x.column;
    const id = ctx.namer.fresh('window_arg');
    computed.push({ name: id, expr: x });
    return id;
  };
  const groups = new Map<
    string,
    { partitionBy: string[]; orderBy: WindowNode['orderBy']; functions: WindowFnSpec[] }
  >();
  const subst = new Map(tr.subst);
  for (const [key, w] of calls) {
    const spec = resolveSpec(w.over, named);
    const partitionBy = spec.partitionBy.map(columnOf);
    const orderBy = spec.orderBy.map((o) => ({
      column: columnOf(o.e),
      ...(o.desc ? { desc: true } : {}),
      ...(o.nulls ? { nulls: o.nulls } : {}),
    }));
    const gkey = JSON.stringify([partitionBy, orderBy]);
    let g = groups.get(gkey);
    if (!g) groups.set(gkey, (g = { partitionBy, orderBy, functions: [] }));
    const as = ctx.namer.fresh(names.get(key) ?? w.call.name);
    g.functions.push(windowFn(w, as, spec, columnOf));
    subst.set(key, { column: as });
    cols.push({ id: as, name: as, nullable: true });
  }
  let node = cur.node;
  if (computed.length) node = { op: 'project', input: node, columns: [...cur.cols.map((c) => c.id), ...computed] };
  for (const g of groups.values()) {
    node = {
      op: 'window',
      input: node,
      partitionBy: g.partitionBy,
      ...(g.orderBy?.length ? { orderBy: g.orderBy } : {}),
      functions: g.functions,
    };
  }
  // the computed arguments are left out again
  if (computed.length) node = { op: 'project', input: node, columns: cols.map((c) => c.id) };
  const out = new Translator(tr.scope, tr.params, subst, tr.noAggregates);
  return { cur: { ...cur, node, cols }, tr: out };
}

/** QUALIFY with the select list's aliases read as their expressions (as DuckDB allows), unless a column has the name. */
export function withAliases(e: Expr, items: Select['items'], isColumn: (name: string) => boolean): Expr {
  const alias = new Map(items.filter((i) => i.alias !== undefined).map((i) => [i.alias!, i.e]));
  const walk = (x: unknown): unknown => {
    if (!x || typeof x !== 'object') return x;
    if (Array.isArray(x)) return x.map(walk);
    const o = x as Record<string, unknown>;
    if (o.k === 'col' && o.table === undefined && alias.has(o.name as string) && !isColumn(o.name as string))
      return alias.get(o.name as string);
    if (o.k === 'subq' || o.k === 'exists' || o.k === 'insub') return x;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(o)) out[k] = k === 'pos' ? v : walk(v);
    return out;
  };
  return walk(e) as Expr;
}

function windowFn(w: WindowExpr, as: string, spec: WindowSpec, columnOf: (e: Expr) => string): WindowFnSpec {
  const c = w.call;
  const fn = c.name;
  const args = c.args;
  // its entry in the plan's table of window functions (null: not one)
  const def = Object.hasOwn(WINDOW_FNS, fn) ? WINDOW_FNS[fn as WindowFnName] : null;
  if (c.distinct && !def?.distinct)
    throw sqlError(c.pos, `DISTINCT is for count, sum, avg, min and max over a window; ${fn}() is not an aggregate`);
  if (c.distinct && c.star) throw sqlError(c.pos, 'count(DISTINCT *) is not SQL: name a column');
  const frame = spec.frame ? { frame: spec.frame } : {};
  const arity = (lo: number, hi: number) => {
    if (args.length < lo || args.length > hi)
      throw sqlError(c.pos, `${fn}() takes ${lo === hi ? lo : `${lo} to ${hi}`} argument(s), got ${args.length}`);
  };
  if (def?.kind === 'rank' && def.n === null) {
    arity(0, 0);
    return { fn: fn as 'rank', as };
  }
  switch (fn) {
    case 'ntile':
      arity(1, 1);
      return { fn, n: wholeArg(args[0], 'ntile()'), as };
    case 'lag':
    case 'lead': {
      arity(1, 3);
      const offset = args[1] ? wholeArg(args[1], `${fn}()'s offset`) : undefined;
      const def = args[2] ? literalArg(args[2]) : undefined;
      return {
        fn,
        column: columnOf(args[0]),
        as,
        ...(offset !== undefined ? { offset } : {}),
        ...(def !== undefined && def !== null ? { default: def } : {}),
      };
    }
    case 'nth_value':
      arity(2, 2);
      return { fn, column: columnOf(args[0]), n: wholeArg(args[1], 'nth_value()'), as, ...frame };
  }
  if (def?.kind !== 'value' && def?.kind !== 'aggregate') throw sqlError(c.pos, `${fn}() is not a window function`);
  if (c.star) return { fn: 'count', as, ...frame };
  arity(1, 1);
  return { fn: fn as 'sum', column: columnOf(args[0]), as, ...frame, ...(c.distinct ? { distinct: true } : {}) };
}
