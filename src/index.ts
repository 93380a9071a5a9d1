// skewjoin: a batch query engine for joins and aggregations over skewed data.
export { runPlan, executePlan, definePlan, type RunOptions, type RunResult } from './api.js';
export { runSql, compileSql, type RunSqlOptions, type SqlOptions } from './sql/compile.js';
export { describeFile, type ColumnDescription } from './sql/describe.js';
export type { DateForm, IntegerForm, RowOptions } from './io/rows.js';
export { validatePlan } from './plan/validate.js';
export type {
  LoadOptions,
  LoadedPlan,
  Overrides,
  Settings,
  SkewSettings,
} from './plan/load.js';
import { type LoadOptions, type LoadedPlan, loadPlan as loadAnyPlan } from './plan/load.js';
import type { Plan } from './plan/spec.js';
/** Load, validate and bind a plan (a file path or a typed `Plan`) without running it; options as runPlan's. */
export const loadPlan: (source: Plan | string, options?: LoadOptions, baseDir?: string) => Promise<LoadedPlan> =
  loadAnyPlan;
export { explainAnalyze, explainPlan } from './physical/explain.js';
export { closePool } from './runtime/pool.js';
export { SkewjoinError, PlanError, InputError, ExecutionError, OutputClosedError } from './errors.js';
export { planJsonSchema } from './plan/spec.js';
export type {
  Plan,
  QueryNode,
  ScanNode,
  FilterNode,
  ProjectNode,
  JoinNode,
  AggregateNode,
  SortNode,
  LimitNode,
  Predicate,
  JoinType,
  AggregateFnName,
  ExecutionOptions,
  SkewOptions,
} from './plan/spec.js';
export type { OutputFormat } from './plan/formats.js';
export type { Stats, ShuffleStats, TaskStats, HotKey } from './physical/stats.js';
export type { ProgressEvent, OnProgress } from './scheduler/progress.js';
export type { Batch, Column, Field, DataType, Schema } from './kernels/column.js';
