#!/usr/bin/env node
// Ad-hoc SQL a user would write over TPC-H tables (joins of three or four tables with filters, a group-by, an
// ORDER BY ... LIMIT), planned by the engine (its join order by cost: plan/join-order.ts), skewjoin's command line
// against DuckDB (scripts/duck-query.mjs, same threads), both as whole processes, paired (the order alternates),
// medians and the median per-pair ratio; CPU (user + system) beside the wall time. The answers must agree (numbers
// to 10 digits, strings as they are, in order: every query ends in ORDER BY ... LIMIT).
//
//   node scripts/adhoc-bench.mjs --tpch DIR [--pairs 3] [--workers 2] [--queries a1,a2] [--stats DIR] [--flags "..."]
//
// --stats DIR writes each query's statistics (--stats, for scripts/stage-costs.mjs) there.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BIN, DUCK, extraFlags, median, opt, timeProcess } from './bench-common.mjs';

const dir = path.resolve(opt('tpch', 'data/tpch-sf1'));
const pairs = Number(opt('pairs', 3));
const workers = String(opt('workers', 2));
const statsDir = opt('stats', '');
// more flags for skewjoin's runs (--flags "--runtime-filters auto")
const flags = extraFlags();
const TABLES = ['region', 'nation', 'supplier', 'customer', 'part', 'partsupp', 'orders', 'lineitem'];

const QUERIES = {
  // revenue per customer segment and order year in one region, the top 10 (four tables, filters on two)
  a1_segment_revenue: `SELECT c.c_mktsegment, year(o.o_orderdate) AS yr, sum(l.l_extendedprice * (1 - l.l_discount)) AS revenue
FROM lineitem l JOIN orders o ON l.l_orderkey = o.o_orderkey
  JOIN customer c ON o.o_custkey = c.c_custkey JOIN nation n ON c.c_nationkey = n.n_nationkey
WHERE n.n_name IN ('FRANCE', 'GERMANY', 'BRAZIL') AND o.o_orderdate >= DATE '1996-01-01'
GROUP BY c.c_mktsegment, yr ORDER BY revenue DESC, c.c_mktsegment, yr LIMIT 10`,
  // the suppliers of one nation whose late line items were most, the top 20 (three tables)
  a2_late_suppliers: `SELECT s.s_name, count(*) AS late
FROM lineitem l JOIN supplier s ON l.l_suppkey = s.s_suppkey JOIN nation n ON s.s_nationkey = n.n_nationkey
WHERE l.l_receiptdate > l.l_commitdate AND n.n_name = 'JAPAN' AND l.l_shipmode IN ('AIR', 'RAIL')
GROUP BY s.s_name ORDER BY late DESC, s.s_name LIMIT 20`,
  // brass parts' supply cost by supplier nation (four tables, a LIKE)
  a3_part_supply: `SELECT n.n_name, count(*) AS offers, sum(ps.ps_supplycost * ps.ps_availqty) AS value
FROM partsupp ps JOIN part p ON ps.ps_partkey = p.p_partkey JOIN supplier s ON ps.ps_suppkey = s.s_suppkey
  JOIN nation n ON s.s_nationkey = n.n_nationkey
WHERE p.p_type LIKE '%BRASS' AND p.p_size < 20
GROUP BY n.n_name ORDER BY value DESC, n.n_name LIMIT 10`,
  // the largest urgent orders of 1995 of building customers, with their line counts (three tables)
  a4_big_orders: `SELECT o.o_orderkey, c.c_name, o.o_totalprice, count(*) AS lines
FROM orders o JOIN customer c ON o.o_custkey = c.c_custkey JOIN lineitem l ON l.l_orderkey = o.o_orderkey
WHERE c.c_mktsegment = 'BUILDING' AND o.o_orderpriority = '1-URGENT' AND o.o_orderdate BETWEEN DATE '1995-01-01' AND DATE '1995-12-31'
GROUP BY o.o_orderkey, c.c_name, o.o_totalprice ORDER BY o.o_totalprice DESC, o.o_orderkey LIMIT 20`,
  // quantity shipped per ship mode and region of the customer, one year (four tables)
  a5_region_modes: `SELECT r.r_name, l.l_shipmode, sum(l.l_quantity) AS qty, count(*) AS n
FROM lineitem l JOIN orders o ON l.l_orderkey = o.o_orderkey JOIN customer c ON o.o_custkey = c.c_custkey
  JOIN nation n ON c.c_nationkey = n.n_nationkey JOIN region r ON n.n_regionkey = r.r_regionkey
WHERE l.l_shipdate >= DATE '1994-01-01' AND l.l_shipdate < DATE '1995-01-01' AND r.r_name <> 'ASIA'
GROUP BY r.r_name, l.l_shipmode ORDER BY qty DESC, r.r_name, l.l_shipmode LIMIT 10`,
};
const names = opt('queries', Object.keys(QUERIES).join(',')).split(',');

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sj-adhoc-bench-'));
const views = TABLES.map(
  (t) => `CREATE VIEW ${t} AS SELECT * FROM read_parquet('${path.join(dir, `${t}.parquet`)}');`,
).join('\n');
const cell = (v) =>
  v === null ? null : typeof v === 'string' && Number.isNaN(Number(v)) ? v : Number(Number(v).toPrecision(10));
