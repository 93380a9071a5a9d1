// `skewjoin bench`: workloads on synthetic Zipf data, each run by skewjoin in
// several modes and by DuckDB on the same files in the same process, with
// the answers checked to agree; results.json, results.csv and report.html.
// Ratios within one run are the figures that count: absolute times on
// shared machines are noisy.
import fs from 'node:fs';
import path from 'node:path';
import { type RunOptions, type RunResult, runPlan } from '../api.js';
import { type ProgressDisplay, progressDisplay } from '../cli/progress.js';
import type { ProgressEvent } from '../scheduler/progress.js';
import type { TaskStats } from '../physical/stats.js';
import { buildKeys, partitionOf } from '../kernels/keys.js';
import type { Overrides } from '../plan/load.js';
import type { Plan } from '../plan/spec.js';
import { GEN_DEFAULTS, type GenOptions, generate } from './gen.js';
import { type BenchOptions, type Mode, type Workload, MB, modeOverrides, suites } from './suites.js';
import { median } from 'simple-statistics';
import { writeReport } from './report.js';
import { loadOptional, requireBenchPackages } from './optional.js';
import {
  type Simulated,
  hottestOverMean,
  hottestWithKeysSplit,
  simulateRun,
  slowestOverMedian,
  taskLabel,
} from './simulate.js';

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

/** Worker counts simulated unless `--simulate-workers` says otherwise. */
export const SIM_WORKERS = [16, 64, 256];

function duckdb(): Promise<any> {
  const load = () => import('@duckdb/node-api');
  return loadOptional(['@duckdb/node-api'], 'the benchmark (it compares with DuckDB)', load);
}

/** Data sets are reused across runs: their folder name lists their parameters. */
export function datasetDir(out: string, p: Partial<GenOptions>): string {
  const tag = Object.entries({ ...p })
    .sort()
    .map(([k, v]) => `${k}${v}`)
    .join('-');
  return path.join(out, 'data', tag);
}

