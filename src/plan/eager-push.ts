// Aggregation before joins (eager group-by): an aggregate over a chain of inner joins whose arguments all come from
// one side X of a join lower down is computed in two steps: a partial aggregate of X by the columns of X that the
// plan reads above it (the keys of the joins on the way up, the group columns X gives), then the joins over those
// partial rows, then the final aggregate over them:
//   aggregate(G; sum(x), count(x), count(*), min(x), max(x)) over J(... X ...)
//   = aggregate(G; sum(s), sum(c), sum(n), min(m), max(M)) over J(... aggregate(Gx; s = sum(x), c = count(x),
//     n = count(*), m = min(x), M = max(x)) over X ...)
// Exact for inner joins whatever the keys: every row of X joins the same rows above as its partial row does, so a
// group's rows above are its partial rows' rows, each partial state standing for the X rows it folded (a decimal or
// integer sum is exact in any order; its partial sums too). Rewritten where it pays by the plan's shape: at the lowest
// join on the way down whose other side Y gives the group-by one of its own join keys (TPC-H q10: customers, grouped by
// c_custkey and the columns that go with it, meeting line items joined to orders: the line items are summed per
// o_custkey first, and the customers' wide rows meet one partial row per customer instead of one per line item).
// Not rewritten: outer, semi and anti joins on the way, holistic or distinct aggregates, avg, arguments computed by an
// expression that could fail on a row the joins above would have dropped (only column reads and decimal or float
// +, -, * whose exact result type holds it are pushed down).
import type { Field } from '../kernels/column.js';
import { MAX_PRECISION } from '../kernels/decimal.js';
import { exprCols, remapExpr } from '../expr/columns.js';
import type { BoundExpr } from '../expr/types.js';
import type { BoundAggregate, BoundNode } from './bound.js';
import { children, fingerprint } from './fingerprint.js';

type Join = Extract<BoundNode, { kind: 'join' }>;
type Aggregate = Extract<BoundNode, { kind: 'aggregate' }>;

const PUSHED = new Set(['sum', 'count', 'min', 'max']);

/** Whether an expression evaluated on rows the joins above would drop can raise no error there. */
function cannotFail(e: BoundExpr): boolean {
  switch (e.k) {
    case 'col':
    case 'lit':
      return true;
    case 'cast':
      // a number widened to a decimal or a float that holds it
      return (
        cannotFail(e.arg) &&
        e.arg.k === 'lit' &&
        (e.type.id === 'decimal' || e.type.id === 'float64') &&
        (typeof e.arg.value === 'bigint' || typeof e.arg.value === 'number')
      );
    case 'fn':
      if (!['+', '-', '*'].includes(e.fn) || !e.args.every(cannotFail)) return false;
      return e.type.id === 'float64' || (e.type.id === 'decimal' && e.type.precision! < MAX_PRECISION);
    case 'case':
      return false;
  }
}

/** One step down the chain of joins: the join, and the side the aggregated columns lie in. */
interface Step {
  join: Join;
  side: 'left' | 'right';
}

/**
 * The plan with each aggregate whose arguments come from below a chain of inner joins aggregated there first, where
 * the shape says it pays (see the top of this file). `on`: the eagerAggregation setting.
 */
export function pushAggregates(root: BoundNode, on: boolean): BoundNode {
  if (!on) return root;
  // a join the plan repeats is left as it is: computed once and read twice (plan/share.ts) rather than rewritten
  // under one of its readers
  const seen = new Map<string, number>();
  const count = (n: BoundNode): void => {
    if (n.kind === 'join') seen.set(fingerprint(n), (seen.get(fingerprint(n)) ?? 0) + 1);
    for (const c of children(n)) count(c);
  };
  count(root);
  const repeated = (n: BoundNode): boolean => {
    for (let x: BoundNode | undefined = n; x; x = 'input' in x ? (x.input as BoundNode) : undefined)
      if (x.kind === 'join') return (seen.get(fingerprint(x)) ?? 0) > 1;
    return false;
  };
  const walk = (n: BoundNode): BoundNode => {
    const m = mapChildren(n, walk);
    return m.kind === 'aggregate' && !repeated(m.input) ? (pushOne(m) ?? m) : m;
  };
  return walk(root);
}

