// The library's lifecycle and outputs: runPlan(path) with paths relative to
// the plan file (the output folder created), toArrow(), closePool() and
// worker threads that do not keep a process alive, a failure after writing started (no temporary, no partial file),
// and the typed comparator itself (it must fail where answers differ in type or value).
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import * as arrow from 'apache-arrow';
import { beforeAll, describe, expect, it } from 'vitest';
import { closePool, runPlan } from '../dist/index.js';
import { ROOT, arrowTyped, duckTable, expectTypedEqual, tmpDir, writeParquet, writePlan } from './helpers.js';

const dir = tmpDir('sj-life-');

beforeAll(async () => {
  fs.mkdirSync(path.join(dir, 'data'));
  await writeParquet(
    path.join(dir, 'data', 't.parquet'),
    `SELECT i::BIGINT AS k, (i % 3)::SMALLINT AS h, i::FLOAT AS f, 'v' || i AS s FROM range(0, 50) t(i)`,
  );
});

const plan = (output?: object) => ({
  version: 1,
  sources: { t: { parquet: 'data/t.parquet' } },
  query: {
    op: 'aggregate',
    groupBy: ['h'],
    aggregates: [
      { fn: 'count', as: 'n' },
      { fn: 'max', column: 'f', as: 'mf' },
      { fn: 'min', column: 's', as: 'ms' },
    ],
    input: { op: 'scan', source: 't' },
  },
  ...(output ? { output } : {}),
});

describe('runPlan', () => {
  it('a plan file: sources and output relative to the plan file, not the current folder', async () => {
    const file = writePlan(dir, plan({ path: 'out/agg.parquet' }), 'rel.json');
    expect(process.cwd()).not.toBe(dir);
    const r = await runPlan(file, { workers: 1 });
    expect(r.outputPath).toBe(path.join(dir, 'out', 'agg.parquet'));
    expect(fs.existsSync(path.join(dir, 'out', 'agg.parquet'))).toBe(true);
    expect(r.numRows).toBe(3);
  });
  it('toArrow(): an apache-arrow Table with the result types and values', async () => {
    const r = await runPlan(plan(), { baseDir: dir, workers: 1 });
    const t = r.toArrow();
    expect(t).toBeInstanceOf(arrow.Table);
    expect(t.schema.fields.map((f) => `${f.name}:${String(f.type)}`)).toEqual([
      'h:Int16',
      'n:Int64',
      'mf:Float32',
      'ms:Utf8',
    ]);
    const rows = t
      .toArray()
      .map((x: any) => x.toJSON())
      .sort((a: any, b: any) => a.h - b.h);
    expect(rows.map((x: any) => [x.h, x.n, x.mf, x.ms])).toEqual([
      [0, 17n, 48, 'v0'],
      [1, 17n, 49, 'v1'],
      [2, 16n, 47, 'v11'],
    ]);
  });
});

describe('a failure after writing started', () => {
  it('leaves neither the temporary file nor a partial output', async () => {
    // The target is a folder: the result is written to the temporary file in full, then the rename fails.
    const out = path.join(dir, 'fail');
    fs.mkdirSync(path.join(out, 'r.csv'), { recursive: true });
    fs.writeFileSync(path.join(out, 'r.csv', 'keep'), 'x');
    const e = await runPlan({ ...plan({ path: 'fail/r.csv' }) }, { baseDir: dir, workers: 1 }).catch((x) => x);
    expect(e).toBeInstanceOf(Error);
    expect(fs.readdirSync(out)).toEqual(['r.csv']); // no temporary file beside the target
    expect(fs.readdirSync(path.join(out, 'r.csv'))).toEqual(['keep']);
  });
});

