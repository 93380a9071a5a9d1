#!/usr/bin/env node
// SQL in, checked at scale: each TPC-H text (validation parameters) run by
// `skewjoin qNN.sql --output` and by DuckDB on the same files; both results
// read back through DuckDB and compared row for row (sorted; doubles to 1e-9).
//
//   node scripts/sql-check.mjs --tpch DIR [--queries q01,q05] [--workers 2] [--flags '--runtime-filters auto']
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { DuckDBInstance } from '@duckdb/node-api';
import { BIN, ROOT, opt, tpchSql } from './bench-common.mjs';

const tpch = path.resolve(opt('tpch', path.join(ROOT, 'datasets', 'tpch')));
const workers = String(opt('workers', 2));
// more command-line flags for every skewjoin run, split at spaces
const flags = opt('flags', '').split(' ').filter(Boolean);
const queries = opt(
  'queries',
  Array.from({ length: 22 }, (_, i) => `q${String(i + 1).padStart(2, '0')}`).join(','),
).split(',');
const TABLES = ['region', 'nation', 'supplier', 'customer', 'part', 'partsupp', 'orders', 'lineitem'];
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sj-sql-check-'));
const con = await (await DuckDBInstance.create(':memory:', { threads: workers })).connect();
for (const t of TABLES)
  await con.run(`CREATE VIEW ${t} AS SELECT * FROM read_parquet('${path.join(tpch, `${t}.parquet`)}')`);

const rowsOf = async (q) =>
  (await con.runAndReadAll(q))
    .getRows()
    .map((r) => r.map((v) => (typeof v === 'number' ? v : v === null ? null : String(v))));
const key = (r) => JSON.stringify(r.map((v) => (typeof v === 'number' ? Number(v.toPrecision(8)) : v)));
const close = (a, b) =>
  a.length === b.length &&
  a.every((v, i) =>
    typeof v === 'number' && typeof b[i] === 'number'
      ? Math.abs(v - b[i]) <= 1e-9 * Math.max(1, Math.abs(v), Math.abs(b[i]))
      : v === b[i],
  );
let bad = 0;
for (const q of queries) {
  const { text } = tpchSql(q);
  const file = path.join(tmp, `${q}.sql`),
    out = path.join(tmp, `${q}.parquet`);
  fs.writeFileSync(file, text);
  const r = spawnSync(
    process.execPath,
    [
      BIN,
      file,
      ...TABLES.flatMap((t) => ['--source', `${t}=${path.join(tpch, `${t}.parquet`)}`]),
      '--workers',
      workers,
      '--output',
      out,
      '--quiet',
      ...flags,
    ],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) {
    console.log(`${q}: skewjoin failed: ${r.stderr.trim()}`);
    bad++;
    continue;
  }
  const ours = (await rowsOf(`SELECT * FROM read_parquet('${out}')`)).sort((a, b) => (key(a) < key(b) ? -1 : 1));
  const theirs = (await rowsOf(text)).sort((a, b) => (key(a) < key(b) ? -1 : 1));
  const same = ours.length === theirs.length && ours.every((row, i) => close(row, theirs[i]));
  if (!same) bad++;
  console.log(
    `${q}: ${ours.length} rows, ${same ? "DuckDB's answer" : `DIFFERENT from DuckDB's (${theirs.length} rows)`}`,
  );
}
fs.rmSync(tmp, { recursive: true, force: true });
process.exit(bad ? 1 : 0);
