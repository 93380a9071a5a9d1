// `skewjoin bench`: the reference workload (a Zipf fact table joined to its
// dimension, grouped by a dimension column), timed for skewjoin and DuckDB on
// the same files in the same run; the answers are checked to agree.
import fs from 'node:fs';
import path from 'node:path';
import { runPlan } from '../api.js';
import { GEN_DEFAULTS, generate } from './gen.js';

export interface BenchOptions { out: string; workers: number; rows: number; keys: number; repeat: number }

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1];
}

async function duckdb(): Promise<any> {
  try {
    return await import('@duckdb/node-api');
  } catch {
    throw new Error('the benchmark compares with DuckDB: install the dev dependencies (npm ci) to get @duckdb/node-api');
  }
}

export function datasetDir(out: string, p: Record<string, unknown>): string {
  const tag = Object.entries(p).map(([k, v]) => `${k}${v}`).join('-');
  return path.join(out, 'data', tag);
}

export async function runBench(o: BenchOptions, log: NodeJS.WritableStream): Promise<number> {
  const params = { rows: o.rows, keys: o.keys, s: 1, seed: 42 };
  const dir = datasetDir(o.out, params);
  if (!fs.existsSync(path.join(dir, 'dim.parquet'))) {
    log.write(`generating ${o.rows} fact rows over ${o.keys} keys (Zipf s=1) in ${dir}\n`);
    generate({ ...GEN_DEFAULTS, ...params, out: dir });
  }
  const fact = path.resolve(dir, 'fact.parquet'), dim = path.resolve(dir, 'dim.parquet');
  const plan = {
    version: 1,
    sources: { fact: { parquet: fact }, dim: { parquet: dim } },
    query: {
      op: 'sort', by: [{ column: 'region' }],
      input: {
        op: 'aggregate', groupBy: ['region'],
        aggregates: [{ fn: 'count', as: 'n' }, { fn: 'sum', column: 'amount', as: 'revenue' }],
        input: {
          op: 'join', type: 'inner', on: [['key', 'key']],
          left: { op: 'scan', source: 'fact', columns: ['key', 'amount'] },
          right: { op: 'scan', source: 'dim', columns: ['key', 'region'] },
        },
      },
    },
  };
  const sql = `SELECT d.region, count(*) AS n, sum(f.amount) AS revenue
    FROM read_parquet('${fact}') f JOIN read_parquet('${dim}') d ON f.key = d.key GROUP BY d.region ORDER BY d.region`;

  const { DuckDBInstance } = await duckdb();
  const db = await DuckDBInstance.create(':memory:', { threads: String(o.workers) });
  const con = await db.connect();
  const sj: number[] = [], dk: number[] = [];
  let ours: Record<string, unknown>[] = [], theirs: Record<string, unknown>[] = [];
  await runPlan(plan, { workers: o.workers }); // warm the worker threads
  for (let i = 0; i < o.repeat; i++) {
    let t0 = performance.now();
    const r = await runPlan(plan, { workers: o.workers });
    sj.push(performance.now() - t0);
    ours = r.toRows();
    t0 = performance.now();
    const reader = await con.runAndReadAll(sql);
    dk.push(performance.now() - t0);
    theirs = reader.getRowObjectsJS() as Record<string, unknown>[];
  }
  const same = ours.length === theirs.length && ours.every((row, i) =>
    row.region === theirs[i].region && BigInt(row.n as bigint) === BigInt(theirs[i].n as bigint)
    && Math.abs(Number(row.revenue) - Number(theirs[i].revenue)) <= 1e-6 * Math.abs(Number(theirs[i].revenue)));
  const s = median(sj), d = median(dk);
  log.write(`workload            rows      skewjoin_ms  duckdb_ms  ratio  same_answer\n`);
  log.write(`join+groupby  ${String(o.rows).padStart(12)} ${s.toFixed(0).padStart(12)} ${d.toFixed(0).padStart(10)} ${(s / d).toFixed(2).padStart(6)}  ${same}\n`);
  fs.mkdirSync(o.out, { recursive: true });
  fs.writeFileSync(path.join(o.out, 'results.json'), JSON.stringify({ workload: 'join+groupby', params, workers: o.workers, skewjoinMs: sj, duckdbMs: dk, ratio: s / d, sameAnswer: same }, null, 2) + '\n');
  return same ? 0 : 1;
}
