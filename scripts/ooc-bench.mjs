#!/usr/bin/env node
// Out-of-core benchmark at the scale of issue 13: a 50M-row Zipf fact (s=1 over
// 5M keys) and a 5M-row dimension (`skewjoin gen`, made when missing), the plans
// in bench/ooc/, each engine as a whole process under /usr/bin/time (wall
// seconds and peak RSS, `%e %M`), DuckDB through scripts/duck-query.mjs with the
// same threads. Rows: (a) join + group by without a memory limit, (b) the same
// with a 1 GB budget (DuckDB memory_limit='1GB'), (c) join, sort every joined
// row by amount, write Parquet, 1 GB budget. Answers are checked against
// DuckDB's (aggregate rows; for the sorted file: count, sums and order).
//
//   node scripts/ooc-bench.mjs [--data /tmp/ooc/data] [--workers 2] [--only a,b,c]
//        [--engines duckdb,skewjoin] [--other /work/main/bin/skewjoin.js] [--pairs 1]
//
// --other BIN adds a second skewjoin build (e.g. main's) to the pairs, named "other".
// Runs of one row alternate their order between pairs; medians are reported.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BIN, DUCK, ROOT, gen, median, opt, timeProcess } from './bench-common.mjs';

const data = path.resolve(opt('data', '/tmp/ooc/data'));
const workers = opt('workers', '2');
const only = opt('only', 'a,b,c').split(',');
const pairs = Number(opt('pairs', '1'));
const other = opt('other', undefined);
const work = path.join(path.dirname(data), 'bench');
fs.mkdirSync(work, { recursive: true });

gen(data, ['--rows', '50000000', '--keys', '5000000', '--s', '1']);
const fact = path.join(data, 'fact.parquet'),
  dim = path.join(data, 'dim.parquet');

/** A plan of bench/ooc with its sources (and output) moved to the data folder. */
function plan(name, output) {
  const p = JSON.parse(fs.readFileSync(path.join(ROOT, 'bench', 'ooc', `${name}.json`), 'utf8'));
  p.sources = { fact: { parquet: fact }, dim: { parquet: dim } };
  if (output) p.output = { path: output, format: 'parquet' };
  else delete p.output;
  const file = path.join(work, `${name}.json`);
  fs.writeFileSync(file, JSON.stringify(p, null, 2));
  return file;
}

const duckSettings = (limit) =>
  `SET temp_directory='${path.join(work, 'duck-tmp')}';\n${limit ? `SET memory_limit='${limit}';\n` : ''}`;
const groupSql = `SELECT d.region, count(*) AS n, sum(f.amount) AS revenue, count(DISTINCT f.key) AS customers
  FROM read_parquet('${fact}') f JOIN read_parquet('${dim}') d ON f.key = d.key GROUP BY d.region ORDER BY d.region`;
const sortedOut = (who) => path.join(work, `${who}-sorted.parquet`);
const sortSql = `COPY (SELECT f.id, f.key, f.amount, d.region FROM read_parquet('${fact}') f JOIN read_parquet('${dim}') d ON f.key = d.key
  ORDER BY f.amount) TO '${sortedOut('duckdb')}' (FORMAT parquet)`;

const rows = [
  { id: 'a', name: 'join + group by, no memory limit', plan: 'groupby', limit: null, sql: groupSql },
  { id: 'b', name: 'join + group by, 1 GB budget', plan: 'groupby', limit: '1GB', sql: groupSql },
  {
    id: 'c',
    name: 'join, sort 50M rows, write Parquet, 1 GB budget',
    plan: 'sort-write',
    limit: '1GB',
    sql: sortSql,
    sorted: true,
  },
].filter((r) => only.includes(r.id));

/** One process under /usr/bin/time: wall seconds, peak RSS in MB. */
function timed(argv, env = {}) {
  const t = timeProcess(argv, env);
  if (t.status !== 0 || !t.timed)
    return { ok: false, error: `exit ${t.status}: ${t.stderr.slice(-600)}`, wall: t.wall, rssMB: t.rssMB };
  return { ok: true, wall: t.wall, rssMB: t.rssMB, stdout: t.stdout };
}

/** Count, sums and order violations of a sorted file, computed by DuckDB (not timed). */
function checksum(file) {
  const sql = path.join(work, 'check.sql');
  fs.writeFileSync(
    sql,
    `SELECT count(*) AS n, sum(id) AS ids, sum(key) AS keys, round(sum(amount), 2) AS amount, count(DISTINCT region) AS regions,
    sum(CASE WHEN amount < prev THEN 1 ELSE 0 END) AS disorder
    FROM (SELECT *, lag(amount) OVER (ORDER BY file_row_number) AS prev FROM read_parquet('${file}', file_row_number = true))`,
  );
  const out = path.join(work, 'check.json');
  const r = spawnSync(process.execPath, [DUCK, sql, '2'], { env: { ...process.env, OUT: out }, encoding: 'utf8' });
  if (r.status !== 0) return `check failed: ${r.stderr.slice(-300)}`;
  return JSON.parse(fs.readFileSync(out, 'utf8'))[0];
}

