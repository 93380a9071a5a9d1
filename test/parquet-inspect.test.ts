// Planning reads a file's columns and row groups from its footer without parquet-wasm (io/parquet-inspect.ts)
// when its types are plain: what it answers must be what parquet-wasm answers for the same file, and for any
// file it is not sure of it must decline (null) so that parquet-wasm names the types and the errors. Then a run
// over such files within the rent of io/parquet-direct.ts loads no parquet-wasm on any thread.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { inspectFooter } from '../dist/io/parquet-inspect.js';
import { inspectParquet, inspectWithWasm } from '../dist/io/parquet.js';
import { writeParquetBytes } from '../dist/io/parquet-write.js';
import type { Batch, Field } from '../dist/kernels/column.js';
import { BIN, sql, tmpDir, writePlan } from './helpers.js';

const dir = tmpDir('sj-inspect-');
const file = (n: string) => path.join(dir, n);

/** A DuckDB file of these columns (name, expression over i) in row groups of about 1,000 rows. */
async function duckFile(name: string, cols: [string, string][], rows = 3000): Promise<string> {
  const out = file(name);
  const list = cols.map(([n, e]) => `${e} AS ${n}`).join(', ');
  await sql(`COPY (SELECT ${list} FROM range(${rows}) t(i)) TO '${out}' (FORMAT parquet, ROW_GROUP_SIZE 1000)`);
  return out;
}

const PLAIN: [string, string][] = [
  ['i32', 'CASE WHEN i % 7 = 0 THEN NULL ELSE i::INTEGER END'],
  ['i64', 'i::BIGINT * 1000003'],
  ['f32', '(i / 3)::FLOAT'],
  ['f64', 'i / 7'],
  ['d', "DATE '1995-01-01' + i::INTEGER"],
  ['s', "CASE WHEN i % 5 = 0 THEN NULL ELSE 'v' || i::VARCHAR END"],
  ['b', 'i % 2 = 0'],
  ['dec4', '((i % 9999) / 100)::DECIMAL(4,2)'], // INT32
  ['dec15', '(i * 1.25)::DECIMAL(15,2)'], // INT64
  ['dec30', '(i * 1.5)::DECIMAL(30,10)'], // FIXED_LEN_BYTE_ARRAY
];

