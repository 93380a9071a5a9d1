// Filters derived below a join from the filter over it: an OR whose every
// branch constrains one side implies, for that side, the OR of those
// constraints (TPC-H q19: the part terms of its three brand/container/size
// branches keep a few thousand parts, the quantity ranges most line items).
// The filter above stays; a filter reading one side only moves down whole.
// Runs on the bound plan, before column pruning.
import type { BoundExpr } from '../expr/types.js';
import type { BoundNode, BoundPredicate } from './bound.js';
import { predCols, remapPred } from './prune.js';

type Join = Extract<BoundNode, { kind: 'join' }>;
type Filter = Extract<BoundNode, { kind: 'filter' }>;

/** The sides a filter over the join may be applied to below it exactly: never a side an outer join null-extends. */
function targets(type: Join['type']): ('left' | 'right')[] {
  if (type === 'inner') return ['left', 'right'];
  if (type === 'right') return ['right'];
  if (type === 'full') return [];
  return ['left']; // left, semi, anti (their output is the left side's columns)
}

const isExpr = (p: BoundPredicate): p is Extract<BoundPredicate, { kind: 'expr' }> => p.kind === 'expr';

/** The terms of a predicate split at `how` (nested alike), in either form. */
function split(p: BoundPredicate, how: 'and' | 'or'): BoundPredicate[] {
  if (p.kind === how) return p.preds.flatMap((q) => split(q, how));
  if (isExpr(p) && p.expr.k === 'fn' && p.expr.fn === how)
    return p.expr.args.flatMap((a) => split({ kind: 'expr', expr: a }, how));
  return [p];
}

/** Terms joined by `how`: in the expression form when all are expressions, else as a predicate tree; null if mixed. */
function combine(ps: BoundPredicate[], how: 'and' | 'or'): BoundPredicate | null {
  if (ps.length === 1) return ps[0];
  if (ps.every(isExpr)) {
    const args: BoundExpr[] = ps.map((p) => p.expr);
    return { kind: 'expr', expr: { k: 'fn', fn: how, args, type: { id: 'bool' }, what: `derived ${how}` } };
  }
  return ps.some(isExpr) ? null : { kind: how, preds: ps };
}

/** A predicate read over the join's columns, as one over a side's (`from`: its first column there). */
function onSide(p: BoundPredicate, from: number, width: number): BoundPredicate {
  const map = Array.from({ length: from + width }, (_, i) => (i >= from ? i - from : -1));
  return remapPred(p, map);
}

/**
 * The filter a side may take from `pred` over the join: per branch of the OR,
 * the conjunction of its terms that read only that side's columns; none when
 * some branch has no such term (the OR would be true) or the terms mix forms.
 */
function derived(pred: BoundPredicate, from: number, width: number): BoundPredicate | null {
  const mine = (q: BoundPredicate) => {
    const cols = [...predCols(q, new Set())];
    return cols.length > 0 && cols.every((c) => c >= from && c < from + width);
  };
  const branches: BoundPredicate[] = [];
  for (const branch of split(pred, 'or')) {
    const terms = split(branch, 'and').filter(mine);
    const and = terms.length > 0 ? combine(terms, 'and') : null;
    if (!and) return null;
    branches.push(and);
  }
  const or = combine(branches, 'or');
  return or && onSide(or, from, width);
}

/** A predicate's text to compare: bigint literals written out, where an expression stands in the plan left out. */
const textOf = (p: BoundPredicate) =>
  JSON.stringify(p, (k, v) => (k === 'what' ? undefined : typeof v === 'bigint' ? `${v}n` : v));

/** The side with the filter applied: joined to the side's own filter when both take one form, else on top of it. */
function withFilter(side: BoundNode, pred: BoundPredicate, id: string): BoundNode {
  if (side.kind === 'filter') {
    // conjuncts the side's filter has already (the SQL front end derives the same ORs per table) are not added again
    const own = split(side.pred, 'and'),
      had = new Set(own.map(textOf));
    const added = split(pred, 'and').filter((p) => !had.has(textOf(p)));
    if (added.length === 0) return side;
    const both = combine([...own, ...added], 'and');
    if (both) return { ...side, pred: both };
    return { id, kind: 'filter', input: side, pred: combine(added, 'and') ?? pred, schema: side.schema };
  }
  return { id, kind: 'filter', input: side, pred, schema: side.schema };
}

/** One filter over a join: the sides take what they may; a filter on one side only leaves the join's top. */
function pushInto(filter: Filter, join: Join): BoundNode {
  const nl = join.left.schema.length;
  const cols = [...predCols(filter.pred, new Set())];
  const allowed = targets(join.type);
  const sides = { left: join.left, right: join.right };
  let whole: 'left' | 'right' | null = null;
  for (const s of allowed) {
    const [from, width] = s === 'left' ? [0, nl] : [nl, join.right.schema.length];
    const only = cols.length > 0 && cols.every((c) => c >= from && c < from + width);
    const p = only ? onSide(filter.pred, from, width) : derived(filter.pred, from, width);
    if (!p) continue;
    if (only) whole = s;
    sides[s] = withFilter(sides[s], p, `${filter.id}.${s}`);
  }
  const below: BoundNode = { ...join, left: deriveJoinFilters(sides.left), right: deriveJoinFilters(sides.right) };
  return whole ? below : { ...filter, input: below };
}

/** The plan with filters derived below the joins they stand over (and moved there when they read one side). */
export function deriveJoinFilters(node: BoundNode): BoundNode {
  switch (node.kind) {
    case 'scan':
      return node;
    case 'filter':
      return node.input.kind === 'join'
        ? pushInto(node, node.input)
        : { ...node, input: deriveJoinFilters(node.input) };
    case 'join':
      return { ...node, left: deriveJoinFilters(node.left), right: deriveJoinFilters(node.right) };
    case 'union':
      return { ...node, inputs: node.inputs.map(deriveJoinFilters) };
    case 'values':
      return node;
    default:
      return { ...node, input: deriveJoinFilters(node.input) } as BoundNode;
  }
}
