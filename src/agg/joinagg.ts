// The combiner of an aggregate right above a join, fed with the join's
// matches chunk by chunk: group ids come from the build side (grouped once),
// values are read through the row indices, so neither the joined rows nor a
// gathered copy of the aggregated columns ever exist.
import { type Batch, type Column, type Schema, emptyBatch, gather, isInteger } from '../kernels/column.js';
import { valueComparator } from '../kernels/sort.js';
import type { BoundAggregate } from '../plan/bound.js';
import type { JoinType } from '../plan/spec.js';
import { PAIR_CHUNK } from '../kernels/join.js';
import { countColumn, float64Column, groupsOf, int64Column, wordSums } from './aggregate.js';
import type { Groups } from './groups.js';
import { combinerGrouping } from './partial.js';

const TWO32 = 4294967296;

/** Group ids of one chunk of matches, shared by the aggregators of the thread (each chunk is used at once). */
const GIDS = new Int32Array(PAIR_CHUNK);

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
  /** min/max: the best build row of each group, -1 when none yet */
  best?: Int32Array;
  cmp?: (i: number, j: number) => number;
}

export class JoinAggregator {
  private readonly groups: Groups;
  private readonly reached: Uint8Array;
  private readonly gids = GIDS;
  private readonly states: State[];

  private constructor(
    private readonly build: Batch, private readonly buildLeft: boolean, private readonly groupCols: number[],
    aggs: BoundAggregate[], leftSchema: Schema, rightSchema: Schema, private readonly schema: Schema,
  ) {
    this.groups = groupsOf(build, groupCols);
    const G = this.groups.nGroups, nl = leftSchema.length;
    this.reached = new Uint8Array(G);
    this.states = aggs.map((a) => {
      const left = a.col < nl;
      const col = a.col < 0 ? -1 : left ? a.col : a.col - nl;
      const s: State = { agg: a, left, col, cnt: new Float64Array(G) };
      if (a.fn === 'min' || a.fn === 'max') {
        s.best = new Int32Array(G).fill(-1);
        s.cmp = valueComparator(build.columns[col]);
      } else if (a.fn !== 'count') {
        s.sum = new Float64Array(G);
        if (isInteger((left ? leftSchema : rightSchema)[col].type)) s.hi = new Float64Array(G);
      }
      return s;
    });
  }

  /**
   * Whether the streaming form serves this aggregate: the group columns (and
   * min/max columns) must all be on the build side, and with group columns a
   * left or full join must not leave the build side missing.
   */
  static applies(type: JoinType, buildLeft: boolean, nl: number, groupBy0: number[], aggs0: BoundAggregate[]): boolean {
    const { groupBy, aggs } = combinerGrouping(groupBy0, aggs0);
    if (aggs.some((a) => a.decimal && (a.fn === 'sum' || a.fn === 'avg'))) return false;
    const onBuild = (c: number) => (c < nl) === buildLeft;
    if (!groupBy.every(onBuild)) return false;
    if (groupBy.length > 0 && (type === 'left' || type === 'full')) return false;
    return !aggs.some((a) => (a.fn === 'min' || a.fn === 'max') && !onBuild(a.col));
  }

  /** An aggregator over matches against `build` (the left side when buildLeft); call only where `applies`. */
  static create(
    build: Batch, buildLeft: boolean, leftSchema: Schema, rightSchema: Schema,
    groupBy0: number[], aggs0: BoundAggregate[], schema: Schema,
  ): JoinAggregator {
    const { groupBy, aggs } = combinerGrouping(groupBy0, aggs0);
    const local = groupBy.map((c) => (buildLeft ? c : c - leftSchema.length));
    return new JoinAggregator(build, buildLeft, local, aggs, leftSchema, rightSchema, schema);
  }