/** Aggregate rows in a comparable form: numbers rounded (sums of doubles differ in the last digits). */
const norm = (rs) =>
  JSON.stringify(
    rs.map((o) =>
      Object.fromEntries(
        Object.entries(o).map(([k, v]) => [
          k,
          typeof v === 'number' || /^-?\d+(\.\d+)?$/.test(String(v)) ? Number(Number(v).toPrecision(12)) : v,
        ]),
      ),
    ),
  );

function runEngine(engine, row) {
  if (engine === 'duckdb') {
    const sql = path.join(work, `${row.id}.sql`);
    fs.writeFileSync(sql, `${duckSettings(row.limit)}${row.sql}`);
    const out = path.join(work, `${row.id}-duckdb.json`);
    const t = timed([process.execPath, DUCK, sql, workers], { OUT: out });
    if (t.ok) t.answer = row.sorted ? checksum(sortedOut('duckdb')) : JSON.parse(fs.readFileSync(out, 'utf8'));
    return t;
  }
  const bin = engine === 'other' ? other : BIN;
  const output = row.sorted ? sortedOut(engine) : null;
  const stats = path.join(work, `${row.id}-${engine}-stats.json`);
  const argv = [
    process.execPath,
    bin,
    plan(row.plan, output),
    '--workers',
    workers,
    '--stats',
    stats,
    ...(row.limit ? ['--memory-limit', row.limit] : []),
    ...(row.sorted ? ['--quiet'] : ['--json']),
  ];
  const t = timed(argv);
  if (t.ok) {
    t.answer = row.sorted
      ? checksum(output)
      : t.stdout
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l));
    try {
      const s = JSON.parse(fs.readFileSync(stats, 'utf8'));
      t.spilledMB = (s.spilledBytes ?? 0) / 2 ** 20;
    } catch {
      /* an older build */
    }
  }
  return t;
}

const engines = opt('engines', ['duckdb', 'skewjoin', ...(other ? ['other'] : [])].join(',')).split(',');
const results = [];
for (const row of rows) {
  const runs = Object.fromEntries(engines.map((e) => [e, []]));
  for (let i = 0; i < pairs; i++) {
    for (const e of i % 2 === 0 ? engines : [...engines].reverse()) {
      const t = runEngine(e, row);
      runs[e].push(t);
      console.error(
        `${row.id} ${e}: ${t.ok ? `${t.wall} s, ${t.rssMB.toFixed(0)} MB${t.spilledMB !== undefined ? `, ${t.spilledMB.toFixed(0)} MB spilled` : ''}` : t.error}`,
      );
    }
  }
  const ref = runs.duckdb?.find((t) => t.ok)?.answer;
  const summary = { id: row.id, name: row.name };
  for (const e of engines) {
    const ts = runs[e];
    summary[e] = {
      wall: median(ts.map((t) => t.wall)),
      rssMB: median(ts.map((t) => t.rssMB)),
      failures: ts.filter((t) => !t.ok).map((t) => t.error),
      ...(ts[0]?.spilledMB !== undefined ? { spilledMB: median(ts.map((t) => t.spilledMB ?? NaN)) } : {}),
      agrees:
        e === 'duckdb' || ref === undefined
          ? null
          : ts.every((t) => t.ok && norm([t.answer].flat()) === norm([ref].flat())),
      answer: ts.find((t) => t.ok)?.answer,
    };
  }
  results.push(summary);
  console.log(`(${row.id}) ${row.name}`);
  for (const e of engines) {
    const s = summary[e];
    console.log(
      `  ${e.padEnd(9)} ${Number.isNaN(s.wall) ? '   -' : s.wall.toFixed(1).padStart(6)} s  ${Number.isNaN(s.rssMB) ? '   -' : s.rssMB.toFixed(0).padStart(5)} MB peak${s.spilledMB !== undefined ? `  ${s.spilledMB.toFixed(0)} MB spilled` : ''}${s.agrees === null ? '' : s.agrees ? '  answer agrees' : '  ANSWER DIFFERS'}${s.failures.length ? `  ${s.failures.length} failed` : ''}`,
    );
  }
}
const out = path.join(work, `results-${only.join('')}.json`);
fs.writeFileSync(
  out,
  JSON.stringify({ date: new Date().toISOString(), workers, pairs, load: os.loadavg(), results }, null, 2) + '\n',
);
console.log(
  `wrote ${out} (load average at the end: ${os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(', ')})`,
);