const canon = (rows) => JSON.stringify(rows.map((r) => Object.values(r).map(cell)));

const results = [];
console.log(
  `TPC-H tables in ${dir}, ${workers} threads each, ${pairs} pairs, flags [${flags.join(' ')}]; load ${os.loadavg()[0].toFixed(1)}\n`,
);
console.log(
  '| query | skewjoin ms | DuckDB ms | ratio (median of pairs) | CPU s (user+sys) | CPU ratio | same answer |',
);
console.log('|---|---|---|---|---|---|---|');
for (const name of names) {
  const text = QUERIES[name];
  if (!text) throw new Error(`no query ${name}: ${Object.keys(QUERIES).join(', ')}`);
  const sqlFile = path.join(tmp, `${name}.sql`);
  fs.writeFileSync(sqlFile, text);
  const duckFile = path.join(tmp, `${name}.duck.sql`);
  fs.writeFileSync(duckFile, `${views}\n${text}`);
  const stats = statsDir ? ['--stats', path.join(path.resolve(statsDir), `${name}.stats.json`)] : [];
  const ours = () =>
    timeProcess([process.execPath, BIN, sqlFile, '--data', dir, '--json', '--workers', workers, ...stats, ...flags]);
  const answer = path.join(tmp, `${name}.json`);
  const theirs = (env = {}) => timeProcess([process.execPath, DUCK, duckFile, workers], env);
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
      theirs({ OUT: answer });
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
  const row = { name, ms: median(a), duck: median(b), ratio: median(r), cpu: median(ca), duckCpu: median(cb), same };
  results.push(row);
  console.log(
    `| ${name} | ${row.ms.toFixed(0)} | ${row.duck.toFixed(0)} | ${row.ratio.toFixed(2)} | ` +
      `${row.cpu.toFixed(1)} / ${row.duckCpu.toFixed(1)} | ${(row.cpu / row.duckCpu).toFixed(2)} | ${same ? 'yes' : 'NO'} |`,
  );
}
const geo = Math.exp(results.reduce((s, x) => s + Math.log(x.ratio), 0) / results.length);
const cpuGeo = Math.exp(results.reduce((s, x) => s + Math.log(x.cpu / x.duckCpu), 0) / results.length);
console.log(
  `\ngeometric mean of the ratios: ${geo.toFixed(2)} wall, ${cpuGeo.toFixed(2)} CPU over ${results.length} queries; load ${os.loadavg()[0].toFixed(1)}`,
);
