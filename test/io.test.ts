// Files from other writers, and every output format: what is written reads
// back with the same values (checked through DuckDB).
import fs from 'node:fs';
import path from 'node:path';
import * as arrow from 'apache-arrow';
import * as pw from 'parquet-wasm';
import { beforeAll, describe, expect, it } from 'vitest';
import { isDynamicPattern } from 'tinyglobby';
import { runPlan } from '../dist/index.js';
import { isPattern } from '../dist/plan/glob.js';
import {
  arrowTyped,
  duckRows,
  duckTable,
  expectSame,
  expectTypedEqual,
  sorted,
  tmpDir,
  writeParquet,
} from './helpers.js';

const dir = tmpDir('sj-io-');
const T = path.join(dir, 't.parquet');

beforeAll(async () => {
  await writeParquet(
    T,
    `
    SELECT i::BIGINT AS id, CASE WHEN i % 4 = 0 THEN NULL ELSE 'v"' || i || ',x' END AS s,
      (i * 0.25)::DOUBLE AS f, 9223372036854775000::BIGINT + i AS big, (i % 2 = 0) AS b,
      DATE '1999-12-30' + i::INTEGER AS d, TIMESTAMP '2020-02-29 23:59:59.123456' + to_seconds(i) AS ts,
      (i - 50)::SMALLINT AS i16, (i * 3)::UINTEGER AS u32, i::FLOAT AS f32
    FROM range(0, 100) t(i)`,
    30,
  );
});

const plan = (output?: object) => ({
  version: 1,
  sources: { t: { parquet: T } },
  query: { op: 'scan', source: 't' },
  ...(output ? { output } : {}),
});

