// The benchmark's measuring (bench/bench.ts runs it and writes the results):
// each workload's data generated once, DuckDB timed on it, skewjoin timed in
// each mode with its answer checked against DuckDB's, then the runs planned
// for simulated worker counts and the imbalance curve.
import { parseSize } from '../plan/bytes.js';
import fs from 'node:fs';
import path from 'node:path';
import { median } from 'simple-statistics';
import { type RunOptions, type RunResult, runPlan } from '../api.js';
import type { ProgressDisplay } from '../cli/progress.js';
import { buildKeys, partitionOf } from '../kernels/keys.js';
import type { Overrides } from '../plan/load.js';
import type { Plan } from '../plan/spec.js';
import type { ProgressEvent } from '../scheduler/progress.js';
import { GEN_DEFAULTS, type GenOptions, generate } from './gen.js';
import { loadOptional } from './optional.js';
import { type BenchResults, mainReduce, type RunRow, runFigures, sameRows } from './results.js';
import { hottestOverMean, hottestWithKeysSplit, type Simulated, simulateRun, taskLabel } from './simulate.js';
import { type BenchOptions, MB, type Mode, modeOverrides, type Workload } from './suites.js';

/** Worker counts simulated unless `--simulate-workers` says otherwise. */
const SIM_WORKERS = [16, 64, 256];

function duckdb(): Promise<any> {
  const load = () => import('@duckdb/node-api');
  return loadOptional(['@duckdb/node-api'], 'the benchmark (it compares with DuckDB)', load);
}

/** Data sets are reused across runs: their folder name lists their parameters. */
function datasetDir(out: string, p: Partial<GenOptions>): string {
  const tag = Object.entries({ ...p })
    .sort()
    .map(([k, v]) => `${k}${v}`)
    .join('-');
  return path.join(out, 'data', tag);
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
    ...(sk.thresholdBytes !== undefined
      ? { thresholdBytes: Math.max(1, Math.round(parseSize('skew.thresholdBytes', sk.thresholdBytes) * scale)) }
      : {}),
    ...(sk.advisoryPartitionBytes !== undefined
      ? {
          advisoryPartitionBytes: Math.max(
            1,
            Math.round(parseSize('skew.advisoryPartitionBytes', sk.advisoryPartitionBytes) * scale),
          ),
        }
      : {}),
  };
  return { ...opts, planWorkers: W, partitions: P, skew };
}

/** The display of `skewjoin plan.json`, its stage prefixed with the step of the suite being measured. */
export class BenchProgress {
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

/** A mode's timed run, for the runs planned for simulated worker counts after every timed run. */
interface ToSimulate {
  plan: Plan;
  theirs: Record<string, unknown>[];
  opts: RunOptions;
  row: RunRow;
}

/** The run whose partition sizes and task timeline the report shows (quick and full suites). */
const DETAIL = { workload: 'fact⋈dim', s: 1.2, mode: 'key' };

/** Every workload in every mode and with DuckDB, then the imbalance curve. */
export async function measure(
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
    [
      'workload'.padEnd(20),
      's'.padStart(4),
      'mode'.padEnd(12),
      'wall_ms'.padStart(8),
      'max/med'.padStart(8),
      'cpu'.padStart(6),
      'rows'.padStart(6),
      'bytes'.padStart(6),
      'tasks'.padStart(6),
      'shuffled_rows'.padStart(13),
      'shuffled_MB'.padStart(11),
      'vs_off'.padStart(7),
      'vs_duckdb'.padStart(9),
      'same\n',
    ].join(' '),
  );
  const detailOf = o.suite === 'quick' || o.suite === 'full' ? DETAIL : null;
  // the runs planned for simulated worker counts, after every timed run (see simulateAll)
  const simulations: ToSimulate[] = [];
  for (const w of workloads) {
    const dir = path.resolve(datasetDir(o.out, w.data));
    if (!fs.existsSync(path.join(dir, 'dim.parquet'))) generate({ ...GEN_DEFAULTS, ...w.data, out: dir });
    const plan = w.plan(dir);
    const { duck, theirs } = await timeDuckdb(con, w, dir, o.repeat, progress);
    const rows: RunRow[] = [];
    for (const mode of w.modes) {
      const { row, opts, last } = await timeMode(plan, w, mode, o, progress, theirs);
      rows.push(row);
      simulations.push({ plan, theirs, opts, row });
      if (detailOf && w.name === detailOf.workload && w.s === detailOf.s && mode === detailOf.mode) {
        results.detail = detailRun(w, last);
      }
    }
    const off = rows.find((r) => r.mode === 'off' || r.mode === 'no-combiners');
    for (const r of [...rows, duck]) {
      results.runs.push(r);
      write(tableLine(w, r, off, duck));
    }
  }
  if (simulateWorkers.length) await simulateAll(simulations, simulateWorkers, progress, write);
  const s1 = workloads.find((w) => w.name === 'fact⋈dim' && w.s === 1);
  if ((o.suite === 'quick' || o.suite === 'full') && s1) {
    results.imbalance = await imbalanceCurve(path.resolve(datasetDir(o.out, s1.data)), o.workers, con);
    results.imbalanceKeys = s1.data.keys;
  }
  return results;
}

