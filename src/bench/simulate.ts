// Beyond one machine, by simulation: measured task costs scheduled on W
// workers, largest task first (LPT), one stage after the other.
import type { TaskStats } from '../physical/stats.js';

/** Makespan of independent tasks on `workers` identical workers, largest first (LPT). */
export function makespan(costs: readonly number[], workers: number): number {
  const load = new Float64Array(Math.max(1, workers));
  for (const c of [...costs].sort((a, b) => b - a)) {
    let k = 0;
    for (let i = 1; i < load.length; i++) if (load[i] < load[k]) k = i;
    load[k] += c;
  }
  return Math.max(0, ...load);
}

/** A run's tasks scheduled on W workers (`results.json`: `runs[].simulated`). */
export interface Simulated {
  workers: number;
  /** the stages one after the other, each scheduled largest task first */
  makespanMs: number;
  /** per stage max(its task time / W, its largest task), summed: no schedule of these tasks does better */
  idealMs: number;
  /** the largest task of the stage that takes longest on W workers: what bounds the makespan from below */
  bottleneck: string;
}

/** A task as the report names it: stage, kind, partition, and the split piece it ran. */
export function taskLabel(t: Pick<TaskStats, 'stage' | 'kind' | 'partition' | 'split'>): string {
  return `${t.stage} ${t.kind} ${t.partition}${t.split ? ` ${t.split}` : ''}`;
}

/** The phases scheduled one after the other: a stage's map tasks, then its split tasks, then its reduce tasks. */
function stagesOf(tasks: readonly TaskStats[]): TaskStats[][] {
  const stages = new Map<string, TaskStats[]>();
  for (const t of tasks) {
    const key = `${t.stage}#${t.kind === 'map' ? 0 : t.kind === 'split' ? 1 : 2}`;
    let list = stages.get(key);
    if (!list) stages.set(key, (list = []));
    list.push(t);
  }
  return [...stages.values()];
}

/** Makespan of a run's tasks on W workers, the ideal beside it and the task that bounds it (see Simulated). */
export function simulateRun(tasks: readonly TaskStats[], workers: number): Simulated {
  let makespanMs = 0,
    idealMs = 0,
    worst = -1,
    bottleneck = '';
  for (const stage of stagesOf(tasks)) {
    const costs = stage.map((t) => t.ms);
    const span = makespan(costs, workers);
    let largest = stage[0];
    for (const t of stage) if (t.ms > largest.ms) largest = t;
    makespanMs += span;
    idealMs += Math.max(costs.reduce((a, b) => a + b, 0) / workers, largest.ms);
    if (span > worst) [worst, bottleneck] = [span, taskLabel(largest)];
  }
  return { workers, makespanMs, idealMs, bottleneck };
}

/** Slowest over median of some task figures (rows, bytes, ms); undefined without tasks. */
export function slowestOverMedian(xs: readonly number[], floor = 0): number | undefined {
  if (xs.length === 0) return undefined;
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const med = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return sorted[sorted.length - 1] / Math.max(med, floor, Number.MIN_VALUE);
}

/** Hottest partition over the mean, keys placed whole. */
export function hottestOverMean(rows: readonly number[]): number {
  const mean = rows.reduce((a, b) => a + b, 0) / rows.length;
  return mean > 0 ? Math.max(...rows) / mean : 0;
}

/**
 * Hottest task over the mean partition when every key above the mean is cut
 * into pieces of at most the mean: what key-level splitting can reach.
 * `hot`: the heaviest keys with their partition and rows.
 */
export function hottestWithKeysSplit(
  rows: readonly number[],
  hot: readonly { partition: number; rows: number }[],
): number {
  const mean = rows.reduce((a, b) => a + b, 0) / rows.length;
  if (mean === 0) return 0;
  const rest = [...rows];
  let piece = 0;
  for (const h of hot) {
    if (h.rows <= mean) continue;
    rest[h.partition] -= h.rows;
    piece = Math.max(piece, h.rows / Math.ceil(h.rows / mean));
  }
  return Math.max(piece, ...rest) / mean;
}
