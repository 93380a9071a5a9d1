// Beyond one machine, by simulation: measured task costs scheduled on W
// workers, largest task first (LPT), one stage after the other.
import type { TaskStats } from '../exec/stats.js';

/** Makespan of independent tasks on `workers` identical workers, largest first. */
export function makespan(costs: readonly number[], workers: number): number {
  const load = new Float64Array(Math.max(1, workers));
  for (const c of [...costs].sort((a, b) => b - a)) {
    let k = 0;
    for (let i = 1; i < load.length; i++) if (load[i] < load[k]) k = i;
    load[k] += c;
  }
  return Math.max(0, ...load);
}

/** Makespan of a run's tasks on W workers: map tasks, then split and reduce tasks, stage by stage. */
export function simulateRun(tasks: readonly TaskStats[], workers: number): number {
  const stages = new Map<string, number[]>();
  for (const t of tasks) {
    const phase = t.kind === 'map' ? 0 : t.kind === 'split' ? 1 : 2;
    const key = `${t.stage}#${phase}`;
    stages.set(key, [...(stages.get(key) ?? []), t.ms]);
  }
  let total = 0;
  for (const costs of stages.values()) total += makespan(costs, workers);
  return total;
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
export function hottestWithKeysSplit(rows: readonly number[], hot: readonly { partition: number; rows: number }[]): number {
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
