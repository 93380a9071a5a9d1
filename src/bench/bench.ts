// `skewjoin bench`: workloads on synthetic Zipf data, each run by skewjoin in
// several modes and by DuckDB on the same files in the same process, with
// the answers checked to agree. Ratios within one run are the figures that
// count; absolute times on shared machines are noisy.
import fs from 'node:fs';
import path from 'node:path';
import { runPlan, type RunResult } from '../api.js';
import type { Overrides } from '../plan/load.js';
import { GEN_DEFAULTS, type GenOptions, generate } from './gen.js';

export interface BenchOptions { out: string; workers: number; repeat: number; suite: string; rows?: number; keys?: number }

/** skewjoin's modes: skew handling off, by map ranges, by hot keys, automatic; and combiners on or off. */
type Mode = 'off' | 'partition' | 'key' | 'auto' | 'no-combiners';

interface Workload {
  name: string;
  data: Partial<GenOptions>;
  plan: (dir: string) => object;
  sql: (dir: string) => string;
  modes: Mode[];
  /** execution settings shared by the skewjoin modes */
  execution: Overrides;
}

export interface BenchRow {
  workload: string;
  mode: Mode | 'duckdb';
  wallMs: number;
  runsMs: number[];
  /** slowest reduce task of the join stage divided by its median */
  reduceImbalance?: number;
  reduceTasks?: number;
  shuffledRows?: number;
  shuffledBytes?: number;
  /** rows the map tasks produced before their combiners */
  rowsBeforeCombining?: number;
  eager?: boolean;
  sameAnswer?: boolean;
}

const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s[s.length >> 1]; };

async function duckdb(): Promise<any> {
  try {
    return await import('@duckdb/node-api');
  } catch {
    throw new Error('the benchmark compares with DuckDB: install the dev dependencies (npm ci) to get @duckdb/node-api');
  }
}

function joinGroupBy(leftFile: string, rightFile: string, rightCols: string[], groupBy: string): Pick<Workload, 'plan' | 'sql'> {
  return {
    plan: (dir) => ({
      version: 1,
      sources: { fact: { parquet: path.join(dir, leftFile) }, other: { parquet: path.join(dir, rightFile) } },
      query: {
        op: 'sort', by: [{ column: groupBy }],
        input: {
          op: 'aggregate', groupBy: [groupBy],
          aggregates: [{ fn: 'count', as: 'n' }, { fn: 'sum', column: 'amount', as: 'revenue' }],
          input: {
            op: 'join', type: 'inner', on: [['key', 'key']],
            left: { op: 'scan', source: 'fact', columns: ['key', 'amount'] },
            right: { op: 'scan', source: 'other', columns: rightCols },
          },
        },
      },
    }),
    sql: (dir) => `SELECT o.${groupBy}, count(*) AS n, sum(f.amount) AS revenue
      FROM read_parquet('${path.join(dir, leftFile)}') f JOIN read_parquet('${path.join(dir, rightFile)}') o ON f.key = o.key
      GROUP BY o.${groupBy} ORDER BY o.${groupBy}`,
  };
}

/** Skew settings scaled to these data sizes (the defaults, 256 MB and 64 MB, are for larger inputs). */
const SKEW_EXEC: Overrides = { partitions: 64, eagerAggregation: false, skew: { factor: 2, thresholdBytes: 2 * 1024 * 1024, advisoryPartitionBytes: 4 * 1024 * 1024 } };

export function suites(o: BenchOptions): Record<string, Workload[]> {
  const rows = o.rows ?? 5_000_000, keys = o.keys ?? 1_000_000;
  return {
    reference: [{
      name: 'join+groupby s=1', data: { rows, keys, s: 1 }, ...joinGroupBy('fact.parquet', 'dim.parquet', ['key', 'region'], 'region'),
      modes: ['auto'], execution: {},
    }],
    combiners: [
      { name: 'aggregate by key s=1.2', data: { rows, keys, s: 1.2 }, ...aggregateByKey(), modes: ['auto', 'no-combiners'], execution: {} },
      { name: 'm2m join+groupby s=1', data: { rows: Math.round(rows * 0.4), keys: Math.round(keys / 10), s: 1, m2mRows: 20000 },
        ...joinGroupBy('fact.parquet', 'm2m.parquet', ['key', 'grp'], 'grp'), modes: ['auto'], execution: {} },
    ],
    skew: [
      { name: 'fact⋈dim s=1.2', data: { rows, keys, s: 1.2 }, ...joinGroupBy('fact.parquet', 'dim.parquet', ['key', 'region'], 'region'),
        modes: ['off', 'partition', 'key'], execution: SKEW_EXEC },
      { name: 'many-to-many s=1.2', data: { rows: Math.round(rows / 10), keys: Math.round(keys / 10), s: 1.2, m2mRows: 1000 },
        ...joinGroupBy('fact.parquet', 'm2m.parquet', ['key', 'grp'], 'grp'), modes: ['off', 'partition', 'key'], execution: SKEW_EXEC },
      { name: 'fact⋈dim s=0', data: { rows, keys, s: 0 }, ...joinGroupBy('fact.parquet', 'dim.parquet', ['key', 'region'], 'region'),
        modes: ['off', 'partition', 'key'], execution: SKEW_EXEC },
    ],
  };
}

