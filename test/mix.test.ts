// Plain partitions mixed into a hot key's pieces (skew/mix.ts): on hand-written
// statistics every plain partition is planned exactly once, the hot keys are cut
// into about one piece per task, and the tasks come out even by rows and by
// cost; end to end, for every join type, with an aggregate fused above the join
// and without, the answer is DuckDB's and the statistics show the mixed tasks.
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type RunResult, runPlan } from '../dist/index.js';
import { type SideStats, planReduceTasks } from '../dist/skew/decide.js';
import { BUILD_ROW_COST, mixPlan } from '../dist/skew/mix.js';
import { expectFileMatchesQuery, sql as duckSql, tmpDir } from './helpers.js';

describe('mixPlan', () => {
  // 16 partitions: partition 3 holds a hot key of 60,000 fact rows; every partition 6,000 fact rows and 4,000 dimension rows.
  const P = 16;
  const fact: SideStats = {
    partitionRows: Array.from({ length: P }, (_, p) => (p === 3 ? 66000 : 6000)),
    partitionBytes: Array.from({ length: P }, (_, p) => 16 * (p === 3 ? 66000 : 6000)),
    mapBytes: [Array.from({ length: P }, (_, p) => 16 * (p === 3 ? 66000 : 6000))],
    hotKeys: [{ hash: 7, match: '7', display: ['7'], rows: 60000, partition: 3 }],
  };
  const dim: SideStats = {
    partitionRows: new Array(P).fill(4000),
    partitionBytes: new Array(P).fill(4000 * 20),
    mapBytes: [new Array(P).fill(4000 * 20)],
    hotKeys: [{ hash: 7, match: '7', display: ['7'], rows: 1, partition: 3 }],
  };
  const skew = {
    enabled: true,
    strategy: 'key' as const,
    factor: 2,
    thresholdBytes: 1,
    advisoryPartitionBytes: 300 * 1024,
  };

  it.each(['inner', 'full'] as const)(
    '%s join: each plain partition once, one hot piece per task, even by rows and cost',
    (type) => {
      const plan = planReduceTasks(fact, dim, type, skew, 2, 2);
      const mixed = mixPlan(plan, fact, dim, type);
      const hot = mixed.tasks.find((t) => t.kind === 'hot-keys')!;
      expect(hot.kind === 'hot-keys' && hot.riders!.length).toBe(hot.kind === 'hot-keys' && hot.keys[0].leftPieces);
      if (hot.kind !== 'hot-keys') return;
      const plainBefore = plan.tasks
        .flatMap((t) => (t.kind === 'partitions' ? t.partitions : []))
        .sort((a, b) => a - b);
      const plainAfter = [
        ...hot.riders!.flat(),
        ...mixed.tasks.flatMap((t) => (t.kind === 'partitions' ? t.partitions : [])),
      ].sort((a, b) => a - b);
      expect(plainAfter).toEqual(plainBefore);
      // more pieces than planned alone: the task count stays, each task a share of the hot key
      const before = plan.tasks.find((t) => t.kind === 'hot-keys')!;
      expect(before.kind === 'hot-keys' && hot.keys[0].leftPieces).toBeGreaterThan(
        before.kind === 'hot-keys' ? before.keys[0].leftPieces : 0,
      );
      expect(mixed.splits.find((s) => s.method === 'hot-key')!.keys![0].tasks).toBe(hot.keys[0].leftPieces);
      // each cell: its share of the key plus its riders, by rows and by cost (a built row costs BUILD_ROW_COST)
      const piece = 60000 / hot.keys[0].leftPieces;
      const cells = hot.riders!.map((ps) => ({
        rows: piece + 1 + ps.length * 10000,
        cost: piece + BUILD_ROW_COST + ps.length * (6000 + BUILD_ROW_COST * 4000),
      }));
      const alone = mixed.tasks.flatMap((t) =>
        t.kind === 'partitions'
          ? [{ rows: t.partitions.length * 10000, cost: t.partitions.length * (6000 + BUILD_ROW_COST * 4000) }]
          : [],
      );
      const all = [...cells, ...alone];
      for (const f of ['rows', 'cost'] as const) {
        const xs = all.map((c) => c[f]).sort((a, b) => a - b);
        expect(xs[xs.length - 1] / xs[xs.length >> 1], f).toBeLessThanOrEqual(1.5);
      }
    },
  );

  it('leaves a plan alone where a key is hot on its built side too, or there is nothing to mix', () => {
    const both: SideStats = {
      ...dim,
      partitionRows: dim.partitionRows.map((r, p) => (p === 3 ? 40000 : r)),
      hotKeys: [{ ...dim.hotKeys[0], rows: 36000 }],
    };
    const plan = planReduceTasks(fact, both, 'inner', skew, 2, 2);
    expect(mixPlan(plan, fact, both, 'inner')).toBe(plan);
    const off = planReduceTasks(fact, dim, 'inner', { ...skew, enabled: false }, 2, 2);
    expect(mixPlan(off, fact, dim, 'inner')).toBe(off);
  });
});

