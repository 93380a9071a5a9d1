// A block's conditions as the FROM and WHERE planning takes them apart: split
// at AND and OR, the columns each reads, a common part factored out of an OR,
// an OR's implied condition per table, and a filter node over predicates.
import type { Predicate, QueryNode } from '../plan/spec.js';
import type { Expr } from './ast.js';
import { exprKey } from './ast.js';
import { type Scope, children as childrenOf } from './scope.js';

export function filterNode(input: QueryNode, preds: Predicate[]): QueryNode {
  if (preds.length === 0) return input;
  return { op: 'filter', input, where: preds.length === 1 ? preds[0] : { and: preds } };
}

export function splitAnd(e: Expr | undefined): Expr[] {
  if (!e) return [];
  return e.k === 'and' ? [...splitAnd(e.l), ...splitAnd(e.r)] : [e];
}

/** The branches of an OR (`a or (b or c)`: a, b, c); anything else is one branch. */
function splitOr(e: Expr): Expr[] {
  return e.k === 'or' ? [...splitOr(e.l), ...splitOr(e.r)] : [e];
}

export function collectIds(e: Expr, scope: Scope, out: Set<string>): void {
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
export function factorOr(e: Expr): Expr[] {
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

/**
 * An OR over several tables implies, for a table each branch constrains, the
 * OR of those constraints: q07's `(n1 = A and n2 = B) or (n1 = B and n2 = A)`
 * lets each nation scan keep A and B only. The OR itself still applies after the join.
 */
export function orPerTable(c: Expr, scope: Scope, owner: Map<string, number>): Map<number, Expr> {
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