describe('output formats', () => {
  it('parquet round-trips every type exactly', async () => {
    const out = path.join(dir, 'o.parquet');
    await runPlan(plan({ path: out }), { workers: 2 });
    expect(sorted(await duckRows(`SELECT * FROM read_parquet('${out}')`))).toEqual(
      sorted(await duckRows(`SELECT * FROM read_parquet('${T}')`)),
    );
  });
  it('arrow IPC file, value by value', async () => {
    const out = path.join(dir, 'o.arrow');
    await runPlan(plan({ path: out }), { workers: 2 });
    const t = arrow.tableFromIPC(fs.readFileSync(out));
    expect(t.numRows).toBe(100);
    expect(t.schema.fields.map((f) => String(f.type))).toEqual([
      'Int64',
      'Utf8',
      'Float64',
      'Int64',
      'Bool',
      'Date32<DAY>',
      'Timestamp<MICROSECOND>',
      'Int16',
      'Uint32',
      'Float32',
    ]);
    const ids = t.getChild('big')!.toArray() as BigInt64Array;
    expect([...ids].sort()[99]).toBe(9223372036854775099n);
    // value by value, read from the file's buffers: the types as DuckDB names them and every value exact
    expectTypedEqual(arrowTyped(t), await duckTable(`SELECT * FROM read_parquet('${T}')`));
  });
  it('arrow IPC and CSV of decimals, narrow and unsigned integers, timestamp units, value by value', async () => {
    const D = path.join(dir, 'd.parquet');
    await writeParquet(
      D,
      `SELECT i::INTEGER AS id, CASE WHEN i % 7 = 0 THEN NULL ELSE (i * 37 - 1800) * 0.01 END::DECIMAL(9,2) AS d9,
        ((i - 50)::DECIMAL(38,0) * 1234567890123456789.0125)::DECIMAL(38,4) AS d38, (i * 2)::UTINYINT AS u8, (i - 60)::TINYINT AS i8,
        (18446744073709551615 - i)::UBIGINT AS u64, (TIMESTAMP '2001-02-03 04:05:06' + to_milliseconds(i * 1001))::TIMESTAMP_MS AS tms,
        (TIMESTAMP '2001-02-03 04:05:06' + to_microseconds(i * 7))::TIMESTAMP_NS AS tns FROM range(0, 100) t(i)`,
      40,
    );
    const q = `SELECT id, d9, d38, u8, i8, u64, tms::TIMESTAMP_MS AS tms, tns FROM read_parquet('${D}')`;
    const p = (out: string) => ({
      version: 1,
      sources: { t: { parquet: D } },
      query: { op: 'scan', source: 't' },
      output: { path: out },
    });
    const arrowOut = path.join(dir, 'd.arrow');
    await runPlan(p(arrowOut), { workers: 2 });
    expectTypedEqual(arrowTyped(arrow.tableFromIPC(fs.readFileSync(arrowOut))), await duckTable(q));
    // CSV: every field the exact text DuckDB gives the value (decimals with their scale, 64-bit unsigned whole)
    const csvOut = path.join(dir, 'd.csv');
    await runPlan(p(csvOut), { workers: 2 });
    const ours = await duckRows(`SELECT * FROM read_csv('${csvOut}', header = true, all_varchar = true)`);
    const theirs =
      await duckRows(`SELECT id::VARCHAR, d9::VARCHAR, d38::VARCHAR, u8::VARCHAR, i8::VARCHAR, u64::VARCHAR,
      strftime(tms, '%Y-%m-%dT%H:%M:%S.%g'), strftime(tns, '%Y-%m-%dT%H:%M:%S.%n') FROM (${q})`);
    expect(ours.length).toBe(100);
    expect(sorted(ours)).toEqual(sorted(theirs));
  });
  it('csv with quoting, empty fields for null, ISO dates', async () => {
    const out = path.join(dir, 'o.csv');
    await runPlan(plan({ path: out }), { workers: 2 });
    const ours = await duckRows(`SELECT * FROM read_csv('${out}', header = true, columns = {
      'id': 'BIGINT', 's': 'VARCHAR', 'f': 'DOUBLE', 'big': 'BIGINT', 'b': 'BOOLEAN', 'd': 'DATE', 'ts': 'TIMESTAMP',
      'i16': 'SMALLINT', 'u32': 'UINTEGER', 'f32': 'FLOAT'})`);
    expect(sorted(ours)).toEqual(sorted(await duckRows(`SELECT * FROM read_parquet('${T}')`)));
    expect(fs.readFileSync(out, 'utf8')).toContain('"v""1,x"');
  });
  it('json lines with exact 64-bit integers', async () => {
    const out = path.join(dir, 'o.jsonl');
    await runPlan(plan({ path: out, format: 'jsonl' }), { workers: 2 });
    const lines = fs.readFileSync(out, 'utf8').trim().split('\n');
    expect(lines.length).toBe(100);
    expect(lines.some((l) => l.includes('"big":9223372036854775099'))).toBe(true);
    const first = JSON.parse(lines.find((l) => l.includes('"id":1,'))!);
    expect(first).toMatchObject({ s: 'v"1,x', b: false, d: '1999-12-31', ts: '2020-03-01T00:00:00.123456' });
  });
  it('the format follows the extension; an unknown extension is a plan error', async () => {
    await expect(runPlan(plan({ path: path.join(dir, 'o.txt') }))).rejects.toThrow(
      /output\.path: cannot tell the format/,
    );
  });
});

