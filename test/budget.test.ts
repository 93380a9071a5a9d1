// What the memory budget counts beyond shuffle blocks, each forced on small
// data with a tiny budget: a broadcast table that does not fit what is left
// falls back to a shuffle (and says why), a limit without a sort keeps only
// the rows it needs (the rest of its input is never run), an all-equal sort
// value is dealt over every range and spilled; answers are DuckDB's, and no
// spill file is left.
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runPlan } from '../dist/index.js';
import { duckRows, expectFileMatchesQuery, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-budget-');
const file = (n: string) => path.join(dir, n);
const spillDir = file('spill');
const leftovers = () => (fs.existsSync(spillDir) ? fs.readdirSync(spillDir) : []);
const F = `read_parquet('${file('fact.parquet')}')`,
  D = `read_parquet('${file('dim.parquet')}')`;
const sources = { f: { parquet: file('fact.parquet') }, d: { parquet: file('dim.parquet') } };

beforeAll(async () => {
  // 40 row groups of 1000 rows: 40 scan tasks
  await writeParquet(
    file('fact.parquet'),
    `SELECT i::BIGINT AS id, (hash(i) % 500)::BIGINT AS k, 5::INTEGER AS c, (i % 7)::DOUBLE AS v FROM range(0, 40000) t(i)`,
    1000,
  );
  await writeParquet(
    file('dim.parquet'),
    `SELECT i::BIGINT AS k, 'r' || (i % 9) AS region FROM range(0, 400) t(i)`,
    100,
  );
});

describe('broadcast tables count against the budget', () => {
  const plan = {
    version: 1,
    sources,
    query: {
      op: 'join',
      type: 'inner',
      on: [['k', 'k']],
      left: { op: 'scan', source: 'f' },
      right: { op: 'scan', source: 'd' },
    },
  };
  const sql = `SELECT f.*, d.* FROM ${F} f JOIN ${D} d ON f.k = d.k`;
  it("a side under broadcastBytes whose table exceeds the budget left is shuffled instead, with the reason; DuckDB's answer", async () => {
    const out = file('bc-small.parquet');
    const r = await runPlan(
      { ...plan, output: { path: out } },
      { workers: 2, inThreadBytes: 0, broadcastBytes: '64MB', memoryLimit: 2000, spillDir },
    );
    expect(r.stats.joins[0].strategy).toBe('shuffle');
    expect(r.stats.joins[0].reason).toMatch(
      /right side \d+ bytes <= broadcastBytes \d+, but its table \(\d+ bytes with the hash table\) exceeds the memory budget left \(\d+ bytes\)/,
    );
    expect(r.stats.spilledBytes).toBeGreaterThan(0);
    expect(await expectFileMatchesQuery(out, sql)).toBeGreaterThan(30000);
    expect(leftovers()).toEqual([]);
  });
  it('the same side under a budget that holds it is broadcast', async () => {
    const out = file('bc-big.parquet');
    const r = await runPlan(
      { ...plan, output: { path: out } },
      { workers: 2, inThreadBytes: 0, broadcastBytes: '64MB', memoryLimit: '64MB', spillDir },
    );
    expect(r.stats.joins[0].strategy).toBe('broadcast');
    expect(await expectFileMatchesQuery(out, sql)).toBeGreaterThan(30000);
  });
});

describe('a limit without a sort', () => {
  it.each([true, false])(
    "in the thread %s: keeps offset + count rows, skips the input tasks not started by then; DuckDB's rows",
    async (inThread) => {
      const q = {
        op: 'limit',
        offset: 5,
        count: 10,
        input: { op: 'filter', where: { column: 'v', cmp: '<', value: 6 }, input: { op: 'scan', source: 'f' } },
      };
      const r = await runPlan(
        { version: 1, sources, query: q },
        { workers: 2, inThreadBytes: inThread ? '1GB' : 0, memoryLimit: 1, spillDir },
      );
      const rows = await duckRows(`SELECT id FROM ${F} WHERE v < 6 LIMIT 10 OFFSET 5`);
      expect(r.toRows().map((x) => String(x.id))).toEqual(rows.map((x) => String(x[0])));
      // 40 scan tasks of 1000 rows: the first one holds the 15 rows; at most 2 per worker run ahead of the limit
      const scans = r.stats.tasks.filter((t) => t.stage === 'output' && t.kind === 'map' && t.source === 'scan-1');
      expect(scans.length).toBeGreaterThan(0);
      expect(scans.length).toBeLessThanOrEqual(5);
      // nothing was held for the limit: no shuffle, no spill
      expect(r.stats.spilledBytes).toBe(0);
      expect(leftovers()).toEqual([]);
    },
  );
  it('a limit over an aggregate still runs the whole aggregate, then keeps what it needs', async () => {
    const q = {
      op: 'limit',
      count: 3,
      input: {
        op: 'sort',
        by: [{ column: 'k' }],
        input: {
          op: 'aggregate',
          groupBy: ['k'],
          aggregates: [{ fn: 'count', as: 'n' }],
          input: { op: 'scan', source: 'f' },
        },
      },
    };
    const r = await runPlan(
      { version: 1, sources, query: { op: 'limit', count: 2, input: q } },
      { workers: 2, inThreadBytes: 0, memoryLimit: 1, spillDir },
    );
    const rows = await duckRows(`SELECT k, count(*) AS n FROM ${F} GROUP BY k ORDER BY k LIMIT 2`);
    expect(r.toRows().map((x) => [String(x.k), String(x.n)])).toEqual(rows.map((x) => x.map(String)));
  });
});

describe('an all-equal sort value under a tiny budget', () => {
  it("is dealt over every range, spilled and read back: DuckDB's rows, no range holds much more than its share", async () => {
    const out = file('equal.parquet');
    const q = { op: 'sort', by: [{ column: 'c' }], input: { op: 'scan', source: 'f' } };
    const r = await runPlan(
      { version: 1, sources, query: q, output: { path: out } },
      { workers: 2, inThreadBytes: 0, memoryLimit: 1, spillDir },
    );
    expect(r.stats.spilledBytes).toBeGreaterThan(0);
    expect(r.stats.spillReadBytes).toBeGreaterThan(0);
    const range = r.stats.shuffles.find((x) => x.id === 'sort-1.range')!;
    expect(range.partitions).toBeGreaterThan(8);
    expect(Math.max(...range.partitionRows)).toBeLessThan(2 * (40000 / range.partitions));
    expect(await expectFileMatchesQuery(out, `SELECT * FROM ${F}`)).toBe(40000);
    expect(leftovers()).toEqual([]);
  });
});
