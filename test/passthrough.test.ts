// The combiner's adaptive pass-through (agg/partial.ts passesThrough): the groups of a map task estimated from its
// first 16,384 rows, fitted on how many new groups the sample's second half brings, against the task's rows. On
// crafted key columns (uniform over more groups than the sample and fewer than the task, a key per row, keys far
// more than the task's rows, runs of a key in file order, near the line), then a query whose combiners now
// aggregate where the sample alone looked all-distinct, against DuckDB.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { compileSql, runPlan } from '../dist/index.js';
import { groupsOf } from '../dist/agg/aggregate.js';
import { estimatedGroups, passesThrough, sampleGroupsOf } from '../dist/agg/partial.js';
import type { Batch } from '../dist/kernels/column.js';
import { expectSame, tmpDir, writeParquet } from './helpers.js';

/** A batch of one int64 key column. */
function keys(n: number, key: (i: number) => number): Batch {
  const v = new BigInt64Array(n);
  for (let i = 0; i < n; i++) v[i] = BigInt(key(i));
  return { length: n, columns: [{ type: { id: 'int64' }, length: n, values: v, valid: null }] };
}

/** Deterministic uniform draws in [0, m) (a 32-bit xorshift). */
function uniform(m: number, seed = 7): (i: number) => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % m;
  };
}

/** The decision for a task of `rows` rows whose rows are `key`, and the sizes of the samples grouped. */
function decide(rows: number, key: (i: number) => number) {
  const task = keys(rows, key);
  const head = keys(Math.min(rows, 16384), (i) => Number((task.columns[0].values as BigInt64Array)[i]));
  const looked: number[] = [];
  const pass = passesThrough(
    head,
    (sample) => {
      looked.push(sample.length);
      return sampleGroupsOf(groupsOf(sample, [0]), sample.length);
    },
    rows,
  );
  const all = groupsOf(task, [0]).nGroups;
  const sample = groupsOf(head, [0]).nGroups;
  return { pass, looked, groups: all, sampleRatio: sample / head.length };
}

describe('the pass-through decision on crafted key columns', () => {
  it('uniform over 30,000 groups in a 500K-row task: the sample looks distinct, the task halves: it aggregates', () => {
    const d = decide(500_000, uniform(30_000));
    expect(d.sampleRatio).toBeGreaterThan(0.5); // the sample's own ratio passed these rows through
    expect(d.groups / 500_000).toBeLessThan(0.1);
    expect(d.pass).toBe(false);
    expect(d.looked).toEqual([4096, 16384]);
  });

  it('the estimate follows the task: uniform over 30K, 90K and 400K groups, within 10%', () => {
    for (const D of [30_000, 90_000, 400_000]) {
      const rows = 200_000,
        draw = uniform(D, D);
      const task = keys(rows, draw);
      const truth = groupsOf(task, [0]).nGroups;
      const head = keys(16384, (i) => Number(task.columns[0].values[i]));
      const s = sampleGroupsOf(groupsOf(head, [0]), 16384);
      const est = estimatedGroups(16384, s.groups, s.firstHalf, rows);
      expect(Math.abs(est - truth) / truth).toBeLessThan(0.1);
    }
  });

  it('a key per row passes through on the first look (4,096 rows grouped, not 16,384)', () => {
    const d = decide(100_000, (i) => i * 7919);
    expect(d.pass).toBe(true);
    expect(d.looked).toEqual([4096]);
  });

  it('keys far more than the task rows (10M uniform, 200K rows) pass through on the first look', () => {
    const d = decide(200_000, uniform(10_000_000));
    expect(d.groups / 200_000).toBeGreaterThan(0.98);
    expect(d.pass).toBe(true);
    expect(d.looked).toEqual([4096]);
  });

  it('aggregate by key at s = 0 (100K uniform keys, 125K-row tasks, 0.57 groups a row) passes on the first look', () => {
    const d = decide(125_000, uniform(100_000));
    expect(d.groups / 125_000).toBeGreaterThan(0.55);
    expect(d.pass).toBe(true);
    expect(d.looked).toEqual([4096]);
  });

  it('near the task line (a tenth of the rows in groups) the whole sample decides, either way', () => {
    const above = decide(150_000, uniform(20_000)); // 0.13 groups a row: passes through
    expect(above.groups / 150_000).toBeGreaterThan(0.12);
    expect(above).toMatchObject({ pass: true, looked: [4096, 16384] });
    const below = decide(300_000, uniform(20_000)); // 0.07: aggregates
    expect(below.groups / 300_000).toBeLessThan(0.07);
    expect(below.sampleRatio).toBeGreaterThan(0.5);
    expect(below).toMatchObject({ pass: false, looked: [4096, 16384] });
  });

  it('runs of a key in file order that never recur: judged on the sample ratio, as the task holds', () => {
    // 1.4 rows a key on average (0.71 groups a row everywhere): the halves bring as many new groups each
    const sparse = decide(300_000, (i) => Math.floor(i / 1.4));
    expect(sparse.groups / 300_000).toBeGreaterThan(0.7);
    expect(sparse.pass).toBe(true);
    // 3 rows a key: the sample halves, and so does the task
    const dense = decide(300_000, (i) => Math.floor(i / 3));
    expect(dense.pass).toBe(false);
  });

  it('never passes through where the sample halves, whatever the task rows', () => {
    const draw = uniform(1 << 30, 11);
    for (let t = 0; t < 2000; t++) {
      const n = 4096 + (draw(0) % 12289),
        d = 1 + (draw(0) % n),
        d1 = Math.min(d, Math.ceil(d / 2) + (draw(0) % (Math.floor(d / 2) + 1)));
      const rows = n + (draw(0) % 1_000_000);
      const est = estimatedGroups(n, d, d1, rows);
      expect(est).toBeLessThanOrEqual((d * rows) / n + 1e-6);
      expect(est).toBeGreaterThanOrEqual(d - 1e-6);
    }
  });

  it('a task under 4,096 rows aggregates', () => {
    expect(decide(3000, (i) => i).pass).toBe(false);
  });
});