/** A node with each input replaced by f(input) (the node itself when none changed). */
export function mapChildren(n: BoundNode, f: (c: BoundNode) => BoundNode): BoundNode {
  switch (n.kind) {
    case 'scan':
    case 'values':
      return n;
    case 'union': {
      const inputs = n.inputs.map(f);
      return inputs.every((x, i) => x === n.inputs[i]) ? n : { ...n, inputs };
    }
    case 'join': {
      const left = f(n.left),
        right = f(n.right);
      return left === n.left && right === n.right ? n : { ...n, left, right };
    }
    default: {
      const input = f(n.input);
      return input === n.input ? n : ({ ...n, input } as BoundNode);
    }
  }
}

/**
 * Whether a side holds a semi join: its rows are those another relation has, however few (TPC-H q18's orders of more
 * than 300 units: 57 of 1.5M at SF 1). The join with it would drop almost every row of the aggregated side, which a
 * partial aggregate below it would group first (q18: all 6M line items grouped by order, where the broadcast table
 * of 57 orders and its runtime filter kept 399 of them; CPU 1.28x the build without the rewrite).
 */
function hasSemi(n: BoundNode): boolean {
  if (n.kind === 'join' && n.type === 'semi') return true;
  for (const c of children(n)) if (hasSemi(c)) return true;
  return false;
}

/** The aggregate rewritten (see the top of this file), or null where the rule does not apply. */
function pushOne(agg: Aggregate): BoundNode | null {
  if (agg.groupBy.length === 0 || !agg.aggs.every((a) => PUSHED.has(a.fn))) return null;
  // the aggregate reads a join, or its computed columns
  const compute = agg.input.kind === 'compute' ? agg.input : null;
  const top = compute ? compute.input : agg.input;
  if (top.kind !== 'join') return null;
  const width = top.schema.length;
  // each argument: a column of the join's output, or an expression over them pushed down
  const args: (BoundExpr | null)[] = agg.aggs.map((a) => {
    if (a.col < 0) return null;
    if (a.col < width) return { k: 'col', col: a.col, type: top.schema[a.col].type, name: top.schema[a.col].name };
    return compute!.exprs[a.col - width];
  });
  if (!args.every((e) => e === null || cannotFail(e))) return null;
  const used = new Set<number>();
  for (const e of args) if (e) exprCols(e, used);
  // down the chain of inner joins while the arguments lie in one side; offsets of that side in the top's columns
  const steps: Step[] = [];
  let node: BoundNode = top,
    from = 0;
  const groups = agg.groupBy;
  let target = -1;
  let lead: number[] = [];
  while (node.kind === 'join' && node.type === 'inner' && node.leftKeys.length > 0) {
    const j: Join = node;
    const nl: number = j.left.schema.length;
    const inLeft: boolean = [...used].every((c) => c >= from && c < from + nl);
    const inRight: boolean = [...used].every((c) => c >= from + nl && c < from + j.schema.length);
    if (used.size === 0 || inLeft === inRight) break;
    const side: 'left' | 'right' = inLeft ? 'left' : 'right';
    // the other side's own join keys among the group columns: the rule's trigger
    const yFrom = side === 'left' ? from + nl : from,
      yKeys = side === 'left' ? j.rightKeys : j.leftKeys;
    const inGroups = yKeys.map((k) => yFrom + k).filter((c) => groups.includes(c));
    if (inGroups.length > 0 && !hasSemi(side === 'left' ? j.right : j.left)) {
      target = steps.length;
      lead = inGroups;
    }
    steps.push({ join: j, side });
    if (side === 'right') from += nl;
    node = side === 'left' ? j.left : j.right;
  }
  if (target < 0) return null;
  return ordered(rewrite(agg, top, steps.slice(0, target + 1), args), agg, lead);
}

/**
 * The final aggregate grouped with the dimension's key columns first (`lead`: they are expected to determine the
 * other group columns, which the shuffle then does not hash and the grouping checks, agg/group-ids.ts), under a
 * projection back to the aggregate's own column order.
 */
function ordered(fin: Aggregate, agg: Aggregate, lead: number[]): BoundNode {
  const g = agg.groupBy.length;
  if (g <= lead.length) return fin;
  const first = lead.map((c) => agg.groupBy.indexOf(c));
  const order = [...first, ...agg.groupBy.map((_, i) => i).filter((i) => !first.includes(i))];
  const schema = [...order.map((i) => agg.schema[i]), ...agg.schema.slice(g)];
  const node: Aggregate = { ...fin, groupBy: order.map((i) => fin.groupBy[i]), schema, lead: lead.length };
  const back = [...agg.groupBy.map((_, i) => order.indexOf(i)), ...agg.aggs.map((_, k) => g + k)];
  return { id: `${agg.id}.order`, kind: 'project', input: node, indices: back, schema: agg.schema };
}

