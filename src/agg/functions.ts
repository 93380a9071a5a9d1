// The aggregate functions, one entry each: the SQL name, the argument and result types the binder checks, the
// partial state that decides where the function may be pre-aggregated (combiners, two-level splits of a hot
// partition, eager aggregation below a join, aggregation fused into a join's probe), the kernel over one batch
// holding every row of its groups, and the Spark SQL it lowers to. `Record<AggregateFnName, ...>`: a new function in
// the plan's enum (plan/spec.ts) is a compile error here until it has its entry, and the state kinds below are
// switched on exhaustively wherever states are built or merged (agg/partial.ts, combiner.ts, twolevel.ts, eager.ts,
// joinagg.ts), so a new kind of state is named by the compiler in each of them.
import {
  type Batch,
  type Column,
  type DataType,
  type Schema,
  emptyBatch,
  gather,
  isFloat,
  isInteger,
  isNumeric,
} from '../kernels/column.js';
import { MAX_PRECISION, decimalType } from '../kernels/decimal.js';
import type { BoundAggregate } from '../plan/bound.js';
import type { AggregateFnName } from '../plan/spec.js';
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
import type { Groups } from './groups.js';
import { contType, quantileCont, quantileDisc } from './quantile.js';

/**
 * How a function's partial states are laid out and merged: count → [count]; extreme (min, max) → [value];
 * sum (sum, avg) → [sum, count], finalized as the sum or the average; distinct (count_distinct) → the value as one more
 * grouping column. null: holistic (median, quantiles), no state at all: its groups are never pre-aggregated or split.
 */
export type AggState =
  | { kind: 'count' }
  | { kind: 'extreme'; max: boolean }
  | { kind: 'sum'; avg: boolean }
  | { kind: 'distinct' };

export interface AggregateDef {
  /** SQL's name of it (lower case); null when SQL reaches it otherwise (count(DISTINCT x) is count_distinct) */
  sql: string | null;
  /** the fraction q of a quantile: 'param' (the plan's "q", SQL's second argument), a fixed value, or none */
  q: 'param' | number | null;
  /** what the argument must be, for errors ("a numeric column"); null: any type */
  needs: string | null;
  /** the result type over an argument of type t (null: no argument, count(*)); null when t does not serve */
  type(t: DataType | null): DataType | null;
  /** whether the result may be null (count never is) */
  nullable: boolean;
  state: AggState | null;
  /** the kernel: one column of a batch (null: count(*)) whose groups are complete, `n` rows, to one value a group */
  evaluate(c: Column | null, g: Groups, n: number, a: BoundAggregate): Column;
  /** Spark SQL over column expression `c` (of type `input`; a.col < 0: count(*)); null: no exact lowering */
  spark(c: string, a: BoundAggregate, input: DataType | undefined): string | null;
}

const INT64: DataType = { id: 'int64' },
  FLOAT64: DataType = { id: 'float64' };

const sumType = (t: DataType | null): DataType | null =>
  t === null || !isNumeric(t)
    ? null
    : t.id === 'decimal'
      ? decimalType(MAX_PRECISION, t.scale!)
      : isFloat(t)
        ? FLOAT64
        : INT64;

const extreme = (max: boolean): AggregateDef => ({
  sql: max ? 'max' : 'min',
  q: null,
  needs: null,
  type: (t) => t,
  nullable: true,
  state: { kind: 'extreme', max },
  evaluate: (c, g) => minMax(c!, g, max),
  spark: (c) => `${max ? 'MAX' : 'MIN'}(${c})`,
});

const quantile = (sql: string, q: 'param' | number, discrete: boolean): AggregateDef => ({
  sql,
  q,
  needs: discrete ? null : 'a numeric column',
  type: (t) => (t === null ? null : discrete ? t : contType(t)),
  nullable: true,
  state: null,
  evaluate: (c, g, _n, a) => (discrete ? quantileDisc(c!, g, a.q!) : quantileCont(c!, g, a.q!)),
  // Spark's percentile interpolates at (n - 1) * q as DuckDB's quantile_cont does, in doubles: a decimal's
  // truncation to its scale has no exact counterpart there; percentile_disc takes numbers only
  spark: (c, a, input) =>
    discrete
      ? input && isNumeric(input)
        ? `PERCENTILE_DISC(${a.q}) WITHIN GROUP (ORDER BY ${c})`
        : null
      : input?.id === 'decimal'
        ? null
        : `PERCENTILE(CAST(${c} AS DOUBLE), ${a.q})`,
});