function modeOverrides(mode: Mode, base: Overrides, workers: number): Overrides {
  if (mode === 'no-combiners') return { ...base, workers, combiners: false };
  return { ...base, workers, skew: mode === 'off' ? { enabled: false } : { ...base.skew, enabled: true, strategy: mode } };
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

/** Data sets are reused across runs: their folder name is a hash of their parameters. */
export function datasetDir(out: string, p: Partial<GenOptions>): string {
  const tag = Object.entries({ ...p }).sort().map(([k, v]) => `${k}${v}`).join('-');
  return path.join(out, 'data', tag);
}

function sameRows(a: Record<string, unknown>[], b: Record<string, unknown>[]): boolean {
  if (a.length !== b.length) return false;
  return a.every((row, i) => Object.keys(row).every((k) => {
    const x = row[k], y = b[i][k];
    if (typeof x === 'number' || typeof y === 'number') return Math.abs(Number(x) - Number(y)) <= 1e-6 * Math.max(1, Math.abs(Number(y)));
    return String(x) === String(y);
  }));
}

function joinStats(r: RunResult) {
  const ms = r.stats.tasks.filter((t) => t.kind === 'reduce' && t.stage.startsWith('join')).map((t) => t.ms);
  const combined = r.stats.shuffles.filter((x) => x.combine);
  const shuffles = r.stats.shuffles;
  return {
    reduceImbalance: ms.length ? Math.max(...ms) / median(ms) : undefined,
    reduceTasks: ms.length,
    shuffledRows: shuffles.reduce((s, x) => s + x.partitionRows.reduce((a, b) => a + b, 0), 0),
    shuffledBytes: shuffles.reduce((s, x) => s + x.partitionBytes.reduce((a, b) => a + b, 0), 0),
    rowsBeforeCombining: combined.length ? combined.reduce((s, x) => s + x.combine!.rowsBefore, 0) : undefined,
    eager: r.stats.eager.length > 0,
  };
}

export async function runBench(o: BenchOptions, log: NodeJS.WritableStream): Promise<number> {
  const workloads = suites(o)[o.suite];
  if (!workloads) throw new Error(`unknown suite "${o.suite}"; suites are: ${Object.keys(suites(o)).join(', ')}`);
  const { DuckDBInstance } = await duckdb();
  const db = await DuckDBInstance.create(':memory:', { threads: String(o.workers) });
  const con = await db.connect();
  const results: BenchRow[] = [];
  log.write(`${'workload'.padEnd(24)} ${'mode'.padEnd(12)} ${'wall_ms'.padStart(8)} ${'max/med'.padStart(8)} ${'tasks'.padStart(6)} ${'shuffled_rows'.padStart(13)} ${'shuffled_MB'.padStart(11)} ${'vs_off'.padStart(7)} ${'vs_duckdb'.padStart(9)} same\n`);
  for (const w of workloads) {
    const data = { ...GEN_DEFAULTS, ...w.data };
    const dir = path.resolve(datasetDir(o.out, w.data));
    if (!fs.existsSync(path.join(dir, 'dim.parquet'))) generate({ ...data, out: dir });
    const plan = w.plan(dir);
    const times: number[] = [];
    let theirs: Record<string, unknown>[] = [];
    for (let i = 0; i < o.repeat; i++) {
      const t0 = performance.now();
      theirs = (await con.runAndReadAll(w.sql(dir))).getRowObjectsJS() as Record<string, unknown>[];
      times.push(performance.now() - t0);
    }
    const duck: BenchRow = { workload: w.name, mode: 'duckdb', wallMs: median(times), runsMs: times };
    const rows: BenchRow[] = [];
    for (const mode of w.modes) {
      const opts = modeOverrides(mode, w.execution, o.workers);
      await runPlan(plan, opts); // warm the worker threads and the file cache
      const runs: number[] = [];
      let last!: RunResult;
      for (let i = 0; i < o.repeat; i++) {
        const t0 = performance.now();
        last = await runPlan(plan, opts);
        runs.push(performance.now() - t0);
      }
      rows.push({ workload: w.name, mode, wallMs: median(runs), runsMs: runs, ...joinStats(last), sameAnswer: sameRows(last.toRows(), theirs) });
    }
    const off = rows.find((r) => r.mode === 'off');
    for (const r of [...rows, duck]) {
      results.push(r);
      const vsOff = off && r.mode !== 'duckdb' ? (off.wallMs / r.wallMs).toFixed(2) : '';
      const vsDuck = r.mode === 'duckdb' ? '' : (r.wallMs / duck.wallMs).toFixed(2);
      const mb = r.shuffledBytes === undefined ? '' : (r.shuffledBytes / 1048576).toFixed(1);
      log.write(`${w.name.padEnd(24)} ${r.mode.padEnd(12)} ${r.wallMs.toFixed(0).padStart(8)} ${(r.reduceImbalance?.toFixed(2) ?? '').padStart(8)} ${String(r.reduceTasks ?? '').padStart(6)} ${String(r.shuffledRows ?? '').padStart(13)} ${mb.padStart(11)} ${vsOff.padStart(7)} ${vsDuck.padStart(9)} ${r.sameAnswer ?? ''}\n`);
    }
  }
  fs.mkdirSync(o.out, { recursive: true });
  fs.writeFileSync(path.join(o.out, 'results.json'), JSON.stringify({ suite: o.suite, workers: o.workers, repeat: o.repeat, results }, null, 2) + '\n');
  const csv = ['workload,mode,wall_ms,reduce_imbalance,reduce_tasks,shuffled_rows,shuffled_bytes,same_answer',
    ...results.map((r) => [r.workload, r.mode, r.wallMs.toFixed(1), r.reduceImbalance?.toFixed(3) ?? '', r.reduceTasks ?? '', r.shuffledRows ?? '', r.shuffledBytes ?? '', r.sameAnswer ?? ''].join(','))];
  fs.writeFileSync(path.join(o.out, 'results.csv'), csv.join('\n') + '\n');
  return results.every((r) => r.sameAnswer !== false) ? 0 : 1;
}
