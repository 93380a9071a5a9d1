#!/usr/bin/env node
// An interval join, events into sessions (`e.ts >= s.start_ts AND e.ts < s.end_ts`, a count and sums above it), as
// whole processes: this build's command line (a range join, physical/join/range.ts) against DuckDB
// (scripts/duck-query.mjs, same threads) and, with --against, another build's command line (the base build: a cross
// join and a filter). Paired runs (the order rotates within each pair), medians and the median per-pair ratios; the
// answers must agree. The data (Parquet, made by DuckDB) goes to DATA/range-<events>x<sessions>/ and is reused.
//
//   node scripts/range-bench.mjs [--events 1000000] [--sessions 10000] [--pairs 5] [--workers 2]
//        [--data /work/data] [--against OTHER/bin/skewjoin.js] [--flags '--no-broadcast' (this build's runs only)]
//
// --keyed: a slowly changing dimension's lookup instead, a keyed band join (physical/join/band.ts): `events` sales
// over 1,000 skus, a tenth of them of the hot sku 0, joined to each sku's price periods (`sessions` of them for sku 0,
// 20 for the others) by `s.sku = p.sku AND s.day BETWEEN p.valid_from AND p.valid_to`; the base build's is a hash
// join making every pair of a sku, then the filter. Data in DATA/band-<events>x<sessions>/.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { BIN, DUCK, extraFlags, median, opt, timeProcess } from './bench-common.mjs';

const events = Number(opt('events', 1000000));
const sessions = Number(opt('sessions', 10000));
const pairs = Number(opt('pairs', 5));
const workers = String(opt('workers', 2));
const against = opt('against', undefined) && path.resolve(opt('against'));
const keyed = process.argv.includes('--keyed');
const dir = path.join(path.resolve(opt('data', '/work/data')), `${keyed ? 'band' : 'range'}-${events}x${sessions}`);
const ev = path.join(dir, 'events.parquet'),
  se = path.join(dir, 'sessions.parquet');

if (keyed && !fs.existsSync(se)) {
  fs.mkdirSync(dir, { recursive: true });
  const con = await (await DuckDBInstance.create(':memory:')).connect();
  // periods of 10 days, back to back: sku 0 has `sessions` of them, the others 20 (their days folded into them)
  await con.run(`COPY (SELECT row_number() OVER ()::BIGINT AS pid, sku, (j * 10)::INTEGER AS valid_from,
      (j * 10 + 9)::INTEGER AS valid_to FROM range(0, 1000) a(sku), range(0, ${sessions}) b(j)
      WHERE sku = 0 OR j < 20) TO '${se}' (FORMAT parquet)`);
  await con.run(`COPY (SELECT i::BIGINT AS id, CASE WHEN i % 10 = 0 THEN 0 ELSE (i * 7919) % 1000 END::INTEGER AS sku,
      CASE WHEN i % 10 = 0 THEN (i * 2654435761) % ${10 * sessions} ELSE (i * 2654435761) % 200 END::INTEGER AS day
      FROM range(0, ${events}) r(i)) TO '${ev}' (FORMAT parquet, ROW_GROUP_SIZE 131072)`);
}
if (!keyed && !fs.existsSync(se)) {
  fs.mkdirSync(dir, { recursive: true });
  const con = await (await DuckDBInstance.create(':memory:')).connect();
  // sessions of 30 to 90 time units with gaps between them over [0, 100 * sessions); events uniform over it
  await con.run(`COPY (SELECT i::BIGINT AS sid, (i * 100)::BIGINT AS start_ts, (i * 100 + 30 + (i * 7919) % 61)::BIGINT AS end_ts
    FROM range(0, ${sessions}) r(i)) TO '${se}' (FORMAT parquet)`);
  await con.run(`COPY (SELECT i::BIGINT AS id, ((i * 2654435761) % ${100 * sessions})::BIGINT AS ts
    FROM range(0, ${events}) r(i)) TO '${ev}' (FORMAT parquet, ROW_GROUP_SIZE 131072)`);
}

const on = keyed
  ? 'e.sku = s.sku AND e.day BETWEEN s.valid_from AND s.valid_to'
  : 'e.ts >= s.start_ts AND e.ts < s.end_ts';
const ours = `SELECT count(*) AS n, sum(e.id) AS s, max(s.${keyed ? 'pid' : 'sid'}) AS m FROM events e JOIN sessions s ON ${on}`;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sj-range-bench-'));
const duckSql = path.join(tmp, 'q.sql');
fs.writeFileSync(
  duckSql,
  ours.replace('events e', `read_parquet('${ev}') e`).replace('sessions s', `read_parquet('${se}') s`),
);
const args = ['--workers', workers, '--source', `events=${ev}`, '--source', `sessions=${se}`, '--json', 'sql', ours];
const runs = {
  range: () => timeProcess([process.execPath, BIN, ...extraFlags(), ...args]),
  duckdb: () => timeProcess([process.execPath, DUCK, duckSql, workers], { OUT: path.join(tmp, 'duck.json') }),
};
if (against) runs.against = () => timeProcess([process.execPath, against, ...args]);

const answer = (r, name) => {
  if (r.status !== 0) throw new Error(`${name} failed: ${r.stderr}`);
  if (name === 'duckdb') return Object.values(JSON.parse(fs.readFileSync(path.join(tmp, 'duck.json'), 'utf8'))[0]);
  return Object.values(JSON.parse(r.stdout.trim()));
};
const names = Object.keys(runs);
const times = Object.fromEntries(names.map((n) => [n, []]));
const cpu = Object.fromEntries(names.map((n) => [n, []]));
const ratios = Object.fromEntries(names.map((n) => [n, []]));
for (let p = 0; p < pairs; p++) {
  const order = names.map((_, i) => names[(i + p) % names.length]);
  const got = {};
  for (const n of order) {
    const r = runs[n]();
    got[n] = answer(r, n).map(String).join(',');
    times[n].push(r.wall);
    cpu[n].push(r.user + r.sys);
  }
  for (const n of names)
    if (got[n] !== got.duckdb) throw new Error(`answers differ: ${n} ${got[n]} against DuckDB ${got.duckdb}`);
  for (const n of names) ratios[n].push(times.range.at(-1) / times[n].at(-1));
  console.error(`pair ${p + 1}: ${names.map((n) => `${n} ${times[n].at(-1).toFixed(2)} s`).join(', ')}`);
}
const m = (xs) => median(xs).toFixed(2);
console.log(
  `| ${keyed ? 'keyed band join' : 'interval join'} ${events} events x ${sessions} sessions | ${keyed ? 'band' : 'range'} ${m(times.range)} s (CPU ${m(cpu.range)} s) | ` +
    `DuckDB ${m(times.duckdb)} s (CPU ${m(cpu.duckdb)} s), ${keyed ? 'band' : 'range'}/DuckDB ${m(ratios.duckdb)} |` +
    (against
      ? ` base build (${keyed ? 'hash' : 'cross'} join + filter) ${m(times.against)} s, ${keyed ? 'band' : 'range'}/base ${median(ratios.against).toFixed(4)} |`
      : ''),
);
fs.rmSync(tmp, { recursive: true, force: true });