describe('combiners that aggregate where the sample looked distinct', () => {
  const dir = tmpDir('sj-passthrough-');
  const T = path.join(dir, 't.parquet');
  beforeAll(async () => {
    // two row groups (map tasks) of 250,000 rows (each read as batches of 131,072 and the rest) over 20,000
    // (k, flag) groups: 0.68 groups a row in the first 16,384, 0.08 in a task; k and flag's short codes are two int32
    // columns grouped as one word (agg/group-ids.ts); each batch holds most groups: the batches aggregated at once
    await writeParquet(
      T,
      `SELECT (hash(i) % 6667)::INTEGER AS k, ['A', 'N', 'R'][1 + (hash(i * 3 + 1) % 3)::INTEGER] AS flag,
        CASE WHEN i % 13 = 0 THEN NULL ELSE (i % 50)::INTEGER END AS q, (i % 17) * 1.25::DOUBLE AS f,
        ((i * 7919) % 100000 / 100)::DECIMAL(15,2) AS p, (i % 11 / 100)::DECIMAL(15,2) AS disc
      FROM range(0, 500000) t(i)`,
      250_000,
    );
  });
  const opts = { workers: 2, partitions: 4, inThreadBytes: 0 };

  it('aggregate by (k, flag): every map task aggregates, the answer is DuckDB’s', async () => {
    const plan = {
      version: 1,
      sources: { t: { parquet: T } },
      query: {
        op: 'aggregate',
        input: { op: 'scan', source: 't' },
        groupBy: ['k', 'flag'],
        aggregates: [
          { fn: 'count', as: 'n' },
          { fn: 'sum', column: 'q', as: 'sq' },
          { fn: 'avg', column: 'f', as: 'af' },
          { fn: 'max', column: 'q', as: 'mq' },
        ],
      },
    };
    await expectSame(
      plan,
      `SELECT k, flag, count(*), sum(q), avg(f), max(q) FROM read_parquet('${T}') GROUP BY k, flag`,
      opts,
    );
    const r = await runPlan(plan, { ...opts, writeOutput: false });
    const c = r.stats.shuffles[0].combine!;
    expect(c).toMatchObject({ rowsBefore: 500_000, partialTasks: 2, passThroughTasks: 0 });
    expect(c.rowsAfter).toBeLessThanOrEqual(40_002);
  });

  it('a sum of a decimal product (narrowed to 64-bit lanes before the combiner) over batches aggregated at once', async () => {
    const text = `SELECT k, flag, sum(p * (1 - disc)) AS s, avg(p) AS a, count(*) AS n FROM t GROUP BY k, flag`;
    const plan = await compileSql(text, { sources: { t: T } });
    await expectSame(plan, text.replace('FROM t', `FROM read_parquet('${T}')`), opts);
    const r = await runPlan(plan, { ...opts, writeOutput: false });
    expect(r.stats.shuffles[0].combine).toMatchObject({ rowsBefore: 500_000, partialTasks: 2, passThroughTasks: 0 });
  });

  it('count(DISTINCT) of an int32 column without nulls (its pairs with the group ids hashed as one word) and with nulls', async () => {
    const text = `SELECT flag, count(DISTINCT k) AS dk, count(*) AS n FROM t GROUP BY flag`;
    const plan = await compileSql(text, { sources: { t: T } });
    await expectSame(plan, text.replace('FROM t', `FROM read_parquet('${T}')`), opts);
    await expectSame(plan, text.replace('FROM t', `FROM read_parquet('${T}')`), { ...opts, combiners: false });
    const nulls = `SELECT flag, count(DISTINCT q) AS dq FROM t GROUP BY flag`;
    const plan2 = await compileSql(nulls, { sources: { t: T } });
    await expectSame(plan2, nulls.replace('FROM t', `FROM read_parquet('${T}')`), { ...opts, combiners: false });
  });

  it('GROUP BY ROLLUP (k, flag): its partial aggregate aggregates, the answer is DuckDB’s', async () => {
    const text = `SELECT k, flag, count(*) AS c, sum(q) AS s FROM t GROUP BY ROLLUP (k, flag)`;
    const plan = await compileSql(text, { sources: { t: T } });
    await expectSame(
      plan,
      `SELECT k, flag, count(*) AS c, sum(q) AS s FROM read_parquet('${T}') GROUP BY ROLLUP (k, flag)`,
      opts,
    );
    const r = await runPlan(plan, { ...opts, writeOutput: false });
    const first = r.stats.shuffles.find((s) => s.combine?.rowsBefore === 500_000)!;
    expect(first.combine).toMatchObject({ partialTasks: 2, passThroughTasks: 0 });
    expect(first.combine!.rowsAfter).toBeLessThanOrEqual(40_002);
  });
});

