// The combiner of an aggregate right above a join, fed with the join's
// matches chunk by chunk: group ids come from the rows of one side (the
// "grouped" side: the build side, grouped once, or a probing batch), values
// are read through the row indices, so neither the joined rows nor a
// gathered copy of the aggregated columns ever exist. A joined row whose
// grouped side is missing (an outer join) falls in one more group, of nulls.
import { type Batch, type Column, type Schema, emptyBatch, gather, isInteger } from '../kernels/column.js';
import { valueComparator } from '../kernels/sort.js';
import type { BoundAggregate } from '../plan/bound.js';
import type { JoinType } from '../plan/spec.js';
import { PAIR_CHUNK } from '../kernels/join.js';
import { countColumn, float64Column, groupsOf, wordSumColumn } from './aggregate.js';
import { MAX_PRECISION, decimalColumn, decimalType } from '../kernels/decimal.js';
import { DecimalWords } from './decimal-words.js';
import type { Groups } from './groups.js';
import { combinable, combinerGrouping, mergeable } from './partial.js';
import { stateOf } from './functions.js';

const TWO32 = 4294967296;

/** Group ids of one chunk of matches, shared by the aggregators of the thread (each chunk is used at once). */
const GIDS = new Int32Array(PAIR_CHUNK);
/** Row indices of one chunk of consecutive rows (addRows), shared likewise. */
const ROWS = new Int32Array(PAIR_CHUNK);

interface State {
  agg: BoundAggregate;
  /** the aggregated column is on the left side of the join (else the right) */
  left: boolean;
  /** column index within its side, -1 for count(*) */
  col: number;
  cnt: Float64Array;
  /** sums: float64 sums, or the low and high 32-bit halves of exact integer sums */
  sum?: Float64Array;
  hi?: Float64Array;
  /** decimal sums: exact, over the values' 32-bit words */
  dec?: DecimalWords;
  /** min/max: the best row of the grouped side per group, -1 when none yet */
  best?: Int32Array;
  cmp?: (i: number, j: number) => number;
}

/**
 * The join a JoinAggregator serves: its type, the side whose rows are grouped
 * (the left when groupedLeft), the sides' schemas and key columns (indices
 * within each side).
 */
export interface JoinShape {
  type: JoinType;
  groupedLeft: boolean;
  leftSchema: Schema;
  rightSchema: Schema;
  leftKeys: number[];
  rightKeys: number[];
}

/**
 * The combiner's grouping (see combinerGrouping), with each group column that
 * is a key of an inner join taken from the grouped side when both sides' key
 * columns have the same type: on every match the two hold the same value, so
 * the grouped side's groups serve (a count_distinct of the other side's key,
 * say). Float keys are left alone: -0 and 0 match but print differently.
 */
function sideGrouping(
  join: JoinShape,
  groupBy0: number[],
  aggs0: BoundAggregate[],
): { groupBy: number[]; aggs: BoundAggregate[] } {
  const g = combinerGrouping(groupBy0, aggs0);
  if (join.type !== 'inner') return g;
  const nl = join.leftSchema.length;
  const groupBy = g.groupBy.map((c) => {
    if (c < nl === join.groupedLeft) return c;
    const k = join.groupedLeft ? join.rightKeys.indexOf(c - nl) : join.leftKeys.indexOf(c);
    if (k < 0) return c;
    const l = join.leftSchema[join.leftKeys[k]].type,
      r = join.rightSchema[join.rightKeys[k]].type;
    if (l.id === 'float32' || l.id === 'float64' || JSON.stringify(l) !== JSON.stringify(r)) return c;
    return join.groupedLeft ? join.leftKeys[k] : nl + join.rightKeys[k];
  });
  return { groupBy, aggs: g.aggs };
}

export class JoinAggregator {
  /**
   * the grouped side's groups: ids nGroups (its row missing, an outer join) and nGroups + 1 (no joined row, see
   * addRows) follow
   */
  readonly groups: Groups;
  private readonly reached: Uint8Array;
  private readonly gids = GIDS;
  private readonly states: State[];

