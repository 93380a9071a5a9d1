// FROM and WHERE: the block's tables (scans, subqueries, CTEs, outer joins),
// each table's own conditions pushed onto it, and the inner joins ordered
// greedily from the estimates: the largest table first, then at each step the
// connected table that keeps the running result smallest (left-deep, the
// running result on the left as in plans/tpch).
import type { Predicate, QueryNode } from '../plan/spec.js';
import type { Expr, FromItem } from './ast.js';
import { exprKey } from './ast.js';
import { sqlError } from './lexer.js';
import { type Col, Scope, children as childrenOf, suggest } from './scope.js';
import type { Ctx, Rel } from './context.js';
import { Translator } from './translate.js';
import { joinRows, selectivity } from './estimate.js';
import type { Applied } from './subquery.js';

/** One table of the join graph, with the conditions that read it alone. */
export interface Base {
  rel: Rel;
  conds: Expr[];
  applies: Applied[];
  factor: number;
}

export function filterNode(input: QueryNode, preds: Predicate[]): QueryNode {
  if (preds.length === 0) return input;
  return { op: 'filter', input, where: preds.length === 1 ? preds[0] : { and: preds } };
}

/** A table read from its files, its columns under fresh ids (renamed by a projection when a name is taken). */
function scanRel(ctx: Ctx, item: Extract<FromItem, { k: 'table' | 'path' }>, table: string): Rel {
  const info = item.k === 'path' ? ctx.catalog.pathTable(item.path)! : ctx.catalog.table(item.name)!;
  ctx.usedSources.add(info.source);
  const cols: Col[] = info.columns.map((c) => {
    const s = info.stats.get(c.name);
    return {
      id: ctx.namer.fresh(c.name),
      name: c.name.toLowerCase(),
      table,
      ...(typeof c.type === 'string' ? {} : { type: c.type }),
      nullable: !(s && s.nulls === 0),
      ...(s ? { stats: { ...s, rows: info.rows } } : {}),
    };
  });
  const scan: QueryNode = { op: 'scan', source: info.source, columns: info.columns.map((c) => c.name) };
  const renamed = cols.some((c, i) => c.id !== info.columns[i].name);
  const node: QueryNode = renamed
    ? {
        op: 'project',
        input: scan,
        columns: cols.map((c, i) => {
          const file = info.columns[i].name;
          return c.id === file ? c.id : { name: c.id, column: file };
        }),
      }
    : scan;
  return { node, cols, rows: info.rows, baseRows: info.rows };
}

/** A subquery's or CTE's result under the names FROM gives it. */
function renameRel(rel: Rel, table: string, names: string[] | undefined, pos: Expr['pos']): Rel {
  if (names && names.length > rel.cols.filter((c) => !c.hidden).length) {
    throw sqlError(pos, `${table} has ${rel.cols.length} columns but ${names.length} names are given`);
  }
  let k = 0;
  return { ...rel, cols: rel.cols.map((c) => (c.hidden ? c : { ...c, table, name: names?.[k++] ?? c.name })) };
}

/** Plan one FROM item; inner and cross joins flatten into `bases` and `conds`. */
export function planFromItem(ctx: Ctx, item: FromItem, bases: Base[], conds: Expr[], parent: Scope | undefined): void {
  const add = (rel: Rel) => bases.push({ rel, conds: [], applies: [], factor: 1 });
  switch (item.k) {
    case 'table': {
      const cte = ctx.ctes.get(item.name);
      if (cte) {
        const saved = ctx.ctes;
        ctx.ctes = new Map([...saved].filter(([n]) => n !== item.name)); // a CTE does not see itself
        try {
          add(renameRel(ctx.planSelect(cte.q, undefined), item.alias ?? item.name, cte.cols, item.pos));
        } finally {
          ctx.ctes = saved;
        }
        return;
      }
      if (!ctx.catalog.table(item.name)) {
        const known = [...ctx.catalog.names(), ...ctx.ctes.keys()];
        const hint =
          known.length === 0
            ? `; give its files with --source ${item.name}=PATH (options.sources)`
            : suggest(item.name, known) || `; tables are: ${known.join(', ')}`;
        throw sqlError(item.pos, `table "${item.name}" does not exist${hint}`);
      }
      add(scanRel(ctx, item, item.alias ?? item.name));
      return;
    }
    case 'path':
      add(scanRel(ctx, item, item.alias ?? ctx.catalog.pathTable(item.path)!.source));
      return;
    case 'sub': {
      if (!item.alias) throw sqlError(item.pos, 'a subquery in FROM needs an alias');
      add(renameRel(ctx.planSelect(item.q, undefined), item.alias, item.cols, item.pos));
      return;
    }
    case 'join':
      if (item.type === 'inner' || item.type === 'cross') {
        planFromItem(ctx, item.l, bases, conds, parent);
        planFromItem(ctx, item.r, bases, conds, parent);
        if (item.on) conds.push(item.on);
        if (item.using) {
          for (const u of item.using) conds.push(usingEq(u, bases, item.pos));
        }
        return;
      }
      add(outerJoin(ctx, item, parent));
  }
}

