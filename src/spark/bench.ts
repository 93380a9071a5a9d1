// `skewjoin bench --engine spark`: the two skews Spark's AQE cannot split (a full outer
// join with a hot key; an inner join whose hot key sits in one input file) on a local
// Spark, AQE alone against AQE with our salting, beside skewjoin and DuckDB on the same
// files. Per run: wall, the sampling, and the join's stage from Spark's own task metrics:
// its slowest and median task (time, CPU time, rows read from the shuffle), its wall and CPU.
import type { Plan } from '../plan/spec.js';
import fs from 'node:fs';
import path from 'node:path';
import { executeOnSpark } from './engine.js';
import type { StageTimes } from './stages.js';
import { LocalSparkServer } from './server.js';
import { type LoadedPlan, loadPlan } from '../plan/load.js';
import { execute } from '../scheduler/execute.js';
import { closePool } from '../runtime/pool.js';
import { valueAt } from '../kernels/column.js';

export interface SparkBenchOptions {
  out: string;
  rows?: number;
  keys?: number;
  repeat: number;
  workers: number;
  /** only the workloads whose name contains one of these */
  workloads?: string[];
}

interface Workload {
  name: string;
  hotShare: number;
  files: number;
  sorted: boolean;
  join: 'full' | 'inner';
  /** dim rows of the hot key (the copied side's rows that salting replicates); 1 by default */
  hotDimRows?: number;
  /** a GROUP BY on the key after the join (the salted join's output is shuffled once more) */
  groupByKey?: boolean;
}
const WORKLOADS: Workload[] = [
  { name: 'full outer hot key', hotShare: 0.3, files: 16, sorted: false, join: 'full' },
  // 10% of the rows, sorted: the hot key's rows all sit in the first of 8 files, one map task's block
  { name: 'one-file hot key', hotShare: 0.1, files: 8, sorted: true, join: 'inner' },
  // the copied side heavy for the hot key: its rows are replicated once per salt
  { name: 'heavy copied side', hotShare: 0.3, files: 16, sorted: false, join: 'full', hotDimRows: 2000 },
  // a GROUP BY on the key after the join: the salted join's rows of the hot key meet again in one partition
  { name: 'group by after join', hotShare: 0.3, files: 16, sorted: false, join: 'full', groupByKey: true },
];
/**
 * Makespan of a stage's tasks on `executors`, largest task first (LPT), as bench/simulate.ts schedules the local
 * engine's tasks (a front-end module this one may not import).
 */
function makespan(costs: readonly number[], executors: number): number {
  const load = new Float64Array(executors);
  for (const c of [...costs].sort((a, b) => b - a)) {
    let k = 0;
    for (let i = 1; i < load.length; i++) if (load[i] < load[k]) k = i;
    load[k] += c;
  }
  return Math.max(0, ...load);
}

/** Executors the salted and AQE-only runs' task times are replayed on. */
const SIM_EXECUTORS = [4, 8, 16, 64];

export interface SparkBenchRow {
  workload: string;
  mode: string;
  wallMs: number;
  /** of wallMs: the sampling of the join sides for hot keys */
  samplingMs?: number;
  /** the join's stage (the stage that read the most rows from the shuffle): its tasks, the slowest and median one */
  tasks?: number;
  slowestMs?: number;
  medianMs?: number;
  slowestCpuMs?: number;
  medianCpuMs?: number;
  mostRows?: number;
  medianRows?: number;
  /** the join's stage from submission to completion; its tasks' time and CPU time together */
  stageWallMs?: number;
  stageTaskMs?: number;
  stageCpuMs?: number;
  salted?: number;
  /** the run's tasks replayed on W simulated executors, stage after stage, largest task first: ms per W */
  simulated?: Record<number, number>;
  answer: string;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b),
    m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

async function generate(con: any, dir: string, w: Workload, rows: number, keys: number): Promise<void> {
  fs.mkdirSync(dir, { recursive: true });
  const every = Math.round(1 / w.hotShare);
  const key = `CASE WHEN i % ${every} = 0 THEN 0 ELSE 1 + (i * 7919) % ${keys - 1} END::BIGINT`;
  const fact = `SELECT ${key} AS k, i::BIGINT AS v FROM range(${rows}) t(i)`;
  await con.run(`CREATE OR REPLACE TABLE fact AS SELECT * FROM (${fact}) ${w.sorted ? 'ORDER BY k' : ''}`);
  const per = Math.ceil(rows / w.files);
  for (let f = 0; f < w.files; f++) {
    await con.run(
      `COPY (SELECT * FROM fact LIMIT ${per} OFFSET ${f * per}) TO '${dir}/fact-${f}.parquet' (FORMAT parquet)`,
    );
  }
  // the hot key 0 with hotDimRows rows in the dim, every other key one
  const extra = (w.hotDimRows ?? 1) - 1;
  await con.run(
    `COPY (SELECT i::BIGINT AS dk, (i * 3)::BIGINT AS w FROM range(${keys}) t(i)` +
      (extra > 0 ? ` UNION ALL SELECT 0::BIGINT, (i * 3)::BIGINT FROM range(${extra}) t(i)` : '') +
      `) TO '${dir}/dim.parquet' (FORMAT parquet)`,
  );
}