  private constructor(
    private readonly grouped: Batch,
    private readonly groupedLeft: boolean,
    private readonly groupCols: number[],
    aggs: BoundAggregate[],
    private readonly leftSchema: Schema,
    private readonly rightSchema: Schema,
    private readonly schema: Schema,
    groupsFor?: (cols: number[]) => Groups,
  ) {
    this.groups = groupsFor ? groupsFor(groupCols) : groupsOf(grouped, groupCols);
    // two more groups after the grouped side's: rows whose grouped side is missing, and (addRows) rows that joined none
    const G = this.groups.nGroups + 2,
      nl = leftSchema.length;
    this.reached = new Uint8Array(G);
    this.states = aggs.map((a) => {
      const left = a.col < nl;
      const col = a.col < 0 ? -1 : left ? a.col : a.col - nl;
      const s: State = { agg: a, left, col, cnt: new Float64Array(G) };
      const st = mergeable(a);
      if (st.kind === 'extreme') {
        s.best = new Int32Array(G).fill(-1);
        s.cmp = valueComparator(grouped.columns[col]);
      } else if (st.kind === 'sum') {
        const t = (left ? leftSchema : rightSchema)[col].type;
        if (t.id === 'decimal') s.dec = new DecimalWords(G);
        else {
          s.sum = new Float64Array(G);
          if (isInteger(t)) s.hi = new Float64Array(G);
        }
      }
      return s;
    });
  }

  /**
   * Whether the streaming form serves this aggregate: the group columns (and
   * min/max columns) must all be on the grouped side. Where the join may
   * leave that side missing (a full join, a left join's right side), those
   * rows form the group of nulls.
   */
  static applies(join: JoinShape, groupBy0: number[], aggs0: BoundAggregate[]): boolean {
    // the kinds of state accumulated here, by name: a new kind is not fused until it is added
    if (!combinable(aggs0) || !aggs0.every((a) => ['count', 'extreme', 'sum', 'distinct'].includes(stateOf(a)!.kind)))
      return false;
    const { groupBy, aggs } = sideGrouping(join, groupBy0, aggs0);
    const nl = join.leftSchema.length;
    const onGrouped = (c: number) => c < nl === join.groupedLeft;
    if (!groupBy.every(onGrouped)) return false;
    return !aggs.some((a) => mergeable(a).kind === 'extreme' && !onGrouped(a.col));
  }

  /**
   * An aggregator over matches whose `grouped` side (the left when groupedLeft) is the batch given; call only where
   * `applies`.
   * `groupsFor`: its rows' groups by those columns, when known already (a broadcast table's, per thread).
   */
  static create(
    grouped: Batch,
    join: JoinShape,
    groupBy0: number[],
    aggs0: BoundAggregate[],
    schema: Schema,
    groupsFor?: (cols: number[]) => Groups,
  ): JoinAggregator {
    const { aggs } = sideGrouping(join, groupBy0, aggs0);
    const local = JoinAggregator.groupColumns(join, groupBy0, aggs0);
    return new JoinAggregator(
      grouped,
      join.groupedLeft,
      local,
      aggs,
      join.leftSchema,
      join.rightSchema,
      schema,
      groupsFor,
    );
  }

  /** The grouped side's columns (indices within that side) whose groups an aggregator of `create` asks `groupsFor`. */
  static groupColumns(join: JoinShape, groupBy0: number[], aggs0: BoundAggregate[]): number[] {
    return sideGrouping(join, groupBy0, aggs0).groupBy.map((c) => (join.groupedLeft ? c : c - join.leftSchema.length));
  }

  /** Accumulate n matched pairs; l and r are the batches the left and right indices point into (-1: missing). */
  add(l: Batch, r: Batch, li: Int32Array, ri: Int32Array, n: number): void {
    const bIdx = this.groupedLeft ? li : ri;
    const gids = this.gids,
      reached = this.reached;
    if (this.groupCols.length === 0) {
      gids.fill(0, 0, n);
      reached[0] = 1;
    } else {
      groupIdsOfRows(this.groups.gid, this.groups.nGroups, bIdx, gids, reached, n);
    }
    for (const s of this.states) {
      const idx = s.left ? li : ri;
      if (s.best) this.addMinMax(s, idx, n);
      else accumulate(s, s.col < 0 ? null : (s.left ? l : r).columns[s.col], gids, idx, n);
    }
  }

