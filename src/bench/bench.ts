// `skewjoin bench`: workloads on synthetic Zipf data, each run by skewjoin in
// several modes and by DuckDB on the same files in the same process, with
// the answers checked to agree; results.json, results.csv and report.html.
// Ratios within one run are the figures that count: absolute times on
// shared machines are noisy.
import fs from 'node:fs';
import path from 'node:path';
import { type RunOptions, type RunResult, runPlan } from '../api.js';
import { type ProgressDisplay, progressDisplay } from '../cli/progress.js';
import type { ProgressEvent } from '../exec/progress.js';
import type { TaskStats } from '../exec/stats.js';
import { buildKeys, partitionOf } from '../kernels/keys.js';
import type { Overrides } from '../plan/load.js';
import type { Plan } from '../plan/spec.js';
import { GEN_DEFAULTS, type GenOptions, generate } from './gen.js';
import { median } from 'simple-statistics';
import { writeReport } from './report.js';
import { loadOptional, requireBenchPackages } from './optional.js';
import { type Simulated, hottestOverMean, hottestWithKeysSplit, simulateRun, slowestOverMedian, taskLabel } from './simulate.js';

export interface BenchOptions {
  out: string; workers: number; repeat: number; suite: string; rows?: number; keys?: number;
  /** plan a run for each of these worker counts and schedule its tasks on them (default SIM_WORKERS; empty: none) */
  simulateWorkers?: number[];
  /** only the workloads at these Zipf s (default: all of the suite's) */
  s?: number[];
  /** only the workloads whose name contains one of these (case-insensitive; default: all) */
  workloads?: string[];
}

/**
 * off, partition, key: skew handling off, by map ranges, by hot keys (combiners
 * on, eager aggregation off, so that the join itself is measured); auto:
 * everything on; no-combiners: raw rows through the aggregation shuffle. All
 * of these shuffle both sides of a join (broadcastBytes 0: the shuffle path is
 * what they measure); broadcast: auto with broadcast joins at the default threshold.
 */
type Mode = 'off' | 'partition' | 'key' | 'auto' | 'no-combiners' | 'broadcast';

interface Workload {
  name: string;
  s: number;
  data: Partial<GenOptions>;
  plan: (dir: string) => Plan;
  sql: (dir: string) => string;
  modes: Mode[];
  /** settings shared by the skewjoin modes */
  execution: Overrides;
}

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
  detail?: { title: string; partitionRows: number[]; taskRows: number[]; tasks: { thread: number; startMs: number; ms: number; kind: string; label: string }[] };
}

/** Worker counts simulated unless `--simulate-workers` says otherwise. */
export const SIM_WORKERS = [16, 64, 256];

function duckdb(): Promise<any> {
  return loadOptional(['@duckdb/node-api'], 'the benchmark (it compares with DuckDB)', () => import('@duckdb/node-api'));
}

function joinGroupBy(rightFile: string, rightCols: string[], groupBy: string, type: 'inner' | 'full' = 'inner'): Pick<Workload, 'plan' | 'sql'> {
  const kw: Record<string, string> = { inner: 'JOIN', full: 'FULL OUTER JOIN' };
  return {
    plan: (dir) => ({
      version: 1,
      sources: { fact: { parquet: path.join(dir, 'fact.parquet') }, other: { parquet: path.join(dir, rightFile) } },
      query: {
        op: 'sort', by: [{ column: groupBy }],
        input: {
          op: 'aggregate', groupBy: [groupBy],
          aggregates: [{ fn: 'count', as: 'n' }, { fn: 'sum', column: 'amount', as: 'revenue' }],
          input: {
            op: 'join', type, on: [['key', 'key']],
            left: { op: 'scan', source: 'fact', columns: ['key', 'amount'] },
            right: { op: 'scan', source: 'other', columns: rightCols },
          },
        },
      },
    }),
    sql: (dir) => `SELECT o.${groupBy}, count(*) AS n, sum(f.amount) AS revenue
      FROM read_parquet('${path.join(dir, 'fact.parquet')}') f ${kw[type]} read_parquet('${path.join(dir, rightFile)}') o ON f.key = o.key
      GROUP BY o.${groupBy} ORDER BY o.${groupBy} NULLS LAST`,
  };
}

