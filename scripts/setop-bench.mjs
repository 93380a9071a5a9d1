#!/usr/bin/env node
// Set operations, grouping sets and distinct aggregates, measured against DuckDB: each query below run by
// `skewjoin sql` and by scripts/duck-query.mjs (DuckDB with the same threads) as whole processes over the
// TPC-H tables of DIR (`skewjoin gen --tpch`), paired (the order alternates), medians and the median per-pair
// ratio; the first pair's rows must agree (values compared as text, floats to 10 digits).
//
//   node scripts/setop-bench.mjs --tpch DIR [--pairs 3] [--workers 2] [--queries union,except]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BIN, DUCK, median, opt, timeProcess } from './bench-common.mjs';

const QUERIES = {
  union: `SELECT count(*) AS n, sum(x) AS s FROM (
    SELECT l_orderkey AS k, l_extendedprice AS x FROM lineitem
    UNION ALL SELECT o_orderkey, o_totalprice FROM orders
    UNION ALL SELECT ps_partkey, ps_supplycost FROM partsupp) AS u`,
  except: `SELECT count(*) AS n FROM (
    SELECT l_partkey, l_suppkey FROM lineitem
    EXCEPT SELECT ps_partkey, ps_suppkey FROM partsupp WHERE ps_availqty > 5000) AS e`,
  intersect: `SELECT count(*) AS n FROM (
    SELECT o_custkey FROM orders WHERE o_orderpriority = '1-URGENT'
    INTERSECT SELECT c_custkey FROM customer WHERE c_mktsegment = 'BUILDING') AS i`,
  rollup: `SELECT l_returnflag, l_linestatus, l_shipmode, count(*) AS n, sum(l_quantity) AS q,
    sum(l_extendedprice) AS p, avg(l_discount) AS d
    FROM lineitem GROUP BY ROLLUP (l_returnflag, l_linestatus, l_shipmode)`,
  cube: `SELECT l_returnflag, l_linestatus, grouping(l_returnflag, l_linestatus) AS g, count(*) AS n,
    sum(l_extendedprice) AS p, min(l_shipdate) AS lo, max(l_receiptdate) AS hi
    FROM lineitem GROUP BY CUBE (l_returnflag, l_linestatus)`,
  distinct: `SELECT count(*) AS n, sum(parts) AS parts, sum(qs) AS qs, sum(rows_) AS rows_ FROM (
    SELECT l_suppkey, count(DISTINCT l_partkey) AS parts, sum(DISTINCT l_quantity) AS qs, count(*) AS rows_
    FROM lineitem GROUP BY l_suppkey) AS d`,
  count_distinct: `SELECT count(*) AS n, sum(parts) AS parts FROM (
    SELECT l_suppkey, count(DISTINCT l_partkey) AS parts FROM lineitem GROUP BY l_suppkey) AS d`,
};

const dir = path.resolve(opt('tpch', '/tmp/tpch1'));
const pairs = Number(opt('pairs', 3));
const workers = String(opt('workers', 2));
const names = opt('queries', Object.keys(QUERIES).join(',')).split(',');
const TABLES = ['customer', 'orders', 'lineitem', 'partsupp'];
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sj-setop-bench-'));

const canon = (rows) =>
  rows
    .map((r) =>
      JSON.stringify(
        Object.values(r).map((v) => {
          const n = typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v;
          return typeof n === 'number' ? Number(n.toPrecision(10)) : v;
        }),
      ),
    )
    .sort();

console.log(`| query | skewjoin s | DuckDB s | ratio (median of pairs) | same rows |`);
console.log('|---|---|---|---|---|');
const ratios = [];
for (const name of names) {
  const sql = QUERIES[name];
  if (!sql) throw new Error(`no query ${name}; queries are ${Object.keys(QUERIES).join(', ')}`);
  const duckFile = path.join(tmp, `${name}.duck.sql`);
  const views = TABLES.map((t) => `CREATE VIEW ${t} AS SELECT * FROM '${path.join(dir, `${t}.parquet`)}';`);
  fs.writeFileSync(duckFile, `${views.join('\n')}\n${sql};\n`);
  const out = path.join(tmp, `${name}.duck.json`);
  const sources = TABLES.flatMap((t) => ['--source', `${t}=${path.join(dir, `${t}.parquet`)}`]);
  const ours = () => timeProcess([process.execPath, BIN, 'sql', sql, ...sources, '--json', '--workers', workers]);
  const duck = () => timeProcess([process.execPath, DUCK, duckFile, workers], { OUT: out });
  const a = [],
    b = [],
    r = [];
  let same = true;
  for (let i = 0; i < pairs; i++) {
    let x, y;
    if (i % 2) {
      y = duck();
      x = ours();
    } else {
      x = ours();
      y = duck();
    }
    if (x.status !== 0 || y.status !== 0) {
      same = false;
      console.error(name, x.stderr.slice(-500), y.stderr.slice(-500));
      break;
    }
    if (i === 0) {
      const mine = x.stdout
        .trim()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
      same = JSON.stringify(canon(mine)) === JSON.stringify(canon(JSON.parse(fs.readFileSync(out, 'utf8'))));
    }
    a.push(x.wall);
    b.push(y.wall);
    r.push(x.wall / y.wall);
  }
  if (r.length) ratios.push(median(r));
  console.log(
    `| ${name} | ${median(a).toFixed(2)} | ${median(b).toFixed(2)} | ${median(r).toFixed(2)} | ${same ? 'yes' : 'NO'} |`,
  );
}
const geo = Math.exp(ratios.reduce((s, x) => s + Math.log(x), 0) / ratios.length);
console.log(`\ngeometric mean of the ratios (skewjoin / DuckDB): ${geo.toFixed(2)} over ${ratios.length} queries`);
fs.rmSync(tmp, { recursive: true, force: true });