  /**
   * Whether addRows serves: every aggregate counts rows or reads a column of
   * the side not grouped (min and max read the grouped side's rows).
   */
  rowsOnly(): boolean {
    return this.states.every((s) => s.best === undefined && (s.col < 0 || s.left !== this.groupedLeft));
  }

  /**
   * Accumulate rows from..from+n of `other`, the side not grouped, where each
   * joined at most one grouped row (a table of unique keys): row from+k falls
   * in group gids[k], nGroups when its grouped side is missing (an outer
   * join), nGroups + 1 when it joined nothing (counted nowhere). No pairs, no
   * random reads: the values are read in order. Call only where rowsOnly.
   */
  addRows(other: Batch, from: number, gids: Int32Array, n: number): void {
    const reached = this.reached,
      rows = ROWS;
    markRows(gids, reached, rows, from, n);
    reached[this.groups.nGroups + 1] = 0;
    for (const s of this.states) accumulate(s, s.col < 0 ? null : other.columns[s.col], gids, rows, n);
  }

  private addMinMax(s: State, idx: Int32Array, n: number) {
    const best = s.best!,
      cmp = s.cmp!,
      gids = this.gids;
    const valid = this.grouped.columns[s.col].valid,
      max = (mergeable(s.agg) as { max: boolean }).max;
    for (let k = 0; k < n; k++) {
      const j = idx[k];
      if (j < 0 || (valid !== null && !valid[j])) continue;
      const g = gids[k],
        b = best[g];
      if (b < 0) {
        best[g] = j;
        continue;
      }
      const d = cmp(j, b);
      if (max ? d > 0 : d < 0) best[g] = j;
    }
  }

  /**
   * The partial states of the groups that joined rows reached (the group of a missing grouped side: null group
   * columns).
   */
  finish(): Batch {
    const G = this.reached.length,
      reached = this.reached;
    let n = 0;
    for (let g = 0; g < G; g++) n += reached[g];
    if (n === 0 && this.groupCols.length > 0) return emptyBatch(this.schema);
    if (this.groupCols.length === 0) {
      n = 1;
      reached[0] = 1;
    }
    const sel = new Int32Array(n);
    for (let g = 0, k = 0; g < G; g++) if (reached[g]) sel[k++] = g;
    const first = this.groups.first,
      missing = this.groups.nGroups,
      firstRows = new Int32Array(n);
    for (let k = 0; k < n; k++) firstRows[k] = sel[k] === missing ? -1 : first[sel[k]];
    const cols: Column[] = this.groupCols.map((c) => gather(this.grouped.columns[c], firstRows, n));
    const pick = (a: Float64Array) => {
      const out = new Float64Array(n);
      for (let k = 0; k < n; k++) out[k] = a[sel[k]];
      return out;
    };
    for (const s of this.states) {
      const cnt = pick(s.cnt);
      if (s.best) {
        const best = new Int32Array(n);
        for (let k = 0; k < n; k++) best[k] = s.best[sel[k]];
        cols.push(gather(this.grouped.columns[s.col], best, n));
      } else if (s.dec) {
        const dec = s.dec,
          sums = Array.from(sel, (g, k) => (cnt[k] === 0 ? null : dec.sum(g)));
        const t = (s.left ? this.leftSchema : this.rightSchema)[s.col].type;
        cols.push(
          decimalColumn(sums, decimalType(MAX_PRECISION, t.scale!), `partial sum of "${s.agg.as}"`),
          countColumn(cnt),
        );
      } else if (s.sum === undefined) cols.push(countColumn(cnt));
      else if (s.hi !== undefined) {
        cols.push(wordSumColumn(pick(s.sum), pick(s.hi), cnt, `partial sum of "${s.agg.as}"`), countColumn(cnt));
      } else cols.push(float64Column(pick(s.sum), cnt), countColumn(cnt));
    }
    return { length: n, columns: cols };
  }
}

// The loops below each sit in a function of their own with nothing after the
// loop but a return (of a local), and the kernels elsewhere follow suit. V8
// (Node 20) compiles a long-running loop while it runs (on-stack replacement),
// before the code after the loop ever ran, so that code is compiled without
// type feedback; and V8 keeps that loop code after it deoptimizes at such an
// untried operation: every later call enters it again at the loop and
// deoptimizes again (in a join + aggregate run six times in one process,
// 1,143 deoptimizations, about 150 per warm run, most of them here).

