#!/usr/bin/env node
// The Parquet writer alone: CPU-ms to write 1M rows of the out-of-core sort's
// output shape (id int64, key int64, amount double, region short string) as
// the final stage hands them over (one engine batch per ~1 MB range), through
// ResultFile: this build's writer and another build's (e.g. main's), paired,
// alternating, medians. Build first (`npm run build`).
//
//   node scripts/parquet-write-bench.mjs [--rows 1000000] [--pairs 7] [--other /work/wt/base]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, median, opt } from './bench-common.mjs';

const rows = Number(opt('rows', '1000000'));
const pairs = Number(opt('pairs', '7'));
const other = opt('other', undefined);
const BATCH = 30_000; // about a range's rows (1 MB of these four columns)

const builds = [['this', ROOT], ...(other ? [['other', path.resolve(other)]] : [])];
const writers = await Promise.all(
  builds.map(async ([name, root]) => [name, (await import(path.join(root, 'dist/io/result-file.js'))).ResultFile]),
);

const fields = [
  { name: 'id', type: { id: 'int64' } },
  { name: 'key', type: { id: 'int64' } },
  { name: 'amount', type: { id: 'float64' } },
  { name: 'region', type: { id: 'utf8' } },
];
const REGIONS = ['north', 'south', 'east', 'west', 'center'].map((s) => new TextEncoder().encode(s));
let seed = 42;
const rand = () => {
  seed = (seed * 1103515245 + 12345) >>> 0;
  return seed / 2 ** 32;
};
const batches = [];
for (let at = 0; at < rows; at += BATCH) {
  const n = Math.min(BATCH, rows - at);
  const id = new BigInt64Array(n),
    key = new BigInt64Array(n),
    amount = new Float64Array(n),
    offsets = new Int32Array(n + 1);
  const bytes = new Uint8Array(6 * n);
  let amt = (at / rows) * 1000;
  for (let i = 0; i < n; i++) {
    id[i] = BigInt(Math.floor(rand() * 50e6));
    key[i] = BigInt(Math.floor(rand() * 5e6));
    amt += (rand() * 1000) / rows;
    amount[i] = Math.round(amt * 100) / 100; // sorted by amount, as row (c) writes them
    const r = REGIONS[Math.floor(rand() * 5)];
    bytes.set(r, offsets[i]);
    offsets[i + 1] = offsets[i] + r.length;
  }
  batches.push({
    length: n,
    columns: [
      { type: fields[0].type, length: n, values: id, valid: null },
      { type: fields[1].type, length: n, values: key, valid: null },
      { type: fields[2].type, length: n, values: amount, valid: null },
      { type: fields[3].type, length: n, values: bytes.subarray(0, offsets[n]), offsets, valid: null },
    ],
  });
}

const out = path.join(os.tmpdir(), `pq-bench-${process.pid}.parquet`);
async function once(ResultFile) {
  const t = process.cpuUsage();
  const f = await ResultFile.open(out, 'parquet', fields);
  for (const b of batches) await f.write([b]);
  await f.finish();
  const u = process.cpuUsage(t);
  const size = fs.statSync(out).size;
  fs.rmSync(out);
  return { ms: (u.user + u.system) / 1000, size };
}

const ms = Object.fromEntries(builds.map(([n]) => [n, []]));
const sizes = {};
for (const [, W] of writers) await once(W); // warm: modules loaded, code compiled
for (let p = 0; p < pairs; p++) {
  for (const [name, W] of p % 2 ? [...writers].reverse() : writers) {
    const r = await once(W);
    ms[name].push(r.ms);
    sizes[name] = r.size;
  }
}
for (const [name] of builds) {
  const m = median(ms[name]);
  console.log(
    `${name}: ${(m / (rows / 1e6)).toFixed(0)} CPU-ms per 1M rows (median of ${pairs}; runs ${ms[name].map((x) => x.toFixed(0)).join(' ')} ms), file ${(sizes[name] / 1e6).toFixed(1)} MB`,
  );
}
