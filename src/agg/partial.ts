// Two-phase aggregation (the combiner contract): a map task turns its rows
// into partial states per group (`partialAggregate`); the reduce side merges
// the states of each group and finalizes them (`finalAggregate`).
//
// States per function: count → [count]; sum, avg → [sum, count] (the sum is
// exact int64 for integer input, float64 otherwise); min, max → [value].
// count_distinct: its column becomes one more grouping column of the partial
// rows (the per-group distinct set, as rows), counted after the merge; so all
// count_distinct of one aggregate must share a column to be combined.
import {
  type Batch,
  type Column,
  type DataType,
  type Field,
  type Schema,
  emptyBatch,
  gather,
  isInteger,
  lanes,
  sliceBatch,
  sliceColumn,
} from '../kernels/column.js';
import type { Selection } from '../expr/select.js';
import { MAX_PRECISION, decimalSumsColumn, decimalType } from '../kernels/decimal.js';
import { ExecutionError } from '../errors.js';
import { narrowWords } from '../kernels/keys.js';
import type { BoundAggregate } from '../plan/bound.js';
import {
  countColumn,
  countDistinct,
  countValid,
  decimalAvg,
  decimalSumColumn,
  float64Column,
  floatSums,
  groupsOf,
  intSumColumn,
  intSumFloats,
  minMax,
} from './aggregate.js';
import { type AggState, allMergeable, stateOf, unknownState } from './functions.js';
import type { Groups } from './groups.js';
import { decimalLanes128 } from './narrow.js';
import { ungroupable, ungroupedFinal, ungroupedStates } from './ungrouped.js';

/**
 * The state of an aggregate among a combiner's (count_distinct's column is a grouping column there, and holistic
 * functions never reach one: see combinable).
 */
export function mergeable(a: BoundAggregate): Exclude<AggState, { kind: 'distinct' }> {
  const st = stateOf(a);
  if (st === null || st.kind === 'distinct') throw new Error(`internal: ${a.fn} has no mergeable partial state`);
  return st;
}

function distinctCols(aggs: BoundAggregate[]): Set<number> {
  const cols = new Set<number>();
  for (const a of aggs) if (stateOf(a)?.kind === 'distinct') cols.add(a.col!);
  return cols;
}

/** Whether partial states serve: no holistic function (median), count_distinct of one column at most. */
export const combinable = (aggs: BoundAggregate[]) => allMergeable(aggs) && distinctCols(aggs).size <= 1;

/** What a combiner groups by (the group columns, then the count_distinct column) and the aggregates with a state. */
export function combinerGrouping(
  groupBy: number[],
  aggs: BoundAggregate[],
): { groupBy: number[]; aggs: BoundAggregate[] } {
  const d = [...distinctCols(aggs)];
  return { groupBy: [...groupBy, ...d], aggs: aggs.filter((a) => stateOf(a)?.kind !== 'distinct') };
}

/**
 * The schema of partial states: the group columns, the count_distinct column if any, then each aggregate's state
 * columns.
 */
export function partialSchema(input: Schema, groupBy0: number[], aggs0: BoundAggregate[]): Field[] {
  const { groupBy, aggs } = combinerGrouping(groupBy0, aggs0);
  const out: Field[] = groupBy.map((g, i) =>
    i < groupBy0.length ? input[g] : { name: '$distinct', type: input[g].type },
  );
  aggs.forEach((a, k) => {
    const t = a.col >= 0 ? input[a.col].type : null;
    const st = mergeable(a);
    switch (st.kind) {
      case 'count':
        out.push({ name: `$${k}.count`, type: { id: 'int64' } });
        break;
      case 'extreme':
        out.push({ name: `$${k}.${a.fn}`, type: t! });
        break;
      case 'sum':
        out.push({ name: `$${k}.sum`, type: sumStateType(t!) });
        out.push({ name: `$${k}.count`, type: { id: 'int64' } });
        break;
      default:
        unknownState(st);
    }
  });
  return out;
}

/** The type of a sum state: exact int64 for integers, decimal(38, s) for decimals, else float64. */
function sumStateType(t: DataType): DataType {
  if (isInteger(t)) return { id: 'int64' };
  if (t.id === 'decimal') return decimalType(MAX_PRECISION, t.scale!);
  return { id: 'float64' };
}