describe('worker threads', () => {
  /** Run a script in a child process: its output and how long it took from its 'done' line to its exit. */
  function child(code: string): Promise<{ out: string; afterDoneMs: number; status: number | null }> {
    return new Promise((resolve) => {
      const p = spawn(process.execPath, ['--input-type=module', '-e', code], { cwd: ROOT });
      let out = '',
        done = 0;
      p.stdout.on('data', (d) => {
        out += d;
        if (!done && out.includes('done')) done = Date.now();
      });
      p.on('exit', (status) => resolve({ out, status, afterDoneMs: Date.now() - (done || Date.now()) }));
    });
  }
  const threads = (r: { stats: { tasks: { thread?: number }[] } }) =>
    new Set(r.stats.tasks.map((t) => t.thread).filter((t) => t));
  it('stay alive between queries; closePool() stops them at once', async () => {
    const p = { ...plan(), execution: { inThreadBytes: 0 } }; // on the pool (a small input runs on the calling thread)
    const a = threads(await runPlan(p, { baseDir: dir, workers: 2 })),
      b = threads(await runPlan(p, { baseDir: dir, workers: 2 }));
    expect([...b].every((t) => a.has(t))).toBe(true); // the same threads
    await closePool();
    const c = threads(await runPlan(p, { baseDir: dir, workers: 2 }));
    expect(c.size).toBeGreaterThan(0);
    expect([...c].some((t) => a.has(t))).toBe(false); // new threads
  });
  // The README's promise: idle threads stay warm (piscina keeps minThreads = workers) but are
  // unref'd, so a script that never calls closePool() still exits.
  it('a process that never calls closePool() still exits', async () => {
    const r = await child(`
      import { runPlan } from './dist/index.js';
      const r = await runPlan(${JSON.stringify(plan())}, { baseDir: ${JSON.stringify(dir)}, workers: 2 });
      console.log('rows', r.numRows, 'done');`);
    expect(r.status).toBe(0);
    expect(r.out).toContain('rows 3 done');
    expect(r.afterDoneMs).toBeLessThan(30000); // no hang
  }, 60_000);
});

describe('the typed comparator', () => {
  it('fails on a type DuckDB does not give: an int64 count against a double', async () => {
    const theirs = await duckTable('SELECT 3::DOUBLE');
    const ours = arrowTyped(new arrow.Table({ c: arrow.vectorFromArray([3n], new arrow.Int64()) }));
    expect(() => expectTypedEqual(ours, theirs)).toThrow(/column types/);
    expect(() => expectTypedEqual(ours, { ...theirs, types: ['BIGINT'] })).toThrow(); // 3 against 3.0: values differ in kind too
  });
  it('fails on int16 widened, float32 as float64', async () => {
    expect(() =>
      expectTypedEqual(arrowTyped(new arrow.Table({ c: arrow.vectorFromArray([1n], new arrow.Int64()) })), {
        types: ['SMALLINT'],
        rows: [['1']],
      }),
    ).toThrow(/column types/);
    expect(() =>
      expectTypedEqual(arrowTyped(new arrow.Table({ c: arrow.vectorFromArray([1.5], new arrow.Float64()) })), {
        types: ['FLOAT'],
        rows: [[1.5]],
      }),
    ).toThrow(/column types/);
  });
  it('compares int64 beyond 2^53 and timestamps to the microsecond exactly, floats within the tolerance', async () => {
    const big = await duckTable(
      "SELECT 9007199254740993::BIGINT, TIMESTAMP '2024-01-01 00:00:00.000001', 0.1::DOUBLE + 0.2::DOUBLE",
    );
    const ours = (b: bigint, us: bigint, f: number) =>
      arrowTyped(
        new arrow.Table({
          a: arrow.vectorFromArray([b], new arrow.Int64()),
          t: arrow.makeVector({ type: new arrow.TimestampMicrosecond(), data: BigInt64Array.of(us), length: 1 } as any),
          f: arrow.vectorFromArray([f], new arrow.Float64()),
        }),
      );
    const us = 1704067200000001n;
    expectTypedEqual(ours(9007199254740993n, us, 0.3), big); // 0.1 + 0.2 is not 0.3, but within 1e-9
    expect(() => expectTypedEqual(ours(9007199254740992n, us, 0.3), big)).toThrow();
    expect(() => expectTypedEqual(ours(9007199254740993n, us - 1n, 0.3), big)).toThrow();
    expect(() => expectTypedEqual(ours(9007199254740993n, us, 0.3001), big)).toThrow();
  });
  it('compares DECIMAL exactly: DuckDB DECIMAL(p,s) against an Arrow Decimal as scaled integer and scale', async () => {
    const theirs = await duckTable('SELECT 1234.50::DECIMAL(15,2) UNION ALL SELECT -0.07::DECIMAL(15,2)');
    const dec = (vals: bigint[], scale = 2) => {
      const words = new Uint32Array(vals.length * 4);
      vals.forEach((v, i) => {
        for (let w = 0; w < 4; w++) words[i * 4 + w] = Number(BigInt.asUintN(32, v >> BigInt(32 * w)));
      });
      return arrowTyped(
        new arrow.Table({
          d: arrow.makeVector({ type: new arrow.Decimal(scale, 15, 128), data: words, length: vals.length } as any),
        }),
      );
    };
    expectTypedEqual(dec([123450n, -7n]), theirs);
    expect(() => expectTypedEqual(dec([123451n, -7n]), theirs)).toThrow();
    expect(() => expectTypedEqual(dec([12345n, -7n], 1), theirs)).toThrow(/column types/);
  });
});
