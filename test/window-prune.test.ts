// Column pruning under a window: a window whose output columns are not all read above it emits only those read
// (plan/prune.ts `keep`), its tasks gather only those and its functions' arguments, and its shuffle carries only
// its keys, its arguments and the columns read above it. Against DuckDB on the pool, on the calling thread, with
// the hot partition split (the second pass emits the kept columns), and in --explain and --stats.
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { cli, expectSame, ourRun, tmpDir, writeParquet, writePlan } from './helpers.js';

const dir = tmpDir('sj-window-prune-');
const T = path.join(dir, 't.parquet');

beforeAll(async () => {
  // k: a hot key (half the rows) and nulls; pad, s: columns nobody above the window reads
  await writeParquet(
    T,
    `SELECT i::BIGINT AS id, CASE WHEN i % 2 = 0 THEN 0 WHEN i % 41 = 0 THEN NULL ELSE i % 300 END::INTEGER AS k,
      CASE WHEN i % 13 = 0 THEN NULL ELSE (i * 37) % 101 - 50 END::INTEGER AS x,
      ((i * 7919) % 20001 / 100)::DECIMAL(12,2) AS d, 'pad' || (i % 17) AS s, (i % 5)::INTEGER AS g
    FROM range(0, 12000) t(i)`,
    1500,
  );
});

const scan = { op: 'scan', source: 't' };
const window = (functions: object[]) => ({
  op: 'window',
  input: scan,
  partitionBy: ['k'],
  orderBy: [{ column: 'id' }],
  functions,
});
const plan = (query: object, execution: object = {}) => ({
  version: 1,
  sources: { t: { parquet: T } },
  query,
  execution,
});
const from = `FROM read_parquet('${T}')`;
const SPLIT = { partitions: 16, skew: { thresholdBytes: 1, advisoryPartitionBytes: '16KB' } };

// an aggregate reading one window column: the window emits none of its input's
const runningTotal = plan({
  op: 'aggregate',
  input: window([{ fn: 'sum', column: 'x', as: 'rs' }]),
  groupBy: [],
  aggregates: [
    { fn: 'count', as: 'n' },
    { fn: 'sum', column: 'rs', as: 'total' },
    { fn: 'max', column: 'rs', as: 'top' },
  ],
});
const runningTotalSql = `SELECT count(*) AS n, sum(rs) AS total, max(rs) AS top FROM (
  SELECT sum(x) OVER (PARTITION BY k ORDER BY id) AS rs ${from}) t`;

// an aggregate grouped by an input column (g), over a lag of d: the window emits g of its input
const byGroup = (execution: object = {}) =>
  plan(
    {
      op: 'aggregate',
      input: window([
        { fn: 'lag', column: 'd', as: 'prev' },
        { fn: 'row_number', as: 'rn' },
      ]),
      groupBy: ['g'],
      aggregates: [
        { fn: 'sum', column: 'prev', as: 'sp' },
        { fn: 'max', column: 'rn', as: 'mr' },
        { fn: 'count', column: 'prev', as: 'cp' },
      ],
    },
    execution,
  );
const byGroupSql = `SELECT g, sum(prev) AS sp, max(rn) AS mr, count(prev) AS cp FROM (
  SELECT g, lag(d) OVER (PARTITION BY k ORDER BY id) AS prev, row_number() OVER (PARTITION BY k ORDER BY id) AS rn ${from}) t
  GROUP BY g`;

describe('column pruning under a window', () => {
  it("an aggregate of one window column: the window emits none of its input's; DuckDB's answer", async () => {
    const r = await expectSame(runningTotal, runningTotalSql);
    expect(r.length).toBe(1);
    const s = (await ourRun(runningTotal)).stats;
    // the shuffle carries the keys and the argument only; the tasks emit no input column
    expect(s.windows?.[0]).toMatchObject({ id: 'window-1', emitted: [] });
    expect([...(s.windows?.[0].shuffled ?? [])].sort()).toEqual(['id', 'k', 'x']);
  });

  it('an input column read above it (grouped by) is emitted; lag of another column, on the pool and the calling thread', async () => {
    await expectSame(byGroup(), byGroupSql);
    await expectSame(byGroup(), byGroupSql, { inThreadBytes: Number.MAX_SAFE_INTEGER });
    const s = (await ourRun(byGroup())).stats;
    expect(s.windows?.[0].emitted).toEqual(['g']);
    expect([...(s.windows?.[0].shuffled ?? [])].sort()).toEqual(['d', 'g', 'id', 'k']);
  });

  it('the hot partition split into ranges: the second pass emits the kept columns', async () => {
    const split = byGroup(SPLIT);
    await expectSame(split, byGroupSql);
    const s = (await ourRun(split)).stats;
    expect(s.windows?.[0].splits.some((x) => x.method === 'ranges')).toBe(true);
    expect(s.windows?.[0].emitted).toEqual(['g']);
    await expectSame(plan(runningTotal.query, SPLIT), runningTotalSql);
  });

  it('a RANGE frame with offsets gathers its order key though it is not emitted; under a 64 KB budget', async () => {
    const q = plan({
      op: 'project',
      input: {
        op: 'window',
        input: scan,
        partitionBy: ['g'],
        orderBy: [{ column: 'x', desc: true }],
        functions: [
          {
            fn: 'sum',
            column: 'd',
            as: 'sd',
            frame: { unit: 'range', start: { preceding: 5 }, end: { following: 2 } },
          },
          { fn: 'max', column: 's', as: 'ms', frame: { unit: 'rows', start: { preceding: 3 }, end: 'current row' } },
        ],
      },
      columns: ['id', 'sd'],
    });
    await expectSame(
      q,
      `SELECT id, sum(d) OVER (PARTITION BY g ORDER BY x DESC NULLS LAST RANGE BETWEEN 5 PRECEDING AND 2 FOLLOWING) AS sd ${from}`,
    );
    await expectSame(
      q,
      `SELECT id, sum(d) OVER (PARTITION BY g ORDER BY x DESC NULLS LAST RANGE BETWEEN 5 PRECEDING AND 2 FOLLOWING) AS sd ${from}`,
      { memoryLimit: 64 * 1024, spillDir: path.join(dir, 'spill'), workers: 2, partitions: 4 },
    );
  });

  it('--explain names the input columns it emits', () => {
    const file = writePlan(dir, runningTotal);
    const r = cli([file, '--explain']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/window-1: window partition by \[k\] .*emits \[\] of its input/);
    const stats = path.join(dir, 'stats.json');
    const g = cli([writePlan(dir, byGroup(), 'g.json'), '--stats', stats]);
    expect(g.code, g.stderr).toBe(0);
    expect(JSON.parse(fs.readFileSync(stats, 'utf8')).windows[0].emitted).toEqual(['g']);
  });
});