function aggregateByKey(): Pick<Workload, 'plan' | 'sql'> {
  return {
    plan: (dir) => ({
      version: 1, sources: { fact: { parquet: path.join(dir, 'fact.parquet') } },
      query: {
        op: 'limit', count: 100,
        input: {
          op: 'sort', by: [{ column: 'n', desc: true }, { column: 'key' }],
          input: {
            op: 'aggregate', groupBy: ['key'], input: { op: 'scan', source: 'fact', columns: ['key', 'amount'] },
            aggregates: [{ fn: 'count', as: 'n' }, { fn: 'sum', column: 'amount', as: 'revenue' }],
          },
        },
      },
    }),
    sql: (dir) => `SELECT key, count(*) AS n, sum(amount) AS revenue FROM read_parquet('${path.join(dir, 'fact.parquet')}')
      GROUP BY key ORDER BY n DESC, key LIMIT 100`,
  };
}

const MB = 1024 * 1024;
const S_VALUES = [0, 0.8, 1, 1.2, 1.5];

/** The five workloads of the skew benchmark over every s, at a given size. */
function skewSuite(rows: number, keys: number, execution: Overrides, rowGroup: { rowGroupSize?: number } = {}): Workload[] {
  const m2m = { rows: Math.round(rows / 20), keys: Math.round(keys / 10), m2mRows: 500, ...rowGroup };
  const fact = { rows, keys, ...rowGroup };
  return S_VALUES.flatMap((s) => [
    { name: 'fact⋈dim', s, data: { ...fact, s }, ...joinGroupBy('dim.parquet', ['key', 'region'], 'region'), modes: ['off', 'partition', 'key', 'auto', 'broadcast'], execution },
    { name: 'many-to-many', s, data: { ...m2m, s }, ...joinGroupBy('m2m.parquet', ['key', 'grp'], 'grp'), modes: ['off', 'partition', 'key', 'auto'], execution },
    { name: 'aggregate by key', s, data: { ...fact, s }, ...aggregateByKey(), modes: ['no-combiners', 'auto'], execution },
    { name: 'hot key, one mapper', s, data: { ...fact, s, sorted: true }, ...joinGroupBy('dim.parquet', ['key', 'region'], 'region'), modes: ['off', 'partition', 'key', 'auto', 'broadcast'], execution },
    { name: 'full outer', s, data: { ...fact, s }, ...joinGroupBy('dim.parquet', ['key', 'region'], 'region', 'full'), modes: ['off', 'partition', 'key', 'auto'], execution },
  ] as Workload[]);
}

/** The quick suite's fact rows and keys unless --rows and --keys say otherwise. */
export const QUICK_ROWS = 1_000_000, QUICK_KEYS = 100_000;

export function suites(o: BenchOptions): Record<string, Workload[]> {
  const rows = o.rows ?? 5_000_000, keys = o.keys ?? 1_000_000;
  /** Skew settings scaled to these data sizes (the defaults, 256 MB and 64 MB, are for larger inputs). */
  const skewExec: Overrides = { partitions: 64, skew: { factor: 2, thresholdBytes: 2 * MB, advisoryPartitionBytes: 4 * MB } };
  return {
    reference: [{
      name: 'join+groupby', s: 1, data: { rows, keys, s: 1 }, ...joinGroupBy('dim.parquet', ['key', 'region'], 'region'),
      modes: ['auto', 'broadcast'], execution: {},
    }],
    skew: [1.2, 0].flatMap((s) => [
      { name: 'fact⋈dim', s, data: { rows, keys, s }, ...joinGroupBy('dim.parquet', ['key', 'region'], 'region'), modes: ['off', 'partition', 'key', 'broadcast'], execution: skewExec },
      ...(s > 0 ? [{ name: 'many-to-many', s, data: { rows: Math.round(rows / 10), keys: Math.round(keys / 10), s, m2mRows: 1000 },
        ...joinGroupBy('m2m.parquet', ['key', 'grp'], 'grp'), modes: ['off', 'partition', 'key'], execution: skewExec }] : []),
    ] as Workload[]),
    combiners: [
      { name: 'aggregate by key', s: 1.2, data: { rows, keys, s: 1.2 }, ...aggregateByKey(), modes: ['auto', 'no-combiners'], execution: {} },
      { name: 'many-to-many join+groupby', s: 1, data: { rows: Math.round(rows * 0.4), keys: Math.round(keys / 10), s: 1, m2mRows: 20000 },
        ...joinGroupBy('m2m.parquet', ['key', 'grp'], 'grp'), modes: ['auto'], execution: {} },
    ],
    // thresholds scale with the data: about the mean partition, the target task twice that
    // and row groups of an eighth of the fact table, so that map ranges have map outputs to cut at any size
    // 1M rows: at 300K a reduce task held ~5K rows and the pool's per-task cost hid what splitting saves
    quick: skewSuite(o.rows ?? QUICK_ROWS, o.keys ?? QUICK_KEYS, {
      partitions: 32,
      skew: { factor: 2, thresholdBytes: Math.max(4096, ((o.rows ?? QUICK_ROWS) * 16) / 32), advisoryPartitionBytes: Math.max(8192, ((o.rows ?? QUICK_ROWS) * 32) / 32) },
    }, { rowGroupSize: Math.max(1024, Math.ceil((o.rows ?? QUICK_ROWS) / 8)) }),
    full: skewSuite(rows, keys, skewExec),
  };
}