describe('a footer read without parquet-wasm', () => {
  it("gives parquet-wasm's columns and row groups for DuckDB's plain types", async () => {
    const p = await duckFile('plain.parquet', PLAIN);
    const got = inspectFooter(p);
    expect(got).not.toBeNull();
    expect({ path: p, ...got }).toEqual(await inspectWithWasm(p));
    expect(got!.columns.map((c) => c.type.id)).toEqual([
      'int32',
      'int64',
      'float32',
      'float64',
      'date32',
      'utf8',
      'bool',
      'decimal',
      'decimal',
      'decimal',
    ]);
    expect(got!.rowGroupRows.reduce((a, b) => a + b, 0)).toBe(3000);
    expect(await inspectParquet(p)).toEqual(await inspectWithWasm(p));
  });

  it("gives parquet-wasm's answer for a file with the writer's Arrow schema (ARROW:schema, page indexes)", async () => {
    const fields: Field[] = [
      { name: 'k', type: { id: 'int64' } },
      { name: 'n', type: { id: 'int32' } },
      { name: 'x', type: { id: 'float64' } },
      { name: 'd', type: { id: 'date32' } },
      { name: 'price', type: { id: 'decimal', precision: 12, scale: 2 } },
    ];
    const n = 2500;
    const batch: Batch = {
      length: n,
      columns: [
        {
          type: fields[0].type,
          length: n,
          values: BigInt64Array.from({ length: n }, (_, i) => BigInt(i) * 7n),
          valid: null,
        },
        { type: fields[1].type, length: n, values: Int32Array.from({ length: n }, (_, i) => i % 100), valid: null },
        { type: fields[2].type, length: n, values: Float64Array.from({ length: n }, (_, i) => i / 3), valid: null },
        { type: fields[3].type, length: n, values: Int32Array.from({ length: n }, (_, i) => 9000 + i), valid: null },
        {
          type: fields[4].type,
          length: n,
          values: BigInt64Array.from({ length: n }, (_, i) => BigInt(i * 101)),
          valid: null,
        },
      ],
    };
    const p = file('rs.parquet');
    fs.writeFileSync(p, writeParquetBytes(fields, [batch], 700));
    const got = inspectFooter(p);
    expect(got).not.toBeNull();
    expect({ path: p, ...got }).toEqual(await inspectWithWasm(p));
    expect(got!.rowGroupRows).toEqual([700, 700, 700, 400]);
  });

  it('declines what it is not sure of: timestamps, small and unsigned integers, blobs, Decimal256, nesting', async () => {
    for (const [name, expr] of [
      ['ts', "TIMESTAMP '2001-01-01' + to_seconds(i)"],
      ['small', 'i::SMALLINT'],
      ['unsigned', 'i::UINTEGER'],
      ['blob', "('x' || i::VARCHAR)::BLOB"],
      ['wide', '(i::DECIMAL(38,0) * 10)::DECIMAL(38,0)'],
      ['list', '[i, i + 1]'],
    ] as const) {
      const p = await duckFile(`${name}.parquet`, [
        ['k', 'i::BIGINT'],
        [name, expr],
      ]);
      // DECIMAL(38) is Decimal128: the footer path reads it; the others it leaves to parquet-wasm
      if (name === 'wide') expect({ path: p, ...inspectFooter(p) }).toEqual(await inspectWithWasm(p));
      else expect(inspectFooter(p), name).toBeNull();
      // and planning reads each the same either way
      expect(await inspectParquet(p)).toEqual(await inspectWithWasm(p));
    }
  });

  it("declines parquetjs-lite's page indexes (no null_pages: parquet-wasm reads such a file whole)", async () => {
    const { ParquetSchema, ParquetWriter } = (await import('parquetjs-lite')).default;
    const schema = new ParquetSchema({ name: { type: 'UTF8' }, qty: { type: 'INT64' } });
    const p = file('pjs.parquet');
    const w = await ParquetWriter.openFile(schema, p, { rowGroupSize: 40 });
    for (let i = 0; i < 100; i++) await w.appendRow({ name: `n${i}`, qty: i });
    await w.close();
    expect(inspectFooter(p)).toBeNull();
    expect((await inspectParquet(p)).wholeFile).toBe(true);
  });

  it('declines what is not Parquet, and leaves the error to parquet-wasm', async () => {
    const p = file('not.parquet');
    fs.writeFileSync(p, 'a,b\n1,2\n');
    expect(inspectFooter(p)).toBeNull();
    await expect(inspectParquet(p)).rejects.toThrow(/not a Parquet file/);
    expect(inspectFooter(file('missing.parquet'))).toBeNull();
  });
});

describe('parquet-wasm loaded only when it pays', () => {
  const traced = (args: string[]) => {
    const r = spawnSync(process.execPath, [BIN, ...args], {
      encoding: 'utf8',
      env: { ...process.env, SKEWJOIN_TRACE: '1', SKEWJOIN_DEBUG: '' },
    });
    expect(r.status, r.stderr).toBe(0);
    return r.stderr;
  };

  it('a run over plain files within the rent loads it on no thread; a timestamp column loads it', async () => {
    const p = await duckFile('rent.parquet', PLAIN, 20000);
    const plan = (source: string, column: string, workers: number) =>
      writePlan(dir, {
        version: 1,
        sources: { t: { parquet: source } },
        execution: { workers, inThreadBytes: 0 },
        query: {
          op: 'aggregate',
          input: { op: 'scan', source: 't' },
          groupBy: [],
          aggregates: [
            { fn: 'count', as: 'n' },
            { fn: 'max', column, as: 'm' },
          ],
        },
      });
    for (const w of [1, 2]) {
      for (const column of ['i64', 's', 'd', 'dec15']) {
        const err = traced([plan(p, column, w), '--json']);
        expect(err).toMatch(/worker: warm/);
        expect(err, column).not.toMatch(/parquet-wasm: loaded/);
      }
    }
    const t = await duckFile('rent-ts.parquet', [['ts', "TIMESTAMP '2001-01-01' + to_seconds(i)"]], 5000);
    expect(traced([plan(t, 'ts', 1), '--json'])).toMatch(/parquet-wasm: loaded/);
  });
});