describe('a reduce task of several partitions aggregates each on its own (physical/aggregate/source.ts)', () => {
  const dir = tmpDir('sj-byparts-');
  const T = path.join(dir, 't.parquet');
  beforeAll(async () => {
    // two row groups (map tasks): the first a key per row (its combiner passes the rows through), the second 1,000
    // keys that the first holds too (its combiner aggregates): a partition holds states beside rows of one group
    await writeParquet(
      T,
      `SELECT (CASE WHEN i < 100000 THEN i ELSE i % 1000 END)::BIGINT AS k,
        CASE WHEN i % 11 = 0 THEN NULL ELSE (i % 37)::INTEGER END AS q,
        ['x', 'yy', 'zzz', NULL][1 + (i % 4)::INTEGER] AS s
      FROM range(0, 200000) t(i)`,
      100_000,
    );
  });
  const opts = { workers: 2, partitions: 16, inThreadBytes: 0 };
  const sql = (from: string) =>
    `SELECT k, count(*) AS n, sum(q) AS sq, avg(q) AS aq, min(s) AS mn, max(s) AS mx FROM ${from} GROUP BY k`;

  it('states and passed-through rows, partition by partition: DuckDB’s answer, the reduce tasks spanning partitions', async () => {
    const plan = await compileSql(sql('t'), { sources: { t: T } });
    await expectSame(plan, sql(`read_parquet('${T}')`), opts);
    const r = await runPlan(plan, { ...opts, writeOutput: false });
    expect(r.stats.shuffles[0].combine).toMatchObject({ partialTasks: 1, passThroughTasks: 1 });
    const reduces = r.stats.tasks.filter(
      (t) => t.kind === 'reduce' && t.stage === r.stats.shuffles[0].id.split('.')[0],
    );
    expect(reduces.some((t) => (t.partitions?.length ?? 0) > 1)).toBe(true);
    expect(reduces.reduce((s, t) => s + t.outputRows, 0)).toBe(100_000);
  });

  it('without combiners, and a distinct count (rows only, partition by partition)', async () => {
    const plan = await compileSql(sql('t'), { sources: { t: T } });
    await expectSame(plan, sql(`read_parquet('${T}')`), { ...opts, combiners: false });
    const text = (from: string) =>
      `SELECT k % 500 AS g, count(DISTINCT q) AS dq, count(*) AS n FROM ${from} GROUP BY g`;
    const distinct = await compileSql(text('t'), { sources: { t: T } });
    await expectSame(distinct, text(`read_parquet('${T}')`), opts);
  });
});
