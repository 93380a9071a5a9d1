// Sibling aggregates over one table computed by one scan (plan/siblings.ts) against DuckDB: different filters (one
// keeping no row of some groups, one keeping none at all), different columns, groups with a null key, a global
// aggregate, two semi joins against the siblings fused into one (TPC-H q21's shape), and a tiny memory budget.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runPlan } from '../dist/index.js';
import { expectSame, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-siblings-');
const T = path.join(dir, 't.parquet'),
  O = path.join(dir, 'o.parquet');

beforeAll(async () => {
  await writeParquet(
    T,
    `SELECT CASE WHEN i % 101 = 0 THEN NULL ELSE i % 500 END::BIGINT AS k, (i * 7 % 13)::INTEGER AS a,
       CASE WHEN i % 9 = 0 THEN NULL ELSE ((i * 37) % 2001 - 1000) / 100 END::DECIMAL(12,2) AS b,
       (i % 11) * 0.25::DOUBLE AS c, DATE '2020-01-01' + (i % 60)::INTEGER AS d, DATE '2020-01-01' + (i % 47)::INTEGER AS e,
       CASE WHEN i % 5 = 0 THEN 'F' ELSE 'O' END AS flag
     FROM range(0, 20000) t(i)`,
    3000,
  );
  await writeParquet(O, `SELECT i::BIGINT AS ok, i % 7 AS grp FROM range(0, 520) t(i)`, 3000);
});

const scan = (columns: string[]) => ({ op: 'scan', source: 't', columns });
const late = { left: { column: 'd' }, cmp: '>', right: { column: 'e' } };
const agg = (input: object, aggregates: object[], groupBy = ['k']) => ({ op: 'aggregate', groupBy, aggregates, input });
const rename = (input: object, from: string, to: string, others: string[]) => ({
  op: 'project',
  columns: [{ name: to, column: from }, ...others],
  input,
});
const plan = (query: object) => ({ version: 1, sources: { t: { parquet: T }, o: { parquet: O } }, query });
const stages = async (q: object, opts = {}) => {
  const r = await runPlan(q, { workers: 2, partitions: 4, writeOutput: false, ...opts });
  return { r, stages: [...new Set(r.stats.tasks.map((t) => t.stage))] };
};

describe('sibling aggregates over one table', () => {
  // all rows: min and max of a; late rows (d > e): sum of b, count, avg of c; flag F rows: count of b
  const all = agg(scan(['k', 'a']), [
    { fn: 'min', column: 'a', as: 'mina' },
    { fn: 'max', column: 'a', as: 'maxa' },
  ]);
  const lateOnes = agg({ op: 'filter', where: late, input: scan(['k', 'b', 'c', 'd', 'e']) }, [
    { fn: 'sum', column: 'b', as: 'sb' },
    { fn: 'count', as: 'n' },
    { fn: 'avg', column: 'c', as: 'ac' },
  ]);
  const flagged = agg(
    { op: 'filter', where: { column: 'flag', cmp: '=', value: 'F' }, input: scan(['k', 'b', 'flag']) },
    [{ fn: 'count', column: 'b', as: 'nb' }],
  );
  const T_ = `read_parquet('${T}')`;

  it("read in three places by left joins are kept apart, with DuckDB's answer", async () => {
    // left joins: a group a sibling's filter kept no row of is missing from its side (nulls here)
    const q = plan({
      op: 'join',
      type: 'left',
      on: [['k', 'k3']],
      left: {
        op: 'join',
        type: 'left',
        on: [['k', 'k2']],
        left: all,
        right: rename(lateOnes, 'k', 'k2', ['sb', 'n', 'ac']),
      },
      right: rename(flagged, 'k', 'k3', ['nb']),
    });
    const sql = `SELECT * FROM (SELECT k, min(a), max(a) FROM ${T_} GROUP BY k) x
      LEFT JOIN (SELECT k AS k2, sum(b), count(*), avg(c) FROM ${T_} WHERE d > e GROUP BY k) y ON k = k2
      LEFT JOIN (SELECT k AS k3, count(b) FROM ${T_} WHERE flag = 'F' GROUP BY k) z ON k = k3`;
    await expectSame(q, sql, { workers: 2, partitions: 4 });
    const { stages: s } = await stages(q);
    // read in three places (not semi joins made one): kept apart, a merged one would be held for its other readers
    expect(s.filter((x) => x.startsWith('aggregate-')).sort()).toEqual(['aggregate-1', 'aggregate-2', 'aggregate-3']);
  });

  it('a filter keeping no row at all, and global aggregates', async () => {
    const none = { op: 'filter', where: { column: 'a', cmp: '>', value: 100 }, input: scan(['k', 'a', 'b']) };
    const q = plan({
      op: 'join',
      type: 'inner',
      on: [],
      left: agg(scan(['k', 'b']), [{ fn: 'sum', column: 'b', as: 'sb' }], []),
      right: agg(
        none,
        [
          { fn: 'count', as: 'n' },
          { fn: 'max', column: 'b', as: 'mb' },
        ],
        [],
      ),
    });
    await expectSame(
      q,
      `SELECT * FROM (SELECT sum(b) FROM ${T_}) x, (SELECT count(*), max(b) FROM ${T_} WHERE a > 100) y`,
      {
        workers: 2,
      },
    );
    const grouped = plan({
      op: 'join',
      type: 'left',
      on: [['k', 'k2']],
      left: all,
      right: rename(agg(none, [{ fn: 'count', as: 'n' }]), 'k', 'k2', ['n']),
    });
    await expectSame(
      grouped,
      `SELECT * FROM (SELECT k, min(a), max(a) FROM ${T_} GROUP BY k) x
        LEFT JOIN (SELECT k AS k2, count(*) FROM ${T_} WHERE a > 100 GROUP BY k) y ON k = k2`,
      { workers: 2, partitions: 3 },
    );
  });

  it('two semi joins against them are one (q21), spilled under a tiny budget too', async () => {
    const q = plan({
      op: 'join',
      type: 'semi',
      on: [['ok', 'k']],
      left: {
        op: 'join',
        type: 'semi',
        on: [['ok', 'k']],
        left: { op: 'scan', source: 'o' },
        right: { op: 'filter', where: { left: { column: 'mina' }, cmp: '<', right: { column: 'maxa' } }, input: all },
      },
      right: { op: 'filter', where: { column: 'n', cmp: '>=', value: 30 }, input: lateOnes },
    });
    const sql = `SELECT * FROM read_parquet('${O}') WHERE ok IN (SELECT k FROM ${T_} GROUP BY k HAVING min(a) < max(a))
      AND ok IN (SELECT k FROM ${T_} WHERE d > e GROUP BY k HAVING count(*) >= 30)`;
    const rows = await expectSame(q, sql, { workers: 2, partitions: 4 });
    expect(rows.length).toBeGreaterThan(10);
    expect(rows.length).toBeLessThan(500);
    const { r, stages: s } = await stages(q);
    // one semi join left, the aggregate read once (not held for a second reader)
    expect(r.stats.joins.filter((j) => j.type === 'semi').length).toBe(1);
    expect(s.filter((x) => x.startsWith('aggregate-')).sort()).toEqual(['aggregate-1.siblings']);
    expect(r.stats.repeats ?? []).toEqual([]);
    const tiny = { workers: 2, partitions: 4, memoryLimit: 64 * 1024, broadcastBytes: 0 };
    await expectSame(q, sql, tiny);
    expect((await stages(q, tiny)).r.stats.spilledBytes).toBeGreaterThan(0);
  });

  it('leaves siblings over different group columns or a holistic function apart', async () => {
    const byA = agg(scan(['k', 'a']), [{ fn: 'count', as: 'n' }], ['a']);
    const median = agg({ op: 'filter', where: late, input: scan(['k', 'c', 'd', 'e']) }, [
      { fn: 'median', column: 'c', as: 'mc' },
    ]);
    for (const right of [byA, median]) {
      const q = plan({ op: 'join', type: 'inner', on: [], left: all, right });
      const { stages: s } = await stages(q);
      expect(s.some((x) => x.endsWith('.siblings'))).toBe(false);
    }
  });
});