function usingEq(name: string, bases: Base[], pos: Expr['pos']): Expr {
  const holders = bases.filter((b) => b.rel.cols.some((c) => c.name === name && !c.hidden));
  if (holders.length < 2) throw sqlError(pos, `USING column "${name}" is not on both sides of the join`);
  const t = (b: Base) => b.rel.cols.find((c) => c.name === name)!.table;
  const last = holders[holders.length - 1];
  last.rel.cols = last.rel.cols.map((c) => (c.name === name ? { ...c, hidden: true } : c));
  const l: Expr = { k: 'col', table: t(holders[0]), name, pos },
    r: Expr = { k: 'col', table: t(last), name, pos };
  return { k: 'cmp', op: '=', l, r, pos };
}

/** LEFT, RIGHT or FULL joins keep their place: each side is planned alone, the ON equalities become keys. */
function outerJoin(ctx: Ctx, item: Extract<FromItem, { k: 'join' }>, parent: Scope | undefined): Rel {
  const side = (x: FromItem) => {
    const bases: Base[] = [],
      conds: Expr[] = [];
    planFromItem(ctx, x, bases, conds, parent);
    return { bases, conds };
  };
  const l = side(item.l),
    r = side(item.r);
  const lcols = l.bases.flatMap((b) => b.rel.cols),
    rcols = r.bases.flatMap((b) => b.rel.cols);
  const scope = new Scope([...lcols, ...rcols], parent);
  const lids = new Set(lcols.map((c) => c.id)),
    rids = new Set(rcols.map((c) => c.id));
  const on: [string, string][] = [];
  const conds = splitAnd(item.on);
  if (item.using) {
    for (const u of item.using) {
      const a = lcols.find((c) => c.name === u && !c.hidden),
        b = rcols.find((c) => c.name === u && !c.hidden);
      if (!a || !b) throw sqlError(item.pos, `USING column "${u}" is not on both sides of the join`);
      on.push([a.id, b.id]);
      if (item.type !== 'full') b.hidden = true;
    }
  }
  const preserved = { left: 'l', right: 'r', full: '' }[item.type as 'left' | 'right' | 'full'];
  for (const c of conds) {
    const refs = new Set<string>();
    collectIds(c, scope, refs);
    const inL = [...refs].every((x) => lids.has(x)),
      inR = [...refs].every((x) => rids.has(x));
    if (c.k === 'cmp' && c.op === '=' && c.l.k === 'col' && c.r.k === 'col') {
      const a = scope.resolve(c.l).col.id,
        b = scope.resolve(c.r).col.id;
      if (lids.has(a) && rids.has(b)) {
        on.push([a, b]);
        continue;
      }
      if (rids.has(a) && lids.has(b)) {
        on.push([b, a]);
        continue;
      }
    }
    if (inR && preserved === 'l') {
      r.conds.push(c);
      continue;
    }
    if (inL && preserved === 'r') {
      l.conds.push(c);
      continue;
    }
    throw sqlError(
      c.pos,
      `this ON condition of a ${item.type.toUpperCase()} JOIN is not supported: only equalities ` +
        'between the two sides, and conditions on the side whose unmatched rows are dropped',
    );
  }
  if (on.length === 0) {
    throw sqlError(item.pos, `a ${item.type.toUpperCase()} JOIN needs at least one equality between its sides`);
  }
  const left = joinGraph(ctx, l.bases, l.conds, new Scope(lcols, parent));
  const right = joinGraph(ctx, r.bases, r.conds, new Scope(rcols, parent));
  const nullable = (cs: Col[], yes: boolean) => cs.map((c) => (yes ? { ...c, nullable: true, stats: undefined } : c));
  const cols = [...nullable(left.cols, item.type !== 'left'), ...nullable(right.cols, item.type !== 'right')];
  const rows = item.type === 'left' ? left.rows : item.type === 'right' ? right.rows : left.rows + right.rows;
  const node: QueryNode = { op: 'join', type: item.type as 'left', left: left.node, right: right.node, on };
  return { node, cols, rows, baseRows: rows };
}