const dir = tmpDir('sj-mix-');
const file = (n: string) => path.join(dir, n);

beforeAll(async () => {
  // fact: key 0 holds 6,000 of 12,000 rows; the others over keys 1..3000. dim: one row per key 0..3000, a region each.
  await duckSql(`COPY (SELECT i AS id, CASE WHEN i % 2 = 0 THEN 0 ELSE 1 + (hash(i) % 3000) END::BIGINT AS k, (i % 97)::INTEGER AS amount
    FROM range(0, 12000) t(i)) TO '${file('fact.parquet')}' (FORMAT parquet, ROW_GROUP_SIZE 4000)`);
  await duckSql(`COPY (SELECT i::BIGINT AS k, 'r' || (i % 7) AS region FROM range(0, 3001) t(i)
    UNION ALL SELECT i::BIGINT, 'x' FROM range(5000, 5050) t(i)) TO '${file('dim.parquet')}' (FORMAT parquet, ROW_GROUP_SIZE 1000)`);
});

const TYPES = ['inner', 'left', 'right', 'full', 'semi', 'anti'] as const;
const SQL_JOIN: Record<string, string> = { inner: 'INNER', left: 'LEFT', right: 'RIGHT', full: 'FULL OUTER' };
const options = {
  workers: 2,
  partitions: 16,
  broadcastBytes: 0,
  inThreadBytes: 0,
  skew: { enabled: true, strategy: 'key' as const, factor: 2, thresholdBytes: 1, advisoryPartitionBytes: 64 * 1024 },
};

function join(type: string) {
  return { op: 'join', type, on: [['k', 'k']], left: { op: 'scan', source: 'f' }, right: { op: 'scan', source: 'd' } };
}
const sources = { f: { parquet: file('fact.parquet') }, d: { parquet: file('dim.parquet') } };
const F = `read_parquet('${file('fact.parquet')}')`,
  D = `read_parquet('${file('dim.parquet')}')`;

function mixedTasks(r: RunResult) {
  return r.stats.tasks.filter(
    (t) =>
      t.kind === 'reduce' &&
      t.split?.startsWith('hot-key') &&
      !t.split.startsWith('hot-key rest') &&
      (t.partitions?.length ?? 0) > 1,
  );
}

describe.each(TYPES)("%s join: plain partitions ride with the hot key's pieces", (type) => {
  it('rows as DuckDB joins them', async () => {
    const out = file(`out-${type}.parquet`);
    const r = await runPlan({ version: 1, sources, query: join(type), output: { path: out } }, options);
    const q =
      type === 'semi'
        ? `SELECT * FROM ${F} f WHERE EXISTS (SELECT 1 FROM ${D} d WHERE f.k = d.k)`
        : type === 'anti'
          ? `SELECT * FROM ${F} f WHERE NOT EXISTS (SELECT 1 FROM ${D} d WHERE f.k = d.k)`
          : `SELECT f.*, d.* FROM ${F} f ${SQL_JOIN[type]} JOIN ${D} d ON f.k = d.k`;
    expect(await expectFileMatchesQuery(out, q)).toBe(r.numRows);
    fs.rmSync(out);
    expect(r.stats.joins[0].splits.some((s) => s.method === 'hot-key')).toBe(true);
    expect(mixedTasks(r).length).toBeGreaterThan(0);
    // every partition with rows is joined by exactly one task (a mixed task names its hot partition and its riders)
    const reduce = r.stats.tasks.filter(
      (t) => t.stage === 'join-1' && t.kind === 'reduce' && !t.split?.startsWith('hot-key'),
    );
    const riders = mixedTasks(r).flatMap((t) => t.partitions!.slice(1));
    const plain = reduce.flatMap((t) => t.partitions ?? [t.partition]);
    expect(new Set([...riders, ...plain]).size).toBe(riders.length + plain.length);
  });

  if (type === 'semi' || type === 'anti') return;
  it('grouped by the dimension, the aggregate fused with the join', async () => {
    const out = file(`agg-${type}.parquet`);
    const q = {
      op: 'aggregate',
      groupBy: ['region'],
      aggregates: [
        { fn: 'count', as: 'n' },
        { fn: 'sum', column: 'amount', as: 'revenue' },
      ],
      input: join(type),
    };
    const r = await runPlan(
      { version: 1, sources, query: q, output: { path: out } },
      { ...options, eagerAggregation: false },
    );
    expect(
      await expectFileMatchesQuery(
        out,
        `SELECT d.region, count(*) AS n, sum(f.amount) AS revenue FROM ${F} f ${SQL_JOIN[type]} JOIN ${D} d ON f.k = d.k GROUP BY d.region`,
      ),
    ).toBe(r.numRows);
    fs.rmSync(out);
    expect(mixedTasks(r).length).toBeGreaterThan(0);
  });
});