describe('reading in place (Arrow C Data Interface)', () => {
  const F = (name: string, id: string, extra: object = {}) => ({ name, type: { id, ...extra } });
  const plain = [
    F('id', 'int64'),
    F('s', 'utf8'),
    F('f', 'float64'),
    F('big', 'int64'),
    F('d', 'date32'),
    F('ts', 'timestamp', { unit: 'microsecond', tz: null }),
    F('i16', 'int16'),
    F('u32', 'uint32'),
    F('f32', 'float32'),
  ];
  const same = (a: any[], b: any[]) => {
    expect(a.map((x) => x.length)).toEqual(b.map((x) => x.length));
    a.forEach((ba, i) =>
      ba.columns.forEach((c: any, j: number) => {
        const d = b[i].columns[j];
        expect(Array.from(c.values)).toEqual(Array.from(d.values));
        expect(c.valid ? Array.from(c.valid) : null).toEqual(d.valid ? Array.from(d.valid) : null);
        expect(c.offsets ? Array.from(c.offsets) : null).toEqual(d.offsets ? Array.from(d.offsets) : null);
      }),
    );
  };
  it('gives the same columns as the IPC path, as views into the module memory', async () => {
    const { readRowGroups, readRowGroupsInPlace } = await import('../dist/io/parquet.js');
    // 5,000 rows in row groups of 2,048
    const M = path.join(dir, 'groups.parquet');
    await writeParquet(
      M,
      `
      SELECT i::BIGINT AS id, CASE WHEN i % 4 = 0 THEN NULL ELSE 'v' || i END AS s, CASE WHEN i % 7 = 0 THEN NULL ELSE i * 0.25 END::DOUBLE AS f,
        9223372036854770000::BIGINT + i AS big, DATE '1999-12-30' + i::INTEGER AS d, TIMESTAMP '2020-02-29 23:59:59.123456' + to_seconds(i) AS ts,
        (i % 300 - 150)::SMALLINT AS i16, (i * 3)::UINTEGER AS u32, i::FLOAT AS f32, i * 2.0::DOUBLE AS "größe"
      FROM range(0, 5000) t(i)`,
      2048,
    );
    for (const rg of [[0], [1, 2]]) {
      const fields = [...plain, F('größe', 'float64')]; // a column name in UTF-8
      const viaIpc = await readRowGroups(M, rg, fields as any);
      const r = await readRowGroupsInPlace(M, rg, fields as any);
      try {
        same(r.batches, viaIpc);
        // (compared as booleans: a failing toBe would print the whole module memory)
        expect(r.batches[0].columns.map((c: any) => c.values.buffer === pw.wasmMemory().buffer)).toEqual(
          fields.map(() => true),
        );
        expect(r.batches[0].columns[1].valid).not.toBeNull(); // nulls in s
        expect(r.batches.reduce((a: number, b: any) => a + b.length, 0)).toBe(rg.length === 1 ? 2048 : 5000 - 2048);
      } finally {
        r.release();
      }
    }
  });
  it('falls back to the IPC path for a bool column, same values', async () => {
    const { readRowGroups, readRowGroupsInPlace } = await import('../dist/io/parquet.js');
    const fields = [F('id', 'int64'), F('b', 'bool')];
    const viaIpc = await readRowGroups(T, [0], fields as any);
    const r = await readRowGroupsInPlace(T, [0], fields as any);
    same(r.batches, viaIpc);
    expect(r.batches[0].columns[0].values.buffer === pw.wasmMemory().buffer).toBe(false);
    r.release();
  });
});

