// Skew in aggregate shuffles (skew/aggregate.ts): a hot group's partition is
// aggregated in two levels, count_distinct included, with combiners on and
// off, under a tiny memory budget (grace pieces of the merge, spill files),
// against DuckDB; the statistics say which partition was split and no
// level-1 task reads much more than its planned rows.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type RunOptions, type RunResult, runPlan } from '../dist/index.js';
import { arrowTyped, cli, duckTable, expectTypedEqual, sql, tmpDir, writeParquet, writePlan } from './helpers.js';

const dir = tmpDir('sj-aggskew-');
const file = path.join(dir, 'facts.parquet');
const oneGroup = path.join(dir, 'one-group.parquet');
const T = `read_parquet('${file}')`;

beforeAll(async () => {
  // Key 7 holds about 60% of the rows, 5% of keys are null, the rest over 0..499.
  // d: many distinct values within the hot key (and nulls); v: integers with nulls; f: floats; s: strings; m: decimals with nulls.
  await writeParquet(
    file,
    `SELECT
      CASE WHEN i % 20 = 3 THEN NULL WHEN i % 5 < 3 THEN 7 ELSE hash(i) % 500 END::BIGINT AS k,
      CASE WHEN i % 17 = 0 THEN NULL ELSE (i * 7919) % 30000 END::BIGINT AS d,
      CASE WHEN i % 11 = 0 THEN NULL ELSE i % 1000 END::BIGINT AS v,
      (i % 97) / 8.0 AS f,
      CASE WHEN i % 13 = 0 THEN NULL ELSE ((i * 31) % 100000) / 100 END::DECIMAL(10,2) AS m,
      's' || (i % 37) AS s
    FROM range(0, 40000) t(i)`,
    2500,
  );
  // The same rows in one row group: one map task of 40,000 rows, whose first rows hold a (k, d) pair per row or so.
  await sql(`COPY (SELECT * FROM ${T}) TO '${oneGroup}' (FORMAT parquet, ROW_GROUP_SIZE 40000)`);
});

const ALL = [
  { fn: 'count_distinct', column: 'd', as: 'nd' },
  { fn: 'count', as: 'n' },
  { fn: 'count', column: 'v', as: 'nv' },
  { fn: 'sum', column: 'v', as: 'sv' },
  { fn: 'min', column: 's', as: 'mins' },
  { fn: 'max', column: 'v', as: 'maxv' },
  { fn: 'avg', column: 'f', as: 'af' },
  { fn: 'sum', column: 'm', as: 'sm' },
  { fn: 'avg', column: 'm', as: 'am' },
  { fn: 'max', column: 'm', as: 'maxm' },
];
const ALL_SQL =
  'count(DISTINCT d) AS nd, count(*) AS n, count(v) AS nv, sum(v) AS sv, min(s) AS mins, max(v) AS maxv, avg(f) AS af, sum(m) AS sm, avg(m) AS am, max(m) AS maxm';
const NO_DISTINCT = ALL.slice(1);
const NO_DISTINCT_SQL = ALL_SQL.replace('count(DISTINCT d) AS nd, ', '');

/** Low thresholds: the hot partition is skewed and larger than the target task size. */
const SKEW: RunOptions = {
  workers: 2,
  partitions: 8,
  inThreadBytes: 0,
  skew: { factor: 2, thresholdBytes: 1, advisoryPartitionBytes: 16 * 1024 },
};

function plan(aggregates: object[], source = file) {
  return {
    version: 1,
    sources: { t: { parquet: source } },
    query: { op: 'aggregate', input: { op: 'scan', source: 't' }, groupBy: ['k'], aggregates },
  };
}

async function run(aggregates: object[], sqlAggs: string, opts: RunOptions = {}, source = file): Promise<RunResult> {
  const r = await runPlan(plan(aggregates, source), { writeOutput: false, ...SKEW, ...opts });
  expectTypedEqual(arrowTyped(r.toArrow()), await duckTable(`SELECT k, ${sqlAggs} FROM ${T} GROUP BY k`));
  return r;
}

/**
 * The hot partition was split in two levels; level-1 tasks read at most 1.25x their planned rows (`bounded`:
 * unless blocks were spilled, which are read whole); a merge reads far fewer rows than the partition.
 */
