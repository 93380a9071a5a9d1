// Three queries at once in one library process, each given the same memoryLimit (docs/design/memory.md): they share
// one data budget, so the process's peak RSS stays near one query's. Prints wall time, peak RSS and the bytes each
// query spilled, and checks the three answers agree.
//   node scripts/concurrent-memory.mjs [--data DIR] [--rows N] [--limit 1GB] [--queries 3] [--lib dist/index.js]
import fs from 'node:fs';
import path from 'node:path';
import { gen, opt } from './bench-common.mjs';

const data = path.resolve(opt('data', '/tmp/concurrent-memory'));
const rows = Number(opt('rows', '50000000'));
const limit = opt('limit', '1GB');
const n = Number(opt('queries', '3'));
const lib = path.resolve(opt('lib', 'dist/index.js'));
gen(data, ['--rows', String(rows), '--keys', String(rows / 10), '--s', '1']);
const plan = JSON.parse(fs.readFileSync(new URL('../bench/ooc/groupby.json', import.meta.url), 'utf8'));
plan.sources = { fact: { parquet: path.join(data, 'fact.parquet') }, dim: { parquet: path.join(data, 'dim.parquet') } };
const { runPlan, closePool } = await import(lib);
const t0 = performance.now();
const runs = await Promise.all(Array.from({ length: n }, () => runPlan(plan, { workers: 2, memoryLimit: limit })));
const wall = (performance.now() - t0) / 1000;
const answers = new Set(runs.map((r) => JSON.stringify(r.toRows(), (_, v) => (typeof v === 'bigint' ? String(v) : v))));
console.log(
  JSON.stringify({
    lib,
    rows,
    limit,
    queries: n,
    wallS: +wall.toFixed(1),
    peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
    spilledMiB: runs.map((r) => Math.round(r.stats.spilledBytes / 2 ** 20)),
    sameAnswer: answers.size === 1,
  }),
);
await closePool();