  /** Accumulate n matched pairs; l and r are the batches the left and right indices point into (-1: missing). */
  add(l: Batch, r: Batch, li: Int32Array, ri: Int32Array, n: number): void {
    const bIdx = this.buildLeft ? li : ri;
    const gids = this.gids, reached = this.reached;
    if (this.groupCols.length === 0) {
      gids.fill(0, 0, n);
      reached[0] = 1;
    } else {
      const g = this.groups.gid;
      for (let k = 0; k < n; k++) { const x = g[bIdx[k]]; gids[k] = x; reached[x] = 1; }
    }
    for (const s of this.states) {
      const idx = s.left ? li : ri;
      if (s.col < 0) { // count(*)
        const cnt = s.cnt;
        for (let k = 0; k < n; k++) cnt[gids[k]]++;
        continue;
      }
      const c = (s.left ? l : r).columns[s.col];
      if (s.best) this.addMinMax(s, idx, n);
      else if (s.sum === undefined) addCount(s.cnt, c, gids, idx, n);
      else if (s.hi !== undefined) addIntSum(s.sum, s.hi, s.cnt, c, gids, idx, n);
      else addFloatSum(s.sum, s.cnt, c, gids, idx, n);
    }
  }

  private addMinMax(s: State, idx: Int32Array, n: number) {
    const best = s.best!, cmp = s.cmp!, gids = this.gids;
    const valid = this.build.columns[s.col].valid, max = s.agg.fn === 'max';
    for (let k = 0; k < n; k++) {
      const j = idx[k];
      if (j < 0 || (valid !== null && !valid[j])) continue;
      const g = gids[k], b = best[g];
      if (b < 0) { best[g] = j; continue; }
      const d = cmp(j, b);
      if (max ? d > 0 : d < 0) best[g] = j;
    }
  }

  /** The partial states of the groups that joined rows reached. */
  finish(): Batch {
    const G = this.groups.nGroups, reached = this.reached;
    let n = 0;
    for (let g = 0; g < G; g++) n += reached[g];
    if (n === 0 && this.groupCols.length > 0) return emptyBatch(this.schema);
    if (this.groupCols.length === 0) { n = 1; reached[0] = 1; }
    const sel = new Int32Array(n);
    for (let g = 0, k = 0; g < G; g++) if (reached[g]) sel[k++] = g;
    const firstRows = Int32Array.from(sel, (g) => this.groups.first[g]);
    const cols: Column[] = this.groupCols.map((c) => gather(this.build.columns[c], firstRows, n));
    const pick = (a: Float64Array) => Float64Array.from(sel, (g) => a[g]);
    for (const s of this.states) {
      const cnt = pick(s.cnt);
      if (s.best) cols.push(gather(this.build.columns[s.col], Int32Array.from(sel, (g) => s.best![g]), n));
      else if (s.sum === undefined) cols.push(countColumn(cnt));
      else if (s.hi !== undefined) {
        cols.push(int64Column(wordSums(pick(s.sum), pick(s.hi), cnt), `partial sum of "${s.agg.as}"`), countColumn(cnt));
      } else cols.push(float64Column(pick(s.sum), cnt), countColumn(cnt));
    }
    return { length: n, columns: cols };
  }
}

function addCount(cnt: Float64Array, c: Column, gids: Int32Array, idx: Int32Array, n: number) {
  const valid = c.valid;
  for (let k = 0; k < n; k++) {
    const j = idx[k];
    if (j >= 0 && (valid === null || valid[j])) cnt[gids[k]]++;
  }
}

function addFloatSum(sum: Float64Array, cnt: Float64Array, c: Column, gids: Int32Array, idx: Int32Array, n: number) {
  const valid = c.valid, v = c.values as Float64Array | Float32Array;
  for (let k = 0; k < n; k++) {
    const j = idx[k];
    if (j < 0 || (valid !== null && !valid[j])) continue;
    const g = gids[k];
    sum[g] += v[j];
    cnt[g]++;
  }
}

/** Exact integer sums: 32-bit halves summed in float64, carried after each chunk (at most 2^16 rows, far below 2^53 / 2^32). */
function addIntSum(lo: Float64Array, hi: Float64Array, cnt: Float64Array, c: Column, gids: Int32Array, idx: Int32Array, n: number) {
  const valid = c.valid, vals = c.values as any;
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
    const g = gids[k], x = lo[g];
    if (x >= TWO32 || x < 0) {
      const carry = Math.floor(x / TWO32);
      lo[g] = x - carry * TWO32;
      hi[g] += carry;
    }
  }
}
