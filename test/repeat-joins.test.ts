// Repeated joins computed once (physical/repeats.ts), also when the copies read different columns of their scans
// (plan/share.ts): DuckDB's answer, the repeated subtree's scans read once (the run's task statistics), and every
// reader computing it again when its rows pass the cap (repeatBytes 0) or under a tiny memory budget.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { explainPlan, loadPlan } from '../dist/index.js';
import { expectSame, ourRun, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-repeat-joins-');
const F = path.join(dir, 'f.parquet'),
  D = path.join(dir, 'd.parquet');
const F_ROWS = 20000,
  D_ROWS = 100;

beforeAll(async () => {
  await writeParquet(
    F,
    `SELECT (i % 97)::INTEGER AS k, (i % 13)::INTEGER AS g, (i % 11)::DOUBLE AS v, (i % 7)::BIGINT AS w
    FROM range(0, ${F_ROWS}) t(i)`,
    3000,
  );
  await writeParquet(
    D,
    `SELECT i::INTEGER AS dk, 'name' || (i % 9) AS name, (i % 4)::INTEGER AS cat FROM range(0, ${D_ROWS}) t(i)`,
  );
});

const sources = () => ({ f: { parquet: F }, d: { parquet: D } });
const dim = (cols = ['dk', 'name', 'cat']) => ({
  op: 'filter',
  where: { column: 'cat', cmp: '=', value: 1 },
  input: { op: 'scan', source: 'd', columns: cols },
});
/** f joined to the dimension's rows of category 1; the scan of f reads `cols` */
const sub = (cols: string[], type = 'inner') => ({
  op: 'join',
  type,
  on: [['k', 'dk']],
  left: { op: 'scan', source: 'f', columns: cols },
  right: dim(),
});
const fq = `read_parquet('${F}')`,
  dq = `(SELECT * FROM read_parquet('${D}') WHERE cat = 1)`;

/** q11's shape: value per group against a share of the total, each over the same join, read with other columns. */
const shareOfTotal = (type = 'inner') => ({
  version: 1,
  sources: sources(),
  query: {
    op: 'filter',
    where: { left: { column: 'value' }, cmp: '>', right: { fn: '*', args: [{ column: 'total' }, { value: 0.05 }] } },
    input: {
      op: 'join',
      type: 'inner',
      on: [],
      left: {
        op: 'aggregate',
        groupBy: ['g'],
        aggregates: [{ fn: 'sum', column: 'v', as: 'value' }],
        input: sub(['k', 'g', 'v'], type),
      },
      right: {
        op: 'aggregate',
        groupBy: [],
        aggregates: [{ fn: 'sum', column: 'v', as: 'total' }],
        input: sub(['v', 'k'], type),
      },
    },
  },
});
const shareOfTotalSQL = (type = 'inner') => `WITH j AS (SELECT * FROM ${fq} ${type} JOIN ${dq} ON k = dk),
  a AS (SELECT g, sum(v) AS value FROM j GROUP BY g), t AS (SELECT sum(v) AS total FROM j)
  SELECT g, value, total FROM a, t WHERE value > total * 0.05`;

/** q17's shape: a semi join read twice, once with w; rows under their key's average v, their w summed. */
const underAverage = {
  version: 1,
  sources: sources(),
  query: {
    op: 'aggregate',
    groupBy: [],
    aggregates: [{ fn: 'sum', column: 'w', as: 'total_w' }],
    input: {
      op: 'filter',
      where: { left: { column: 'v' }, cmp: '<', right: { column: 'avg_v' } },
      input: {
        op: 'join',
        type: 'inner',
        on: [['k', 'a_k']],
        left: sub(['k', 'v', 'w'], 'semi'),
        right: {
          op: 'project',
          columns: [{ name: 'a_k', column: 'k' }, 'avg_v'],
          input: {
            op: 'aggregate',
            groupBy: ['k'],
            aggregates: [{ fn: 'avg', column: 'v', as: 'avg_v' }],
            input: sub(['k', 'v'], 'semi'),
          },
        },
      },
    },
  },
};
const underAverageSQL = `WITH j AS (SELECT * FROM ${fq} WHERE k IN (SELECT dk FROM ${dq})),
  a AS (SELECT k AS a_k, avg(v) AS avg_v FROM j GROUP BY k)
  SELECT sum(w) AS total_w FROM j JOIN a ON k = a_k WHERE v < avg_v`;

/** The same join under both sides of a join: rows of one group paired with those of the next, counted. */
const bothSides = {
  version: 1,
  sources: sources(),
  query: {
    op: 'aggregate',
    groupBy: ['name'],
    aggregates: [
      { fn: 'count', column: 'k', as: 'n' },
      { fn: 'sum', column: 'w2', as: 'sw' },
    ],
    input: {
      op: 'join',
      type: 'inner',
      on: [
        ['k', 'k2'],
        ['g', 'g2'],
      ],
      left: { op: 'filter', where: { column: 'w', cmp: '=', value: 1 }, input: sub(['k', 'g', 'w']) },
      right: {
        op: 'project',
        columns: [
          { name: 'k2', column: 'k' },
          { name: 'g2', column: 'g' },
          { name: 'w2', column: 'w' },
        ],
        input: { op: 'filter', where: { column: 'w', cmp: '=', value: 1 }, input: sub(['k', 'g', 'w']) },
      },
    },
  },
};
const bothSidesSQL = `WITH j AS (SELECT * FROM ${fq} JOIN ${dq} ON k = dk WHERE w = 1)
  SELECT a.name, count(a.k) AS n, sum(b.w) AS sw FROM j a JOIN j b ON a.k = b.k AND a.g = b.g GROUP BY a.name`;

/** Rows the run's map tasks read from the files (a held subtree's readers read none). */
async function rowsScanned(plan: object, opts: object): Promise<number> {
  const r = await ourRun(plan, opts);
  return r.stats.tasks.filter((t) => t.kind === 'map' && t.source?.startsWith('scan-')).reduce((a, t) => a + t.rows, 0);
}

/** The scans of a plan whose repeated join is computed once read half the rows they read when it is computed twice. */
async function expectReadOnce(plan: object, opts: object): Promise<void> {
  const once = await rowsScanned(plan, opts),
    twice = await rowsScanned(plan, { ...opts, repeatBytes: 0 });
  expect(once).toBeGreaterThanOrEqual(F_ROWS);
  expect(twice).toBe(2 * once);
}

const SETTINGS: [string, object][] = [
  ['on the pool, shuffle joins', { broadcastBytes: 0 }],
  ['on the pool, broadcast joins', {}],
  ['on the calling thread', { inThreadBytes: 1 << 30 }],
];

describe('a repeated join', () => {
  it.each(SETTINGS)("read with other columns is computed once, with DuckDB's answer (%s)", async (_, opts) => {
    await expectSame(shareOfTotal(), shareOfTotalSQL(), opts);
    await expectReadOnce(shareOfTotal(), opts);
    const r = await ourRun(shareOfTotal(), opts);
    expect(r.stats.repeats).toMatchObject([{ readers: 2, held: true }]);
    expect(r.stats.repeats![0].rows).toBeGreaterThan(0);
  });

  it.each(SETTINGS)("of another type (left) is computed once, with DuckDB's answer (%s)", async (_, opts) => {
    await expectSame(shareOfTotal('left'), shareOfTotalSQL('left'), opts);
    await expectReadOnce(shareOfTotal('left'), opts);
  });

  it.each(SETTINGS)("semi, read by a join and an aggregate, is computed once (q17's shape; %s)", async (_, opts) => {
    await expectSame(underAverage, underAverageSQL, opts);
    await expectReadOnce(underAverage, opts);
  });

  it.each(SETTINGS)("under both sides of a join is computed once, with DuckDB's answer (%s)", async (_, opts) => {
    await expectSame(bothSides, bothSidesSQL, opts);
    await expectReadOnce(bothSides, opts);
  });

  it('is computed again by each reader when its rows pass the cap (repeatBytes 0)', async () => {
    for (const [plan, q] of [
      [shareOfTotal('left'), shareOfTotalSQL('left')],
      [underAverage, underAverageSQL],
      [bothSides, bothSidesSQL],
    ] as const) {
      for (const opts of [{ repeatBytes: 0 }, { repeatBytes: 0, broadcastBytes: 0 }]) {
        await expectSame(plan, q, opts);
        const r = await ourRun(plan, opts);
        expect(r.stats.repeats).toMatchObject([{ held: false, reason: 'its rows passed the cap (0 bytes)' }]);
      }
    }
  });

  it('is computed again when its first reader stops at a cap (a join side measured for a broadcast)', async () => {
    // (no eager aggregation: join-1's sides are measured, not shuffled pre-aggregated)
    const opts = { broadcastBytes: 2000, eagerAggregation: false };
    await expectSame(bothSides, bothSidesSQL, opts);
    const r = await ourRun(bothSides, opts);
    expect(r.stats.repeats).toMatchObject([{ held: false, reason: expect.stringMatching(/stopped at a cap/) }]);
  });

  it('gives the same answer under a tiny memory budget (spilled shuffles, no room to hold it)', async () => {
    const opts = { memoryLimit: '64KB', spillDir: tmpDir('sj-repeat-spill-'), broadcastBytes: 0 };
    await expectSame(shareOfTotal(), shareOfTotalSQL(), opts);
    await expectSame(underAverage, underAverageSQL, opts);
    await expectSame(bothSides, bothSidesSQL, opts);
    expect(await rowsScanned(underAverage, opts)).toBe(await rowsScanned(underAverage, { ...opts, repeatBytes: 0 }));
  });

  it('keeps only the rows of the successful attempt of a task that dies and is retried', async () => {
    // join-2 and join-3 are the two copies (whichever runs first computes it); a rule matching no task does nothing
    process.env.SKEWJOIN_FAULTS = 'crash:join-2:reduce:0:once,crash:join-3:reduce:0:once';
    try {
      const opts = { broadcastBytes: 0, partitions: 3 };
      await expectSame(underAverage, underAverageSQL, opts);
      const r = await ourRun(underAverage, opts);
      expect(r.stats.tasks.some((t) => t.attempt === 2)).toBe(true);
      expect(r.stats.tasks.filter((t) => t.split === 'repeated subtree computed once').length).toBeGreaterThan(0);
    } finally {
      delete process.env.SKEWJOIN_FAULTS;
    }
  });

  it('under two aggregates that could pre-aggregate its sides is held; past the cap they do (eager aggregation)', async () => {
    // rows of f with w = 1 joined to those with w = 2 on g: keys repeat on both sides, each aggregate goes below it
    const side = (w: number) => ({
      op: 'filter',
      where: { column: 'w', cmp: '=', value: w },
      input: { op: 'scan', source: 'f', columns: ['g', 'v', 'w'] },
    });
    const j = () => ({
      op: 'join',
      type: 'inner',
      on: [['g', 'g2']],
      left: side(1),
      right: {
        op: 'project',
        columns: [
          { name: 'g2', column: 'g' },
          { name: 'v2', column: 'v' },
        ],
        input: side(2),
      },
    });
    const plan = {
      version: 1,
      sources: sources(),
      query: {
        op: 'join',
        type: 'inner',
        on: [],
        left: { op: 'aggregate', groupBy: ['g'], aggregates: [{ fn: 'sum', column: 'v2', as: 's' }], input: j() },
        right: { op: 'aggregate', groupBy: [], aggregates: [{ fn: 'count', as: 'n' }], input: j() },
      },
    };
    const q = `WITH j AS (SELECT a.g, b.v AS v2 FROM ${fq} a JOIN ${fq} b ON a.g = b.g WHERE a.w = 1 AND b.w = 2)
      SELECT * FROM (SELECT g, sum(v2) AS s FROM j GROUP BY g), (SELECT count(*) AS n FROM j)`;
    for (const [opts, held, eager] of [
      [{ broadcastBytes: 0 }, true, 0],
      // the first reader's rows not held: the second pre-aggregates the join's sides, as without a repeat
      [{ broadcastBytes: 0, repeatBytes: 0 }, false, 1],
      [{ broadcastBytes: 0, eagerAggregation: false }, true, 0],
    ] as const) {
      await expectSame(plan, q, opts);
      const r = await ourRun(plan, opts);
      expect(r.stats.repeats).toMatchObject([{ held }]);
      expect(r.stats.eager.length).toBe(eager);
    }
  });

  it('is not shared with a copy that differs in a literal', async () => {
    const other = structuredClone(shareOfTotal()) as any;
    other.query.input.right.input.right.where.value = 2;
    expect(await rowsScanned(other, {})).toBeGreaterThanOrEqual(2 * F_ROWS);
  });

  it('--explain says it is computed once and where it is read again', async () => {
    const text = explainPlan(await loadPlan(underAverage, { workers: 2, baseDir: dir }));
    expect(text).toMatch(/computed once for its 2 readers \(the same subtree, read again as join-\d+\)/);
    expect(text).toMatch(/join-\d+ → join-\d+\.shared\[2 columns\]: the rows of join-\d+, computed once, read again/);
    // the scan of the copy computed reads the columns of both readers
    expect(text).toMatch(/scan f \[k, v, w\]/);
  });
});