function sameRows(a: Record<string, unknown>[], b: Record<string, unknown>[]): boolean {
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

/** The stage whose reduce tasks carry the work: the join's, or the aggregate's when there is no join. */
function mainReduce(r: RunResult): TaskStats[] {
  const red = r.stats.tasks.filter((t) => t.kind === 'reduce');
  const join = red.filter((t) => t.stage.startsWith('join'));
  const agg = red.filter((t) => t.stage.startsWith('aggregate'));
  return join.length ? join : agg.length ? agg : red;
}

/** Figures of the last of a mode's timed runs; the time imbalance is the median over all of them. */
function runFigures(all: RunResult[]): Partial<RunRow> {
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

/**
 * A mode's settings planned for W workers (the tasks still run on the real
 * ones): partitions, coalescing, split targets and map splits follow `planWorkers`.
 * A fixed partition count grows to four per planned worker, and the skew
 * thresholds, set for the real count's partitions, shrink with the mean partition.
 */
export function plannedFor(opts: Overrides, W: number): Overrides {
  const p = opts.partitions;
  if (p === undefined) return { ...opts, planWorkers: W };
  const P = Math.max(p, 4 * W),
    scale = p / P;
  const sk = opts.skew ?? {};
  const skew = {
    ...sk,
    ...(sk.thresholdBytes !== undefined ? { thresholdBytes: Math.max(1, Math.round(sk.thresholdBytes * scale)) } : {}),
    ...(sk.advisoryPartitionBytes !== undefined
      ? { advisoryPartitionBytes: Math.max(1, Math.round(sk.advisoryPartitionBytes * scale)) }
      : {}),
  };
  return { ...opts, planWorkers: W, partitions: P, skew };
}

/** The display of `skewjoin plan.json`, its stage prefixed with the step of the suite being measured. */
class BenchProgress {
  private step = 0;
  private label = '';
  constructor(
    private readonly display: ProgressDisplay,
    private readonly steps: number,
  ) {}
  begin(what: string): void {
    this.label = `[${++this.step}/${this.steps}] ${what}`;
    this.display.onProgress({
      stage: this.label,
      tasksDone: 0,
      tasksTotal: 0,
      fraction: (this.step - 1) / this.steps,
      running: [],
      rowsRead: 0,
      bytesShuffled: 0,
      bytesSpilled: 0,
      elapsedMs: 0,
    });
  }
  // the bar covers the whole suite: this step's run within its share (the display never draws it smaller)
  readonly onProgress = (e: ProgressEvent) =>
    this.display.onProgress({
      ...e,
      stage: `${this.label}: ${e.stage}`,
      fraction: (this.step - 1 + e.fraction) / this.steps,
      running: e.running.map((r) => ({ ...r, stage: `${this.label}: ${r.stage}` })),
    });
  clear(): void {
    this.display.clear();
  }
  stop(): void {
    this.display.stop();
  }
}

/** Hottest partition over the mean against the partition count, from the engine's own shuffle statistics. */
async function imbalanceCurve(dir: string, workers: number, con: any): Promise<BenchResults['imbalance']> {
  const fact = path.join(dir, 'fact.parquet');
  const top = (
    await con.runAndReadAll(
      `SELECT key, count(*) AS n FROM read_parquet('${fact}') GROUP BY key ORDER BY n DESC LIMIT 1000`,
    )
  ).getRowObjectsJS() as { key: bigint; n: bigint }[];
  const keys = buildKeys(
    {
      length: top.length,
      columns: [
        {
          type: { id: 'int64' },
          length: top.length,
          values: BigInt64Array.from(top, (t) => BigInt(t.key)),
          valid: null,
        },
      ],
    },
    [0],
    [{ kind: 'int' }],
  );
  const out: NonNullable<BenchResults['imbalance']> = [];
  for (let p = 1; p <= 1024; p *= 2) {
    const r = await runPlan(
      {
        version: 1,
        sources: { f: { parquet: fact } },
        query: {
          op: 'aggregate',
          groupBy: ['key'],
          aggregates: [{ fn: 'count', as: 'n' }],
          input: { op: 'scan', source: 'f', columns: ['key'] },
        },
      },
      { workers, partitions: p, combiners: false, writeOutput: false },
    );
    const rows = r.stats.shuffles[0].partitionRows;
    const hot = top.map((t, i) => ({ partition: partitionOf(keys.hash[i], p), rows: Number(t.n) }));
    out.push({ partitions: p, whole: hottestOverMean(rows), split: hottestWithKeysSplit(rows, hot) });
  }
  return out;
}

export async function runBench(
  o: BenchOptions,
  log: NodeJS.WritableStream,
  progressOut: NodeJS.WriteStream = process.stderr,
): Promise<number> {
  const all = suites(o)[o.suite];
  if (!all) throw new Error(`unknown suite "${o.suite}"; suites are: ${Object.keys(suites(o)).join(', ')}`);
  const named = (w: Workload) =>
    !o.workloads || o.workloads.some((n) => w.name.toLowerCase().includes(n.toLowerCase()));
  const workloads = all.filter((w) => (!o.s || o.s.includes(w.s)) && named(w));
  if (workloads.length === 0) {
    throw new Error(
      `suite "${o.suite}" has no workload${o.s ? ` at s = ${o.s.join(', ')}` : ''}${o.workloads ? ` named like ${o.workloads.join(', ')}` : ''}; ` +
        `its workloads are ${[...new Set(all.map((w) => w.name))].join(', ')} at s = ${[...new Set(all.map((w) => w.s))].join(', ')}`,
    );
  }
  // before minutes of measuring: the packages that compare and draw the results are there
  await requireBenchPackages();
  const progress = new BenchProgress(
    await progressDisplay(progressOut),
    workloads.reduce((s, w) => s + w.modes.length + 1, 0),
  );
  let results: BenchResults;
  try {
    results = await measure(o, workloads, log, progress);
  } finally {
    progress.stop();
  }
  fs.mkdirSync(o.out, { recursive: true });
  fs.writeFileSync(path.join(o.out, 'results.json'), JSON.stringify(results, null, 2) + '\n');
  const W = results.simulateWorkers;
  const csv = [
    [
      'workload,s,mode,wall_ms,reduce_imbalance_ms,reduce_imbalance_cpu,reduce_imbalance_rows,reduce_imbalance_bytes,tasks,shuffled_rows,shuffled_bytes,peak_rss_mb,same_answer',
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
  fs.writeFileSync(path.join(o.out, 'results.csv'), csv.join('\n') + '\n');
  await writeReport(o.out, results);
  log.write(
    `wrote ${path.join(o.out, 'results.json')}, results.csv, report.html and the charts' Vega-Lite specs (charts/)\n`,
  );
  return results.runs.every((r) => r.sameAnswer !== false) ? 0 : 1;
}

/** Every workload in every mode and with DuckDB, then the imbalance curve. */
async function measure(
  o: BenchOptions,
  workloads: Workload[],
  log: NodeJS.WritableStream,
  progress: BenchProgress,
): Promise<BenchResults> {
  // the progress line is erased before each line of the table, which goes to the same terminal
  const write = (text: string) => {
    progress.clear();
    log.write(text);
  };
  const { DuckDBInstance } = await duckdb();
  const db = await DuckDBInstance.create(':memory:', { threads: String(o.workers) });
  const con = await db.connect();
  const simulateWorkers = o.simulateWorkers ?? SIM_WORKERS;
  const results: BenchResults = {
    suite: o.suite,
    workers: o.workers,
    repeat: o.repeat,
    simulateWorkers,
    date: new Date().toISOString(),
    runs: [],
  };
  write(
    `${'workload'.padEnd(20)} ${'s'.padStart(4)} ${'mode'.padEnd(12)} ${'wall_ms'.padStart(8)} ${'max/med'.padStart(8)} ${'cpu'.padStart(6)} ${'rows'.padStart(6)} ${'bytes'.padStart(6)} ${'tasks'.padStart(6)} ${'shuffled_rows'.padStart(13)} ${'shuffled_MB'.padStart(11)} ${'vs_off'.padStart(7)} ${'vs_duckdb'.padStart(9)} same\n`,
  );
  const detailOf = o.suite === 'quick' || o.suite === 'full' ? { workload: 'fact⋈dim', s: 1.2, mode: 'key' } : null;
  // the runs planned for simulated worker counts, after every timed run (see below)
  const simulations: { plan: Plan; theirs: Record<string, unknown>[]; opts: RunOptions; row: RunRow }[] = [];
  for (const w of workloads) {
    const dir = path.resolve(datasetDir(o.out, w.data));
    if (!fs.existsSync(path.join(dir, 'dim.parquet'))) generate({ ...GEN_DEFAULTS, ...w.data, out: dir });
    const plan = w.plan(dir);
    const times: number[] = [];
    progress.begin(`${w.name} s=${w.s} duckdb`);
    let theirs: Record<string, unknown>[] = [];
    for (let i = 0; i < o.repeat; i++) {
      const t0 = performance.now();
      theirs = (await con.runAndReadAll(w.sql(dir))).getRowObjectsJS() as Record<string, unknown>[];
      times.push(performance.now() - t0);
    }
    const duck: RunRow = { workload: w.name, s: w.s, mode: 'duckdb', wallMs: median(times), runsMs: times };
    const rows: RunRow[] = [];
    for (const mode of w.modes) {
      progress.begin(`${w.name} s=${w.s} ${mode}`);
      const opts: RunOptions = {
        ...modeOverrides(mode, w.execution, o.workers),
        taskCpuTime: true,
        onProgress: progress.onProgress,
      };
      await runPlan(plan, opts); // warm the worker threads and the file cache
      const runs: number[] = [];
      const timed: RunResult[] = [];
      for (let i = 0; i < o.repeat; i++) {
        const t0 = performance.now();
        timed.push(await runPlan(plan, opts));
        runs.push(performance.now() - t0);
      }
      const last = timed[timed.length - 1];
      const row: RunRow = {
        workload: w.name,
        s: w.s,
        mode,
        wallMs: median(runs),
        runsMs: runs,
        ...runFigures(timed),
        sameAnswer: sameRows(last.toRows(), theirs),
      };
      rows.push(row);
      simulations.push({ plan, theirs, opts, row });
      if (detailOf && w.name === detailOf.workload && w.s === detailOf.s && mode === detailOf.mode) {
        const left = last.stats.shuffles.find((x) => x.id.endsWith('.left'));
        results.detail = {
          title: `${w.name}, s=${w.s}, hot keys split: partition sizes and tasks`,
          partitionRows: left?.partitionRows ?? [],
          taskRows: mainReduce(last).map((t) => t.rows),
          tasks: last.stats.tasks.map((t) => ({
            thread: t.thread ?? 0,
            startMs: t.startMs ?? 0,
            ms: t.ms,
            kind: t.kind,
            label: taskLabel(t),
          })),
        };
      }
    }
    const off = rows.find((r) => r.mode === 'off' || r.mode === 'no-combiners');
    for (const r of [...rows, duck]) {
      results.runs.push(r);
      const vsOff = off && r.mode !== 'duckdb' ? (off.wallMs / r.wallMs).toFixed(2) : '';
      const vsDuck = r.mode === 'duckdb' ? '' : (r.wallMs / duck.wallMs).toFixed(2);
      const mb = r.shuffledBytes === undefined ? '' : (r.shuffledBytes / MB).toFixed(1);
      write(
        `${w.name.padEnd(20)} ${String(w.s).padStart(4)} ${r.mode.padEnd(12)} ${r.wallMs.toFixed(0).padStart(8)} ${(r.reduceImbalance?.toFixed(2) ?? '').padStart(8)} ${(r.reduceImbalanceCpu?.toFixed(2) ?? '').padStart(6)} ${(r.reduceImbalanceRows?.toFixed(2) ?? '').padStart(6)} ${(r.reduceImbalanceBytes?.toFixed(2) ?? '').padStart(6)} ${String(r.tasks ?? '').padStart(6)} ${String(r.shuffledRows ?? '').padStart(13)} ${mb.padStart(11)} ${vsOff.padStart(7)} ${vsDuck.padStart(9)} ${r.sameAnswer ?? ''}\n`,
      );
    }
  }
  // Each simulated worker count: a run planned for it, on the real threads, its answer checked
  // too. After every timed run of every workload: runs planned for 256 workers (a thousand
  // partitions) leave the process larger (peak RSS 1.1 GB before them, 2.8 GB after a few
  // rounds) and timed runs after them were slower and noisier (fact ⋈ dim at s = 1.5, auto:
  // 295-330 ms between such rounds, up to 470-513 ms after some).
  for (const { plan, theirs, opts, row } of simulateWorkers.length ? simulations : []) {
    progress.begin(`${row.workload} s=${row.s} ${row.mode}: runs planned for ${simulateWorkers.join(', ')} workers`);
    const simulated: Simulated[] = [];
    let same = true;
    for (const W of simulateWorkers) {
      const planned = await runPlan(plan, { ...plannedFor(opts, W), onProgress: progress.onProgress });
      same &&= sameRows(planned.toRows(), theirs);
      simulated.push(simulateRun(planned.stats.tasks, W));
    }
    row.simulated = simulated;
    if (!same) {
      row.sameAnswer = false;
      write(
        `${row.workload} s=${row.s} ${row.mode}: a run planned for simulated workers did not give DuckDB's answer\n`,
      );
    }
  }
  const s1 = workloads.find((w) => w.name === 'fact⋈dim' && w.s === 1);
  if ((o.suite === 'quick' || o.suite === 'full') && s1) {
    results.imbalance = await imbalanceCurve(path.resolve(datasetDir(o.out, s1.data)), o.workers, con);
    results.imbalanceKeys = s1.data.keys;
  }
  return results;
}

/** How many times each value occurs. */
function countBy(values: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[v] = (out[v] ?? 0) + 1;
  return out;
}