function expectSplit(r: RunResult, cut: 'rows' | 'distinct', bounded = true) {
  const shuffle = r.stats.shuffles.find((s) => s.id === 'aggregate-1.input')!;
  const hot = shuffle.partitionRows.indexOf(Math.max(...shuffle.partitionRows));
  expect(shuffle.skewedPartitions).toContain(hot);
  const split = r.stats.aggregates[0].splits.find((s) => s.partition === hot)!;
  expect(split).toMatchObject({ method: 'two-level', cut });
  expect(split.pieces).toBeGreaterThan(1);
  const tasks = r.stats.tasks.filter((t) => t.stage === 'aggregate-1' && t.partition === hot);
  const pieces = tasks.filter((t) => t.split?.startsWith('two-level piece'));
  expect(pieces.length).toBeGreaterThan(1);
  if (bounded) for (const t of pieces) expect(t.rows).toBeLessThanOrEqual(1.25 * split.targetRows!);
  if (cut === 'distinct') {
    const cuts = tasks.filter((t) => t.kind === 'split' && t.split?.startsWith('two-level cut'));
    expect(cuts.length).toBeGreaterThan(1);
    if (bounded) for (const t of cuts) expect(t.rows).toBeLessThanOrEqual(split.targetRows!);
  }
  // the merge reads the level-1 states: far fewer rows than the partition
  const merges = tasks.filter((t) => t.split?.startsWith('two-level merge'));
  expect(merges.length).toBeGreaterThan(0);
  expect(merges.reduce((a, t) => a + t.rows, 0)).toBeLessThan(shuffle.partitionRows[hot]);
  // no task of the partition reads all its rows
  for (const t of tasks) expect(t.rows).toBeLessThan(shuffle.partitionRows[hot]);
}

describe('two-level aggregation of a skewed partition', () => {
  it.each([true, false])(
    'count_distinct with sum, min, max, avg, count by a hot key, nulls in key and argument (combiners %s)',
    async (combiners) => {
      const r = await run(ALL, ALL_SQL, { combiners });
      expectSplit(r, 'distinct');
    },
  );

  it('without count_distinct and combiners off: level 1 over row ranges', async () => {
    const r = await run(NO_DISTINCT, NO_DISTINCT_SQL, { combiners: false });
    expectSplit(r, 'rows');
  });

  it('without count_distinct, combiners remove the skew: nothing is split', async () => {
    const r = await run(NO_DISTINCT, NO_DISTINCT_SQL);
    expect(r.stats.shuffles[0].combine!.partialTasks).toBeGreaterThan(0);
    expect(r.stats.shuffles[0].skewedPartitions).toEqual([]);
    expect(r.stats.tasks.some((t) => t.split?.startsWith('two-level'))).toBe(false);
  });

  it('count_distinct from a map task that passed its rows through (a pair per row): split', async () => {
    const r = await run(ALL, ALL_SQL, {}, oneGroup);
    expect(r.stats.shuffles[0].combine).toMatchObject({ partialTasks: 0, passThroughTasks: 1 });
    expectSplit(r, 'distinct');
  });

  // Wide decimal states (sum of a decimal: decimal(38, s), two 64-bit lanes) spill and read back whole.
  it.each([true, false])(
    'a tiny memory budget: level-1 output spills and the merge is cut into grace pieces (combiners %s)',
    async (combiners) => {
      const r = await run(ALL, ALL_SQL, { combiners, memoryLimit: 64 * 1024, spillDir: path.join(dir, 'spill') });
      expectSplit(r, 'distinct', false);
      expect(r.stats.spilledBytes).toBeGreaterThan(0);
      expect(r.stats.tasks.some((t) => t.split?.startsWith('two-level merge, grace piece'))).toBe(true);
    },
  );

  it('count_distinct of two columns has no mergeable state: skewed, not split, and says why', async () => {
    const aggs = [
      { fn: 'count_distinct', column: 'd', as: 'nd' },
      { fn: 'count_distinct', column: 'v', as: 'ndv' },
    ];
    const r = await run(aggs, 'count(DISTINCT d) AS nd, count(DISTINCT v) AS ndv');
    const [split] = r.stats.aggregates[0].splits;
    expect(split).toMatchObject({ method: 'none' });
    expect(split.reason).toMatch(/more than one column/);
    expect(r.stats.tasks.some((t) => t.split?.startsWith('two-level'))).toBe(false);
  });

  it('skew handling off: no split, skewed partitions empty', async () => {
    const r = await run(ALL, ALL_SQL, { skew: { ...SKEW.skew, enabled: false } });
    expect(r.stats.shuffles[0].skewedPartitions).toEqual([]);
    expect(r.stats.aggregates[0].splits).toEqual([]);
    expect(r.stats.tasks.some((t) => t.split?.startsWith('two-level'))).toBe(false);
  });

  it('--explain --analyze names the split partitions and how; --no-skew splits none', () => {
    const p = writePlan(dir, {
      ...plan(ALL),
      execution: { workers: 2, partitions: 8, skew: { factor: 2, thresholdBytes: 1, advisoryPartitionBytes: '16KB' } },
    });
    const on = cli([p, '--explain', '--analyze']);
    expect(on.code).toBe(0);
    expect(on.stdout).toMatch(/skew test: > .*; skewed partitions: \d/);
    expect(on.stdout).toMatch(/aggregate-1: skewed partitions of its shuffle \(two-level aggregation\)/);
    expect(on.stdout).toMatch(
      /partition \d+ \(\d+ rows, .*\): split tasks over row ranges of at most \d+ rows cut the distinct \(group, value\) pairs by hash into \d+ pieces/,
    );
    const off = cli([p, '--explain', '--analyze', '--no-skew']);
    expect(off.code).toBe(0);
    expect(off.stdout).toMatch(/skewed partitions: none/);
    expect(off.stdout).not.toMatch(/two-level/);
  });
});
