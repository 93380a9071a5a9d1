// A benchmark's results: the row of each run (its figures from the engine's
// statistics: imbalance, shuffled rows and bytes, splits, peak memory), the
// check that an answer is DuckDB's, and results.json and results.csv.
import fs from 'node:fs';
import path from 'node:path';
import { median } from 'simple-statistics';
import type { RunResult } from '../api.js';
import type { TaskStats } from '../physical/stats.js';
import { type Simulated, slowestOverMedian } from './simulate.js';
import type { Mode } from './suites.js';

export interface RunRow {
  workload: string;
  s: number;
  mode: Mode | 'duckdb';
  wallMs: number;
  runsMs: number[];
  /** slowest task of the main reduce stage over its median, by time: the median over the --repeat runs */
  reduceImbalance?: number;
  /**
   * the same by each task's thread CPU time, the median over the runs: on a
   * machine shared with other processes (or the coordinator) a task's wall
   * time also counts the time its thread waited for a core
   */
  reduceImbalanceCpu?: number;
  /** the same by input rows and by input bytes (of the last run: these do not vary between runs) */
  reduceImbalanceRows?: number;
  reduceImbalanceBytes?: number;
  tasks?: number;
  shuffledRows?: number;
  shuffledBytes?: number;
  rowsBeforeCombining?: number;
  eager?: boolean;
  /** skewed partitions of the joins by how they were split (map-range, hot-key, none): what the mode did */
  splits?: Record<string, number>;
  /** the process's peak resident memory so far, MB */
  peakRssMb?: number;
  sameAnswer?: boolean;
  /** a run planned for each simulated worker count (bench --simulate-workers), its tasks scheduled on them */
  simulated?: Simulated[];
}

export interface BenchResults {
  suite: string;
  workers: number;
  repeat: number;
  /** the worker counts simulated (runs[].simulated) */
  simulateWorkers: number[];
  date: string;
  runs: RunRow[];
  imbalance?: { partitions: number; whole: number; split: number }[];
  imbalanceKeys?: number;
  detail?: {
    title: string;
    partitionRows: number[];
    taskRows: number[];
    tasks: { thread: number; startMs: number; ms: number; kind: string; label: string }[];
  };
}

/** Whether two answers are the same rows in the same order, numbers within a relative 1e-6. */
export function sameRows(a: Record<string, unknown>[], b: Record<string, unknown>[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((row, i) =>
    Object.keys(row).every((k) => {
      const x = row[k],
        y = b[i][k];
      if (x === null || y === null) return x === y;
      if (typeof x === 'number' || typeof y === 'number')
        return Math.abs(Number(x) - Number(y)) <= 1e-6 * Math.max(1, Math.abs(Number(y)));
      return String(x) === String(y);
    }),
  );
}

/**
 * The stage whose reduce tasks carry the work: a window's (the pieces of a split partition, not their second pass),
 * the join's, or the aggregate's when there is no join.
 */
export function mainReduce(r: RunResult): TaskStats[] {
  const red = r.stats.tasks.filter((t) => t.kind === 'reduce');
  const win = red.filter((t) => t.stage.startsWith('window') && !t.split?.endsWith('carried'));
  if (win.length) return win;
  const join = red.filter((t) => t.stage.startsWith('join'));
  const agg = red.filter((t) => t.stage.startsWith('aggregate'));
  return join.length ? join : agg.length ? agg : red;
}

/** Figures of the last of a mode's timed runs; the time imbalance is the median over all of them. */
export function runFigures(all: RunResult[]): Partial<RunRow> {
  const r = all[all.length - 1];
  const reduce = mainReduce(r);
  const byTime = all.flatMap(
    (x) =>
      slowestOverMedian(
        mainReduce(x).map((t) => t.ms),
        1e-3,
      ) ?? [],
  );
  const byCpu = all.flatMap((x) => {
    const cpu = mainReduce(x).map((t) => t.cpuMs);
    return cpu.every((c) => c !== undefined) ? (slowestOverMedian(cpu as number[], 1e-3) ?? []) : [];
  });
  const combined = r.stats.shuffles.filter((x) => x.combine);
  return {
    reduceImbalance: byTime.length ? median(byTime) : undefined,
    reduceImbalanceCpu: byCpu.length ? median(byCpu) : undefined,
    reduceImbalanceRows: slowestOverMedian(
      reduce.map((t) => t.rows),
      1,
    ),
    reduceImbalanceBytes: slowestOverMedian(
      reduce.map((t) => t.inputBytes),
      1,
    ),
    tasks: r.stats.tasks.length,
    shuffledRows: r.stats.shuffles.reduce((s, x) => s + x.partitionRows.reduce((a, b) => a + b, 0), 0),
    shuffledBytes: r.stats.shuffles.reduce((s, x) => s + x.partitionBytes.reduce((a, b) => a + b, 0), 0),
    rowsBeforeCombining: combined.length ? combined.reduce((s, x) => s + x.combine!.rowsBefore, 0) : undefined,
    eager: r.stats.eager.length > 0,
    splits: countBy(r.stats.joins.flatMap((j) => j.splits).map((x) => x.method)),
    peakRssMb: process.resourceUsage().maxRSS / 1024,
  };
}

/** How many times each value occurs. */
function countBy(values: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}

/** results.json and results.csv in `out`. */
export function writeResultFiles(out: string, results: BenchResults): void {
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, 'results.json'), JSON.stringify(results, null, 2) + '\n');
  const W = results.simulateWorkers;
  const csv = [
    [
      'workload,s,mode,wall_ms,reduce_imbalance_ms,reduce_imbalance_cpu,reduce_imbalance_rows,reduce_imbalance_bytes,' +
        'tasks,shuffled_rows,shuffled_bytes,peak_rss_mb,same_answer',
      ...W.flatMap((w) => [`makespan_${w}`, `ideal_${w}`]),
    ].join(','),
    ...results.runs.map((r) =>
      [
        r.workload,
        r.s,
        r.mode,
        r.wallMs.toFixed(1),
        ...[r.reduceImbalance, r.reduceImbalanceCpu, r.reduceImbalanceRows, r.reduceImbalanceBytes].map(
          (x) => x?.toFixed(3) ?? '',
        ),
        r.tasks ?? '',
        r.shuffledRows ?? '',
        r.shuffledBytes ?? '',
        r.peakRssMb?.toFixed(0) ?? '',
        r.sameAnswer ?? '',
        ...W.flatMap((w) => {
          const x = r.simulated?.find((y) => y.workers === w);
          return x ? [x.makespanMs.toFixed(1), x.idealMs.toFixed(1)] : ['', ''];
        }),
      ].join(','),
    ),
  ];
  fs.writeFileSync(path.join(out, 'results.csv'), csv.join('\n') + '\n');
}