/** DuckDB's time on a workload (the median of --repeat runs) and its answer. */
async function timeDuckdb(
  con: any,
  w: Workload,
  dir: string,
  repeat: number,
  progress: BenchProgress,
): Promise<{ duck: RunRow; theirs: Record<string, unknown>[] }> {
  const times: number[] = [];
  progress.begin(`${w.name} s=${w.s} duckdb`);
  let theirs: Record<string, unknown>[] = [];
  for (let i = 0; i < repeat; i++) {
    const t0 = performance.now();
    theirs = (await con.runAndReadAll(w.sql(dir))).getRowObjectsJS() as Record<string, unknown>[];
    times.push(performance.now() - t0);
  }
  return { duck: { workload: w.name, s: w.s, mode: 'duckdb', wallMs: median(times), runsMs: times }, theirs };
}

/** skewjoin's time on a workload in one mode (after a warm-up run), its figures, and its answer checked. */
async function timeMode(
  plan: Plan,
  w: Workload,
  mode: Mode,
  o: BenchOptions,
  progress: BenchProgress,
  theirs: Record<string, unknown>[],
): Promise<{ row: RunRow; opts: RunOptions; last: RunResult }> {
  progress.begin(`${w.name} s=${w.s} ${mode}`);
  const opts: RunOptions = {
    ...modeOverrides(mode, w.execution, o.workers),
    ...(o.runtimeFilters ? { runtimeFilters: o.runtimeFilters } : {}),
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
  return { row, opts, last };
}

/** The report's detail of one run: its partition sizes, reduce tasks and task timeline. */
function detailRun(w: Workload, last: RunResult): BenchResults['detail'] {
  const left = last.stats.shuffles.find((x) => x.id.endsWith('.left'));
  return {
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

/** A run's line of the table printed as the benchmark goes. */
function tableLine(w: Workload, r: RunRow, off: RunRow | undefined, duck: RunRow): string {
  const vsOff = off && r.mode !== 'duckdb' ? (off.wallMs / r.wallMs).toFixed(2) : '';
  const vsDuck = r.mode === 'duckdb' ? '' : (r.wallMs / duck.wallMs).toFixed(2);
  const mb = r.shuffledBytes === undefined ? '' : (r.shuffledBytes / MB).toFixed(1);
  const ratio = (x: number | undefined, width: number) => (x?.toFixed(2) ?? '').padStart(width);
  return [
    w.name.padEnd(20),
    String(w.s).padStart(4),
    r.mode.padEnd(12),
    r.wallMs.toFixed(0).padStart(8),
    ratio(r.reduceImbalance, 8),
    ratio(r.reduceImbalanceCpu, 6),
    ratio(r.reduceImbalanceRows, 6),
    ratio(r.reduceImbalanceBytes, 6),
    String(r.tasks ?? '').padStart(6),
    String(r.shuffledRows ?? '').padStart(13),
    mb.padStart(11),
    vsOff.padStart(7),
    vsDuck.padStart(9),
    `${r.sameAnswer ?? ''}\n`,
  ].join(' ');
}

/**
 * Each simulated worker count: a run planned for it, on the real threads, its answer checked
 * too. After every timed run of every workload: runs planned for 256 workers (a thousand
 * partitions) leave the process larger (peak RSS 1.1 GB before them, 2.8 GB after a few
 * rounds) and timed runs after them were slower and noisier (fact ⋈ dim at s = 1.5, auto:
 * 295-330 ms between such rounds, up to 470-513 ms after some).
 */
async function simulateAll(
  simulations: ToSimulate[],
  simulateWorkers: number[],
  progress: BenchProgress,
  write: (text: string) => void,
): Promise<void> {
  for (const { plan, theirs, opts, row } of simulations) {
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
}
