// Planning for W workers while running on the real threads (settings.planWorkers,
// `skewjoin bench --simulate-workers`), the schedule of measured task costs on W
// workers, and map splits below the row group: a row group much larger than the
// map target is read as several row-range map tasks, with DuckDB's answer.
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type RunResult, runPlan } from '../dist/index.js';
import { simulateRun, slowestOverMedian, taskLabel } from '../dist/bench/simulate.js';
import { plannedFor } from '../dist/bench/bench.js';
import { rowRangeSplits } from '../dist/plan/map-splits.js';
import { writeParquetBytes } from '../dist/io/parquet-write.js';
import { expectSameInDuck, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-sim-');
const f = (n: string) => path.join(dir, n);
const MB = 1024 * 1024;

beforeAll(async () => {
  // one row group of 300,000 rows (about 3 MB): above twice the smallest map split (1 MB), written by parquet-wasm
  // (parquet-rs: pages of 20,000 rows, so row ranges read only their own pages; DuckDB writes a chunk as one page,
  // which is not cut: plan/map-splits.ts)
  const n = 300_000,
    cols = [new BigInt64Array(n), new BigInt64Array(n), new BigInt64Array(n)];
  for (let i = 0; i < n; i++) {
    cols[0][i] = BigInt(i);
    cols[1][i] = BigInt(i % 97);
    cols[2][i] = BigInt((i * 7) % 1000);
  }
  const fields = ['k', 'g', 'v'].map((name) => ({ name, type: { id: 'int64' as const }, nullable: false }));
  const batch = {
    length: n,
    columns: cols.map((values) => ({ type: { id: 'int64' as const }, length: n, values, valid: null })),
  };
  fs.writeFileSync(f('big.parquet'), writeParquetBytes(fields, [batch], 1_000_000));
  await writeParquet(f('dim.parquet'), `SELECT i AS g, 'r' || (i % 5) AS region FROM range(90) t(i)`, 1_000_000);
  await writeParquet(f('other.parquet'), 'SELECT i * 2 AS k, i % 13 AS w FROM range(200000) t(i)', 1_000_000);
}, 60_000);

const scan = (source: string, columns: string[]) => ({ op: 'scan', source, columns });
const sources = () => ({
  big: { parquet: f('big.parquet') },
  dim: { parquet: f('dim.parquet') },
  other: { parquet: f('other.parquet') },
});
/** the map tasks that read a scan */
const bigMaps = (r: RunResult, id: string) =>
  r.stats.tasks.filter((t) => t.kind === 'map' && t.source === id && !t.error);

describe('the schedule on W workers', () => {
  const task = (stage: string, kind: 'map' | 'reduce' | 'split', partition: number, ms: number, split?: string) => ({
    stage,
    kind,
    partition,
    ms,
    rows: 0,
    inputBytes: 0,
    outputRows: 0,
    spilledBytes: 0,
    spillReadBytes: 0,
    attempt: 1,
    ...(split ? { split } : {}),
  });

  it('sums the stages; the ideal is per stage max(work / W, largest task); the bottleneck is the largest task of the longest stage', () => {
    const tasks = [
      task('join-1', 'map', 0, 4),
      task('join-1', 'map', 1, 4),
      task('join-1', 'reduce', 3, 9, 'hot-key 0 piece 1,0'),
      task('join-1', 'reduce', 5, 1),
      task('join-1', 'reduce', 6, 1),
    ];
    const s = simulateRun(tasks as any, 2);
    expect(s).toEqual({
      workers: 2,
      makespanMs: 4 + 9,
      idealMs: 4 + 9,
      bottleneck: 'join-1 reduce 3 hot-key 0 piece 1,0',
    });
    const many = simulateRun(
      [
        task('a', 'reduce', 0, 5),
        task('a', 'reduce', 1, 4),
        ...[0, 1, 2].map((p) => task('a', 'reduce', 2 + p, 3)),
      ] as any,
      2,
    );
    expect(many.makespanMs).toBe(10); // LPT: 5+3 | 4+3+3
    expect(many.idealMs).toBe(9);
    expect(slowestOverMedian([1, 2, 2, 8])).toBe(4);
  });
});

describe('planning for W workers on the real threads', () => {
  const plan = () => ({
    version: 1,
    sources: sources(),
    query: {
      op: 'aggregate',
      groupBy: ['w'],
      aggregates: [
        { fn: 'count', as: 'n' },
        { fn: 'sum', column: 'v', as: 's' },
      ],
      input: {
        op: 'join',
        type: 'inner',
        on: [['k', 'k']],
        left: scan('big', ['k', 'v']),
        right: scan('other', ['k', 'w']),
      },
    },
  });
  const query = `SELECT o.w, count(*) AS n, sum(b.v) AS s FROM read_parquet('${f('big.parquet')}') b JOIN read_parquet('${f('other.parquet')}') o ON b.k = o.k GROUP BY o.w`;
  // runtime filters off: the reduce tasks' rows below are every row shuffled, unmatched ones included
  const opts = { workers: 2, broadcastBytes: 0, inThreadBytes: 0, runtimeFilters: 'off' as const };

  it('gives more shuffle partitions and reduce tasks for 64 workers than for 2, the same answer, and a schedule bounded by its ideal', async () => {
    const runs: Record<number, RunResult> = {};
    for (const W of [2, 64]) {
      const r = await runPlan(plan(), { ...opts, planWorkers: W, writeOutput: false });
      runs[W] = r;
      // every task still ran on the two real threads
      expect(new Set(r.stats.tasks.map((t) => t.thread)).size).toBeLessThanOrEqual(2);
      const s = simulateRun(r.stats.tasks, W);
      const total = r.stats.tasks.reduce((a, t) => a + t.ms, 0);
      expect(s.makespanMs).toBeGreaterThanOrEqual(s.idealMs - 1e-9);
      expect(s.idealMs).toBeGreaterThanOrEqual(total / W - 1e-9);
      expect(s.idealMs).toBeGreaterThanOrEqual(Math.max(...r.stats.tasks.map((t) => t.ms)) - 1e-9);
      expect(r.stats.tasks.map(taskLabel)).toContain(s.bottleneck);
      await expectSameInDuck(plan(), query, { ...opts, planWorkers: W });
    }
    const reduces = (r: RunResult) => r.stats.tasks.filter((t) => t.stage === 'join-1' && t.kind === 'reduce').length;
    expect(runs[64].stats.shuffles[0].partitions).toBeGreaterThan(runs[2].stats.shuffles[0].partitions);
    expect(reduces(runs[64])).toBeGreaterThan(reduces(runs[2]));
    // every task reports its input in rows and in bytes
    const join = runs[2].stats.tasks.filter((t) => t.stage === 'join-1' && t.kind === 'reduce');
    expect(join.reduce((a, t) => a + t.rows, 0)).toBe(500_000);
    for (const t of runs[2].stats.tasks) expect(t.inputBytes).toBeGreaterThanOrEqual(t.rows * 8);
  }, 60_000);

  it('the bench scales a fixed partition count and the skew thresholds with W', () => {
    const base = { workers: 2, partitions: 64, skew: { thresholdBytes: 4 * MB, advisoryPartitionBytes: 8 * MB } };
    expect(plannedFor(base, 16)).toEqual({ ...base, planWorkers: 16 });
    expect(plannedFor(base, 64)).toEqual({
      workers: 2,
      planWorkers: 64,
      partitions: 256,
      skew: { thresholdBytes: MB, advisoryPartitionBytes: 2 * MB },
    });
    expect(plannedFor({ workers: 2 }, 64)).toEqual({ workers: 2, planWorkers: 64 });
  });
});

describe('map splits below the row group', () => {
  it('cuts a row group of more than twice the target into row ranges of about the target', () => {
    const g = { path: 'x', rowGroups: [0], rows: 1000, bytes: 10 * MB };
    const small = { path: 'y', rowGroups: [0], rows: 10, bytes: MB / 10 };
    const pieces = rowRangeSplits([g, small], 2); // target max(1 MB, 10.1 MB / 8)
    expect(pieces.length).toBe(8 + 1);
    expect(pieces.slice(0, 8).map((p) => p.offset)).toEqual([0, 125, 250, 375, 500, 625, 750, 875]);
    expect(pieces.slice(0, 8).reduce((a, p) => a + p.rows, 0)).toBe(1000);
    expect(pieces[8]).toBe(small);
    expect(rowRangeSplits([g], 64).length).toBe(10); // the target bottoms out at 1 MB
    expect(rowRangeSplits([{ ...g, wholeFile: true }], 64).length).toBe(1);
  });

  it('reads one big row group as several map tasks, with filters, a shuffle join and a broadcast join, as DuckDB', async () => {
    const where = {
      and: [
        { column: 'v', cmp: '<', value: 700 },
        { column: 'g', cmp: '!=', value: 3 },
      ],
    };
    const filtered = { op: 'filter', where, input: scan('big', ['k', 'g', 'v']) };
    const plans = {
      filter: {
        query: {
          op: 'aggregate',
          groupBy: ['g'],
          aggregates: [
            { fn: 'count', as: 'n' },
            { fn: 'sum', column: 'v', as: 's' },
            { fn: 'min', column: 'k', as: 'lo' },
            { fn: 'max', column: 'k', as: 'hi' },
          ],
          input: filtered,
        },
      },
      join: {
        query: {
          op: 'aggregate',
          groupBy: ['region'],
          aggregates: [
            { fn: 'count', as: 'n' },
            { fn: 'sum', column: 'v', as: 's' },
          ],
          input: { op: 'join', type: 'left', on: [['g', 'g']], left: filtered, right: scan('dim', ['g', 'region']) },
        },
      },
    };
    const sqlWhere = `WHERE v < 700 AND g != 3`;
    const big = `read_parquet('${f('big.parquet')}')`;
    const queries = {
      filter: `SELECT g, count(*) AS n, sum(v) AS s, min(k) AS lo, max(k) AS hi FROM ${big} ${sqlWhere} GROUP BY g`,
      join: `SELECT d.region, count(*) AS n, sum(b.v) AS s FROM (SELECT * FROM ${big} ${sqlWhere}) b LEFT JOIN read_parquet('${f('dim.parquet')}') d ON b.g = d.g GROUP BY d.region`,
    };
    for (const [name, broadcastBytes] of [
      ['filter', 0],
      ['join', 0],
      ['join', 64 * MB],
    ] as const) {
      const plan = { version: 1, sources: sources(), ...plans[name] };
      const r = await runPlan(plan, { workers: 2, broadcastBytes, inThreadBytes: 0, writeOutput: false });
      const maps = bigMaps(r, 'scan-1');
      // about 7 MB in one row group, target 1 MB: about seven map tasks of equal rows
      const k = maps.length;
      expect(
        k,
        `${name}: ${JSON.stringify(r.stats.tasks.filter((t) => t.kind === 'map').map((t) => [t.source, t.rows]))}`,
      ).toBeGreaterThanOrEqual(5);
      expect(maps.reduce((a, t) => a + t.rows, 0)).toBe(300_000);
      for (const t of maps) expect(Math.abs(t.rows - 300_000 / k)).toBeLessThanOrEqual(1);
      await expectSameInDuck(plan, queries[name], { workers: 2, broadcastBytes });
    }
  }, 60_000);
});
