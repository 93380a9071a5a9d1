// Window aggregates over distinct values (`"distinct": true`, SQL's fn(DISTINCT x) OVER (...)) against DuckDB:
// count, sum and avg over every frame DuckDB takes (ROWS and RANGE with offsets, cumulative, to the partition's end,
// the whole partition, frames ahead of the row), over integer, decimal, double and string columns with nulls and
// repeats; min and max take it (the same answer); the other functions refuse it naming the field. A hot partition
// stays one task (a piece would need the values before it), on the pool, the calling thread and under a 64 KB budget.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { cli, expectSame, ourRun, tmpDir, writeParquet, writePlan } from './helpers.js';

const dir = tmpDir('sj-window-distinct-');
const T = path.join(dir, 't.parquet');

beforeAll(async () => {
  // x, d, f, s repeat within a partition (few values) and hold nulls; g: a hot partition, a single-row one
  await writeParquet(
    T,
    `SELECT i::BIGINT AS id,
      CASE WHEN i = 7 THEN 'single' WHEN i % 3 = 0 THEN 'hot' ELSE 'g' || (i % 5) END AS g,
      CASE WHEN i % 11 = 0 THEN NULL ELSE (i * 7) % 9 - 4 END::INTEGER AS x,
      CASE WHEN i % 13 = 0 THEN NULL ELSE ((i * 37) % 7 - 3) * 1.15 END::DECIMAL(12,2) AS d,
      CASE WHEN i % 17 = 0 THEN NULL ELSE ((i * 5) % 6) * 0.1 - 0.2 END::DOUBLE AS f,
      CASE WHEN i % 9 = 0 THEN NULL ELSE 'v' || ((i * 3) % 4) END AS s,
      (i * 13) % 40 AS o
    FROM range(0, 2400) t(i)`,
    400,
  );
});

type Bound = string | { preceding: number } | { following: number };
type Frame = { unit: 'rows' | 'range'; start: Bound; end: Bound };
const boundSql = (b: Bound) =>
  typeof b === 'string' ? b.toUpperCase() : 'preceding' in b ? `${b.preceding} PRECEDING` : `${b.following} FOLLOWING`;
const frameSql = (f?: Frame) =>
  f ? ` ${f.unit.toUpperCase()} BETWEEN ${boundSql(f.start)} AND ${boundSql(f.end)}` : '';

const FNS: [string, string][] = [
  ['count', 'x'],
  ['count', 's'],
  ['count', 'f'],
  ['sum', 'x'],
  ['sum', 'd'],
  ['sum', 'f'],
  ['avg', 'x'],
  ['avg', 'd'],
  ['avg', 'f'],
  ['min', 'x'],
  ['max', 's'],
];

function query(frame: Frame | undefined, ordered = true) {
  const functions = FNS.map(([fn, column], i) => ({
    fn,
    column,
    as: `w${i}`,
    distinct: true,
    ...(frame ? { frame } : {}),
  }));
  const over = `PARTITION BY g${ordered ? ' ORDER BY o, id' : ''}${frameSql(frame)}`;
  const cols = FNS.map(([fn, c], i) => `${fn}(DISTINCT ${c}) OVER (${over}) AS w${i}`).join(', ');
  const plan = {
    version: 1,
    sources: { t: { parquet: T } },
    query: {
      op: 'window',
      input: { op: 'scan', source: 't' },
      partitionBy: ['g'],
      ...(ordered ? { orderBy: [{ column: 'o' }, { column: 'id' }] } : {}),
      functions,
    },
  };
  return { plan, sql: `SELECT *, ${cols} FROM read_parquet('${T}')` };
}

const FRAMES: (Frame | undefined)[] = [
  undefined,
  { unit: 'rows', start: { preceding: 3 }, end: { following: 2 } },
  { unit: 'rows', start: { preceding: 40 }, end: 'current row' },
  { unit: 'rows', start: 'current row', end: 'unbounded following' },
  { unit: 'rows', start: { following: 2 }, end: { following: 5 } },
  { unit: 'rows', start: 'unbounded preceding', end: 'unbounded following' },
];

describe('window aggregates over distinct values', () => {
  for (const frame of FRAMES)
    it(`count, sum, avg, min, max (distinct) over ${frame ? JSON.stringify(frame) : 'the default frame'}`, async () => {
      const q = query(frame);
      await expectSame(q.plan, q.sql);
    });

  it('RANGE frames with offsets over the order key, and no orderBy (the whole partition)', async () => {
    const range = { unit: 'range' as const, start: { preceding: 5 }, end: { following: 3 } };
    const functions = FNS.map(([fn, column], i) => ({ fn, column, as: `w${i}`, distinct: true, frame: range }));
    const cols = FNS.map(
      ([fn, c], i) =>
        `${fn}(DISTINCT ${c}) OVER (PARTITION BY g ORDER BY o RANGE BETWEEN 5 PRECEDING AND 3 FOLLOWING) AS w${i}`,
    ).join(', ');
    await expectSame(
      {
        version: 1,
        sources: { t: { parquet: T } },
        query: {
          op: 'window',
          input: { op: 'scan', source: 't' },
          partitionBy: ['g'],
          orderBy: [{ column: 'o' }],
          functions,
        },
      },
      `SELECT *, ${cols} FROM read_parquet('${T}')`,
    );
    const whole = query(undefined, false);
    await expectSame(whole.plan, whole.sql);
  });

  it('a hot partition stays one task (skew thresholds low); the calling thread; a 64 KB budget', async () => {
    const q = query({ unit: 'rows', start: { preceding: 3 }, end: { following: 2 } });
    const low = { partitions: 8, skew: { thresholdBytes: 1, advisoryPartitionBytes: 1024 } };
    await expectSame(q.plan, q.sql, low);
    const r = await ourRun(q.plan, low);
    const splits = r.stats.windows?.[0].splits ?? [];
    expect(splits.length).toBeGreaterThan(0);
    expect(splits.every((x) => x.method === 'none' && /distinct/.test(x.reason ?? ''))).toBe(true);
    await expectSame(q.plan, q.sql, { inThreadBytes: Number.MAX_SAFE_INTEGER });
    await expectSame(q.plan, q.sql, { memoryLimit: 64 * 1024, spillDir: path.join(dir, 'spill'), workers: 2 });
  });

  it('refused with the field named: ranks, lag, first_value', () => {
    const bad = (fn: object) =>
      cli([
        writePlan(
          dir,
          {
            version: 1,
            sources: { t: { parquet: T } },
            query: {
              op: 'window',
              input: { op: 'scan', source: 't' },
              partitionBy: ['g'],
              orderBy: [{ column: 'o' }],
              functions: [fn],
            },
          },
          'bad.json',
        ),
      ]);
    for (const fn of [
      { fn: 'rank', as: 'r', distinct: true },
      { fn: 'lag', column: 'x', as: 'l', distinct: true },
      { fn: 'first_value', column: 'x', as: 'fv', distinct: true },
    ]) {
      const r = bad(fn);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('query.functions[0].distinct');
      expect(r.stderr).toContain(fn.fn);
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
  });
});