function sumState(c: Column, g: Groups, _n: number, what: string, cnt: Float64Array): Column[] {
  const sum = isInteger(c.type)
    ? intSumColumn(c, g, what, cnt)
    : c.type.id === 'decimal'
      ? decimalSumsColumn(c, g.gid, g.nGroups, cnt, sumStateType(c.type), what)
      : float64Column(floatSums(c, g), cnt);
  return [sum, countColumn(cnt)];
}

/**
 * The state columns of every aggregate. A column's sum state serves each sum
 * and avg of it (q01's sum and avg of one column are summed once), and the
 * counts of columns without nulls are the groups' sizes, counted once.
 */
function states(b: Batch, g: Groups, aggs: BoundAggregate[]): Column[] {
  const cols: Column[] = [];
  // a column without nulls counts its groups' sizes: countValid counts those once a Groups
  const counts = (c: Column | null) => countValid(c, g, b.length);
  const sums = new Map<number, Column[]>();
  for (const a of aggs) {
    const st = mergeable(a);
    switch (st.kind) {
      case 'count':
        cols.push(countColumn(counts(a.col < 0 ? null : b.columns[a.col])));
        break;
      case 'extreme':
        cols.push(minMax(b.columns[a.col], g, st.max));
        break;
      case 'sum': {
        let sc = sums.get(a.col);
        if (!sc)
          sums.set(
            a.col,
            (sc = sumState(b.columns[a.col], g, b.length, `partial sum of "${a.as}"`, counts(b.columns[a.col]))),
          );
        cols.push(...sc);
        break;
      }
      default:
        unknownState(st);
    }
  }
  return cols;
}

/**
 * `sel`: only these rows count (a dense filter's, not gathered): the others
 * fall in one extra group whose states are dropped.
 */
export function partialAggregate(
  b: Batch,
  groupBy0: number[],
  aggs0: BoundAggregate[],
  schema: Schema,
  sel?: Selection,
  lead = 0,
): Batch {
  const { groupBy, aggs } = combinerGrouping(groupBy0, aggs0);
  if (groupBy.length === 0) return ungroupedStates(b, aggs, sel); // no group ids (agg/ungrouped.ts)
  if ((sel ? sel.n : b.length) === 0 && groupBy.length > 0) return emptyBatch(schema);
  const g = groupsOf(b, groupBy, sel, false, lead);
  const keys = groupBy.map((i) => gather(b.columns[i], g.first, g.nGroups));
  if (!sel) return { length: g.nGroups, columns: [...keys, ...states(b, g, aggs)] };
  const withOthers = states(b, { ...g, nGroups: g.nGroups + 1 }, aggs);
  return { length: g.nGroups, columns: [...keys, ...withOthers.map((c) => sliceColumn(c, 0, g.nGroups))] };
}

/**
 * Partial aggregation straight from join indices, without materializing the
 * joined rows: when every group column comes from one side (and that side is
 * never missing), rows are grouped on that side once and each joined row
 * takes its group id by index. Null when the join does not allow it.
 */
