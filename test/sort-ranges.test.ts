// A sort whose tasks each sort several small ranges (physical/sort/stage.ts, physical/sort/ranges.ts):
// forced on small data by a budget whose task share holds about a dozen
// ranges; the written file is DuckDB's rows in DuckDB's order, the range
// shuffle spilled, and no spill file is left. rangeRuns, the grouping of
// ranges into tasks, and rangeIds over number keys are checked on their own.
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runPlan } from '../dist/index.js';
import { rangeIds } from '../dist/shuffle/range.js';
import { rangeRuns } from '../dist/physical/sort/stage.js';
import { duckRows, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-sort-ranges-');
const file = (n: string) => path.join(dir, n);
const spillDir = file('spill');
const F = `read_parquet('${file('fact.parquet')}')`;

beforeAll(async () => {
  // 40 row groups of 1000 rows; v repeats (and is null every 13th row), so ties cross ranges
  await writeParquet(
    file('fact.parquet'),
    `SELECT i::BIGINT AS id, CASE WHEN i % 13 = 0 THEN NULL ELSE (hash(i) % 300)::DOUBLE / 10 END AS v,
    'r' || (i % 9) AS region FROM range(0, 40000) t(i)`,
    1000,
  );
});

describe('a sort task over several ranges', () => {
  it.each([
    ['v desc, id', [{ column: 'v', desc: true }, { column: 'id' }], 'v DESC NULLS LAST, id'],
    [
      'region, v nulls first, id desc',
      [{ column: 'region' }, { column: 'v', nulls: 'first' }, { column: 'id', desc: true }],
      'region, v NULLS FIRST, id DESC',
    ],
  ])("by %s: DuckDB's rows in order, fewer tasks than ranges, spilled, nothing left", async (_, by, orderBy) => {
    const out = file('sorted.parquet');
    const r = await runPlan(
      {
        version: 1,
        sources: { f: { parquet: file('fact.parquet') } },
        query: { op: 'sort', by, input: { op: 'scan', source: 'f' } },
        output: { path: out },
      },
      { workers: 2, inThreadBytes: 0, memoryLimit: '3MB', spillDir },
    );
    const range = r.stats.shuffles.find((x) => x.id === 'sort-1.range')!;
    const tasks = r.stats.tasks.filter((t) => t.stage === 'sort-1' && t.kind === 'reduce');
    expect(range.partitions).toBeGreaterThan(3 * tasks.length);
    expect(tasks.length).toBeGreaterThan(2);
    expect(r.stats.spilledBytes).toBeGreaterThan(0);
    const ours = await duckRows(
      `SELECT id, v, region FROM read_parquet('${out}', file_row_number = true) ORDER BY file_row_number`,
    );
    const theirs = await duckRows(`SELECT id, v, region FROM ${F} ORDER BY ${orderBy}`);
    expect(ours.length).toBe(40000);
    expect(ours).toEqual(theirs);
    expect(fs.existsSync(spillDir) ? fs.readdirSync(spillDir) : []).toEqual([]);
  });
});

describe('rangeRuns', () => {
  it('groups consecutive non-empty ranges up to the task bytes, a larger range alone, every range once and in order', () => {
    const bytes = [5, 0, 5, 5, 30, 2, 2, 2, 9, 0];
    const rows = bytes.map((b) => (b > 0 ? 1 : 0));
    const runs = rangeRuns(bytes, rows, 10);
    expect(runs).toEqual([
      { first: 0, ranges: [0, 2] },
      { first: 3, ranges: [3] },
      { first: 4, ranges: [4] },
      { first: 5, ranges: [5, 6, 7] },
      { first: 8, ranges: [8] },
    ]);
    expect(runs.flatMap((x) => x.ranges)).toEqual([0, 2, 3, 4, 5, 6, 7, 8]);
  });
});

describe('rangeIds over a number key', () => {
  const n = 6000;
  // even values: only 10 equals boundaries (the turn is shared by every tied row)
  const values = Float64Array.from({ length: n }, (_, i) => 2 * ((i * 7919) % 41));
  const bounds = [5, 10, 10, 10, 21, 31];
  const cases: [string, any, any][] = [
    ['float64', { id: 'float64' }, (xs: number[]) => Float64Array.from(xs)],
    ['int64', { id: 'int64' }, (xs: number[]) => BigInt64Array.from(xs.map(BigInt))],
  ];
  it.each(cases)(
    "%s: each row within its range's boundaries; a value equal to boundaries dealt over all of their ranges",
    (_, type, arr) => {
      const col = (xs: number[]) => ({ type, length: xs.length, values: arr(xs), valid: null });
      const b = { length: n, columns: [col([...values])] };
      const bs = { length: bounds.length, columns: [col(bounds)] };
      for (const desc of [false, true]) {
        const order = desc ? [...bounds].reverse() : bounds;
        const out = rangeIds(
          b,
          { length: bs.length, columns: [col(order)] },
          [{ col: 0, desc, nullsFirst: false }],
          new Int32Array(n),
          { next: 0 },
        );
        const precedes = (x: number, y: number) => (desc ? x > y : x < y);
        const tens = new Set<number>();
        for (let i = 0; i < n; i++) {
          const r = out[i],
            v = values[i];
          if (r > 0) expect(precedes(v, order[r - 1])).toBe(false);
          if (r < order.length) expect(precedes(order[r], v)).toBe(false);
          if (v === 10) tens.add(r);
        }
        expect([...tens].sort()).toEqual(desc ? [2, 3, 4, 5] : [1, 2, 3, 4]);
      }
    },
  );
});

describe('rangeIds for a value equal to one boundary', () => {
  it('is dealt in turn over the range below and the range above it (the last boundary too), like a value equal to several', () => {
    // 4 is the first boundary, 8 a boundary alone, 12 the last one; 6 equals none
    const bounds = [4, 8, 12];
    const values = Float64Array.from({ length: 600 }, (_, i) => [4, 6, 8, 12][i % 4]);
    const col = (xs: ArrayLike<number>) => ({
      type: { id: 'float64' },
      length: xs.length,
      values: Float64Array.from(xs),
      valid: null,
    });
    const out = rangeIds(
      { length: values.length, columns: [col(values)] },
      { length: bounds.length, columns: [col(bounds)] },
      [{ col: 0, desc: false, nullsFirst: false }],
      new Int32Array(values.length),
      { next: 0 },
    );
    const seen = new Map<number, number[]>();
    for (let i = 0; i < values.length; i++) {
      const xs = seen.get(values[i]) ?? [0, 0, 0, 0];
      xs[out[i]]++;
      seen.set(values[i], xs);
    }
    // 150 rows of each value; the turn is shared: rows equal to a boundary alternate between its two ranges
    expect(seen.get(6)).toEqual([0, 150, 0, 0]);
    for (const [v, r] of [
      [4, 0],
      [8, 1],
      [12, 2],
    ]) {
      const xs = seen.get(v)!;
      expect(xs[r] + xs[r + 1]).toBe(150);
      expect(Math.abs(xs[r] - xs[r + 1])).toBeLessThanOrEqual(1);
    }
  });
});

describe('rangeIds over spread-out float64 values (the search starts from a table of the first word)', () => {
  it('a value between boundaries goes to the first range whose boundary is not below it, for values below, among and above the boundaries', () => {
    // negative and positive, tiny and huge: the first words span most of their range
    let seed = 12345;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const value = () => (rnd() < 0.5 ? -1 : 1) * 10 ** (rnd() * 40 - 20);
    const bounds = Float64Array.from({ length: 300 }, value).sort();
    const values = Float64Array.from({ length: 20000 }, (_, i) =>
      i % 50 === 0 ? bounds[i % 300] * (1 + 1e-12) : value(),
    );
    const col = (xs: Float64Array) => ({ type: { id: 'float64' }, length: xs.length, values: xs, valid: null });
    const out = rangeIds(
      { length: values.length, columns: [col(values)] },
      { length: bounds.length, columns: [col(bounds)] },
      [{ col: 0, desc: false, nullsFirst: false }],
      new Int32Array(values.length),
      { next: 0 },
    );
    let mismatches = 0;
    for (let i = 0; i < values.length; i++) {
      let first = 0;
      while (first < bounds.length && bounds[first] < values[i]) first++;
      if (out[i] !== first) mismatches++;
    }
    expect(mismatches).toBe(0);
  });
});