export function splitAnd(e: Expr | undefined): Expr[] {
  if (!e) return [];
  return e.k === 'and' ? [...splitAnd(e.l), ...splitAnd(e.r)] : [e];
}

/** The branches of an OR (`a or (b or c)`: a, b, c); anything else is one branch. */
function splitOr(e: Expr): Expr[] {
  return e.k === 'or' ? [...splitOr(e.l), ...splitOr(e.r)] : [e];
}

function collectIds(e: Expr, scope: Scope, out: Set<string>): void {
  const walk = (x: Expr): void => {
    if (x.k === 'col') {
      out.add(scope.resolve(x).col.id);
      return;
    }
    if (x.k === 'subq' || x.k === 'exists') return;
    for (const c of childrenOf(x)) walk(c);
  };
  walk(e);
}

/**
 * `(A and B) or (A and C)` is `A and (B or C)`: q19's join key stands in
 * every branch, and only out of the OR does it become a join edge.
 */
function factorOr(e: Expr): Expr[] {
  if (e.k !== 'or') return [e];
  const branches = splitOr(e);
  const sets = branches.map((b) => splitAnd(b));
  const common = sets[0].filter((c) => sets.every((s) => s.some((x) => exprKey(x) === exprKey(c))));
  if (common.length === 0) return [e];
  const keys = new Set(common.map(exprKey));
  const rest = sets.map((s) => s.filter((x) => !keys.has(exprKey(x))));
  if (rest.some((r) => r.length === 0)) return common; // one branch is just the common part: the OR is true
  const and = (xs: Expr[]) => xs.reduce((a, b) => ({ k: 'and', l: a, r: b, pos: a.pos }) as Expr);
  const or = rest.map(and).reduce((a, b) => ({ k: 'or', l: a, r: b, pos: a.pos }) as Expr);
  return [...common, or];
}

