// Two-phase aggregation (the combiner contract): a map task turns its rows
// into partial states per group (`partialAggregate`); the reduce side merges
// the states of each group and finalizes them (`finalAggregate`).
//
// States per function: count → [count]; sum, avg → [sum, count] (the sum is
// exact int64 for integer input, float64 otherwise); min, max → [value].
// count_distinct has no fixed-size state and is not combined.
import { type Batch, type Column, type Field, type Schema, emptyBatch, gather, isInteger } from '../kernels/column.js';
import type { BoundAggregate } from '../plan/bound.js';
import {
  countColumn, countValid, exactIntSums, float64Column, floatSums, groupsOf, int64Column, minMax,
} from './aggregate.js';
import type { Groups } from './groups.js';

export const combinable = (aggs: BoundAggregate[]) => aggs.every((a) => a.fn !== 'count_distinct');

/** The schema of partial states: the group columns, then each aggregate's state columns. */
export function partialSchema(input: Schema, groupBy: number[], aggs: BoundAggregate[]): Field[] {
  const out: Field[] = groupBy.map((g) => input[g]);
  aggs.forEach((a, k) => {
    const t = a.col >= 0 ? input[a.col].type : null;
    if (a.fn === 'count') out.push({ name: `$${k}.count`, type: { id: 'int64' } });
    else if (a.fn === 'min' || a.fn === 'max') out.push({ name: `$${k}.${a.fn}`, type: t! });
    else {
      out.push({ name: `$${k}.sum`, type: isInteger(t!) ? { id: 'int64' } : { id: 'float64' } });
      out.push({ name: `$${k}.count`, type: { id: 'int64' } });
    }
  });
  return out;
}

function sumState(c: Column, g: Groups, n: number, what: string): Column[] {
  const cnt = countValid(c, g, n);
  const sum = isInteger(c.type) ? int64Column(exactIntSums(c, g), what) : float64Column(floatSums(c, g), cnt);
  return [sum, countColumn(cnt)];
}

function states(b: Batch, g: Groups, aggs: BoundAggregate[]): Column[] {
  const cols: Column[] = [];
  for (const a of aggs) {
    if (a.fn === 'count') cols.push(countColumn(countValid(a.col < 0 ? null : b.columns[a.col], g, b.length)));
    else if (a.fn === 'min' || a.fn === 'max') cols.push(minMax(b.columns[a.col], g, a.fn === 'max'));
    else cols.push(...sumState(b.columns[a.col], g, b.length, `partial sum of "${a.as}"`));
  }
  return cols;
}

export function partialAggregate(b: Batch, groupBy: number[], aggs: BoundAggregate[], schema: Schema): Batch {
  if (b.length === 0 && groupBy.length > 0) return emptyBatch(schema);
  const g = groupsOf(b, groupBy);
  const keys = groupBy.map((i) => gather(b.columns[i], g.first, g.nGroups));
  return { length: g.nGroups, columns: [...keys, ...states(b, g, aggs)] };
}

/**
 * Partial aggregation straight from join indices, without materializing the
 * joined rows: when every group column comes from one side (and that side is
 * never missing), rows are grouped on that side once and each joined row
 * takes its group id by index. Null when the join does not allow it.
 */
export function partialAggregateJoin(
  l: Batch, r: Batch, left: Int32Array, right: Int32Array, n: number, type: string,
  groupBy: number[], aggs: BoundAggregate[], schema: Schema,
): Batch | null {
  const nl = l.columns.length;
  const onLeft = groupBy.every((c) => c < nl), onRight = groupBy.every((c) => c >= nl);
  const side = groupBy.length === 0 || onLeft ? 'left' : onRight ? 'right' : null;
  if (side === 'left' && type === 'right' || side === 'left' && type === 'full') return null;
  if (side === 'right' && type !== 'inner' && type !== 'right') return null;
  if (side === null) return null;
  if (n === 0 && groupBy.length > 0) return emptyBatch(schema);
  const S = side === 'left' ? l : r, idxS = side === 'left' ? left : right;
  const gs = groupsOf(S, groupBy.map((c) => (side === 'left' ? c : c - nl)));
  // Renumber the groups that joined rows reach, in order of first appearance.
  const renum = new Int32Array(gs.nGroups).fill(-1);
  const first: number[] = [];
  const gid = new Int32Array(n);
  for (let k = 0; k < n; k++) {
    const old = groupBy.length === 0 ? 0 : gs.gid[idxS[k]];
    let g = renum[old];
    if (g < 0) { g = renum[old] = first.length; first.push(gs.first[old]); }
    gid[k] = g;
  }
  const nGroups = groupBy.length === 0 ? 1 : first.length;
  const g: Groups = { gid, nGroups, first: Int32Array.from(first) };
  // Only the aggregated columns are gathered.
  const cols: Column[] = new Array(nl + r.columns.length);
  for (const a of aggs) {
    if (a.col < 0 || cols[a.col]) continue;
    cols[a.col] = a.col < nl ? gather(l.columns[a.col], left, n) : gather(r.columns[a.col - nl], right, n);
  }
  const keys = groupBy.map((c) => gather(side === 'left' ? l.columns[c] : r.columns[c - nl], g.first, nGroups));
  return { length: nGroups, columns: [...keys, ...states({ length: n, columns: cols }, g, aggs)] };
}

/** Merge partial states (any number of rows per group) and finalize. */
export function finalAggregate(b: Batch, nGroupCols: number, aggs: BoundAggregate[], out: Schema): Batch {
  const keys = Array.from({ length: nGroupCols }, (_, i) => i);
  if (b.length === 0 && nGroupCols > 0) return emptyBatch(out);
  const g = groupsOf(b, keys);
  const cols: Column[] = keys.map((i) => gather(b.columns[i], g.first, g.nGroups));
  let s = nGroupCols;
  for (const a of aggs) {
    if (a.fn === 'count') {
      cols.push(countColumn(floatSums(b.columns[s++], g)));
    } else if (a.fn === 'min' || a.fn === 'max') {
      cols.push(minMax(b.columns[s++], g, a.fn === 'max'));
    } else {
      const sumCol = b.columns[s++], cntCol = b.columns[s++];
      const cnt = floatSums(cntCol, g);
      if (a.fn === 'sum') {
        cols.push(sumCol.type.id === 'int64'
          ? int64Column(exactIntSums(sumCol, g), `sum of "${a.as}"`)
          : float64Column(floatSums(sumCol, g), cnt));
      } else {
        const sums = sumCol.type.id === 'int64'
          ? Float64Array.from(exactIntSums(sumCol, g), (x) => (x === null ? 0 : Number(x)))
          : floatSums(sumCol, g);
        for (let k = 0; k < sums.length; k++) sums[k] = cnt[k] > 0 ? sums[k] / cnt[k] : 0;
        cols.push(float64Column(sums, cnt));
      }
    }
  }
  return { length: g.nGroups, columns: cols };
}
