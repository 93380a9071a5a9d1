// Windows under a top-N filter marked to keep only their first rows: a filter right above a window (or above a
// projection of its columns) with a conjunct `f = N`, `f <= N` or `f < N + 1` on one of its functions, when every
// function of that window is row_number, rank or dense_rank, marks the window with `topN` (plan/bound.ts): its tasks
// drop the rows that cannot be among the first N of their partition before the shuffle and before sorting
// (physical/window/topn.ts). Exact: the rows kept by such a filter have every row before them in their partition
// (and for rank and dense_rank every peer) among the rows the window still computes, so their row_number, rank and
// dense_rank are unchanged; the filter stays above to drop the rest. Other functions (a sum over the same window,
// percent_rank, ntile, lag) would read the rows dropped: the window is left as it is, and so is a filter that keeps
// rows past the first N (`f > 1`).
import type { BoundExpr } from '../expr/types.js';
import type { BoundNode, BoundPredicate } from './bound.js';
import { mapChildren } from './eager-push.js';

type Window = Extract<BoundNode, { kind: 'window' }>;
type Filter = Extract<BoundNode, { kind: 'filter' }>;

/** The ranking functions whose first N rows a window may keep alone. */
const RANKS = new Set(['row_number', 'rank', 'dense_rank']);

/** Largest N the windows keep per partition (dense_rank compares a candidate with the N values kept). */
const TOP_N_MAX = 1000;

/** The plan with each window under a top-N filter marked with it. */
export function topNWindows(root: BoundNode): BoundNode {
  const walk = (n: BoundNode): BoundNode => {
    const m = mapChildren(n, walk);
    return m.kind === 'filter' ? (withTopN(m) ?? m) : m;
  };
  return walk(root);
}

function withTopN(f: Filter): BoundNode | null {
  const below = f.input;
  const w =
    below.kind === 'window' ? below : below.kind === 'project' && below.input.kind === 'window' ? below.input : null;
  if (w === null || w.topN || !w.fns.every((x) => RANKS.has(x.fn))) return null;
  // the filter's column as the window's
  const at = (c: number) => (below.kind === 'project' ? below.indices[c] : c);
  const first = (w.keep ?? w.input.schema).length;
  let best: { fn: number; n: number } | null = null;
  for (const p of conjuncts(f.pred)) {
    const fn = at(p.col) - first;
    const n = limitOf(p.op, p.value);
    if (fn < 0 || fn >= w.fns.length || n === null) continue;
    // without orderBy every row is a peer: rank and dense_rank are 1 throughout
    if (w.orderBy.length === 0 && w.fns[fn].fn !== 'row_number') continue;
    if (best === null || n < best.n) best = { fn, n };
  }
  if (best === null) return null;
  const marked: Window = { ...w, topN: best };
  const input: BoundNode = below.kind === 'project' ? { ...below, input: marked } : marked;
  return { ...f, input };
}

type Cmp = { col: number; op: string; value: unknown };

/** The conjuncts of a predicate that compare a column with a literal (in a predicate or a bool expression). */
function conjuncts(p: BoundPredicate): Cmp[] {
  if (p.kind === 'and') return p.preds.flatMap(conjuncts);
  if (p.kind === 'cmp') return [p];
  return p.kind === 'expr' ? exprConjuncts(p.expr) : [];
}

const FLIP: Record<string, string> = { '=': '=', '<': '>', '<=': '>=', '>': '<', '>=': '<=' };

function exprConjuncts(e: BoundExpr): Cmp[] {
  if (e.k !== 'fn') return [];
  if (e.fn === 'and') return e.args.flatMap(exprConjuncts);
  if (!(e.fn in FLIP) || e.args.length !== 2) return [];
  const [a, b] = e.args;
  const lit = (x: BoundExpr) => (x.k === 'lit' ? (x.type.id === 'decimal' ? decimalNumber(x) : x.value) : undefined);
  if (a.k === 'col' && b.k === 'lit') return [{ col: a.col, op: e.fn, value: lit(b) }];
  if (b.k === 'col' && a.k === 'lit') return [{ col: b.col, op: FLIP[e.fn], value: lit(a) }];
  return [];
}

/** A decimal literal's value as a number (its scaled integer over 10^scale). */
const decimalNumber = (x: Extract<BoundExpr, { k: 'lit' }>) =>
  typeof x.value === 'bigint' ? Number(x.value) / 10 ** (x.type.scale ?? 0) : undefined;

/** The N a comparison `f op value` keeps the rows of at most (null: it keeps others, or N is out of range). */
function limitOf(op: string, value: unknown): number | null {
  const v = typeof value === 'bigint' ? Number(value) : typeof value === 'number' ? value : Number.NaN;
  if (!Number.isFinite(v)) return null;
  const n =
    op === '=' ? (Number.isInteger(v) ? v : 0) : op === '<=' ? Math.floor(v) : op === '<' ? Math.ceil(v) - 1 : 0;
  return n >= 1 && n <= TOP_N_MAX ? n : null;
}