export const AGGREGATES: Record<AggregateFnName, AggregateDef> = {
  count: {
    sql: 'count',
    q: null,
    needs: null,
    type: () => INT64,
    nullable: false,
    state: { kind: 'count' },
    evaluate: (c, g, n) => countColumn(countValid(c, g, n)),
    spark: (c, a) => (a.col < 0 ? 'COUNT(*)' : `COUNT(${c})`),
  },
  count_distinct: {
    sql: null,
    q: null,
    needs: null,
    type: (t) => (t === null ? null : INT64),
    nullable: false,
    state: { kind: 'distinct' },
    evaluate: (c, g) => countDistinct(c!, g),
    spark: (c) => `COUNT(DISTINCT ${c})`,
  },
  sum: {
    sql: 'sum',
    q: null,
    needs: 'a numeric column',
    type: sumType,
    nullable: true,
    state: { kind: 'sum', avg: false },
    evaluate(c, g, n, a) {
      if (isInteger(c!.type)) return intSumColumn(c!, g, `sum of "${a.as}"`);
      if (c!.type.id === 'decimal') return decimalSumColumn(c!, g, countValid(c, g, n), a.as);
      return float64Column(floatSums(c!, g), countValid(c, g, n));
    },
    spark(c, a) {
      if (a.type.id === 'decimal') return `CAST(SUM(${c}) AS DECIMAL(${a.type.precision},${a.type.scale}))`;
      return a.type.id === 'float64' ? `SUM(CAST(${c} AS DOUBLE))` : `SUM(CAST(${c} AS BIGINT))`;
    },
  },
  avg: {
    sql: 'avg',
    q: null,
    needs: 'a numeric column',
    type: (t) => (t !== null && isNumeric(t) ? FLOAT64 : null),
    nullable: true,
    state: { kind: 'sum', avg: true },
    evaluate(c0, g, n) {
      const c = c0!,
        cnt = countValid(c, g, n);
      if (c.type.id === 'decimal') return decimalAvg(c, g, cnt);
      const s = isInteger(c.type) ? intSumFloats(c, g) : floatSums(c, g);
      for (let k = 0; k < s.length; k++) s[k] = cnt[k] > 0 ? s[k] / cnt[k] : 0;
      return float64Column(s, cnt);
    },
    // Spark's avg of a decimal is a decimal rounded to 4 more digits; ours (as DuckDB's) is the exact sum over the
    // count, a double
    spark: (c, _a, input) =>
      input?.id === 'decimal' ? `(CAST(SUM(${c}) AS DOUBLE) / NULLIF(COUNT(${c}), 0))` : `AVG(CAST(${c} AS DOUBLE))`,
  },
  min: extreme(false),
  max: extreme(true),
  median: quantile('median', 0.5, false),
  quantile_cont: quantile('quantile_cont', 'param', false),
  quantile_disc: quantile('quantile_disc', 'param', true),
};

/** The function of a SQL name (median, quantile_cont, ...), or undefined. */
export const aggregateBySql = (name: string): AggregateFnName | undefined =>
  (Object.keys(AGGREGATES) as AggregateFnName[]).find((f) => AGGREGATES[f].sql === name);

/** The partial state of an aggregate (null: holistic). */
export const stateOf = (a: { fn: AggregateFnName }): AggState | null => AGGREGATES[a.fn].state;

/** Whether every aggregate has a partial state: the rows of a group may then be pre-aggregated in pieces. */
export const allMergeable = (aggs: readonly { fn: AggregateFnName }[]): boolean =>
  aggs.every((a) => AGGREGATES[a.fn].state !== null);

/** A compile-time check that a switch over state kinds covered them all. */
export function unknownState(s: never): never {
  throw new Error(`internal: an aggregate state of kind ${JSON.stringify(s)} has no case here`);
}

/** Aggregate one batch holding every row of its groups. */
export function aggregateBatch(b: Batch, groupBy: number[], aggs: BoundAggregate[], out: Schema, lead = 0): Batch {
  const g = groupsOf(b, groupBy, undefined, false, lead);
  if (groupBy.length > 0 && g.nGroups === 0) return emptyBatch(out);
  const keyCols = groupBy.map((i) => gather(b.columns[i], g.first, g.nGroups));
  const values = aggs.map((a) => AGGREGATES[a.fn].evaluate(a.col < 0 ? null : b.columns[a.col], g, b.length, a));
  return { length: g.nGroups, columns: [...keyCols, ...values] };
}
