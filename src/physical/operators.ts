// Every operator family, one entry per kind of pipeline source: a kind without an operator does not compile.
// The scheduler runs a pipeline through this table; `--explain` describes it through the same one.
import { aggregateOperator } from './aggregate/operator.js';
import { joinOperator } from './join/operator.js';
import { filtersAnalyze } from './join/filters.js';
import { limitOperator } from './limit/operator.js';
import { exchangeAnalyze } from './shuffle.js';
import type { Analyze, PhysicalOperator, RunMetrics } from './operator.js';
import { repeatAnalyze } from './repeats.js';
import type { Stats, TaskStats } from './stats.js';
import type { TaskMetric, TaskMetrics } from './task.js';
import type { SourceNode } from './pipeline.js';
import { scanOperator } from './scan/operator.js';
import { unionOperator, valuesOperator } from './setop/operator.js';
import { sortOperator } from './sort/operator.js';
import { windowOperator } from './window/operator.js';

type Operators = {
  [K in SourceNode['kind']]: PhysicalOperator<Extract<SourceNode, { kind: K }>, TaskOf<K>, RunOf<K>>;
};

const OPERATORS: Operators = {
  scan: scanOperator,
  join: joinOperator,
  aggregate: aggregateOperator,
  sort: sortOperator,
  limit: limitOperator,
  window: windowOperator,
  union: unionOperator,
  values: valuesOperator,
};

/** The operator of a pipeline's source node. */
export function operatorOf<N extends SourceNode>(node: N): PhysicalOperator<N> {
  return OPERATORS[node.kind] as unknown as PhysicalOperator<N>;
}

/** The owners of metrics: who reports of a run (RunMetrics), and whose tasks carry a metric (TaskMetric). */
type Owner = keyof RunMetrics | keyof TaskMetric;
type TaskOf<K> = K extends keyof TaskMetric ? TaskMetric[K] : never;
type RunOf<K> = K extends keyof RunMetrics ? RunMetrics[K] : never;

/**
 * Whose metrics are whose: each operator's, the exchange's and a repeated subtree's `analyze`, by the name its
 * metrics go under: an owner without one does not compile. In this order a task's metrics become fields of its
 * statistics (`join`, then `read` and `masks`, as documented).
 */
const ANALYZERS: { [K in Owner]: Analyze<TaskOf<K>, RunOf<K>> } = {
  join: joinOperator.analyze,
  scan: scanOperator.analyze,
  aggregate: aggregateOperator.analyze,
  window: windowOperator.analyze,
  sort: sortOperator.analyze,
  exchange: exchangeAnalyze,
  repeat: repeatAnalyze,
  filters: filtersAnalyze,
};

/** A task's metrics as fields of its statistics, each folded by its owner's analyze. */
export function analyzeTask(m: TaskMetrics | undefined): Partial<TaskStats> {
  let out: Partial<TaskStats> = {};
  if (!m) return out;
  for (const k of Object.keys(ANALYZERS) as Owner[]) {
    const x = (m as Record<string, unknown>)[k];
    const task = ANALYZERS[k].task as ((x: unknown) => Partial<TaskStats>) | undefined;
    if (x !== undefined && task) out = { ...out, ...task(x) };
  }
  return out;
}

/** What an owner reported of the run, folded into its statistics by the owner's analyze. */
export function analyzeRun<K extends keyof RunMetrics>(owner: K, m: RunMetrics[K], into: Stats): void {
  (ANALYZERS[owner].run as (x: RunMetrics[K], s: Stats) => void)(m, into);
}