function plan(dir: string, w: Workload, strategy: 'partition' | 'key', rows: number): Plan {
  const join = {
    op: 'join' as const,
    type: w.join,
    left: { op: 'scan' as const, source: 'fact' },
    right: { op: 'scan' as const, source: 'dim' },
    on: [['k', 'dk']] as [string, string][],
  };
  return {
    version: 1,
    description: w.name,
    sources: { fact: { parquet: path.join(dir, 'fact-*.parquet') }, dim: { parquet: path.join(dir, 'dim.parquet') } },
    execution: {
      partitions: 64,
      broadcastBytes: 0,
      // partitions of about 1/64 of the fact's 16-byte rows (at most 16 MB): AQE keeps some 64 tasks a stage to
      // replay on the simulated executors rather than coalescing them into a few
      skew: {
        factor: 5,
        thresholdBytes: '4MB',
        advisoryPartitionBytes: Math.min(16 << 20, Math.max(256 << 10, Math.round((rows * 16) / 64))),
        strategy,
      },
    },
    query: {
      op: 'aggregate',
      groupBy: [],
      aggregates: [
        { fn: 'count', as: 'n' },
        { fn: 'count', column: 'dk', as: 'matched' },
        { fn: 'sum', column: 'v', as: 'sv' },
      ],
      input: w.groupByKey
        ? {
            op: 'aggregate',
            groupBy: ['k'],
            aggregates: [
              { fn: 'count', as: 'rows' },
              { fn: 'count', column: 'dk', as: 'dk' },
              { fn: 'sum', column: 'v', as: 'v' },
            ],
            input: join,
          }
        : join,
    },
  };
}

const answerOf = (r: { schema: { name: string }[]; batches: any[] }) =>
  r.schema.map((f, i) => `${f.name}=${String(valueAt(r.batches[0].columns[i], 0))}`).join(' ');

async function sparkRun(lp: LoadedPlan, remote: string, mode: string, w: Workload): Promise<SparkBenchRow> {
  const r = await executeOnSpark(lp, { remote, taskTimes: true });
  const stages = r.stats.spark.stages;
  const simulated = Object.fromEntries(
    SIM_EXECUTORS.map((n) => [n, Math.round(stages.reduce((a, s) => a + makespan(s.durations ?? [], n), 0))]),
  );
  // the join's stage: the one that read the most rows from the shuffle (both sides of the join)
  const join = r.stats.spark.stages.reduce(
    (a, s) => ((s.shuffleRows ?? 0) > (a?.shuffleRows ?? 0) ? s : a),
    undefined as undefined | StageTimes,
  );
  return {
    workload: w.name,
    mode,
    wallMs: Math.round(r.stats.wallMs),
    samplingMs: Math.round(r.stats.spark.samplingMs ?? 0),
    tasks: join?.tasks,
    slowestMs: join?.slowestMs,
    medianMs: join?.medianMs,
    slowestCpuMs: join?.slowestCpuMs,
    medianCpuMs: join?.medianCpuMs,
    mostRows: join?.mostRows,
    medianRows: join?.medianRows,
    stageWallMs: join?.wallMs,
    stageTaskMs: join?.taskMs,
    stageCpuMs: join?.cpuMs,
    salted: r.stats.spark.salted.reduce((a, s) => a + s.keys.length, 0),
    simulated,
    answer: answerOf(r),
  };
}

const COLUMNS: [keyof SparkBenchRow, string, number][] = [
  ['wallMs', 'wall_ms', 8],
  ['samplingMs', 'sampling', 8],
  ['tasks', 'tasks', 5],
  ['slowestMs', 'slowest', 8],
  ['medianMs', 'median', 7],
  ['slowestCpuMs', 'slow_cpu', 8],
  ['medianCpuMs', 'med_cpu', 7],
  ['mostRows', 'most_rows', 9],
  ['medianRows', 'med_rows', 9],
  ['stageWallMs', 'stage_ms', 8],
  ['stageTaskMs', 'stage_task', 10],
  ['stageCpuMs', 'stage_cpu', 9],
];

