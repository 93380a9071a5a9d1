// The window functions, one entry each (as agg/functions.ts is for aggregates): what a function takes (a column,
// `n`, a frame, DISTINCT), its result type, and how a hot partition split into pieces gets its value
// (skew/window.ts, physical/window/carry.ts). `Record<WindowFnName, ...>`: a new function in the plan's enum
// (plan/spec.ts) is a compile error here until it has its entry, and in the two other tables keyed by the name: its
// kernel (physical/window/functions.ts KERNELS) and its Spark SQL (spark/window.ts CALLS).
import { FLOAT64, INT64 } from '../expr/types.js';
import { type DataType, isDecimal, isFloat, isInteger, isNumeric, typeName } from '../kernels/column.js';
import { MAX_PRECISION, decimalType } from '../kernels/decimal.js';
import type { WindowFnName } from './spec.js';

export interface WindowFnDef {
  /**
   * rank: from the partition's and peers' bounds (no column); offset: a row before or after (lag, lead); value: a
   * row of the frame; aggregate: over the frame's values
   */
  kind: 'rank' | 'offset' | 'value' | 'aggregate';
  /** its column: required, optional (count: count(*) without), or none */
  column: 'required' | 'optional' | 'none';
  /** what `n` is: ntile's buckets, nth_value's n (both required), lag/lead's offset (`offset`, default 1) */
  n: 'buckets' | 'nth' | 'offset' | null;
  /** whether it reads a frame (the others ignore one; Spark takes none for them) */
  framed: boolean;
  /** DISTINCT (as DuckDB takes it): over the distinct values (count, sum, avg), the same answer (min, max), refused */
  distinct: 'values' | 'same' | null;
  /** the result type over the column's type t (null: none); an error message when t does not serve */
  type(t: DataType | null): DataType | string;
  /**
   * how a piece of a split partition gets its value (skew/window.ts): the rows (or peer groups) before it added
   * (rows), the partition's total rows (total), the rows around it (neighbours: lag/lead); the frame functions by
   * their frame (frame: running values, ROWS frames of n rows, frames to the partition's end)
   */
  split: 'rows' | 'total' | 'neighbours' | 'frame';
  /** a running value from the partition's start carried over pieces (cumulative frames) */
  running: boolean;
  /** a value over a frame to the partition's end that the pieces after a piece carry (from the current row or the start) */
  toEnd: 'start or current' | 'current' | null;
  /** the same for every row of a partition without orderBy, exactly from per-piece partials (a two-level aggregate) */
  whole: boolean;
}

const numericSum = (t: DataType | null): DataType | string => {
  if (!isNumeric(t!)) return `a numeric column; got ${typeName(t!)}`;
  if (isFloat(t!)) return FLOAT64;
  return isDecimal(t!) ? decimalType(MAX_PRECISION, t!.scale!) : isInteger(t!) ? INT64 : FLOAT64;
};
const numericAvg = (t: DataType | null): DataType | string =>
  isNumeric(t!) ? FLOAT64 : `a numeric column; got ${typeName(t!)}`;
const same = (t: DataType | null): DataType => t!;

const rank = (
  split: WindowFnDef['split'],
  type: DataType,
  whole: boolean,
  n: WindowFnDef['n'] = null,
): WindowFnDef => ({
  kind: 'rank',
  column: 'none',
  n,
  framed: false,
  distinct: null,
  type: () => type,
  split,
  running: false,
  toEnd: null,
  whole,
});
const value = (running: boolean, toEnd: WindowFnDef['toEnd'], n: WindowFnDef['n'] = null): WindowFnDef => ({
  kind: 'value',
  column: 'required',
  n,
  framed: true,
  distinct: null,
  type: same,
  split: 'frame',
  running,
  toEnd,
  whole: false,
});
const aggregate = (
  column: WindowFnDef['column'],
  distinct: WindowFnDef['distinct'],
  type: WindowFnDef['type'],
  toEnd: WindowFnDef['toEnd'],
): WindowFnDef => ({
  kind: 'aggregate',
  column,
  n: null,
  framed: true,
  distinct,
  type,
  split: 'frame',
  running: true,
  toEnd,
  whole: true,
});
const offset: WindowFnDef = {
  kind: 'offset',
  column: 'required',
  n: 'offset',
  framed: false,
  distinct: null,
  type: same,
  split: 'neighbours',
  running: false,
  toEnd: null,
  whole: false,
};

export const WINDOW_FNS: Record<WindowFnName, WindowFnDef> = {
  row_number: rank('rows', INT64, false),
  rank: rank('rows', INT64, true),
  dense_rank: rank('rows', INT64, true),
  percent_rank: rank('total', FLOAT64, true),
  cume_dist: rank('total', FLOAT64, true),
  ntile: rank('total', INT64, false, 'buckets'),
  lag: offset,
  lead: offset,
  first_value: value(true, null),
  last_value: value(false, 'start or current'),
  nth_value: value(false, null, 'nth'),
  count: aggregate('optional', 'values', () => INT64, 'start or current'),
  sum: aggregate('required', 'values', numericSum, 'start or current'),
  avg: aggregate('required', 'values', numericAvg, 'current'),
  min: aggregate('required', 'same', same, 'start or current'),
  max: aggregate('required', 'same', same, 'start or current'),
};
