// Joins written in SQL (issue 38, item 6): an inner join's ON split at AND as
// WHERE is (equalities between the sides are keys, the rest filters), an outer
// join's other conjuncts kept where SQL's meaning holds or refused, and a cross
// join's output cut into tasks that fit the memory budget.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PlanError, compileSql, explainPlan, loadPlan, runSql } from '../dist/index.js';
import { duckRows, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-sql-joins-');
const file = (n: string) => path.join(dir, `${n}.parquet`);
const sources = { fact: file('fact'), dim: file('dim'), a: file('a'), b: file('b') };

beforeAll(async () => {
  await writeParquet(
    file('fact'),
    `SELECT (i % 50)::BIGINT AS f_k1, (i % 7)::BIGINT AS f_k2, i::BIGINT AS v, (i % 19)::DOUBLE / 2 AS fx FROM range(0, 5000) r(i)`,
    1000,
  );
  await writeParquet(
    file('dim'),
    `SELECT (i % 50)::BIGINT AS d_k1, CASE WHEN i % 11 = 0 THEN NULL ELSE i % 7 END::BIGINT AS d_k2, 'n' || i AS name, (i % 9)::BIGINT AS x FROM range(0, 350) r(i)`,
    100,
  );
  await writeParquet(file('a'), `SELECT i::BIGINT AS v FROM range(0, 3000) r(i)`, 1000);
  await writeParquet(file('b'), `SELECT i::BIGINT AS w, 'w' || (i % 3) AS s FROM range(0, 800) r(i)`, 200);
});

/** The query in DuckDB, its tables read from the same files. */
const duckOf = (q: string) =>
  duckRows(q.replace(/\b(fact|dim|a|b) (f|d|a|b)\b/g, (_, t, al) => `read_parquet('${file(t)}') ${al}`));
const ours = async (q: string, opts: object = {}) =>
  (await runSql(q, { sources, workers: 2, ...opts })).toRows().map((r) => Object.values(r).map(String));
const sortRows = (rows: unknown[][]) => rows.map((r) => JSON.stringify(r.map(String))).sort();

describe('an inner join ON several equalities (issue 38)', () => {
  const Q = 'SELECT count(*) AS n FROM fact f JOIN dim d ON f.f_k1 = d.d_k1 AND f.f_k2 = d.d_k2';
  it('is a hash join on two keys, not a cross join and a filter', async () => {
    const text = explainPlan(await loadPlan(await compileSql(Q, { sources })));
    expect(text).toMatch(/inner hash join on f_k1 = d_k1 and f_k2 = d_k2/);
    expect(text).not.toMatch(/cross join/);
    expect(await ours(Q)).toEqual((await duckOf(Q)).map((r) => r.map(String)));
  });

  it('other conjuncts of ON: on one side pushed to its scan, across the sides a filter of the join', async () => {
    const q =
      'SELECT d.name, count(*) AS n, sum(f.v) AS s FROM fact f JOIN dim d ' +
      'ON f.f_k1 = d.d_k1 AND d.x > 2 AND f.v + d.x > 100 AND f.f_k2 = d.d_k2 GROUP BY d.name';
    const text = explainPlan(await loadPlan(await compileSql(q, { sources })));
    expect(text).toMatch(/inner hash join on f_k1 = d_k1 and f_k2 = d_k2/);
    expect(sortRows(await ours(q, { broadcastBytes: 0, inThreadBytes: 0 }))).toEqual(sortRows(await duckOf(q)));
  });
});

describe('an equality between a float and an exact number across tables (found by the SQL fuzzer)', () => {
  it("is a filter, not a join key the plan refuses: DuckDB's answer", async () => {
    for (const q of [
      'SELECT count(*) AS n, sum(f.v) AS s FROM fact f JOIN dim d ON f.fx = d.x',
      'SELECT f.v, d.name FROM fact f, dim d WHERE f.f_k1 = d.d_k1 AND f.fx = d.d_k2',
    ]) {
      expect(sortRows(await ours(q, { broadcastBytes: 0 }))).toEqual(sortRows(await duckOf(q)));
    }
  });
});

describe('an outer join ON more than equalities', () => {
  it("a condition on the side whose unmatched rows are dropped filters that side before the join: DuckDB's rows", async () => {
    for (const q of [
      'SELECT f.v, d.name FROM fact f LEFT JOIN dim d ON f.f_k1 = d.d_k1 AND f.f_k2 = d.d_k2 AND d.x > 4 WHERE f.v < 400',
      'SELECT f.v, d.name FROM dim d RIGHT JOIN fact f ON d.d_k2 = f.f_k2 AND d.d_k1 = f.f_k1 AND d.x < 3 WHERE f.v < 400',
    ]) {
      expect(sortRows(await ours(q, { broadcastBytes: 0 }))).toEqual(sortRows(await duckOf(q)));
    }
  });

  it('a condition on the preserved side or across both sides is refused, not made a WHERE filter', async () => {
    for (const [q, at] of [
      ['SELECT f.v, d.name FROM fact f LEFT JOIN dim d ON f.f_k1 = d.d_k1 AND f.v > 10', 'f.v > 10'],
      ['SELECT f.v, d.name FROM fact f LEFT JOIN dim d ON f.f_k1 = d.d_k1 AND f.v > d.x', 'f.v > d.x'],
      ['SELECT f.v, d.name FROM fact f FULL JOIN dim d ON f.f_k1 = d.d_k1 AND d.x > 1', 'd.x > 1'],
    ]) {
      const e = await compileSql(q, { sources }).catch((x) => x);
      expect(e).toBeInstanceOf(PlanError);
      expect(e.message).toMatch(/this ON condition of a (LEFT|FULL) JOIN is not supported/);
      // pointed at the conjunct
      const col = Number(/column (\d+)/.exec(e.message)?.[1]);
      expect(col).toBeGreaterThan(q.indexOf(at));
      expect(col).toBeLessThanOrEqual(q.indexOf(at) + at.length);
    }
  });
});

describe('a cross join under a small budget', () => {
  it("is cut into tasks whose pairs fit the budget, and gives DuckDB's answer", async () => {
    const q = 'SELECT count(*) AS n, sum(a.v + b.w) AS s, min(b.s) AS m FROM a a CROSS JOIN b b WHERE a.v + b.w < 1500';
    const r = await runSql(q, {
      sources,
      workers: 2,
      inThreadBytes: 0,
      memoryLimit: '1MB',
      spillDir: tmpDir('sj-cross-spill-'),
    });
    expect(r.toRows().map((x) => Object.values(x).map(String))).toEqual((await duckOf(q)).map((x) => x.map(String)));
    const cross = r.stats.joins.find((j) => /^cross join/.test(j.reason))!;
    // 2.4M pairs of ~30 bytes: at most 256 KB of pairs a task, not 70 MB in one
    expect(cross.targetBytes).toBe(256 * 1024);
    expect(cross.tasks).toBeGreaterThan(100);
    const tasks = r.stats.tasks.filter((t) => t.stage === cross.id);
    expect(Math.max(...tasks.map((t) => t.rows))).toBeLessThan(3000 / 20 + 800);
  });

  it('a side without rows is one task, and a cross join with a scalar subquery still answers', async () => {
    const q1 = 'SELECT count(*) AS n FROM a a CROSS JOIN b b WHERE b.w < 0';
    const r1 = await runSql(q1, { sources, workers: 2, memoryLimit: '1MB', spillDir: tmpDir('sj-cross-spill-') });
    expect(r1.toRows().map((x) => String(x.n))).toEqual(['0']);
    expect(r1.stats.joins.find((j) => /^cross join/.test(j.reason))!.tasks).toBe(1);
    const q2 = 'SELECT count(*) AS n FROM a a WHERE a.v > (SELECT avg(b.w) FROM b b)';
    expect(await ours(q2, { memoryLimit: '1MB', spillDir: tmpDir('sj-cross-spill-') })).toEqual(
      (await duckOf(q2)).map((x) => x.map(String)),
    );
  });
});