/** Join the block's tables: filters pushed, equalities as keys, the rest applied once its tables are joined. */
export function joinGraph(ctx: Ctx, bases: Base[], conds: Expr[], scope: Scope, applyOnTop: Applied[] = []): Rel {
  const owner = new Map<string, number>();
  bases.forEach((b, i) => b.rel.cols.forEach((c) => owner.set(c.id, i)));
  const tr = new Translator(scope, ctx.params);
  const edges: { a: number; b: number; ca: Col; cb: Col }[] = [];
  const residual: { e: Expr; rels: Set<number> }[] = [];
  for (const c of conds.flatMap(factorOr)) {
    const ids = new Set<string>();
    collectIds(c, scope, ids);
    const rels = new Set([...ids].map((x) => owner.get(x)!));
    if (rels.size === 1) {
      bases[[...rels][0]].conds.push(c);
      continue;
    }
    if (c.k === 'cmp' && c.op === '=' && c.l.k === 'col' && c.r.k === 'col' && rels.size === 2) {
      const ca = scope.resolve(c.l).col,
        cb = scope.resolve(c.r).col;
      edges.push({ a: owner.get(ca.id)!, b: owner.get(cb.id)!, ca, cb });
      continue;
    }
    residual.push({ e: c, rels });
    for (const [i, d] of orPerTable(c, scope, owner)) bases[i].conds.push(d);
  }
  const filtered = bases.map((b) =>
    filterNode(
      b.rel.node,
      b.conds.map((c) => tr.pred(c)),
    ),
  );
  const rels = bases.map((b, i) => {
    const sel = b.conds.reduce((s, c) => s * selectivity(c, scope), 1);
    let rel: Rel = { ...b.rel, node: filtered[i], rows: Math.max(1, b.rel.rows * sel) };
    for (const a of b.applies) {
      reduceBySemiJoin(a, (k) => (k === i ? (rel.node !== b.rel.node ? rel.node : undefined) : reducedNode(k)), owner);
      rel = a.apply(rel);
    }
    return { ...rel, rows: rel.rows * b.factor };
  });
  function reducedNode(k: number): QueryNode | undefined {
    return bases[k].conds.length ? filtered[k] : undefined;
  }
  for (const a of applyOnTop) reduceBySemiJoin(a, reducedNode, owner);
  if (rels.length === 0) throw new Error('no tables');
  const inTree = new Set<number>();
  let start = 0;
  rels.forEach((r, i) => {
    if (r.rows > rels[start].rows) start = i;
  });
  const reduced = bases.map((b) => b.conds.length > 0 || b.applies.length > 0);
  absorbLeaves(rels, edges, residual, reduced, start, inTree, tr);
  let cur = rels[start];
  inTree.add(start);
  const applyResidual = () => {
    const ready = residual.filter((r) => [...r.rels].every((x) => inTree.has(x)));
    if (ready.length === 0) return;
    for (const r of ready) residual.splice(residual.indexOf(r), 1);
    cur = {
      ...cur,
      node: filterNode(
        cur.node,
        ready.map((r) => tr.pred(r.e)),
      ),
      rows: cur.rows * 0.5,
    };
  };
  while (inTree.size < rels.length) {
    let best = -1,
      bestRows = Infinity,
      bestOn: [Col, Col][] = [];
    for (let i = 0; i < rels.length; i++) {
      if (inTree.has(i)) continue;
      const on: [Col, Col][] = [];
      for (const e of edges) {
        if (e.b === i && inTree.has(e.a)) on.push([e.ca, e.cb]);
        else if (e.a === i && inTree.has(e.b)) on.push([e.cb, e.ca]);
      }
      const rows = joinRows(cur.rows, rels[i].rows, on, cur.baseRows, rels[i].baseRows) * (on.length ? 1 : 1e6);
      if (rows < bestRows) {
        best = i;
        bestRows = rows;
        bestOn = on;
      }
    }
    const r = rels[best];
    inTree.add(best);
    cur = {
      node: { op: 'join', type: 'inner', left: cur.node, right: r.node, on: bestOn.map(([a, b]) => [a.id, b.id]) },
      cols: [...cur.cols, ...r.cols],
      rows: Math.max(1, bestRows / (bestOn.length ? 1 : 1e6)),
      baseRows: Math.max(cur.baseRows, r.baseRows),
    };
    applyResidual();
  }
  applyResidual();
  for (const a of applyOnTop) cur = a.apply(cur);
  return cur;
}

/**
 * A correlated subquery aggregates only the keys its enclosing table can
 * ask for (a semi join with that table after its filters, below the
 * aggregate): q17's average quantity of the parts of one brand and
 * container, not of all 200,000 parts; q02's and q20's alike.
 */
function reduceBySemiJoin(
  a: Applied,
  nodeOf: (base: number) => QueryNode | undefined,
  owner: Map<string, number>,
): void {
  if (!a.reduce) return;
  const byBase = new Map<number, [string, string][]>();
  for (const p of a.reduce.pairs) {
    const k = owner.get(p.outer);
    if (k !== undefined) byBase.set(k, [...(byBase.get(k) ?? []), [p.inner, p.outer]]);
  }
  for (const [k, on] of byBase) {
    const node = nodeOf(k);
    if (node) {
      a.reduce.by(structuredClone(node), on);
      return;
    }
  }
}