export function partialAggregateJoin(
  l: Batch,
  r: Batch,
  left: Int32Array,
  right: Int32Array,
  n: number,
  type: string,
  groupBy0: number[],
  aggs0: BoundAggregate[],
  schema: Schema,
): Batch | null {
  const { groupBy, aggs } = combinerGrouping(groupBy0, aggs0);
  const nl = l.columns.length;
  const onLeft = groupBy.every((c) => c < nl),
    onRight = groupBy.every((c) => c >= nl);
  const side = groupBy.length === 0 || onLeft ? 'left' : onRight ? 'right' : null;
  if ((side === 'left' && type === 'right') || (side === 'left' && type === 'full')) return null;
  if (side === 'right' && type !== 'inner' && type !== 'right') return null;
  if (side === null) return null;
  if (n === 0 && groupBy.length > 0) return emptyBatch(schema);
  const S = side === 'left' ? l : r,
    idxS = side === 'left' ? left : right;
  const gs = groupsOf(
    S,
    groupBy.map((c) => (side === 'left' ? c : c - nl)),
  );
  // Renumber the groups that joined rows reach, in order of first appearance.
  const renum = new Int32Array(gs.nGroups).fill(-1);
  const first: number[] = [];
  const gid = new Int32Array(n);
  for (let k = 0; k < n; k++) {
    const old = groupBy.length === 0 ? 0 : gs.gid[idxS[k]];
    let g = renum[old];
    if (g < 0) {
      g = renum[old] = first.length;
      first.push(gs.first[old]);
    }
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

/**
 * Merge partial states (any number of rows per group) and finalize. `distinctCounts`: the column after the
 * groups holds counts of disjoint distinct values to add up (two-level states, agg/twolevel.ts), not the values.
 */
export function finalAggregate(
  b: Batch,
  nGroupCols: number,
  aggs: BoundAggregate[],
  out: Schema,
  distinctCounts = false,
  lead = 0,
): Batch {
  if (nGroupCols === 0 && ungroupable(aggs)) return ungroupedFinal(b, aggs); // no group ids (agg/ungrouped.ts)
  const keys = Array.from({ length: nGroupCols }, (_, i) => i);
  if (b.length === 0 && nGroupCols > 0) return emptyBatch(out);
  const g = groupsOf(b, keys, undefined, false, lead);
  const cols: Column[] = keys.map((i) => gather(b.columns[i], g.first, g.nGroups));
  const distinct = combinable(aggs) && aggs.some((a) => stateOf(a)?.kind === 'distinct');
  let s = nGroupCols + (distinct ? 1 : 0);
  for (const a of aggs) {
    const st = stateOf(a);
    if (st?.kind === 'distinct') {
      cols.push(
        distinctCounts ? countColumn(floatSums(b.columns[nGroupCols], g)) : countDistinct(b.columns[nGroupCols], g),
      );
      continue;
    }
    const m = mergeable(a);
    switch (m.kind) {
      case 'count':
        cols.push(countColumn(floatSums(b.columns[s++], g)));
        break;
      case 'extreme':
        cols.push(minMax(b.columns[s++], g, m.max));
        break;
      case 'sum': {
        const sumCol = b.columns[s++],
          cntCol = b.columns[s++];
        const cnt = floatSums(cntCol, g);
        if (sumCol.type.id === 'decimal') {
          cols.push(m.avg ? decimalAvg(sumCol, g, cnt) : decimalSumColumn(sumCol, g, cnt, a.as));
        } else if (!m.avg) {
          cols.push(
            sumCol.type.id === 'int64'
              ? intSumColumn(sumCol, g, `sum of "${a.as}"`)
              : float64Column(floatSums(sumCol, g), cnt),
          );
        } else {
          const sums = sumCol.type.id === 'int64' ? intSumFloats(sumCol, g) : floatSums(sumCol, g);
          for (let k = 0; k < sums.length; k++) sums[k] = cnt[k] > 0 ? sums[k] / cnt[k] : 0;
          cols.push(float64Column(sums, cnt));
        }
        break;
      }
      default:
        unknownState(m);
    }
  }
  return { length: g.nGroups, columns: cols };
}

/** Rows of a task (its first) a combiner samples to decide whether aggregation pays. */
export const PASS_THROUGH_SAMPLE = 16384;
/** Groups per row of the sample at or below which the task aggregates (the rule before the task's estimate). */
const PASS_THROUGH_RATIO = 0.5;
/**
 * Groups per row, estimated over the whole task, at or below which a task whose sample did not halve aggregates.
 * Lower than the sample's line: the map task then hashes every row into a table of all the task's groups (a reduce
 * task's table holds its partition's share) and the reduce hashes the states again; what it saves is the shuffle
 * and the reduce's share of the rows dropped. Measured (6M rows, 500K-row map tasks, count and sum by an int64 key,
 * paired whole processes, aggregating against passing through, CPU): 0.04 groups a row 0.88x, 0.08 0.92x, 0.14
 * 1.05x, 0.22 1.12x; EXCEPT's count by o_custkey on JCC-H (0.43) 1.07x; ROLLUP's (l_suppkey, l_returnflag) (0.06)
 * 0.78x.
 */
const TASK_RATIO = 0.1;
/**
 * A map task with fewer rows than the sample is judged on all of them, down to this many:
 * below, it aggregates. (One small task that aggregates where the others pass through
 * puts states beside rows in every partition, and each reduce task takes the slower
 * mixed path: aggregate by key at s = 0 has a last row group of 19K rows.)
 */
const PASS_THROUGH_MIN = 4096;
/** Distinct groups per row of the first PASS_THROUGH_MIN rows below which the first look never passes rows through. */
const PASS_THROUGH_FIRST_LOOK = 0.9;

/**
 * The groups expected among a task's `rows` rows (or a batch's, fewer than `n`), from its first `n` rows holding
 * `d` groups, `d1` of them in the first n/2 rows. Rows drawn alike from D groups hold D(1 - exp(-m/D)) groups in
 * m rows, so the halves give y = n/D from d/d1 = 1 + exp(-y/2), and the task D(1 - exp(-y rows/n)) with
 * D = d/(1 - exp(-y)). Fitted on the growth between the halves, not on d/n alone: rows clustered in runs (file
 * order: a key's rows side by side) lower d/n but bring as many new groups in the second half as in the first,
 * which reads as y = 0, and the estimate is then d/n of the task's rows, the sample's own ratio. It is never above
 * that (y >= 0), so a sample that shrinks by half still aggregates.
 */
export function estimatedGroups(n: number, d: number, d1: number, rows: number, y = growthOf(d, d1)): number {
  if (y <= 0) return (d * rows) / n;
  if (!Number.isFinite(y)) return Math.min(d, rows); // no group after the first half: the sample holds them all
  return (d * -Math.expm1((-y * rows) / n)) / -Math.expm1(-y);
}

/** y = n/D of the halves' fit (estimatedGroups): 0 when the second half holds as many new groups as the first. */
function growthOf(d: number, d1: number): number {
  const fresh = d - d1; // groups first seen in the second half
  if (d1 <= 0 || fresh >= d1) return 0;
  return fresh <= 0 ? Infinity : -2 * Math.log(fresh / d1);
}

/**
 * y two standard errors above (`side` 1) or below (-1) the fit, for a decision that must hold however the sample
 * fell. The collisions (of the first half with itself, `h - d1`; of the second with what came before, `h - fresh`)
 * counted as Poisson: on JCC-H's lineitem by (l_suppkey, l_partkey), 13K groups in 16,384 rows, y = 0.02 with a
 * standard error of 0.018, where the point estimate had two map tasks of twelve aggregate and the rest pass through.
 */
function growthBound(n: number, d: number, d1: number, side: 1 | -1): number {
  const y = growthOf(d, d1);
  if (!Number.isFinite(y)) return y;
  const h = n / 2,
    fresh = Math.max(1, d - d1);
  const varLog = (h - fresh) / (fresh * fresh) + (h - d1) / (d1 * d1);
  return Math.max(0, y + side * 2 * 2 * Math.sqrt(Math.max(0, varLog)));
}

/** The groups of a sample's rows and how many of them its first half holds. */
export interface SampleGroups {
  groups: number;
  firstHalf: number;
}

/** SampleGroups of group ids (a pass over the first half's ids). */
export function sampleGroupsOf(g: Groups, n: number): SampleGroups {
  const seen = new Uint8Array(g.nGroups);
  let firstHalf = 0;
  for (let i = 0, h = n >> 1; i < h; i++) {
    const k = g.gid[i];
    if (seen[k] === 0) {
      seen[k] = 1;
      firstHalf++;
    }
  }
  return { groups: g.nGroups, firstHalf };
}

/**
 * Adaptive pass-through of a combiner: whether partial aggregation would barely shrink a task's `rows` rows,
 * judged on its first rows (`head`, up to 16,384 of them) by `groups` of a sample. The task aggregates where the
 * sample holds at most one group per two rows (the rule before the estimate), and also where the groups the task
 * would hold (estimatedGroups, y two standard errors lower: the sample shows it clearly) are at most a tenth of
 * its rows: a sample that looks distinct because the task's groups outnumber the sample's rows, not its own rows.
 * Passes through only where the rule before did.
 */
export function passesThrough(head: Batch, groups: (sample: Batch) => SampleGroups, rows = head.length): boolean {
  const n = Math.min(PASS_THROUGH_SAMPLE, head.length);
  if (n < PASS_THROUGH_MIN) return false;
  const task = Math.max(rows, n);
  const spread = (m: number, s: SampleGroups, side: 1 | -1) =>
    estimatedGroups(m, s.groups, s.firstHalf, task, growthBound(m, s.groups, s.firstHalf, side)) > TASK_RATIO * task;
  // A first look at the first 4,096 rows: when at least 90% of them are distinct groups (more than one group per
  // two rows over the whole sample as well, for rows drawn alike) and even y two standard errors higher leaves the
  // task more than a tenth of its rows in groups, the rest of the sample is not grouped: a quarter of the work
  // where nothing reduces (aggregate by key at s = 0: every map task passes through, and the test was about 4% of
  // the map stage's CPU).
  if (n > PASS_THROUGH_MIN) {
    const s = groups(sliceBatch(head, 0, PASS_THROUGH_MIN));
    if (s.groups >= PASS_THROUGH_FIRST_LOOK * PASS_THROUGH_MIN && spread(PASS_THROUGH_MIN, s, 1)) return true;
  }
  const s = groups(n === head.length ? head : sliceBatch(head, 0, n));
  return s.groups > PASS_THROUGH_RATIO * n && spread(n, s, -1);
}

/**
 * Adaptive pass-through: whether partial aggregation would barely shrink these `rows` rows (passesThrough over
 * their first 16,384), by `groups` of a sample.
 */
export function barelyShrinks(b: Batch, groups: (sample: Batch) => Groups, rows = b.length): boolean {
  return (
    rows >= 2 * PASS_THROUGH_SAMPLE &&
    b.length >= PASS_THROUGH_SAMPLE &&
    passesThrough(b, (sample) => sampleGroupsOf(groups(sample), sample.length), rows)
  );
}

/**
 * Every row as its own group's partial state, without hashing: what a map
 * task ships when partial aggregation does not reduce (adaptive pass-through).
 */
export function rowsAsStates(b: Batch, groupBy0: number[], aggs0: BoundAggregate[]): Batch {
  const { groupBy, aggs } = combinerGrouping(groupBy0, aggs0);
  const n = b.length;
  const validCount = (c: Column | null): Column => {
    const v = new BigInt64Array(n).fill(1n);
    if (c?.valid) for (let i = 0; i < n; i++) if (!c.valid[i]) v[i] = 0n;
    return { type: { id: 'int64' }, length: n, values: v, valid: null };
  };
  const cols: Column[] = groupBy.map((g) => b.columns[g]);
  for (const a of aggs) {
    const c = a.col >= 0 ? b.columns[a.col] : null;
    const st = mergeable(a);
    if (st.kind === 'count') cols.push(validCount(c));
    else if (st.kind === 'extreme') cols.push(c!);
    else if (st.kind !== 'sum') unknownState(st);
    else if (c!.type.id === 'decimal') {
      const t = sumStateType(c!.type);
      const state =
        lanes(c!.type) === 2
          ? { ...c!, type: t } // the same 128-bit lanes, typed as the state
          : { type: t, length: n, values: decimalLanes128(c!.values as BigInt64Array, n), valid: null };
      cols.push({ ...state, valid: c!.valid }, validCount(c));
    } else {
      const wide = isInteger(c!.type);
      if (c!.type.id === (wide ? 'int64' : 'float64')) {
        cols.push(c!, validCount(c));
        continue;
      } // already a state
      const src = c!.values as any;
      let v: BigInt64Array | Float64Array;
      if (wide && src instanceof BigUint64Array) {
        v = new BigInt64Array(n);
        for (let i = 0; i < n; i++) {
          const x = src[i];
          if (x > 9223372036854775807n)
            throw new ExecutionError(`partial sum of "${a.as}" overflows a 64-bit integer (${x})`);
          v[i] = x;
        }
      } else if (wide)
        v = new BigInt64Array(narrowWords(src, n).buffer); // sign-extended word by word: no bigint a row
      else {
        v = new Float64Array(n);
        v.set((src as Float32Array).subarray(0, n));
      }
      cols.push({ type: { id: wide ? 'int64' : 'float64' }, length: n, values: v, valid: c!.valid }, validCount(c));
    }
  }
  return { length: n, columns: cols };
}
