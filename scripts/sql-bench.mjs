#!/usr/bin/env node
// SQL in, measured: each TPC-H text (test/tpch/qNN.sql, validation parameters)
// compiled by `skewjoin qNN.sql --print-plan` against the hand-written plan
// plans/tpch/qNN.json on the same files, both run as whole processes, paired
// (the order alternates), medians and the median per-pair ratio. The compiled
// plan's rows must equal the hand plan's (values compared as text, floats to 10 digits).
//
//   node scripts/sql-bench.mjs --tpch DIR [--pairs 3] [--workers 2] [--queries q01,q05] [--flags "--runtime-filters auto"]
//
// --flags: more flags for both runs. CPU (user + system) ratios beside the wall's: on a shared machine the steadier.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { BIN, ROOT, extraFlags, median, opt, timeProcess, tpchSql } from './bench-common.mjs';

const tpch = path.resolve(opt('tpch', path.join(ROOT, 'datasets', 'tpch')));
const pairs = Number(opt('pairs', 3));
const workers = String(opt('workers', 2));
const queries = opt(
  'queries',
  Array.from({ length: 22 }, (_, i) => `q${String(i + 1).padStart(2, '0')}`).join(','),
).split(',');
const TABLES = ['region', 'nation', 'supplier', 'customer', 'part', 'partsupp', 'orders', 'lineitem'];
const flags = extraFlags();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sj-sql-bench-'));

const canon = (stdout) =>
  stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) =>
      JSON.stringify(
        Object.values(JSON.parse(l)).map((v) => {
          const n = typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v;
          return typeof n === 'number' ? Number(n.toPrecision(10)) : v;
        }),
      ),
    )
    .sort();

console.log(
  `TPC-H tables in ${tpch}, ${workers} workers, ${pairs} pairs, flags [${flags.join(' ')}]; load ${os.loadavg()[0].toFixed(1)}\n`,
);
console.log(
  '| query | hand-written s | compiled s | compiled / hand (median of pairs) | CPU compiled / hand | same rows |',
);
console.log('|---|---|---|---|---|---|');
const ratios = [],
  cpuRatios = [];
for (const q of queries) {
  const hand = path.join(ROOT, 'plans', 'tpch', `${q}.json`);
  const { plan: handPlan, text } = tpchSql(q);
  const sqlFile = path.join(tmp, `${q}.sql`);
  fs.writeFileSync(sqlFile, text);
  const all = TABLES.flatMap((t) => ['--source', `${t}=${path.join(tpch, `${t}.parquet`)}`]);
  const printed = spawnSync(process.execPath, [BIN, sqlFile, ...all, '--print-plan'], { encoding: 'utf8' });
  if (printed.status !== 0) {
    console.log(`| ${q} | | | compile failed: ${printed.stderr.trim()} | |`);
    continue;
  }
  const planned = path.join(tmp, `${q}.json`);
  fs.writeFileSync(planned, printed.stdout);
  const declared = Object.keys(handPlan.sources).flatMap((t) => [
    '--source',
    `${t}=${path.join(tpch, `${t}.parquet`)}`,
  ]);
  const a = [],
    b = [],
    r = [],
    rc = [];
  let same = true;
  for (let i = 0; i < pairs; i++) {
    const runA = () =>
      timeProcess([process.execPath, BIN, hand, ...declared, '--json', '--workers', workers, ...flags]);
    const runB = () => timeProcess([process.execPath, BIN, planned, '--json', '--workers', workers, ...flags]);
    let x, y;
    if (i % 2) {
      y = runB();
      x = runA();
    } else {
      x = runA();
      y = runB();
    }
    if (x.status !== 0 || y.status !== 0) {
      same = false;
      console.error(q, x.stderr.slice(-300), y.stderr.slice(-300));
      break;
    }
    if (i === 0) same = JSON.stringify(canon(x.stdout)) === JSON.stringify(canon(y.stdout));
    a.push(x.wall);
    b.push(y.wall);
    r.push(y.wall / x.wall);
    rc.push((y.user + y.sys) / (x.user + x.sys));
  }
  ratios.push(median(r));
  cpuRatios.push(median(rc));
  console.log(
    `| ${q} | ${median(a).toFixed(2)} | ${median(b).toFixed(2)} | ${median(r).toFixed(2)} | ${median(rc).toFixed(2)} | ${same ? 'yes' : 'NO'} |`,
  );
}
const geomean = (xs) => Math.exp(xs.reduce((s, x) => s + Math.log(x), 0) / xs.length);
console.log(
  `\ngeometric mean of the ratios: ${geomean(ratios).toFixed(2)} wall, ${geomean(cpuRatios).toFixed(2)} CPU over ${ratios.length} queries; load ${os.loadavg()[0].toFixed(1)}`,
);
fs.rmSync(tmp, { recursive: true, force: true });