/**
 * A mode's settings. inThreadBytes 0: every timed run takes the worker pool whatever its size (exec/local.ts
 * keeps small inputs on the calling thread, one thread, where skew handling has nothing to balance).
 */
function modeOverrides(mode: Mode, execution: Overrides, workers: number): Overrides {
  const base0 = { ...execution, inThreadBytes: 0 };
  if (mode === 'broadcast') return { ...base0, workers, skew: { ...base0.skew, enabled: true, strategy: 'auto' } };
  const base = { ...base0, broadcastBytes: 0 };
  if (mode === 'no-combiners') return { ...base, workers, combiners: false, skew: { ...base.skew, enabled: true, strategy: 'auto' } };
  if (mode === 'auto') return { ...base, workers, skew: { ...base.skew, enabled: true, strategy: 'auto' } };
  return { ...base, workers, eagerAggregation: false, skew: mode === 'off' ? { enabled: false } : { ...base.skew, enabled: true, strategy: mode } };
}

/** Data sets are reused across runs: their folder name lists their parameters. */
export function datasetDir(out: string, p: Partial<GenOptions>): string {
  const tag = Object.entries({ ...p }).sort().map(([k, v]) => `${k}${v}`).join('-');
  return path.join(out, 'data', tag);
}

function sameRows(a: Record<string, unknown>[], b: Record<string, unknown>[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((row, i) => Object.keys(row).every((k) => {
    const x = row[k], y = b[i][k];
    if (x === null || y === null) return x === y;
    if (typeof x === 'number' || typeof y === 'number') return Math.abs(Number(x) - Number(y)) <= 1e-6 * Math.max(1, Math.abs(Number(y)));
    return String(x) === String(y);
  }));
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
  const byTime = all.flatMap((x) => slowestOverMedian(mainReduce(x).map((t) => t.ms), 1e-3) ?? []);
  const byCpu = all.flatMap((x) => {
    const cpu = mainReduce(x).map((t) => t.cpuMs);
    return cpu.every((c) => c !== undefined) ? slowestOverMedian(cpu as number[], 1e-3) ?? [] : [];
  });
  const combined = r.stats.shuffles.filter((x) => x.combine);
  return {
    reduceImbalance: byTime.length ? median(byTime) : undefined,
    reduceImbalanceCpu: byCpu.length ? median(byCpu) : undefined,
    reduceImbalanceRows: slowestOverMedian(reduce.map((t) => t.rows), 1),
    reduceImbalanceBytes: slowestOverMedian(reduce.map((t) => t.inputBytes), 1),
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
  const P = Math.max(p, 4 * W), scale = p / P;
  const sk = opts.skew ?? {};
  const skew = {
    ...sk,
    ...(sk.thresholdBytes !== undefined ? { thresholdBytes: Math.max(1, Math.round(sk.thresholdBytes * scale)) } : {}),
    ...(sk.advisoryPartitionBytes !== undefined ? { advisoryPartitionBytes: Math.max(1, Math.round(sk.advisoryPartitionBytes * scale)) } : {}),
  };
  return { ...opts, planWorkers: W, partitions: P, skew };
}

/** The display of `skewjoin plan.json`, its stage prefixed with the step of the suite being measured. */
class BenchProgress {
  private step = 0;
  private label = '';
  constructor(private readonly display: ProgressDisplay, private readonly steps: number) {}
  begin(what: string): void {
    this.label = `[${++this.step}/${this.steps}] ${what}`;
    this.display.onProgress({ stage: this.label, tasksDone: 0, tasksTotal: 0, fraction: (this.step - 1) / this.steps, running: [], rowsRead: 0, bytesShuffled: 0, bytesSpilled: 0, elapsedMs: 0 });
  }
  // the bar covers the whole suite: this step's run within its share (the display never draws it smaller)
  readonly onProgress = (e: ProgressEvent) => this.display.onProgress({
    ...e, stage: `${this.label}: ${e.stage}`, fraction: (this.step - 1 + e.fraction) / this.steps,
    running: e.running.map((r) => ({ ...r, stage: `${this.label}: ${r.stage}` })),
  });
  clear(): void { this.display.clear(); }
  stop(): void { this.display.stop(); }
}

/** Hottest partition over the mean against the partition count, from the engine's own shuffle statistics. */
async function imbalanceCurve(dir: string, workers: number, con: any): Promise<BenchResults['imbalance']> {
  const fact = path.join(dir, 'fact.parquet');
  const top = (await con.runAndReadAll(`SELECT key, count(*) AS n FROM read_parquet('${fact}') GROUP BY key ORDER BY n DESC LIMIT 1000`)).getRowObjectsJS() as { key: bigint; n: bigint }[];
  const keys = buildKeys({ length: top.length, columns: [{ type: { id: 'int64' }, length: top.length, values: BigInt64Array.from(top, (t) => BigInt(t.key)), valid: null }] }, [0], [{ kind: 'int' }]);
  const out: NonNullable<BenchResults['imbalance']> = [];
  for (let p = 1; p <= 1024; p *= 2) {
    const r = await runPlan({
      version: 1, sources: { f: { parquet: fact } },
      query: { op: 'aggregate', groupBy: ['key'], aggregates: [{ fn: 'count', as: 'n' }], input: { op: 'scan', source: 'f', columns: ['key'] } },
    }, { workers, partitions: p, combiners: false, writeOutput: false });
    const rows = r.stats.shuffles[0].partitionRows;
    const hot = top.map((t, i) => ({ partition: partitionOf(keys.hash[i], p), rows: Number(t.n) }));
    out.push({ partitions: p, whole: hottestOverMean(rows), split: hottestWithKeysSplit(rows, hot) });
  }
  return out;
}

export async function runBench(o: BenchOptions, log: NodeJS.WritableStream, progressOut: NodeJS.WriteStream = process.stderr): Promise<number> {
  const all = suites(o)[o.suite];
  if (!all) throw new Error(`unknown suite "${o.suite}"; suites are: ${Object.keys(suites(o)).join(', ')}`);
  const named = (w: Workload) => !o.workloads || o.workloads.some((n) => w.name.toLowerCase().includes(n.toLowerCase()));
  const workloads = all.filter((w) => (!o.s || o.s.includes(w.s)) && named(w));
  if (workloads.length === 0) {
    throw new Error(`suite "${o.suite}" has no workload${o.s ? ` at s = ${o.s.join(', ')}` : ''}${o.workloads ? ` named like ${o.workloads.join(', ')}` : ''}; `
      + `its workloads are ${[...new Set(all.map((w) => w.name))].join(', ')} at s = ${[...new Set(all.map((w) => w.s))].join(', ')}`);
  }
  // before minutes of measuring: the packages that compare and draw the results are there
  await requireBenchPackages();
  const progress = new BenchProgress(await progressDisplay(progressOut), workloads.reduce((s, w) => s + w.modes.length + 1, 0));
  let results: BenchResults;
  try {
    results = await measure(o, workloads, log, progress);
  } finally {
    progress.stop();
  }
  fs.mkdirSync(o.out, { recursive: true });
  fs.writeFileSync(path.join(o.out, 'results.json'), JSON.stringify(results, null, 2) + '\n');
  const W = results.simulateWorkers;
  const csv = [['workload,s,mode,wall_ms,reduce_imbalance_ms,reduce_imbalance_cpu,reduce_imbalance_rows,reduce_imbalance_bytes,tasks,shuffled_rows,shuffled_bytes,peak_rss_mb,same_answer',
    ...W.flatMap((w) => [`makespan_${w}`, `ideal_${w}`])].join(','),
  ...results.runs.map((r) => [r.workload, r.s, r.mode, r.wallMs.toFixed(1), ...[r.reduceImbalance, r.reduceImbalanceCpu, r.reduceImbalanceRows, r.reduceImbalanceBytes].map((x) => x?.toFixed(3) ?? ''),
    r.tasks ?? '', r.shuffledRows ?? '', r.shuffledBytes ?? '', r.peakRssMb?.toFixed(0) ?? '', r.sameAnswer ?? '',
    ...W.flatMap((w) => {
      const x = r.simulated?.find((y) => y.workers === w);
      return x ? [x.makespanMs.toFixed(1), x.idealMs.toFixed(1)] : ['', ''];
    })].join(','))];
  fs.writeFileSync(path.join(o.out, 'results.csv'), csv.join('\n') + '\n');
  await writeReport(o.out, results);
  log.write(`wrote ${path.join(o.out, 'results.json')}, results.csv, report.html and the charts' Vega-Lite specs (charts/)\n`);
  return results.runs.every((r) => r.sameAnswer !== false) ? 0 : 1;
}

/** Every workload in every mode and with DuckDB, then the imbalance curve. */
async function measure(o: BenchOptions, workloads: Workload[], log: NodeJS.WritableStream, progress: BenchProgress): Promise<BenchResults> {
  // the progress line is erased before each line of the table, which goes to the same terminal
  const write = (text: string) => { progress.clear(); log.write(text); };
  const { DuckDBInstance } = await duckdb();
  const db = await DuckDBInstance.create(':memory:', { threads: String(o.workers) });
  const con = await db.connect();
  const simulateWorkers = o.simulateWorkers ?? SIM_WORKERS;
  const results: BenchResults = { suite: o.suite, workers: o.workers, repeat: o.repeat, simulateWorkers, date: new Date().toISOString(), runs: [] };
  write(`${'workload'.padEnd(20)} ${'s'.padStart(4)} ${'mode'.padEnd(12)} ${'wall_ms'.padStart(8)} ${'max/med'.padStart(8)} ${'cpu'.padStart(6)} ${'rows'.padStart(6)} ${'bytes'.padStart(6)} ${'tasks'.padStart(6)} ${'shuffled_rows'.padStart(13)} ${'shuffled_MB'.padStart(11)} ${'vs_off'.padStart(7)} ${'vs_duckdb'.padStart(9)} same\n`);
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
      const opts: RunOptions = { ...modeOverrides(mode, w.execution, o.workers), taskCpuTime: true, onProgress: progress.onProgress };
      await runPlan(plan, opts); // warm the worker threads and the file cache
      const runs: number[] = [];
      const timed: RunResult[] = [];
      for (let i = 0; i < o.repeat; i++) {
        const t0 = performance.now();
        timed.push(await runPlan(plan, opts));
        runs.push(performance.now() - t0);
      }
      const last = timed[timed.length - 1];
      const row: RunRow = { workload: w.name, s: w.s, mode, wallMs: median(runs), runsMs: runs, ...runFigures(timed), sameAnswer: sameRows(last.toRows(), theirs) };
      rows.push(row);
      simulations.push({ plan, theirs, opts, row });
      if (detailOf && w.name === detailOf.workload && w.s === detailOf.s && mode === detailOf.mode) {
        const left = last.stats.shuffles.find((x) => x.id.endsWith('.left'));
        results.detail = {
          title: `${w.name}, s=${w.s}, hot keys split: partition sizes and tasks`,
          partitionRows: left?.partitionRows ?? [],
          taskRows: mainReduce(last).map((t) => t.rows),
          tasks: last.stats.tasks.map((t) => ({ thread: t.thread ?? 0, startMs: t.startMs ?? 0, ms: t.ms, kind: t.kind, label: taskLabel(t) })),
        };
      }
    }
    const off = rows.find((r) => r.mode === 'off' || r.mode === 'no-combiners');
    for (const r of [...rows, duck]) {
      results.runs.push(r);
      const vsOff = off && r.mode !== 'duckdb' ? (off.wallMs / r.wallMs).toFixed(2) : '';
      const vsDuck = r.mode === 'duckdb' ? '' : (r.wallMs / duck.wallMs).toFixed(2);
      const mb = r.shuffledBytes === undefined ? '' : (r.shuffledBytes / MB).toFixed(1);
      write(`${w.name.padEnd(20)} ${String(w.s).padStart(4)} ${r.mode.padEnd(12)} ${r.wallMs.toFixed(0).padStart(8)} ${(r.reduceImbalance?.toFixed(2) ?? '').padStart(8)} ${(r.reduceImbalanceCpu?.toFixed(2) ?? '').padStart(6)} ${(r.reduceImbalanceRows?.toFixed(2) ?? '').padStart(6)} ${(r.reduceImbalanceBytes?.toFixed(2) ?? '').padStart(6)} ${String(r.tasks ?? '').padStart(6)} ${String(r.shuffledRows ?? '').padStart(13)} ${mb.padStart(11)} ${vsOff.padStart(7)} ${vsDuck.padStart(9)} ${r.sameAnswer ?? ''}\n`);
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
      write(`${row.workload} s=${row.s} ${row.mode}: a run planned for simulated workers did not give DuckDB's answer\n`);
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
