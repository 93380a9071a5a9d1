#!/usr/bin/env node
// ETL-shaped queries (windows, set operations, ROLLUP, a distinct count) on JCC-H-style data (`skewjoin gen --tpch
// --skew`: hot customers, parts with their suppliers, and order dates), skewjoin's command line against DuckDB
// (scripts/duck-query.mjs, same threads), both
// as whole processes, paired (the order alternates), medians and the median per-pair ratio. Each query ends in an
// aggregate over the window's rows (count, sums, max), so that both sides compute every row and print one; the
// answers must agree (compared as numbers to 10 digits). CPU time (user + system, /usr/bin/time) is reported beside
// the wall time: on a machine shared with other work it moves less.
//
// Then the split window stage: each query once more with its plan (--print-plan) run at 256 shuffle partitions and
// 2 MB tasks (execution.partitions, skew.advisoryPartitionBytes), as if planned for many workers, the skew split on
// (skew.thresholdBytes 1 MB) and off (--no-skew); from --stats, the window stage's tasks: count, slowest and median
// task's input rows (a split partition's pieces, not their second pass), and the partitions split.
//
//   node scripts/etl-bench.mjs [--scale 1] [--data DIR] [--pairs 3] [--workers 2] [--queries running_sum,lag_gaps]
//     [--against OTHER/bin/skewjoin.js] [--no-split]
//
// --against: the other side is that build of skewjoin instead of DuckDB (same flags); --no-split: the first table
// only.
//
// The tables are made once into DATA/jcch-sfN (DATA: --data, default bench-out) and reused.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BIN, DUCK, ROOT, median, opt, timeProcess } from './bench-common.mjs';

const scale = opt('scale', '1');
const dir = path.resolve(opt('data', path.join(ROOT, 'bench-out')), `jcch-sf${scale}`);
const pairs = Number(opt('pairs', 3));
const workers = String(opt('workers', 2));
const TABLES = ['orders', 'lineitem'];

const QUERIES = {
  // a running sum per supplier: the hot suppliers' partitions are the largest
  running_sum: `SELECT count(*) AS n, sum(rs) AS total, max(rs) AS top FROM (
  SELECT sum(l_extendedprice) OVER (PARTITION BY l_suppkey ORDER BY l_orderkey, l_linenumber) AS rs FROM lineitem) t`,
  // the latest order per customer (row_number = 1)
  latest_per_customer: `SELECT count(*) AS n, sum(o_totalprice) AS total, max(o_orderkey) AS top FROM (
  SELECT o_orderkey, o_totalprice,
    row_number() OVER (PARTITION BY o_custkey ORDER BY o_orderdate DESC, o_orderkey DESC) AS rn FROM orders) t
WHERE rn = 1`,
  // the 3 largest line items per supplier (rank <= 3, ties kept)
  top3_per_supplier: `SELECT count(*) AS n, sum(l_extendedprice) AS total, max(l_orderkey) AS top FROM (
  SELECT l_orderkey, l_extendedprice,
    rank() OVER (PARTITION BY l_suppkey ORDER BY l_extendedprice DESC) AS r FROM lineitem) t
WHERE r <= 3`,
  // days between a customer's orders (lag)
  lag_gaps: `SELECT count(gap) AS n, sum(gap) AS total, max(gap) AS top FROM (
  SELECT o_orderdate - lag(o_orderdate) OVER (PARTITION BY o_custkey ORDER BY o_orderdate, o_orderkey) AS gap
  FROM orders) t`,
  // the issue's running sum: by ship date (ties: RANGE's peers share their sum)
  running_sum_shipdate: `SELECT count(*) AS n, sum(rs) AS total, max(rs) AS top FROM (
  SELECT sum(l_extendedprice) OVER (PARTITION BY l_suppkey ORDER BY l_shipdate) AS rs FROM lineitem) t`,
  // two sources as one (line items and orders as amounts per order)
  union_all: `SELECT count(*) AS n, sum(x) AS total, max(k) AS top FROM (
  SELECT l_orderkey AS k, l_extendedprice AS x FROM lineitem UNION ALL SELECT o_orderkey, o_totalprice FROM orders) u`,
  // what is missing: the customers who ordered before 1995 and not since
  except: `SELECT count(*) AS n, sum(o_custkey) AS total, max(o_custkey) AS top FROM (
  SELECT o_custkey FROM orders EXCEPT SELECT o_custkey FROM orders WHERE o_orderdate >= DATE '1995-01-01') e`,
  // subtotals per supplier and flag, per supplier, and the grand total
  rollup: `SELECT count(*) AS n, sum(q) AS total, max(c) AS top FROM (
  SELECT l_suppkey, l_returnflag, count(*) AS c, sum(l_quantity) AS q FROM lineitem
  GROUP BY ROLLUP (l_suppkey, l_returnflag)) r`,
  // distinct parts per supplier (the hot suppliers' groups are the largest)
  distinct_per_supplier: `SELECT count(*) AS n, sum(parts) AS total, max(parts) AS top FROM (
  SELECT l_suppkey, count(DISTINCT l_partkey) AS parts FROM lineitem GROUP BY l_suppkey) d`,
};
// the queries without a window have no window stage to split
const WINDOWED = new Set([
  'running_sum',
  'latest_per_customer',
  'top3_per_supplier',
  'lag_gaps',
  'running_sum_shipdate',
]);
const names = opt('queries', Object.keys(QUERIES).join(',')).split(',');
const against = opt('against', undefined);
const noSplit = process.argv.includes('--no-split');

