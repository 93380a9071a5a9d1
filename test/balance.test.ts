// Reduce tasks balanced by time: every partition of a join task takes the
// fused join aggregate whatever its orientation (the built side grouped, or
// the probing batches' matched rows; a missing grouped side is the group of
// nulls), tasks sized by cost (built bytes weigh more), and small aggregate
// partitions packed into tasks. DuckDB is the oracle.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runPlan } from '../dist/index.js';
import { orient } from '../dist/physical/join/orient.js';
import { type SideStats, planReduceTasks } from '../dist/skew/decide.js';
import { expectSame, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-balance-');
const FEW = path.join(dir, 'few.parquet'),
  MANY = path.join(dir, 'many.parquet');

beforeAll(async () => {
  // FEW: 600 rows over 40 keys (some null, some missing from MANY); MANY: one row per key 0..2999, groups with nulls
  await writeParquet(
    FEW,
    `
    SELECT CASE WHEN i % 31 = 0 THEN NULL WHEN i % 7 = 0 THEN 5000 + i % 3 ELSE (i % 40) * 50 END::BIGINT AS k,
      'f' || (i % 3) AS fg, (i % 11)::BIGINT AS a, (i * 0.25)::DOUBLE AS b
    FROM range(0, 600) t(i)`,
    256,
  );
  await writeParquet(
    MANY,
    `
    SELECT i::BIGINT AS k, CASE WHEN i % 13 = 0 THEN NULL ELSE 'g' || (i % 5) END AS g, (i % 9)::BIGINT AS c
    FROM range(0, 3000) t(i)`,
    512,
  );
});

const sources = { few: { parquet: FEW }, many: { parquet: MANY } };
const KW: Record<string, string> = { inner: 'INNER', left: 'LEFT', right: 'RIGHT', full: 'FULL OUTER' };
const aggregates = [
  { fn: 'count', as: 'n' },
  { fn: 'sum', column: 'a', as: 'sa' },
  { fn: 'sum', column: 'c', as: 'sc' },
  { fn: 'avg', column: 'b', as: 'ab' },
];
const aggSql = 'count(*), sum(a), sum(c), avg(b)';
// runtime filters off: a filter across the shuffle would drop MANY's unmatched rows and change which side is smaller
const opts = {
  workers: 2,
  partitions: 4,
  eagerAggregation: false,
  broadcastBytes: 0,
  runtimeFilters: 'off' as const,
  writeOutput: false,
};

function plan(type: string, groupBy: string[], leftFirst = true) {
  const few = { op: 'scan', source: 'few' },
    many = { op: 'scan', source: 'many' };
  return {
    version: 1,
    sources,
    query: {
      op: 'aggregate',
      groupBy,
      aggregates,
      input: { op: 'join', type, on: [['k', 'k']], left: leftFirst ? few : many, right: leftFirst ? many : few },
    },
  };
}
const sql = (type: string, g: string, leftFirst = true) =>
  `SELECT ${g}, ${aggSql} FROM read_parquet('${leftFirst ? FEW : MANY}') x ${KW[type]} JOIN read_parquet('${leftFirst ? MANY : FEW}') y ON x.k = y.k GROUP BY ${g}`;

async function joinPaths(q: object) {
  const r = await runPlan(q, opts);
  return r.stats.tasks.filter((t) => t.stage === 'join-1' && t.kind === 'reduce').map((t) => t.join!);
}

describe('fused join aggregate in every orientation', () => {
  it('orient: the smaller side of an inner join is built; the groups come from the built side or the probing batches', () => {
    const schema = (names: string[]) =>
      names.map((name) => ({ name, type: name === 'g' ? { id: 'utf8' } : { id: 'int64' } }));
    const sides = (type: string) => ({
      type,
      leftSchema: schema(['k', 'a']),
      rightSchema: schema(['k', 'g']),
      leftKeys: [0],
      rightKeys: [0],
    });
    const agg = (groupBy: number[]) => ({ groupBy, aggs: [{ fn: 'sum', col: 1, as: 's', type: { id: 'int64' } }] });
    // grouped by g (column 3, the right side's)
    expect(orient(sides('inner'), 10, 100, agg([3]))).toEqual({ buildLeft: true, grouped: 'probe' });
    expect(orient(sides('inner'), 100, 10, agg([3]))).toEqual({ buildLeft: false, grouped: 'build' });
    expect(orient(sides('full'), 10, 100, agg([3]))).toEqual({ buildLeft: false, grouped: 'build' });
    expect(orient(sides('left'), 10, 100, agg([1]))).toEqual({ buildLeft: false, grouped: 'probe' });
    expect(orient(sides('inner'), 10, 100)).toEqual({ buildLeft: true, grouped: null });
    // columns of both sides: no orientation serves
    expect(orient(sides('inner'), 10, 100, agg([1, 3]))).toBeNull();
  });

  it("inner join: a small side built, the large side's matched rows grouped; the large side built and grouped (DuckDB's answer)", async () => {
    for (const leftFirst of [true, false]) {
      const q = plan('inner', ['g'], leftFirst);
      await expectSame(q, sql('inner', 'g', leftFirst), opts);
      const paths = await joinPaths(q);
      expect(paths.length).toBeGreaterThan(0);
      // FEW is the smaller side of every partition: built; MANY's groups come from its probing batches
      for (const j of paths)
        expect(j).toMatchObject({ path: 'fused-aggregate', build: leftFirst ? 'left' : 'right', grouped: 'probe' });
      const q2 = plan('inner', ['fg'], leftFirst);
      await expectSame(q2, sql('inner', 'fg', leftFirst), opts);
      for (const j of await joinPaths(q2)) expect(j).toMatchObject({ path: 'fused-aggregate', grouped: 'build' });
    }
  });

  it('outer joins grouped by the side that may be missing: those rows form the group of nulls', async () => {
    const cases: [string, string, boolean][] = [
      ['full', 'g', true],
      ['full', 'fg', true],
      ['left', 'g', true],
      ['right', 'fg', true],
      ['full', 'g', false],
      ['left', 'fg', false],
    ];
    for (const [type, g, leftFirst] of cases) {
      const q = plan(type, [g], leftFirst);
      await expectSame(q, sql(type, g, leftFirst), opts);
      const paths = await joinPaths(q);
      expect(paths.length).toBeGreaterThan(0);
      for (const j of paths) expect(j.path).toBe('fused-aggregate');
    }
  });

  it("a coalesced task joins each partition in its own orientation (DuckDB's answer)", async () => {
    // 16 partitions packed into a few tasks, each partition joined on its own
    const q = plan('inner', ['g']);
    const o = { ...opts, partitions: 16, skew: { enabled: true, thresholdBytes: 1 << 30 } };
    await expectSame(q, sql('inner', 'g'), o);
    const r = await runPlan(q, o);
    const reduce = r.stats.tasks.filter((t) => t.stage === 'join-1' && t.kind === 'reduce');
    expect(reduce.some((t) => (t.partitions?.length ?? 1) > 1)).toBe(true);
    for (const t of reduce) expect(t.join).toMatchObject({ path: 'fused-aggregate' });
    // FEW, the smaller side of every partition, is what was built (MANY has 3,000 rows)
    const built = reduce.reduce((s, t) => s + t.join!.buildRows!, 0);
    expect(built).toBeGreaterThan(0);
    expect(built).toBeLessThanOrEqual(600);
  });
});

describe('tasks sized by cost', () => {
  const KB = 1024;
  const side = (P: number, kb: number): SideStats => ({
    partitionBytes: new Array(P).fill(kb * KB),
    partitionRows: new Array(P).fill(kb * 64),
    mapBytes: [new Array(P).fill(kb * KB)],
    hotKeys: [],
  });
  const settings = {
    enabled: true,
    factor: 5,
    thresholdBytes: 256 * 1024 * KB,
    advisoryPartitionBytes: 450 * KB,
    strategy: 'auto' as const,
  };
  it('a built byte weighs buildWeight probing bytes when partitions are packed', () => {
    // 8 partitions of 100 KB on the left and 50 KB on the right (the smaller side: built)
    const plain = planReduceTasks(
      side(8, 100),
      side(8, 50),
      'inner',
      { ...settings, advisoryPartitionBytes: 450 * KB },
      64,
    );
    const weighted = planReduceTasks(
      side(8, 100),
      side(8, 50),
      'inner',
      { ...settings, advisoryPartitionBytes: 450 * KB },
      64,
      2,
    );
    // bytes: 150 KB a partition, three to a task; cost: 200 KB a partition, two to a task
    expect(plain.tasks.map((t) => (t.kind === 'partitions' ? t.partitions.length : 0))).toEqual([3, 3, 2]);
    expect(weighted.tasks.map((t) => (t.kind === 'partitions' ? t.partitions.length : 0))).toEqual([2, 2, 2, 2]);
    expect(weighted.tasks.every((t) => t.bytes === 400 * KB)).toBe(true);
    // a left join builds its right side whatever the sizes
    const left = planReduceTasks(
      side(8, 50),
      side(8, 100),
      'left',
      { ...settings, advisoryPartitionBytes: 450 * KB },
      64,
      2,
    );
    expect(left.tasks.every((t) => t.bytes === 250 * KB)).toBe(true);
  });
});

describe('small aggregate partitions packed into tasks', () => {
  const q = {
    version: 1,
    sources,
    query: {
      op: 'aggregate',
      groupBy: ['k'],
      aggregates: [
        { fn: 'count', as: 'n' },
        { fn: 'sum', column: 'c', as: 'sc' },
        { fn: 'min', column: 'g', as: 'mg' },
      ],
      input: { op: 'scan', source: 'many' },
    },
  };
  const query = `SELECT k, count(*), sum(c), min(g) FROM read_parquet('${MANY}') GROUP BY k`;
  it("with skew handling on, fewer tasks than partitions, every partition in one task (DuckDB's answer)", async () => {
    const o = { workers: 2, partitions: 32, writeOutput: false, skew: { enabled: true, thresholdBytes: 1 << 30 } };
    await expectSame(q, query, o);
    const r = await runPlan(q, o);
    const reduce = r.stats.tasks.filter((t) => t.stage === 'aggregate-1' && t.kind === 'reduce');
    expect(reduce.length).toBeLessThan(32);
    const parts = reduce.flatMap((t) => t.partitions ?? [t.partition]).sort((a, b) => a - b);
    expect(parts).toEqual(r.stats.shuffles[0].partitionRows.flatMap((n, p) => (n > 0 ? [p] : [])));
    // off: one task a partition
    const off = await runPlan(q, { ...o, skew: { enabled: false } });
    expect(off.stats.tasks.filter((t) => t.stage === 'aggregate-1' && t.kind === 'reduce').length).toBe(32);
  });
});
