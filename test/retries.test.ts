// Retries of every task kind (faults.test.ts covers join and aggregate map and
// reduce tasks): a worker that dies (SKEWJOIN_FAULTS) in a skew split task, a
// grace cut and a grace piece, a sort's range and run tasks, a task encoding
// Parquet output, and a reduce task whose input was spilled. Each run must give
// DuckDB's answer and show the failed attempt and its successful retry.
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type RunOptions, type RunResult, type TaskStats, runPlan } from '../dist/index.js';
import { arrowTyped, duckTable, expectFileMatchesQuery, expectTypedEqual, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-retries-');
const f = (n: string) => path.join(dir, n);
const spillDir = f('spill');

beforeAll(async () => {
  // key 7 on 20% of the left rows: hot, so that a forced skew test splits it by key
  await writeParquet(
    f('left.parquet'),
    `SELECT i::BIGINT AS id,
      CASE WHEN i % 5 = 0 THEN 7 ELSE hash(i) % 300 END::BIGINT AS k, 'l' || (i % 13) AS s
    FROM range(0, 2000) t(i)`,
    250,
  );
  await writeParquet(
    f('right.parquet'),
    `SELECT CASE WHEN i % 8 = 0 THEN 7 ELSE hash(i * 7) % 250 END::BIGINT AS k,
    (i * 3)::BIGINT AS w FROM range(0, 400) t(i)`,
    100,
  );
  // 40,000 rows in one row group: one task whose output (above 2^15 rows) it encodes as Parquet itself
  await writeParquet(
    f('wide.parquet'),
    `SELECT i::BIGINT AS id, (i % 1000)::BIGINT AS k, 'w' || (i % 31) AS s
    FROM range(0, 40000) t(i)`,
    40000,
  );
});

const sources = {
  l: { parquet: f('left.parquet') },
  r: { parquet: f('right.parquet') },
  wide: { parquet: f('wide.parquet') },
};
const L = `read_parquet('${f('left.parquet')}')`,
  R = `read_parquet('${f('right.parquet')}')`;
const join = {
  op: 'join',
  type: 'inner',
  on: [['k', 'k']],
  left: { op: 'scan', source: 'l' },
  right: { op: 'scan', source: 'r' },
};
const joinSql = `SELECT a.*, b.k AS k_right, b.w FROM ${L} a JOIN ${R} b ON a.k = b.k`;
const POOL: RunOptions = { workers: 2, partitions: 4, broadcastBytes: 0, inThreadBytes: 0 };
const SPLIT = { factor: 1, thresholdBytes: 1, advisoryPartitionBytes: 16384 };

/** Run with SKEWJOIN_FAULTS set to `rules`, compare with DuckDB (types and rows), return the run. */
async function crashing(rules: string, query: object, sql: string, opts: RunOptions, ordered = false) {
  process.env.SKEWJOIN_FAULTS = rules;
  let r: RunResult;
  try {
    r = await runPlan({ version: 1, sources, query }, { baseDir: dir, writeOutput: false, ...opts });
  } finally {
    delete process.env.SKEWJOIN_FAULTS;
  }
  expectTypedEqual(arrowTyped(r.toArrow()), await duckTable(sql), ordered);
  return r;
}

/**
 * The failed attempts of the tasks that match, and their retries. The rule kills one task's worker on its first
 * attempt. A thread holds two tasks (pool.ts) and runs them in turn: the one it ran before the killed one, whose
 * result had not reached the coordinator when the thread died, fails with it (two failed attempts in about one run
 * in three here), and so may a retry that ran just before another rule's kill (then its task's next attempt is its
 * third). So one or two attempts fail, each with the worker's exit, at least one of them a first attempt, and each
 * failed task succeeds once, on a later attempt, with the same partition and split.
 */
function expectRetried(r: RunResult, match: (t: TaskStats) => boolean, what: string): TaskStats {
  const ts = r.stats.tasks.filter(match);
  const failed = ts.filter((t) => t.error !== undefined);
  expect(failed.length, what).toBeGreaterThanOrEqual(1);
  expect(failed.length, what).toBeLessThanOrEqual(2);
  expect(
    failed.some((f) => f.attempt === 1),
    what,
  ).toBe(true);
  const retries = failed.map((f) => {
    expect(f.error, what).toBe('worker exited with code: 1');
    const again = ts.filter(
      (t) => t.attempt > f.attempt && t.error === undefined && t.partition === f.partition && t.split === f.split,
    );
    expect(again.length, what).toBe(1);
    return again[0];
  });
  return retries[0];
}

describe("a worker dying in a task of each kind: the task runs again and the answer is DuckDB's", () => {
  it("a hot-key split task and a join task of a hot key's pieces", async () => {
    const opts = { ...POOL, skew: { ...SPLIT, strategy: 'key' as const } };
    const r = await crashing('crash:join-1:split:0:once,crash:join-1:reduce:1:once', join, joinSql, opts);
    expect(r.stats.joins[0].splits.some((s) => s.method === 'hot-key')).toBe(true);
    expect(expectRetried(r, (t) => t.kind === 'split', 'split').split).toMatch(/cut/);
    expectRetried(r, (t) => t.kind === 'reduce', 'reduce');
  });

  it("a map-range split's join task", async () => {
    const opts = { ...POOL, skew: { ...SPLIT, strategy: 'partition' as const } };
    const r = await crashing('crash:join-1:reduce:0:once', join, joinSql, opts);
    expect(r.stats.joins[0].splits.some((s) => s.method === 'map-range')).toBe(true);
    expectRetried(r, (t) => t.kind === 'reduce', 'reduce');
  });

  it('a grace cut, and a grace piece reading spilled input', async () => {
    const opts = { ...POOL, memoryLimit: '8KB', spillDir, skew: { enabled: false } };
    const r = await crashing('crash:join-1:split:0:once,crash:join-1:reduce:0:once', join, joinSql, opts);
    expect(expectRetried(r, (t) => t.kind === 'split', 'grace cut').split).toMatch(/^grace (left|right) chunk/);
    const piece = expectRetried(r, (t) => t.kind === 'reduce', 'grace piece');
    expect(piece.split).toMatch(/grace piece/);
    expect(piece.spillReadBytes).toBeGreaterThan(0); // it read its spilled input again
  });

  it('a reduce task and an aggregate task whose inputs were spilled (a 1-byte budget)', async () => {
    const aggregates = [
      { fn: 'count', as: 'n' },
      { fn: 'sum', column: 'w', as: 'sw' },
    ];
    const q = { op: 'aggregate', groupBy: ['s'], aggregates, input: join };
    const sql = `SELECT s, count(*) AS n, sum(w) AS sw FROM (${joinSql}) GROUP BY s`;
    const opts = { ...POOL, eagerAggregation: false, memoryLimit: 1, spillDir };
    const r = await crashing('crash:join-1:reduce:0:once,crash:aggregate-1:reduce:0:once', q, sql, opts);
    for (const stage of ['join-1', 'aggregate-1']) {
      const t = expectRetried(r, (x) => x.stage === stage && x.kind === 'reduce', stage);
      expect(t.spillReadBytes, stage).toBeGreaterThan(0);
    }
  });

  it("a sort's range task and a sorted run, in a spilled sort", async () => {
    const q = { op: 'sort', by: [{ column: 's' }, { column: 'id', desc: true }], input: { op: 'scan', source: 'l' } };
    const sql = `SELECT * FROM ${L} ORDER BY s, id DESC`;
    const r = await crashing(
      'crash:sort-1:map:1:once,crash:sort-1:reduce:1:once',
      q,
      sql,
      { ...POOL, memoryLimit: 1, spillDir },
      true,
    );
    expect(r.stats.shuffles.some((s) => s.id === 'sort-1.range' && s.partitions > 2)).toBe(true);
    const range = expectRetried(r, (t) => t.stage === 'sort-1' && t.kind === 'map', 'range');
    expect(range.spillReadBytes).toBeGreaterThan(0);
    expectRetried(r, (t) => t.stage === 'sort-1' && t.kind === 'reduce', 'run');
  });

  it('a task encoding its rows as Parquet output', async () => {
    const q = { op: 'filter', where: { column: 'k', cmp: '<', value: 900 }, input: { op: 'scan', source: 'wide' } };
    const out = f('encoded.parquet');
    process.env.SKEWJOIN_FAULTS = 'crash:output:map:0:once,crash:filter-1:map:0:once,crash:scan-1:map:0:once';
    let r: RunResult;
    try {
      r = await runPlan({ version: 1, sources, query: q, output: { path: out } }, { baseDir: dir, ...POOL });
    } finally {
      delete process.env.SKEWJOIN_FAULTS;
    }
    expect(r.stats.tasks.length).toBe(2); // the one map task, twice
    expectRetried(r, () => true, 'the encoding task');
    const sql = `SELECT * FROM read_parquet('${f('wide.parquet')}') WHERE k < 900`;
    expect(await expectFileMatchesQuery(out, sql)).toBe(36000);
    fs.rmSync(out);
  });
});
