#!/usr/bin/env node
// The window stage's tasks alone, on one thread, as a whole run meets them: the orders of DATA/jcch-sfN (read once
// through DuckDB), hash-partitioned by o_custkey into 5 tasks of 9 blocks each (one a map task, on
// SharedArrayBuffers as the shuffle leaves them), each task's window kernel (window/source.ts produce) timed in CPU
// milliseconds: the first pass over the five tasks (cold: each loop compiled while it runs, the scratch slots first
// written) and the best of the next ones (warm). Two windows: lag_gaps's (partition by o_custkey order by
// o_orderdate, o_orderkey; lag(o_orderdate)) and latest_per_customer's without its top-N (order by o_orderdate desc,
// o_orderkey desc; row_number). Each run is a fresh process (node --no-concurrent-recompilation, as bin/ sets it);
// with --against, the other build's dist/ in the same rounds, alternating, and the medians of both.
//
//   node scripts/window-task-bench.mjs [--data /work/data] [--scale 1] [--runs 6] [--passes 3]
//     [--against /work/main] [--queries lag,latest]
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, median, opt } from './bench-common.mjs';

if (process.argv[2] === '--child')
  await child(process.argv[3], process.argv[4], process.argv[5], Number(process.argv[6]));
else await parent();

async function parent() {
  const dir = path.resolve(opt('data', path.join(ROOT, 'bench-out')), `jcch-sf${opt('scale', '1')}`);
  const runs = Number(opt('runs', 6)),
    passes = Number(opt('passes', 3));
  const against = opt('against', undefined);
  const builds = [ROOT, ...(against ? [path.resolve(against)] : [])];
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'sj-window-task-'));
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const con = await (await DuckDBInstance.create(':memory:')).connect();
  const r = await con.runAndReadAll(
    `SELECT o_orderkey::INTEGER, o_custkey::INTEGER, (o_totalprice * 100)::BIGINT, (o_orderdate - DATE '1970-01-01')::INTEGER
     FROM read_parquet('${path.join(dir, 'orders.parquet')}')`,
  );
  const cols = r.getColumns();
  const arrays = [Int32Array, Int32Array, BigInt64Array, Int32Array].map((C, c) => C.from(cols[c]));
  arrays.forEach((a, c) => fs.writeFileSync(path.join(cache, `${c}.bin`), Buffer.from(a.buffer)));
  console.log(`orders of ${dir}: ${arrays[0].length} rows; CPU ms of the five window tasks, ${runs} processes each\n`);
  console.log('| window | build | first pass (cold) | warm (best of the next) |');
  console.log('|---|---|---|---|');
  for (const q of opt('queries', 'lag,latest').split(',')) {
    const times = builds.map(() => ({ cold: [], warm: [] }));
    for (let i = 0; i < runs; i++) {
      const order = i % 2 === 0 ? builds.map((_, b) => b) : builds.map((_, b) => b).reverse();
      for (const b of order) {
        const out = execFileSync(
          process.execPath,
          ['--no-concurrent-recompilation', import.meta.filename, '--child', builds[b], cache, q, String(passes)],
          { encoding: 'utf8' },
        );
        const ms = out.trim().split(' ').map(Number);
        times[b].cold.push(ms[0]);
        times[b].warm.push(Math.min(...ms.slice(1)));
      }
    }
    builds.forEach((b, i) =>
      console.log(`| ${q} | ${b} | ${median(times[i].cold).toFixed(0)} | ${median(times[i].warm).toFixed(0)} |`),
    );
  }
  fs.rmSync(cache, { recursive: true, force: true });
}

/** One process: `passes` passes over the five tasks with `build`'s kernel; prints each pass's CPU ms. */
async function child(build, cache, q, passes) {
  const { windowKernel } = await import(path.join(build, 'dist/physical/window/source.js'));
  const read = (c, C) => {
    const b = fs.readFileSync(path.join(cache, `${c}.bin`));
    return new C(b.buffer, b.byteOffset, b.byteLength / C.BYTES_PER_ELEMENT);
  };
  const all = [read(0, Int32Array), read(1, Int32Array), read(2, BigInt64Array), read(3, Int32Array)];
  const schema = [
    { name: 'o_orderkey', type: { id: 'int32' } },
    { name: 'o_custkey', type: { id: 'int32' } },
    { name: 'o_totalprice', type: { id: 'decimal', precision: 15, scale: 2 } },
    { name: 'o_orderdate', type: { id: 'date32' } },
  ];
  const N = all[0].length,
    TASKS = 5,
    MAPS = 9;
  const task = (i) => (Math.imul(all[1][i], 0x9e3779b1) >>> 0) % TASKS;
  const inputs = Array.from({ length: TASKS }, () => []);
  for (let m = 0; m < MAPS; m++) {
    const a = Math.floor((m * N) / MAPS),
      b = Math.floor(((m + 1) * N) / MAPS);
    for (let t = 0; t < TASKS; t++) {
      const rows = [];
      for (let i = a; i < b; i++) if (task(i) === t) rows.push(i);
      const columns = all.map((src, c) => {
        const values = new src.constructor(new SharedArrayBuffer(rows.length * src.BYTES_PER_ELEMENT));
        for (let j = 0; j < rows.length; j++) values[j] = src[rows[j]];
        return { type: schema[c].type, length: rows.length, values, valid: null };
      });
      inputs[t].push({ length: rows.length, columns });
    }
  }
  const frame = { unit: 'range', start: null, end: 0 };
  const lag = q === 'lag';
  const src = (input) => ({
    kind: 'window',
    schema,
    input,
    partitionBy: [1],
    orderBy: [
      { col: 3, desc: !lag, nullsFirst: false },
      { col: 0, desc: !lag, nullsFirst: false },
    ],
    fns: [
      lag
        ? { fn: 'lag', col: 3, as: 'lag', type: { id: 'date32' }, frame, n: 1, def: -1 }
        : { fn: 'row_number', col: -1, as: 'rn', type: { id: 'int64' }, frame, n: 0, def: -1 },
    ],
    keep: lag ? [3] : [0, 2],
  });
  // largest first, as the scheduler orders a stage's tasks
  const order = [...inputs.keys()].sort((a, b) => rowsOf(inputs[b]) - rowsOf(inputs[a]));
  const cpu = () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
  };
  const out = [];
  for (let p = 0; p < passes; p++) {
    const t0 = cpu();
    for (const t of order) windowKernel.produce(src(inputs[t]));
    out.push((cpu() - t0).toFixed(1));
  }
  console.log(out.join(' '));
}

function rowsOf(batches) {
  return batches.reduce((a, b) => a + b.length, 0);
}