if (!fs.existsSync(path.join(dir, 'lineitem.parquet'))) {
  const r = spawnSync(process.execPath, [BIN, 'gen', '--tpch', '--skew', '--scale', scale, '--out', dir], {
    stdio: 'inherit',
  });
  if (r.status !== 0) throw new Error('skewjoin gen --tpch --skew failed');
}
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sj-etl-bench-'));
const views = TABLES.map(
  (t) => `CREATE VIEW ${t} AS SELECT * FROM read_parquet('${path.join(dir, `${t}.parquet`)}');`,
).join('\n');
const canon = (rows) =>
  JSON.stringify(rows.map((r) => Object.values(r).map((v) => (v === null ? null : Number(Number(v).toPrecision(10))))));

/** The window stage's tasks of a run's statistics: tasks, slowest and median input rows, partitions split. */
function windowTasks(statsFile) {
  const s = JSON.parse(fs.readFileSync(statsFile, 'utf8'));
  const ids = new Set((s.windows ?? []).map((w) => w.id));
  const rows = s.tasks
    .filter((t) => ids.has(t.stage) && t.kind === 'reduce' && !t.split?.endsWith('carried'))
    .map((t) => t.rows)
    .sort((a, b) => a - b);
  const split = (s.windows ?? []).flatMap((w) => w.splits.filter((x) => x.method === 'ranges'));
  return {
    tasks: rows.length,
    maxRows: rows.at(-1) ?? 0,
    medianRows: median(rows),
    split: split.length,
    pieces: split.reduce((a, x) => a + x.pieces, 0),
  };
}

