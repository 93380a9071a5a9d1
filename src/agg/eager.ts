// Eager aggregation: aggregate(join(L, R)) computed as a partial aggregate of
// each side by (join key, the group columns it provides) with a row count,
// a join of the partial rows, and states weighted by the other side's count:
//   count(*)   = Σ cntL · cntR          sum(L.x)   = Σ sumL(x) · cntR
//   count(L.x) = Σ countL(x) · cntR     min/max    unchanged
// An outer join's missing side counts as 1 (its row appears once, with nulls),
// which makes the rewrite correct for left, right and full joins too.
// count_distinct is not rewritten: the join multiplies rows, not values.
import { type Batch, type Column, type Field, type Schema, emptyBatch, gather, isInteger } from '../kernels/column.js';
import type { BoundAggregate, BoundNode } from '../plan/bound.js';
import { countColumn, float64Column, groupsOf, int64Column, minMax } from './aggregate.js';
import type { Groups } from './groups.js';
import { stateOf } from './functions.js';
import { partialSchema } from './partial.js';

type JoinNode = Extract<BoundNode, { kind: 'join' }>;
type AggNode = Extract<BoundNode, { kind: 'aggregate' }>;

/** One side's partial aggregate: keys first, then its group columns, count(*), then its aggregates' states. */
interface EagerSide {
  groupBy: number[];
  aggs: BoundAggregate[];
  schema: Field[];
  /** the join keys' positions in the partial schema */
  keys: number[];
}

/** Where each piece of the final partial states comes from, in the joined partial rows. */
interface EagerLayout {
  /** final group columns: side and column of the side's partial schema */
  groups: { side: 'left' | 'right'; col: number }[];
  /** count(*) column of each side's partial schema */
  countCol: { left: number; right: number };
  /** per final aggregate: its side (none for count(*)) and its state columns in that side's partial schema */
  aggs: { fn: BoundAggregate['fn']; side: 'left' | 'right' | null; cols: number[]; as: string }[];
}

export interface EagerPlan {
  left: EagerSide;
  right: EagerSide;
  layout: EagerLayout;
  outSchema: Schema;
}

const EAGER_TYPES = new Set(['inner', 'left', 'right', 'full']);

/** The eager plan of aggregate(join), or null where the rewrite does not apply. */
export function eagerPlan(agg: AggNode, join: JoinNode): EagerPlan | null {
  if (
    !EAGER_TYPES.has(join.type) ||
    join.leftKeys.length === 0 ||
    agg.aggs.some((a) => {
      // holistic and distinct functions are not weighted sums; nor are exact decimal sums here
      const st = stateOf(a);
      // the kinds weighted here, by name: a new kind of state is not rewritten until it is added
      if (st === null || (st.kind !== 'count' && st.kind !== 'extreme' && st.kind !== 'sum')) return true;
      return a.decimal === true && st.kind === 'sum';
    })
  )
    return null;
  const nl = join.left.schema.length;
  const sideOf = (c: number) => (c < nl ? { side: 'left' as const, col: c } : { side: 'right' as const, col: c - nl });
  const build = (
    side: 'left' | 'right',
  ): EagerSide & { groupPos: Map<number, number>; aggPos: Map<BoundAggregate, number> } => {
    const input = side === 'left' ? join.left : join.right;
    const keys = side === 'left' ? join.leftKeys : join.rightKeys;
    const groupBy = [...keys];
    const groupPos = new Map<number, number>();
    for (const g of agg.groupBy) {
      const s = sideOf(g);
      if (s.side !== side || groupPos.has(s.col)) continue;
      groupPos.set(s.col, groupBy.length);
      groupBy.push(s.col);
    }
    const aggs: BoundAggregate[] = [{ fn: 'count', col: -1, as: '$rows', type: { id: 'int64' } }];
    const aggPos = new Map<BoundAggregate, number>();
    for (const a of agg.aggs) {
      if (a.col < 0 || sideOf(a.col).side !== side) continue;
      aggPos.set(a, aggs.length);
      aggs.push({ ...a, col: sideOf(a.col).col });
    }
    return {
      groupBy,
      aggs,
      schema: partialSchema(input.schema, groupBy, aggs),
      keys: keys.map((_, i) => i),
      groupPos,
      aggPos,
    };
  };
  const L = build('left'),
    R = build('right');
  // State columns of aggregate k of a side: after the group columns, count(*) takes one column.
  const stateCols = (s: typeof L, k: number): number[] => {
    let c = s.groupBy.length;
    for (let i = 0; i < k; i++) c += stateWidth(s.aggs[i].fn);
    return Array.from({ length: stateWidth(s.aggs[k].fn) }, (_, j) => c + j);
  };
  const layout: EagerLayout = {
    groups: agg.groupBy.map((g) => {
      const s = sideOf(g);
      const side = s.side === 'left' ? L : R;
      // A group column that is also a join key sits among the keys.
      const keyIdx = (s.side === 'left' ? join.leftKeys : join.rightKeys).indexOf(s.col);
      return { side: s.side, col: keyIdx >= 0 ? keyIdx : side.groupPos.get(s.col)! };
    }),
    countCol: { left: L.groupBy.length, right: R.groupBy.length },
    aggs: agg.aggs.map((a) => {
      if (a.col < 0) return { fn: a.fn, side: null, cols: [], as: a.as };
      const side = sideOf(a.col).side;
      const s = side === 'left' ? L : R;
      return { fn: a.fn, side, cols: stateCols(s, s.aggPos.get(a)!), as: a.as };
    }),
  };
  const strip = ({ groupBy, aggs, schema, keys }: typeof L): EagerSide => ({ groupBy, aggs, schema, keys });
  return { left: strip(L), right: strip(R), layout, outSchema: partialSchema(join.schema, agg.groupBy, agg.aggs) };
}