describe('files from other writers', () => {
  it('parquetjs-lite files read correctly', async () => {
    const { ParquetSchema, ParquetWriter } = (await import('parquetjs-lite')).default;
    const schema = new ParquetSchema({
      name: { type: 'UTF8' },
      qty: { type: 'INT64', optional: true },
      price: { type: 'DOUBLE' },
      ok: { type: 'BOOLEAN' },
      n32: { type: 'INT32' },
    });
    const file = path.join(dir, 'pjs.parquet');
    const w = await ParquetWriter.openFile(schema, file, { rowGroupSize: 40 });
    for (let i = 0; i < 150; i++) {
      await w.appendRow({
        name: `n${i % 9}`,
        ...(i % 6 ? { qty: i * 1000 } : {}),
        price: i / 8,
        ok: i % 3 === 0,
        n32: -i,
      });
    }
    await w.close();
    const p = {
      version: 1,
      sources: { p: { parquet: file } },
      query: {
        op: 'aggregate',
        input: { op: 'scan', source: 'p' },
        groupBy: ['name'],
        aggregates: [
          { fn: 'count', column: 'qty', as: 'c' },
          { fn: 'sum', column: 'qty', as: 's' },
          { fn: 'max', column: 'price', as: 'm' },
          { fn: 'min', column: 'n32', as: 'n' },
        ],
      },
    };
    const rows = await expectSame(
      p,
      `SELECT name, count(qty), sum(qty), max(price), min(n32) FROM read_parquet('${file}') GROUP BY name`,
      { workers: 2 },
    );
    expect(rows.length).toBe(9);
  });
  it('dictionary-encoded and large utf8 columns read, and large utf8 is written back as such', async () => {
    const dict = arrow.vectorFromArray(
      ['a', 'bb', null, 'a', 'ccc', 'bb'],
      new arrow.Dictionary(new arrow.Utf8(), new arrow.Int32()),
    );
    const large = arrow.vectorFromArray(['x', 'yy', 'zzz', null, '', 'w'], new arrow.LargeUtf8());
    const t = new arrow.Table({ k: dict, l: large });
    const file = path.join(dir, 'dict.parquet');
    fs.writeFileSync(file, pw.writeParquet(pw.Table.fromIPCStream(arrow.tableToIPC(t, 'stream'))));
    const out = path.join(dir, 'dict-out.arrow');
    const r = await runPlan(
      { version: 1, sources: { d: { parquet: file } }, query: { op: 'scan', source: 'd' }, output: { path: out } },
      { workers: 1 },
    );
    expect(r.toRows()).toEqual([
      { k: 'a', l: 'x' },
      { k: 'bb', l: 'yy' },
      { k: null, l: 'zzz' },
      { k: 'a', l: null },
      { k: 'ccc', l: '' },
      { k: 'bb', l: 'w' },
    ]);
    expect(String(arrow.tableFromIPC(fs.readFileSync(out)).schema.fields[1].type)).toBe('LargeUtf8');
  });
  it('a source of several files and a glob', async () => {
    const g = path.join(dir, 'glob');
    fs.mkdirSync(g);
    for (let k = 0; k < 3; k++)
      await writeParquet(
        path.join(g, `part-${k}.parquet`),
        `SELECT (i + ${k * 1000})::BIGINT AS id FROM range(0, 500) t(i)`,
        128,
      );
    const r = await runPlan(
      {
        version: 1,
        sources: { g: { parquet: 'glob/*.parquet' } },
        query: {
          op: 'aggregate',
          input: { op: 'scan', source: 'g' },
          groupBy: [],
          aggregates: [
            { fn: 'count', as: 'n' },
            { fn: 'max', column: 'id', as: 'm' },
          ],
        },
      },
      { baseDir: dir, workers: 2 },
    );
    expect(r.toRows()).toEqual([{ n: 1500n, m: 2499n }]);
    const [[groups]] = await duckRows(`SELECT count(*) FROM parquet_metadata('${g}/*.parquet') WHERE column_id = 0`);
    expect(r.stats.tasks.filter((t) => t.kind === 'map').length).toBe(Number(groups)); // a map task per row group
  });
  it('a path is a pattern exactly when tinyglobby says so (which loads only for a possible pattern)', async () => {
    const paths = [
      'a.parquet',
      '/x/y/z.parquet',
      'dir/',
      'a*.parquet',
      'a?.parquet',
      '[ab].parquet',
      '{a,b}.parquet',
      '!(a).parquet',
      '+(a|b).parquet',
      '@(a).parquet',
      'a\\*b',
      'part(1).parquet',
      'x!y.parquet',
      'x+y@z.parquet',
      'a]b',
      'a}b',
      '**',
      'a b-c_d.e',
    ];
    for (const p of paths) expect([p, await isPattern(p)]).toEqual([p, isDynamicPattern(p)]);
    const r = await runPlan(
      {
        version: 1,
        sources: { g: { parquet: 'glob/part-{0,2}.parquet' } },
        query: {
          op: 'aggregate',
          input: { op: 'scan', source: 'g' },
          groupBy: [],
          aggregates: [
            { fn: 'count', as: 'n' },
            { fn: 'min', column: 'id', as: 'm' },
          ],
        },
      },
      { baseDir: dir, workers: 1 },
    );
    expect(r.toRows()).toEqual([{ n: 1000n, m: 0n }]);
  });
});