const results = [];
console.log(
  `JCC-H-style SF ${scale} (${dir}), ${workers} threads each, ${pairs} pairs, against ${against ?? 'DuckDB'}\n`,
);
console.log(
  `| query | skewjoin ms | ${against ? 'other build' : 'DuckDB'} ms | ratio (median of pairs) | CPU s (user+sys) | CPU ratio | same answer |`,
);
console.log('|---|---|---|---|---|---|---|');
for (const name of names) {
  const text = QUERIES[name];
  if (!text) throw new Error(`no query ${name}: ${Object.keys(QUERIES).join(', ')}`);
  const sqlFile = path.join(tmp, `${name}.sql`);
  fs.writeFileSync(sqlFile, text);
  const duckFile = path.join(tmp, `${name}.duck.sql`);
  fs.writeFileSync(duckFile, `${views}\n${text}`);
  const ours = (extra = []) =>
    timeProcess([process.execPath, BIN, sqlFile, '--data', dir, '--json', '--workers', workers, ...extra]);
  const answer = path.join(tmp, `${name}.json`);
  const theirs = (env = {}) =>
    against
      ? timeProcess([process.execPath, path.resolve(against), sqlFile, '--data', dir, '--json', '--workers', workers])
      : timeProcess([process.execPath, DUCK, duckFile, workers], env);
  const a = [],
    b = [],
    r = [],
    ca = [],
    cb = [];
  let same = null;
  for (let i = 0; i < pairs; i++) {
    let x, y;
    if (i % 2) {
      y = theirs();
      x = ours();
    } else {
      x = ours();
      y = theirs();
    }
    if (x.status !== 0 || y.status !== 0) throw new Error(`${name}: ${x.stderr.slice(-500)} ${y.stderr.slice(-500)}`);
    if (i === 0) {
      if (against)
        fs.writeFileSync(
          answer,
          JSON.stringify(
            y.stdout
              .trim()
              .split('\n')
              .filter(Boolean)
              .map((l) => JSON.parse(l)),
          ),
        );
      else theirs({ OUT: answer });
      const mine = x.stdout
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
      same = canon(mine) === canon(JSON.parse(fs.readFileSync(answer, 'utf8')));
    }
    a.push(x.wall * 1000);
    b.push(y.wall * 1000);
    r.push(x.wall / y.wall);
    ca.push(x.user + x.sys);
    cb.push(y.user + y.sys);
  }
  const row = {
    name,
    skewjoinMs: median(a),
    duckdbMs: median(b),
    ratio: median(r),
    skewjoinCpuS: median(ca),
    duckdbCpuS: median(cb),
    same,
  };
  results.push(row);
  console.log(
    `| ${name} | ${row.skewjoinMs.toFixed(0)} | ${row.duckdbMs.toFixed(0)} | ${row.ratio.toFixed(2)} | ` +
      `${row.skewjoinCpuS.toFixed(1)} / ${row.duckdbCpuS.toFixed(1)} | ${(row.skewjoinCpuS / row.duckdbCpuS).toFixed(2)} | ` +
      `${same ? 'yes' : 'NO'} |`,
  );
}
const geoOf = (rs) => Math.exp(rs.reduce((s, x) => s + Math.log(x.ratio), 0) / rs.length);
console.log(`\ngeometric mean of the ratios: ${geoOf(results).toFixed(2)} over ${results.length} queries`);
// the issue's ETL target is over these (the running sums have a target of their own)
const etl = results.filter((x) => !x.name.startsWith('running_sum'));
if (etl.length && etl.length < results.length)
  console.log(`geometric mean without the running sums: ${geoOf(etl).toFixed(2)} over ${etl.length} queries`);

if (noSplit) {
  fs.rmSync(tmp, { recursive: true, force: true });
  process.exit(0);
}
console.log('\nThe window stage planned as for many workers (256 partitions, 2 MB tasks):\n');
console.log('| query | split | ms | window tasks | slowest / median task rows | partitions split (pieces) |');
console.log('|---|---|---|---|---|---|');
for (const name of names.filter((n) => WINDOWED.has(n))) {
  const sqlFile = path.join(tmp, `${name}.sql`);
  const printed = spawnSync(process.execPath, [BIN, sqlFile, '--data', dir, '--print-plan'], { encoding: 'utf8' });
  if (printed.status !== 0) throw new Error(`${name}: ${printed.stderr}`);
  const plan = JSON.parse(printed.stdout);
  plan.execution = {
    ...plan.execution,
    partitions: 256,
    skew: { thresholdBytes: '1MB', advisoryPartitionBytes: '2MB' },
  };
  const planFile = path.join(tmp, `${name}.plan.json`);
  fs.writeFileSync(planFile, JSON.stringify(plan));
  const row = results.find((x) => x.name === name);
  for (const [mode, extra] of [
    ['on', []],
    ['off', ['--no-skew']],
  ]) {
    const statsFile = path.join(tmp, `${name}.${mode}.stats.json`);
    const run = timeProcess([
      process.execPath,
      BIN,
      planFile,
      '--json',
      '--workers',
      workers,
      '--stats',
      statsFile,
      ...extra,
    ]);
    if (run.status !== 0) throw new Error(`${name} (${mode}): ${run.stderr.slice(-500)}`);
    const w = windowTasks(statsFile);
    row[`split_${mode}`] = { ms: run.wall * 1000, ...w };
    console.log(
      `| ${name} | ${mode} | ${(run.wall * 1000).toFixed(0)} | ${w.tasks} | ${w.maxRows} / ${w.medianRows} = ` +
        `${(w.maxRows / w.medianRows).toFixed(2)} | ${w.split} (${w.pieces}) |`,
    );
  }
}
const out = opt('json', undefined);
if (out) fs.writeFileSync(out, JSON.stringify({ scale, workers, pairs, results }, null, 2));
fs.rmSync(tmp, { recursive: true, force: true });