function stateWidth(fn: BoundAggregate['fn']): number {
  return stateOf({ fn })?.kind === 'sum' ? 2 : 1;
}

/** Weights of the joined partial rows: the other side's row count, 1 where that side is missing. */
function weights(b: Batch, col: number, idx: Int32Array, n: number): Float64Array {
  const w = new Float64Array(n);
  const v = b.columns[col].values as BigInt64Array;
  for (let k = 0; k < n; k++) w[k] = idx[k] < 0 ? 1 : Number(v[idx[k]]);
  return w;
}

/** Σ state · weight per group; exact for integer states. */
function weightedSums(c: Column, idx: Int32Array, w: Float64Array, gid: Int32Array, nGroups: number, n: number) {
  const seen = new Float64Array(nGroups);
  if (isInteger(c.type)) {
    const sums: (bigint | null)[] = new Array(nGroups).fill(null);
    const v = c.values as BigInt64Array;
    for (let k = 0; k < n; k++) {
      const j = idx[k];
      if (j < 0 || (c.valid !== null && !c.valid[j])) continue;
      const g = gid[k];
      sums[g] = (sums[g] ?? 0n) + v[j] * BigInt(w[k]);
      seen[g]++;
    }
    return { ints: sums, floats: null, seen };
  }
  const sums = new Float64Array(nGroups);
  const v = c.values as Float64Array;
  for (let k = 0; k < n; k++) {
    const j = idx[k];
    if (j < 0 || (c.valid !== null && !c.valid[j])) continue;
    sums[gid[k]] += v[j] * w[k];
    seen[gid[k]]++;
  }
  return { ints: null, floats: sums, seen };
}

/**
 * Groups of the joined pairs. When every group column comes from one side and
 * that side is never missing, that side's rows are grouped once and each pair
 * takes its group by index (no gather of the group columns per pair).
 */
function pairGroups(
  groups: EagerLayout['groups'],
  side: (s: 'left' | 'right') => { b: Batch; idx: Int32Array },
  n: number,
): { g: Groups; keyCols: Column[] } {
  const s = groups.length > 0 && groups.every((x) => x.side === groups[0].side) ? side(groups[0].side) : null;
  if (s !== null && !s.idx.subarray(0, n).some((j) => j < 0)) {
    const gs = groupsOf(
      s.b,
      groups.map((x) => x.col),
    );
    const renum = new Int32Array(gs.nGroups).fill(-1);
    const first: number[] = [];
    const gid = new Int32Array(n);
    for (let k = 0; k < n; k++) {
      const old = gs.gid[s.idx[k]];
      let id = renum[old];
      if (id < 0) {
        id = renum[old] = first.length;
        first.push(k);
      }
      gid[k] = id;
    }
    const firstPair = Int32Array.from(first);
    const rows = Int32Array.from(first, (k) => s.idx[k]);
    return {
      g: { gid, nGroups: first.length, first: firstPair },
      keyCols: groups.map((x) => gather(s.b.columns[x.col], rows)),
    };
  }
  const groupCols = groups.map((x) => gather(side(x.side).b.columns[x.col], side(x.side).idx, n));
  const g = groupsOf(
    { length: n, columns: groupCols },
    groupCols.map((_, i) => i),
  );
  return { g, keyCols: groupCols.map((c) => gather(c, g.first, g.nGroups)) };
}

/**
 * The final aggregate's partial states (partialSchema of the join output) from
 * joined partial rows: pairs (left[k], right[k]), -1 for a missing side.
 */
export function eagerStates(
  l: Batch,
  r: Batch,
  left: Int32Array,
  right: Int32Array,
  n: number,
  plan: EagerPlan,
): Batch {
  const { layout } = plan;
  const side = (s: 'left' | 'right') => (s === 'left' ? { b: l, idx: left } : { b: r, idx: right });
  if (layout.groups.length > 0 && n === 0) return emptyBatch(plan.outSchema);
  const { g, keyCols } = pairGroups(layout.groups, side, n);
  const wL = weights(l, layout.countCol.left, left, n),
    wR = weights(r, layout.countCol.right, right, n);
  const cols: Column[] = keyCols;
  for (const a of layout.aggs) {
    if (a.side === null) {
      // count(*): pairs of rows
      const cnt = new Float64Array(g.nGroups);
      for (let k = 0; k < n; k++) cnt[g.gid[k]] += wL[k] * wR[k];
      cols.push(countColumn(cnt));
      continue;
    }
    const { b, idx } = side(a.side);
    const other = a.side === 'left' ? wR : wL;
    const st = stateOf(a);
    if (st?.kind === 'extreme') {
      const v = gather(b.columns[a.cols[0]], idx, n);
      cols.push(minMax(v, { gid: g.gid, nGroups: g.nGroups, first: g.first }, st.max));
      continue;
    }
    const states = a.cols.map((c) => weightedSums(b.columns[c], idx, other, g.gid, g.nGroups, n));
    for (const [i, s] of states.entries()) {
      const isCount = st?.kind === 'count' || i === 1;
      if (isCount) {
        const cnt = new Float64Array(g.nGroups);
        (s.ints ?? []).forEach((x, k) => {
          cnt[k] = x === null ? 0 : Number(x);
        });
        cols.push(countColumn(cnt));
      } else if (s.ints) {
        cols.push(int64Column(s.ints, `sum of "${a.as}"`));
      } else {
        cols.push(float64Column(s.floats!, s.seen));
      }
    }
  }
  return { length: g.nGroups, columns: cols };
}