/**
 * The rewrite at the last of `steps`: its aggregated side X summed by the columns of X read above it, the joins on
 * the way up rebuilt over the partial rows, the final aggregate over them.
 */
function rewrite(agg: Aggregate, top: Join, steps: Step[], args: (BoundExpr | null)[]): Aggregate {
  // where X's columns start in the top's output
  let from = 0;
  for (const s of steps) if (s.side === 'right') from += s.join.left.schema.length;
  const last = steps[steps.length - 1];
  const X = last.side === 'left' ? last.join.left : last.join.right;
  const xw = X.schema.length;
  const inX = (c: number) => c >= from && c < from + xw;
  // X's columns read above it: the keys on X's side of each join on the way, the group columns in X
  const keep: number[] = [];
  const need = (c: number) => {
    if (!keep.includes(c)) keep.push(c);
  };
  let off = 0;
  for (const s of steps) {
    const nl = s.join.left.schema.length;
    for (const k of s.join.leftKeys) if (inX(off + k)) need(off + k - from);
    for (const k of s.join.rightKeys) if (inX(off + nl + k)) need(off + nl + k - from);
    if (s.side === 'right') off += nl;
  }
  for (const g of agg.groupBy) if (inX(g)) need(g - from);
  // the arguments over X: its columns, and computed ones
  const toX = Array.from({ length: top.schema.length }, (_, c) => (inX(c) ? c - from : -1));
  const exprs: BoundExpr[] = [];
  const argCols = args.map((e) => {
    if (e === null) return -1;
    if (e.k === 'col') return toX[e.col];
    exprs.push(remapExpr(e, toX));
    return xw + exprs.length - 1;
  });
  const xIn: BoundNode = exprs.length
    ? {
        id: `${agg.id}.eager.compute`,
        kind: 'compute',
        input: X,
        exprs,
        schema: [...X.schema, ...exprs.map((e, i): Field => ({ name: `$eager${i}`, type: e.type }))],
      }
    : X;
  const partialAggs: BoundAggregate[] = agg.aggs.map((a, i) => ({
    ...a,
    col: argCols[i],
    as: `$partial${i}`,
    type: a.fn === 'count' ? { id: 'int64' } : a.type,
  }));
  const partial: Aggregate = {
    id: `${agg.id}.eager`,
    kind: 'aggregate',
    input: xIn,
    groupBy: keep,
    aggs: partialAggs,
    schema: [...keep.map((c) => X.schema[c]), ...partialAggs.map((a): Field => ({ name: a.as, type: a.type }))],
  };
  // the joins on the way up rebuilt over the partial rows; map: the old columns of the node built to its new ones
  let built: BoundNode = partial;
  let map: number[] = Array.from({ length: xw }, (_, c) => keep.indexOf(c));
  let states = partialAggs.map((_, i) => keep.length + i);
  for (let i = steps.length - 1; i >= 0; i--) {
    const { join, side } = steps[i];
    const other = side === 'left' ? join.right : join.left;
    const nl = join.left.schema.length;
    const ow = other.schema.length;
    const left = side === 'left' ? built : other,
      right = side === 'left' ? other : built;
    const lmap = side === 'left' ? map : Array.from({ length: ow }, (_, c) => c);
    const rmap = side === 'left' ? Array.from({ length: ow }, (_, c) => c) : map;
    const lw = left.schema.length;
    const next: Join = {
      ...join,
      left,
      right,
      leftKeys: join.leftKeys.map((k) => lmap[k]),
      rightKeys: join.rightKeys.map((k) => rmap[k]),
      schema: [...left.schema, ...right.schema],
    };
    map = [
      ...Array.from({ length: nl }, (_, c) => lmap[c]),
      ...Array.from({ length: join.right.schema.length }, (_, c) => (rmap[c] < 0 ? -1 : lw + rmap[c])),
    ];
    states = states.map((s) => (side === 'left' ? s : ow + s));
    built = next;
  }
  const finalAggs: BoundAggregate[] = agg.aggs.map((a, i) => ({
    ...a,
    fn: a.fn === 'count' ? 'sum' : a.fn,
    col: states[i],
  }));
  return { ...agg, input: built, groupBy: agg.groupBy.map((g) => map[g]), aggs: finalAggs };
}
