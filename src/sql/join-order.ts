// A block's join graph (its FROM's tables and WHERE's conditions): each
// table's own conditions pushed onto it, and the inner joins ordered
// greedily from the estimates: the largest table first, then at each step the
// connected table that keeps the running result smallest (left-deep, the
// running result on the left as in plans/tpch).
// The tables themselves come from sql/from.ts.
import type { QueryNode } from '../plan/spec.js';
import type { Expr } from './ast.js';
import { collectIds, factorOr, filterNode, orPerTable } from './conditions.js';
import type { Ctx, Rel } from './context.js';
import { joinRows, selectivity } from './estimate.js';
import type { Col, Scope } from './scope.js';
import type { Applied } from './subquery.js';
import { Translator } from './translate.js';
import { keyable } from './keys.js';

/** One table of the join graph, with the conditions that read it alone. */
export interface Base {
  rel: Rel;
  conds: Expr[];
  applies: Applied[];
  factor: number;
}

type Edge = { a: number; b: number; ca: Col; cb: Col };
/** A condition over several tables, applied once they are all joined. */
type Residual = { e: Expr; rels: Set<number> };

/** Join the block's tables: filters pushed, equalities as keys, the rest applied once its tables are joined. */
export function joinGraph(ctx: Ctx, bases: Base[], conds: Expr[], scope: Scope, applyOnTop: Applied[] = []): Rel {
  const owner = new Map<string, number>();
  bases.forEach((b, i) => b.rel.cols.forEach((c) => owner.set(c.id, i)));
  const tr = new Translator(scope, ctx.params);
  const { edges, residual } = placeConds(bases, conds, scope, owner);
  const filtered = bases.map((b) =>
    filterNode(
      b.rel.node,
      b.conds.map((c) => tr.pred(c)),
    ),
  );
  const reducedNode = (k: number): QueryNode | undefined => (bases[k].conds.length ? filtered[k] : undefined);
  const rels = bases.map((b, i) => baseRel(b, i, filtered[i], scope, owner, reducedNode));
  for (const a of applyOnTop) reduceBySemiJoin(a, reducedNode, owner);
  if (rels.length === 0) throw new Error('no tables');
  const inTree = new Set<number>();
  let start = 0;
  rels.forEach((r, i) => {
    if (r.rows > rels[start].rows) start = i;
  });
  const reduced = bases.map((b) => b.conds.length > 0 || b.applies.length > 0);
  absorbLeaves(rels, edges, residual, reduced, start, inTree, tr);
  let cur = greedyJoin(rels, edges, residual, start, inTree, tr);
  for (const a of applyOnTop) cur = a.apply(cur);
  return cur;
}

/**
 * Each condition to its place: on its table when it reads one (and an OR's
 * implied condition on each table it constrains), an edge when it equates
 * columns of two tables, else a residual applied after the join.
 */
function placeConds(
  bases: Base[],
  conds: Expr[],
  scope: Scope,
  owner: Map<string, number>,
): { edges: Edge[]; residual: Residual[] } {
  const edges: Edge[] = [];
  const residual: Residual[] = [];
  for (const c of conds.flatMap(factorOr)) {
    const ids = new Set<string>();
    collectIds(c, scope, ids);
    const rels = new Set([...ids].map((x) => owner.get(x)!));
    if (rels.size === 1) {
      bases[[...rels][0]].conds.push(c);
      continue;
    }
    if (
      c.k === 'cmp' &&
      c.op === '=' &&
      c.l.k === 'col' &&
      c.r.k === 'col' &&
      rels.size === 2 &&
      keyable(scope.resolve(c.l).col.type, scope.resolve(c.r).col.type)
    ) {
      const ca = scope.resolve(c.l).col,
        cb = scope.resolve(c.r).col;
      // a join key only where the plan's keys compare as SQL does (a float with an exact number is a filter)
      if (keyable(ca.type, cb.type, false)) {
        edges.push({ a: owner.get(ca.id)!, b: owner.get(cb.id)!, ca, cb });
        continue;
      }
    }
    residual.push({ e: c, rels });
    for (const [i, d] of orPerTable(c, scope, owner)) bases[i].conds.push(d);
  }
  return { edges, residual };
}

/** Base `i` after its filters (`node`) and its subqueries, with its estimated rows. */
function baseRel(
  b: Base,
  i: number,
  node: QueryNode,
  scope: Scope,
  owner: Map<string, number>,
  reducedNode: (k: number) => QueryNode | undefined,
): Rel {
  const sel = b.conds.reduce((s, c) => s * selectivity(c, scope), 1);
  let rel: Rel = { ...b.rel, node, rows: Math.max(1, b.rel.rows * sel) };
  for (const a of b.applies) {
    reduceBySemiJoin(a, (k) => (k === i ? (rel.node !== b.rel.node ? rel.node : undefined) : reducedNode(k)), owner);
    rel = a.apply(rel);
  }
  return { ...rel, rows: rel.rows * b.factor };
}

/**
 * The left-deep order from the largest table `start`: at each step the
 * connected table that keeps the running result smallest (a table with no
 * edge to it only when nothing else is left), residuals applied as soon as
 * their tables are in.
 */
function greedyJoin(
  rels: Rel[],
  edges: Edge[],
  residual: Residual[],
  start: number,
  inTree: Set<number>,
  tr: Translator,
): Rel {
  let cur = rels[start];
  inTree.add(start);
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
    cur = applyResidual(cur, residual, inTree, tr);
  }
  return applyResidual(cur, residual, inTree, tr);
}

/** The residuals whose tables are all in the tree, taken out of `residual` and applied as a filter on `cur`. */
function applyResidual(cur: Rel, residual: Residual[], inTree: Set<number>, tr: Translator): Rel {
  const ready = residual.filter((r) => [...r.rels].every((x) => inTree.has(x)));
  if (ready.length === 0) return cur;
  for (const r of ready) residual.splice(residual.indexOf(r), 1);
  return {
    ...cur,
    node: filterNode(
      cur.node,
      ready.map((r) => tr.pred(r.e)),
    ),
    rows: cur.rows * 0.5,
  };
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
  residual: Residual[],
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