/** Group ids of a chunk's grouped-side rows (missing: -1 rows), and the groups reached. */
function groupIdsOfRows(
  g: Int32Array,
  missing: number,
  bIdx: Int32Array,
  gids: Int32Array,
  reached: Uint8Array,
  n: number,
): void {
  for (let k = 0; k < n; k++) {
    const j = bIdx[k];
    const x = j < 0 ? missing : g[j];
    gids[k] = x;
    reached[x] = 1;
  }
}

/** The groups of rows from..from+n reached, and their row indices. */
function markRows(gids: Int32Array, reached: Uint8Array, rows: Int32Array, from: number, n: number): void {
  for (let k = 0; k < n; k++) {
    reached[gids[k]] = 1;
    rows[k] = from + k;
  }
}

function countRows(cnt: Float64Array, gids: Int32Array, n: number): void {
  for (let k = 0; k < n; k++) cnt[gids[k]]++;
}

/**
 * Accumulate n rows into a count or sum state (not min/max): row idx[k] of
 * `c` (-1: missing) into group gids[k]; c null is count(*), every row counted.
 */
function accumulate(s: State, c: Column | null, gids: Int32Array, idx: Int32Array, n: number) {
  if (c === null) countRows(s.cnt, gids, n);
  else if (s.dec) s.dec.add(c, gids, idx, n, s.cnt);
  else if (s.sum === undefined) addCount(s.cnt, c, gids, idx, n);
  else if (s.hi !== undefined) addIntSum(s.sum, s.hi, s.cnt, c, gids, idx, n);
  else addFloatSum(s.sum, s.cnt, c, gids, idx, n);
}

function addCount(cnt: Float64Array, c: Column, gids: Int32Array, idx: Int32Array, n: number) {
  const valid = c.valid;
  for (let k = 0; k < n; k++) {
    const j = idx[k];
    if (j >= 0 && (valid === null || valid[j])) cnt[gids[k]]++;
  }
}

function addFloatSum(sum: Float64Array, cnt: Float64Array, c: Column, gids: Int32Array, idx: Int32Array, n: number) {
  const valid = c.valid,
    v = c.values as Float64Array | Float32Array;
  for (let k = 0; k < n; k++) {
    const j = idx[k];
    if (j < 0 || (valid !== null && !valid[j])) continue;
    const g = gids[k];
    sum[g] += v[j];
    cnt[g]++;
  }
}

/**
 * Exact integer sums: 32-bit halves summed in float64, carried after each chunk (at most 2^16 rows, far below 2^53 /
 * 2^32).
 */
function addIntSum(
  lo: Float64Array,
  hi: Float64Array,
  cnt: Float64Array,
  c: Column,
  gids: Int32Array,
  idx: Int32Array,
  n: number,
) {
  const valid = c.valid,
    vals = c.values as any;
  const wide = c.type.id === 'int64' || c.type.id === 'uint64';
  const unsignedHi = c.type.id === 'uint64';
  if (wide) {
    const w = new Int32Array(vals.buffer, vals.byteOffset, 2 * c.length);
    for (let k = 0; k < n; k++) {
      const j = idx[k];
      if (j < 0 || (valid !== null && !valid[j])) continue;
      const g = gids[k];
      lo[g] += w[2 * j] >>> 0;
      hi[g] += unsignedHi ? w[2 * j + 1] >>> 0 : w[2 * j + 1];
      cnt[g]++;
    }
  } else {
    for (let k = 0; k < n; k++) {
      const j = idx[k];
      if (j < 0 || (valid !== null && !valid[j])) continue;
      const g = gids[k];
      lo[g] += vals[j];
      cnt[g]++;
    }
  }
  for (let k = 0; k < n; k++) {
    const g = gids[k],
      x = lo[g];
    if (x >= TWO32 || x < 0) {
      const carry = Math.floor(x / TWO32);
      lo[g] = x - carry * TWO32;
      hi[g] += carry;
    }
  }
}
