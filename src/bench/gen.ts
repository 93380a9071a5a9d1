// `skewjoin gen`: synthetic datasets with Zipf-distributed keys. A fact table
// (key ~ Zipf(s) over M keys), a dimension with one row per key, and
// optionally a second skewed table over the same keys for many-to-many joins.
import fs from 'node:fs';
import path from 'node:path';
import type { Batch, Column, Field } from '../kernels/column.js';
import { writeParquetBytes } from '../io/parquet-write.js';
import { rng, zipfKeys } from './zipf.js';

// The options live apart so that the command line reads their defaults without loading the writer.
export { GEN_DEFAULTS, type GenOptions } from './defaults.js';
import type { GenOptions } from './defaults.js';

const enc = new TextEncoder();
function strings(n: number, f: (i: number) => string): Column {
  const parts = Array.from({ length: n }, (_, i) => enc.encode(f(i)));
  const offsets = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) offsets[i + 1] = offsets[i] + parts[i].length;
  const values = new Uint8Array(offsets[n]);
  parts.forEach((p, i) => values.set(p, offsets[i]));
  return { type: { id: 'utf8' }, length: n, values, offsets, valid: null };
}

function int64(vals: ArrayLike<number>, valid: Uint8Array | null = null): Column {
  return {
    type: { id: 'int64' },
    length: vals.length,
    values: BigInt64Array.from(vals as number[], (x) => BigInt(x)),
    valid,
  };
}

function writeTable(file: string, fields: Field[], b: Batch, rowGroupSize: number) {
  fs.writeFileSync(file, writeParquetBytes(fields, [b], rowGroupSize));
}

export const REGIONS = ['north', 'south', 'east', 'west', 'central', 'coast', 'mountain', 'islands'];

/** Write the dataset; returns the files written. */
export function generate(o: GenOptions): string[] {
  fs.mkdirSync(o.out, { recursive: true });
  const written = writeFact(o);
  written.push(writeDim(o));
  if (o.m2mRows > 0) written.push(writeM2m(o));
  return written;
}

/** The fact table (id, key ~ Zipf(s), amount, qty) in `o.files` files; returns them. */
function writeFact(o: GenOptions): string[] {
  const written: string[] = [];
  let keys = zipfKeys(o.rows, o.keys, o.s, o.seed);
  if (o.sorted) keys = keys.slice().sort();
  const next = rng(o.seed + 1);
  const n = o.rows;
  const valid = o.nullKeys > 0 ? new Uint8Array(n).fill(1) : null;
  if (valid) for (let i = 0; i < n; i++) if (next() < o.nullKeys) valid[i] = 0;
  const amount = new Float64Array(n);
  const qty = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    amount[i] = Math.round(next() * 10000) / 100;
    qty[i] = 1 + Math.floor(next() * 10);
  }
  const factFields: Field[] = [
    { name: 'id', type: { id: 'int64' } },
    { name: 'key', type: { id: 'int64' } },
    { name: 'amount', type: { id: 'float64' } },
    { name: 'qty', type: { id: 'int32' } },
  ];
  const perFile = Math.ceil(n / o.files);
  for (let f = 0; f < o.files; f++) {
    const lo = f * perFile,
      hi = Math.min(n, lo + perFile);
    const ids = Array.from({ length: hi - lo }, (_, i) => lo + i);
    const b: Batch = {
      length: hi - lo,
      columns: [
        int64(ids),
        int64(keys.subarray(lo, hi), valid ? valid.slice(lo, hi) : null),
        { type: { id: 'float64' }, length: hi - lo, values: amount.slice(lo, hi), valid: null },
        { type: { id: 'int32' }, length: hi - lo, values: qty.slice(lo, hi), valid: null },
      ],
    };
    const file = path.join(o.out, o.files === 1 ? 'fact.parquet' : `fact-${String(f).padStart(3, '0')}.parquet`);
    writeTable(file, factFields, b, o.rowGroupSize);
    written.push(file);
  }
  return written;
}

/** The dimension: one row per key (key, name, region, weight). */
function writeDim(o: GenOptions): string {
  const m = o.keys;
  const dimKeys = Array.from({ length: m }, (_, i) => i);
  const dim: Batch = {
    length: m,
    columns: [
      int64(dimKeys),
      strings(m, (i) => `customer-${i}`),
      strings(m, (i) => REGIONS[i % REGIONS.length]),
      { type: { id: 'int32' }, length: m, values: Int32Array.from(dimKeys, (i) => (i * 7919) % 1000), valid: null },
    ],
  };
  const dimFile = path.join(o.out, 'dim.parquet');
  writeTable(
    dimFile,
    [
      { name: 'key', type: { id: 'int64' } },
      { name: 'name', type: { id: 'utf8' } },
      { name: 'region', type: { id: 'utf8' } },
      { name: 'weight', type: { id: 'int32' } },
    ],
    dim,
    o.rowGroupSize,
  );
  return dimFile;
}

/** A second skewed table over the same keys (key, grp, tag), for many-to-many joins. */
function writeM2m(o: GenOptions): string {
  const k2 = zipfKeys(o.m2mRows, o.keys, o.s, o.seed + 2);
  const b: Batch = {
    length: o.m2mRows,
    columns: [
      int64(k2),
      strings(o.m2mRows, (i) => `g${k2[i] % 16}`),
      { type: { id: 'int32' }, length: o.m2mRows, values: Int32Array.from(k2, (k, i) => (k + i) % 100), valid: null },
    ],
  };
  const file = path.join(o.out, 'm2m.parquet');
  writeTable(
    file,
    [
      { name: 'key', type: { id: 'int64' } },
      { name: 'grp', type: { id: 'utf8' } },
      { name: 'tag', type: { id: 'int32' } },
    ],
    b,
    o.rowGroupSize,
  );
  return file;
}