export async function runSparkBench(o: SparkBenchOptions, log: NodeJS.WritableStream): Promise<number> {
  const rows = o.rows ?? 10_000_000,
    keys = o.keys ?? 1_000_000;
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const con = await (await DuckDBInstance.create(':memory:', { threads: String(o.workers) })).connect();
  const server = await LocalSparkServer.start(o.workers, { 'spark.driver.memory': '6g' });
  const out: SparkBenchRow[] = [];
  const all: SparkBenchRow[] = [];
  const line = (r: SparkBenchRow) =>
    log.write(
      `${r.workload.padEnd(20)} ${r.mode.padEnd(23)} ` +
        COLUMNS.map(([k, , n]) => String(r[k] === undefined ? '' : Math.round(r[k] as number)).padStart(n)).join(' ') +
        SIM_EXECUTORS.map((n) => {
          const v = r.simulated?.[n];
          return ` ${String(v === undefined ? '' : Math.round(v)).padStart(7)}`;
        }).join('') +
        `  ${r.answer}\n`,
    );
  log.write(
    `${'workload'.padEnd(20)} ${'mode'.padEnd(23)} ${COLUMNS.map(([, h, n]) => h.padStart(n)).join(' ')}` +
      `${SIM_EXECUTORS.map((n) => ` ${`sim_${n}`.padStart(7)}`).join('')}  answer\n`,
  );
  const workloads = WORKLOADS.filter((w) => !o.workloads?.length || o.workloads.some((x) => w.name.includes(x)));
  try {
    for (const w of workloads) {
      const dir = path.join(o.out, 'spark', w.name.replace(/\W+/g, '-'));
      await generate(con, dir, w, rows, keys);
      const lps = {
        aqe: await loadPlan(plan(dir, w, 'partition', rows)),
        salted: await loadPlan(plan(dir, w, 'key', rows)),
      };
      const runs: Record<string, SparkBenchRow[]> = { 'spark aqe': [], 'spark aqe+salt': [] };
      // the JVM's first runs of both query shapes
      await sparkRun(lps.aqe, server.url, 'warm-up', w);
      await sparkRun(lps.salted, server.url, 'warm-up', w);
      for (let k = 0; k < o.repeat; k++) {
        // paired: A, B, A, B
        for (const [mode, lp] of [
          ['spark aqe', lps.aqe],
          ['spark aqe+salt', lps.salted],
        ] as const) {
          const r = await sparkRun(lp, server.url, `${mode} #${k + 1}`, w);
          runs[mode].push(r);
          all.push(r);
          line(r);
        }
      }
      for (const [mode, rs] of Object.entries(runs)) {
        const row: SparkBenchRow = { ...rs[0], mode: `${mode} (median)` };
        for (const [k] of COLUMNS) {
          const xs = rs.map((r) => r[k]).filter((x): x is number => typeof x === 'number');
          if (xs.length) (row as unknown as Record<string, number>)[k] = median(xs);
        }
        row.simulated = Object.fromEntries(SIM_EXECUTORS.map((n) => [n, median(rs.map((r) => r.simulated?.[n] ?? 0))]));
        out.push(row);
        line(row);
      }
      const t0 = performance.now();
      const local = await execute(lps.salted, false);
      out.push({
        workload: w.name,
        mode: 'skewjoin',
        wallMs: Math.round(performance.now() - t0),
        answer: answerOf(local),
      });
      line(out[out.length - 1]);
      const t1 = performance.now();
      const kw = w.join === 'full' ? 'FULL JOIN' : 'JOIN';
      const joined = `'${dir}/fact-*.parquet' f ${kw} '${dir}/dim.parquet' d ON f.k = d.dk`;
      const d = await con.runAndReadAll(
        w.groupByKey
          ? `SELECT count(*) AS n, count(dk) AS matched, sum(v) AS sv FROM ` +
              `(SELECT k, count(*) AS n, count(dk) AS dk, sum(v) AS v FROM ${joined} GROUP BY k) g(k, n, dk, v)`
          : `SELECT count(*) AS n, count(dk) AS matched, sum(v) AS sv FROM ${joined}`,
      );
      const dv = d.getRows()[0].map(String);
      out.push({
        workload: w.name,
        mode: 'duckdb',
        wallMs: Math.round(performance.now() - t1),
        answer: `n=${dv[0]} matched=${dv[1]} sv=${dv[2]}`,
      });
      line(out[out.length - 1]);
    }
  } finally {
    await server.stop();
    await closePool();
  }
  fs.mkdirSync(o.out, { recursive: true });
  fs.writeFileSync(
    path.join(o.out, 'spark-results.json'),
    JSON.stringify({ rows, keys, workers: o.workers, repeat: o.repeat, results: out, runs: all }, null, 2) + '\n',
  );
  log.write(`wrote ${path.join(o.out, 'spark-results.json')}\n`);
  const same = workloads.every(
    (w) => new Set(out.filter((r) => r.workload === w.name).map((r) => r.answer)).size === 1,
  );
  if (!same) log.write('the engines disagree: see the answer column\n');
  return same ? 0 : 1;
}