type Edge = { a: number; b: number; ca: Col; cb: Col };

/**
 * A filtered table joined to just one other table, not the largest, is joined
 * to that table first (marked as in the tree: the greedy order skips it):
 * q03's customers of one segment meet their orders before the line items do,
 * q05's region its nations and they their suppliers. The hand-written plans
 * are bushy in this way; a left-deep order alone carries every line item
 * through those joins.
 */
function absorbLeaves(
  rels: Rel[],
  edges: Edge[],
  residual: { e: Expr; rels: Set<number> }[],
  filtered: boolean[],
  start: number,
  absorbed: Set<number>,
  tr: Translator,
): void {
  for (let changed = true; changed; ) {
    changed = false;
    for (let l = 0; l < rels.length; l++) {
      if (l === start || absorbed.has(l) || !filtered[l]) continue;
      const near = new Set(edges.filter((e) => e.a === l || e.b === l).map((e) => (e.a === l ? e.b : e.a)));
      if (near.size !== 1) continue;
      const r = [...near][0];
      if (r === start) continue;
      const on: [Col, Col][] = edges
        .filter((e) => (e.a === r && e.b === l) || (e.a === l && e.b === r))
        .map((e) => (e.a === r ? [e.ca, e.cb] : [e.cb, e.ca]));
      const rows = joinRows(rels[r].rows, rels[l].rows, on, rels[r].baseRows, rels[l].baseRows);
      rels[r] = {
        node: {
          op: 'join',
          type: 'inner',
          left: rels[r].node,
          right: rels[l].node,
          on: on.map(([a, b]) => [a.id, b.id]),
        },
        cols: [...rels[r].cols, ...rels[l].cols],
        rows: Math.max(1, rows),
        baseRows: rels[r].baseRows,
      };
      for (let k = edges.length - 1; k >= 0; k--) if (edges[k].a === l || edges[k].b === l) edges.splice(k, 1);
      for (const x of residual) if (x.rels.delete(l)) x.rels.add(r);
      // conditions on the two tables alone apply now
      const ready = residual.filter((x) => x.rels.size === 1 && x.rels.has(r));
      for (const x of ready) residual.splice(residual.indexOf(x), 1);
      if (ready.length)
        rels[r] = {
          ...rels[r],
          node: filterNode(
            rels[r].node,
            ready.map((x) => tr.pred(x.e)),
          ),
        };
      filtered[r] = true;
      absorbed.add(l);
      changed = true;
    }
  }
}

/**
 * An OR over several tables implies, for a table each branch constrains, the
 * OR of those constraints: q07's `(n1 = A and n2 = B) or (n1 = B and n2 = A)`
 * lets each nation scan keep A and B only. The OR itself still applies after the join.
 */
function orPerTable(c: Expr, scope: Scope, owner: Map<string, number>): Map<number, Expr> {
  const out = new Map<number, Expr>();
  if (c.k !== 'or') return out;
  const branches = splitOr(c);
  const perBranch = branches.map((b) => {
    const by = new Map<number, Expr[]>();
    for (const part of splitAnd(b)) {
      const ids = new Set<string>();
      collectIds(part, scope, ids);
      const rels = new Set([...ids].map((x) => owner.get(x)));
      if (rels.size !== 1 || rels.has(undefined) || refsSub(part)) continue;
      const t = [...rels][0]!;
      by.set(t, [...(by.get(t) ?? []), part]);
    }
    return by;
  });
  for (const t of perBranch[0].keys()) {
    if (!perBranch.every((m) => m.has(t))) continue;
    const and = (xs: Expr[]) => xs.reduce((a, b) => ({ k: 'and', l: a, r: b, pos: a.pos }) as Expr);
    out.set(
      t,
      perBranch.map((m) => and(m.get(t)!)).reduce((a, b) => ({ k: 'or', l: a, r: b, pos: a.pos }) as Expr),
    );
  }
  return out;
}

function refsSub(e: Expr): boolean {
  return e.k === 'subq' || e.k === 'exists' || e.k === 'insub' || childrenOf(e).some(refsSub);
}
