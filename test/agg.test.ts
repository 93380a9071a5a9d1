// Combiners and eager aggregation against DuckDB: every function with and
// without combiners, adaptive pass-through, and aggregates pushed below
// inner, left, right and full joins with duplicate keys on both sides.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type RunResult, runPlan } from '../dist/index.js';
import { expectSame, expectSameInDuck, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-agg-');
const T = path.join(dir, 't.parquet'),
  WIDE = path.join(dir, 'wide.parquet');
const L = path.join(dir, 'l.parquet'),
  R = path.join(dir, 'r.parquet');
const MIXA = path.join(dir, 'mix-a.parquet'),
  MIXB = path.join(dir, 'mix-b.parquet'),
  MIX = `['${MIXA}', '${MIXB}']`;

beforeAll(async () => {
  await writeParquet(
    T,
    `
    SELECT i::BIGINT AS id, CASE WHEN i % 7 = 0 THEN NULL ELSE 'g' || (i % 5) END AS g, (i % 3)::INTEGER AS h,
      CASE WHEN i % 11 = 0 THEN NULL ELSE (i * 37 % 101)::INTEGER END AS x,
      CASE WHEN i % 13 = 0 THEN NULL ELSE (i % 17) * 1.25::DOUBLE END AS f,
      1125899906842625::BIGINT + i * 1000003 AS big, CASE WHEN i % 9 = 0 THEN NULL ELSE 'v' || (i % 23) END AS s
    FROM range(0, 6000) t(i)`,
    2048,
  );
  // one row group of 40,000 rows with a distinct id per row: nothing to combine
  await writeParquet(WIDE, `SELECT i::BIGINT AS id, (i % 10)::INTEGER AS v FROM range(0, 40000) t(i)`, 65536);
  // Two files (map tasks): the first a new key per row (it passes its rows through), the second
  // 50 keys that the first also has (it aggregates): reduce tasks get rows and states of one group.
  const mixRows = (from: number, to: number) => `
    SELECT CASE WHEN i % 997 = 0 THEN NULL WHEN i < 40000 THEN i ELSE i % 50 END::BIGINT AS k,
      CASE WHEN i % 11 = 0 THEN NULL ELSE (i * 37 % 101)::INTEGER END AS x,
      CASE WHEN i % 13 = 0 THEN NULL ELSE ((i * 7919) % 200001 - 100000) / 100 END::DECIMAL(12,2) AS d,
      (i % 17) * 1.25::DOUBLE AS f, CASE WHEN i % 9 = 0 THEN NULL ELSE 'v' || (i * 7 % 23) END AS s,
      1125899906842625::BIGINT + i * 1000003 AS big
    FROM range(${from}, ${to}) t(i)`;
  await writeParquet(MIXA, mixRows(0, 40000), 40000);
  await writeParquet(MIXB, mixRows(40000, 80000), 40000);
  // Both sides have duplicate keys; key 1 is hot on both (a many-to-many hot key); some keys on one side only.
  await writeParquet(
    L,
    `
    SELECT CASE WHEN i % 3 = 0 THEN 1 WHEN i % 17 = 0 THEN NULL ELSE (i % 40) END::BIGINT AS k,
      'lg' || (i % 4) AS lg, (i % 9)::INTEGER AS a, CASE WHEN i % 5 = 0 THEN NULL ELSE i * 0.5 END::DOUBLE AS b
    FROM range(0, 3000) t(i)`,
    2048,
  );
  await writeParquet(
    R,
    `
    SELECT CASE WHEN i % 4 = 0 THEN 1 WHEN i % 13 = 0 THEN NULL ELSE (i % 50) + 5 END::BIGINT AS k,
      'rg' || (i % 3) AS rg, (i % 7)::BIGINT AS c, CASE WHEN i % 6 = 0 THEN NULL ELSE 'x' || i END AS d
    FROM range(0, 400) t(i)`,
    2048,
  );
});

const ALL = [
  { fn: 'count', as: 'n' },
  { fn: 'count', column: 'x', as: 'nx' },
  { fn: 'sum', column: 'x', as: 'sx' },
  { fn: 'sum', column: 'big', as: 'sbig' },
  { fn: 'sum', column: 'f', as: 'sf' },
  { fn: 'min', column: 's', as: 'mins' },
  { fn: 'max', column: 'f', as: 'maxf' },
  { fn: 'avg', column: 'x', as: 'ax' },
  { fn: 'avg', column: 'f', as: 'af' },
  { fn: 'count_distinct', column: 's', as: 'ds' },
];
const ALL_SQL = 'count(*), count(x), sum(x), sum(big), sum(f), min(s), max(f), avg(x), avg(f), count(DISTINCT s)';
const scanT = { op: 'scan', source: 't' };
const planT = (query: object) => ({
  version: 1,
  sources: { t: { parquet: T }, w: { parquet: WIDE }, l: { parquet: L }, r: { parquet: R } },
  query,
});

describe('combiners', () => {
  for (const combiners of [true, false]) {
    it(`every function, string and multi-column keys, nulls (combiners ${combiners})`, async () => {
      for (const groupBy of [['g'], ['g', 'h'], []]) {
        const q = planT({ op: 'aggregate', input: scanT, groupBy, aggregates: ALL });
        const keys = groupBy.length ? `${groupBy.join(', ')}, ` : '';
        await expectSame(
          q,
          `SELECT ${keys}${ALL_SQL} FROM read_parquet('${T}')${groupBy.length ? ` GROUP BY ${groupBy.join(', ')}` : ''}`,
          { workers: 2, partitions: 5, combiners },
        );
      }
      const r = await runPlan(planT({ op: 'aggregate', input: scanT, groupBy: ['g'], aggregates: ALL }), {
        workers: 2,
        partitions: 5,
        combiners,
        writeOutput: false,
      });
      const c = r.stats.shuffles[0].combine;
      if (combiners) {
        // count_distinct is combined too: partial rows per (group, distinct value)
        expect(c!.rowsBefore).toBe(6000);
        expect(c!.rowsAfter).toBeLessThanOrEqual(6 * 24 * 3); // (group, distinct s) pairs per map task
        expect(c!.bytesAfter).toBeLessThan(c!.bytesBefore);
      } else {
        expect(c).toBeUndefined();
        expect(r.stats.shuffles[0].partitionRows.reduce((a, b) => a + b, 0)).toBe(6000);
      }
    });
  }
  it('over empty input and an empty group', async () => {
    const empty = { op: 'filter', input: scanT, where: { column: 'id', cmp: '<', value: 0 } };
    await expectSame(
      planT({ op: 'aggregate', input: empty, groupBy: [], aggregates: ALL }),
      `SELECT ${ALL_SQL} FROM read_parquet('${T}') WHERE id < 0`,
      { workers: 2 },
    );
    await expectSame(
      planT({ op: 'aggregate', input: empty, groupBy: ['g'], aggregates: ALL }),
      `SELECT g, ${ALL_SQL} FROM read_parquet('${T}') WHERE id < 0 GROUP BY g`,
      { workers: 2 },
    );
  });
  it('passes rows through when nearly every row is a new group', async () => {
    const q = planT({
      op: 'aggregate',
      input: { op: 'scan', source: 'w' },
      groupBy: ['id'],
      aggregates: [
        { fn: 'sum', column: 'v', as: 's' },
        { fn: 'count', as: 'n' },
      ],
    });
    const r = await runPlan(q, { workers: 2, partitions: 4, writeOutput: false });
    expect(r.stats.shuffles[0].combine).toMatchObject({
      rowsBefore: 40000,
      rowsAfter: 40000,
      passThroughTasks: 1,
      partialTasks: 0,
    });
    // as rows, not as states ([sum, count] and a count per row would be 32 bytes a row against 12)
    expect(r.stats.shuffles[0].combine!.bytesAfter).toBe(r.stats.shuffles[0].combine!.bytesBefore);
    await expectSameInDuck(q, `SELECT id, sum(v), count(*) FROM read_parquet('${WIDE}') GROUP BY id`, {
      workers: 2,
      partitions: 4,
    });
    // and aggregates when groups repeat
    const r2 = await runPlan(
      planT({
        op: 'aggregate',
        input: { op: 'scan', source: 'w' },
        groupBy: ['v'],
        aggregates: [{ fn: 'count', as: 'n' }],
      }),
      { workers: 2, writeOutput: false },
    );
    expect(r2.stats.shuffles[0].combine).toMatchObject({ rowsBefore: 40000, rowsAfter: 10, passThroughTasks: 0 });
  });
});

describe('rows passed through beside states', () => {
  const aggs = [
    { fn: 'count', as: 'n' },
    { fn: 'count', column: 'x', as: 'nx' },
    { fn: 'sum', column: 'x', as: 'sx' },
    { fn: 'avg', column: 'x', as: 'ax' },
    { fn: 'sum', column: 'd', as: 'sd' },
    { fn: 'avg', column: 'd', as: 'ad' },
    { fn: 'min', column: 'd', as: 'mind' },
    { fn: 'max', column: 'd', as: 'maxd' },
    { fn: 'sum', column: 'f', as: 'sf' },
    { fn: 'min', column: 's', as: 'mins' },
    { fn: 'max', column: 's', as: 'maxs' },
    { fn: 'max', column: 'big', as: 'maxbig' },
    { fn: 'sum', column: 'big', as: 'sbig' },
    { fn: 'count_distinct', column: 's', as: 'ds' },
  ];
  const aggsSql =
    'count(*), count(x), sum(x), avg(x), sum(d), avg(d), min(d), max(d), sum(f), min(s), max(s), max(big), sum(big), count(DISTINCT s)';
  const mix = (groupBy: string[], input: object = { op: 'scan', source: 'm' }) => ({
    version: 1,
    sources: { m: { parquet: [MIXA, MIXB] } },
    query: { op: 'aggregate', input, groupBy, aggregates: aggs },
  });
  const withKey = {
    op: 'project',
    input: { op: 'scan', source: 'm' },
    columns: [
      'k',
      'x',
      'd',
      'f',
      's',
      'big',
      { name: 'sk', expr: { fn: 'concat', args: [{ value: 'k' }, { column: 'k' }] } },
    ],
  };

  it.each([[['k']], [['sk', 'k']]])(
    'one map task ships its rows, the other its states; the reduce merges both (group by %j)',
    async (groupBy) => {
      const q = mix(groupBy, groupBy.includes('sk') ? withKey : undefined);
      const key = groupBy.includes('sk') ? `('k' || k) AS sk, k` : 'k';
      await expectSame(q, `SELECT ${key}, ${aggsSql} FROM read_parquet(${MIX}) GROUP BY ALL`, {
        workers: 2,
        partitions: 4,
      });
      const r = await runPlan(q, { workers: 2, partitions: 4, writeOutput: false });
      const c = r.stats.shuffles[0].combine!;
      expect(c).toMatchObject({ rowsBefore: 80000, partialTasks: 1, passThroughTasks: 1 });
      // the first task's 40,000 rows as they are, the second's (k, s) pairs as states: fewer bytes than the rows
      expect(c.rowsAfter).toBeGreaterThan(40000);
      expect(c.rowsAfter).toBeLessThan(40000 + 51 * 24);
      expect(c.bytesAfter).toBeLessThan(c.bytesBefore);
    },
  );

  it('a task passing its rows through ships the bytes it would without combiners', async () => {
    const q = mix(['k'], {
      op: 'filter',
      input: { op: 'scan', source: 'm' },
      where: { column: 'k', cmp: '<', value: 40000 },
    });
    const sql = `SELECT k, ${aggsSql} FROM read_parquet(${MIX}) WHERE k < 40000 GROUP BY k`;
    const opts = { workers: 2, partitions: 4, writeOutput: false };
    const [on, off] = await Promise.all([runPlan(q, opts), runPlan(q, { ...opts, combiners: false })]);
    const shipped = (x: RunResult) => x.stats.shuffles[0].partitionBytes.reduce((a, b) => a + b, 0);
    expect(on.stats.shuffles[0].combine).toMatchObject({ passThroughTasks: 1, partialTasks: 1 });
    // the pass-through task's blocks are the rows no-combiners ships; the aggregating task's are smaller
    expect(shipped(on)).toBeLessThan(shipped(off));
    expect(on.stats.shuffles[0].combine!.bytesAfter).toBeLessThan(on.stats.shuffles[0].combine!.bytesBefore);
    await expectSame(q, sql, { workers: 2, partitions: 4 });
  });

  it('under a tiny memory budget, rows and states are cut into the same grace pieces', async () => {
    const q = mix(['k']);
    const opts = { workers: 2, partitions: 2, memoryLimit: 256 * 1024, spillDir: path.join(dir, 'spill') };
    await expectSame(q, `SELECT k, ${aggsSql} FROM read_parquet(${MIX}) GROUP BY k`, opts);
    const r = await runPlan(q, { ...opts, writeOutput: false });
    expect(r.stats.shuffles[0].combine).toMatchObject({ partialTasks: 1, passThroughTasks: 1 });
    const labels = r.stats.tasks.map((t) => t.split ?? '');
    expect(labels.some((l) => l.startsWith('grace rows chunk'))).toBe(true);
    expect(labels.some((l) => l.startsWith('grace input chunk'))).toBe(true);
    expect(labels.some((l) => l.startsWith('grace piece'))).toBe(true);
  });
});

describe('combiner fed by the join (eager off)', () => {
  // Values read through the join's row indices, group ids from the build side;
  // the hot key 1 (1,000 x 100 rows) gives more matches than one chunk of pairs.
  const both = [
    { fn: 'count', as: 'n' },
    { fn: 'count', column: 'b', as: 'nb' },
    { fn: 'count', column: 'd', as: 'nd' },
    { fn: 'sum', column: 'a', as: 'sa' },
    { fn: 'sum', column: 'b', as: 'sb' },
    { fn: 'sum', column: 'c', as: 'sc' },
    { fn: 'min', column: 'd', as: 'mind' },
    { fn: 'max', column: 'c', as: 'maxc' },
    { fn: 'avg', column: 'a', as: 'aa' },
    { fn: 'avg', column: 'c', as: 'ac' },
  ];
  const bothSql = 'count(*), count(b), count(d), sum(a), sum(b), sum(c), min(d), max(c), avg(a), avg(c)';
  const leftOnly = [
    { fn: 'count', as: 'n' },
    { fn: 'sum', column: 'a', as: 'sa' },
    { fn: 'avg', column: 'b', as: 'ab' },
  ];
  const leftSql = 'count(*), sum(a), avg(b)';
  const KW: Record<string, string> = {
    inner: 'INNER',
    left: 'LEFT',
    right: 'RIGHT',
    full: 'FULL OUTER',
    semi: 'SEMI',
    anti: 'ANTI',
  };
  // the combiner of a shuffle join's reduce tasks (a broadcast join aggregates in its map tasks)
  const opts = { workers: 2, partitions: 3, eagerAggregation: false, broadcastBytes: 0 };

  it.each(['inner', 'left', 'right', 'full', 'semi', 'anti'])(
    '%s join, grouped by build, probe, both or no columns',
    async (type) => {
      const semi = type === 'semi' || type === 'anti';
      const join = {
        op: 'join',
        type,
        on: [['k', 'k']],
        left: { op: 'scan', source: 'l' },
        right: { op: 'scan', source: 'r' },
      };
      for (const groupBy of semi ? [['lg'], []] : [['rg'], ['lg'], ['lg', 'rg'], []]) {
        const q = planT({ op: 'aggregate', input: join, groupBy, aggregates: semi ? leftOnly : both });
        const sql = `SELECT ${groupBy.map((c) => `${c}, `).join('')}${semi ? leftSql : bothSql} FROM read_parquet('${L}') l ${KW[type]} JOIN read_parquet('${R}') r ON l.k = r.k${groupBy.length ? ` GROUP BY ${groupBy.join(', ')}` : ''}`;
        await expectSame(q, sql, opts);
        // The fused path (aggregating through the row indices) serves group columns (and min/max columns) of one
        // side: the build side's rows grouped once (the right here), or each probing batch's (semi and anti
        // grouped by the left: `both` takes min and max of right columns); rows whose grouped side is missing
        // (outer joins) form the group of nulls.
        const fused = groupBy.length === 0 || groupBy.join() === 'rg' || semi;
        const paths = await joinPaths(q);
        expect(paths.length).toBeGreaterThan(0);
        const grouped =
          groupBy.length === 0 || groupBy[0] === 'rg'
            ? { build: 'right', grouped: 'build' }
            : { build: 'right', grouped: 'probe' };
        for (const j of paths)
          expect(j).toMatchObject(fused ? { path: 'fused-aggregate', ...grouped } : { path: 'concatenated' });
        // key 1 alone matches 1,000 x 100 rows: more than one 64K chunk of pairs
        if (fused && type !== 'semi' && type !== 'anti')
          expect(Math.max(...paths.map((j) => j.matchChunks))).toBeGreaterThan(1);
        await expectSame(q, sql, { ...opts, broadcastBytes: undefined }); // broadcast: probe and combiner in the map tasks
      }
    },
  );
  async function joinPaths(q: object) {
    const r = await runPlan(q, { ...opts, writeOutput: false });
    return r.stats.tasks.filter((t) => t.stage === 'join-1' && t.kind === 'reduce').map((t) => t.join!);
  }
  it('with the table built on the smaller left side, and count_distinct of a build column', async () => {
    const join = {
      op: 'join',
      type: 'inner',
      on: [['k', 'k']],
      left: { op: 'scan', source: 'r' },
      right: { op: 'scan', source: 'l' },
    };
    const sql = (sel: string, g: string) =>
      `SELECT ${sel} FROM read_parquet('${R}') r JOIN read_parquet('${L}') l ON l.k = r.k GROUP BY ${g}`;
    await expectSame(
      planT({ op: 'aggregate', input: join, groupBy: ['rg'], aggregates: both }),
      sql(`rg, ${bothSql}`, 'rg'),
      opts,
    );
    const paths = await joinPaths(planT({ op: 'aggregate', input: join, groupBy: ['rg'], aggregates: both }));
    expect(paths.length).toBeGreaterThan(0);
    for (const j of paths) expect(j).toMatchObject({ path: 'fused-aggregate', build: 'left' });
    expect(Math.max(...paths.map((j) => j.matchChunks))).toBeGreaterThan(1);
    await expectSame(
      planT({
        op: 'aggregate',
        input: join,
        groupBy: ['rg'],
        aggregates: [
          { fn: 'count_distinct', column: 'd', as: 'dd' },
          { fn: 'sum', column: 'c', as: 'sc' },
        ],
      }),
      sql('rg, count(DISTINCT d), sum(c)', 'rg'),
      opts,
    );
  });
  it("broadcast: grouped by the probing side's columns, each probing batch is grouped in its map task (left, semi, anti, right, inner)", async () => {
    // min and max only of the grouped (probing) side's columns
    const probeSide = [
      { fn: 'count', as: 'n' },
      { fn: 'count', column: 'd', as: 'nd' },
      { fn: 'sum', column: 'a', as: 'sa' },
      { fn: 'sum', column: 'c', as: 'sc' },
      { fn: 'avg', column: 'c', as: 'ac' },
      { fn: 'min', column: 'a', as: 'mina' },
      { fn: 'max', column: 'b', as: 'maxb' },
      { fn: 'count_distinct', column: 'a', as: 'da' },
    ];
    const probeSql = 'count(*), count(d), sum(a), sum(c), avg(c), min(a), max(b), count(DISTINCT a)';
    const cases: [string, string[], object[], string][] = [
      ['left', ['lg'], probeSide, probeSql],
      ['inner', ['lg'], probeSide, probeSql],
      ['semi', ['lg'], leftOnly, leftSql],
      ['anti', ['lg'], leftOnly, leftSql],
      // a right join builds its left side: the right rows probe, grouped by a right column
      [
        'right',
        ['rg'],
        [
          { fn: 'count', as: 'n' },
          { fn: 'sum', column: 'a', as: 'sa' },
          { fn: 'max', column: 'c', as: 'mc' },
        ],
        'count(*), sum(a), max(c)',
      ],
    ];
    for (const [type, groupBy, aggregates, sel] of cases) {
      const q = planT({
        op: 'aggregate',
        input: {
          op: 'join',
          type,
          on: [['k', 'k']],
          left: { op: 'scan', source: 'l' },
          right: { op: 'scan', source: 'r' },
        },
        groupBy,
        aggregates,
      });
      await expectSame(
        q,
        `SELECT ${groupBy[0]}, ${sel} FROM read_parquet('${L}') l ${KW[type]} JOIN read_parquet('${R}') r ON l.k = r.k GROUP BY ${groupBy[0]}`,
        { ...opts, broadcastBytes: undefined },
      );
      const r = await runPlan(q, { ...opts, broadcastBytes: undefined, writeOutput: false });
      expect(r.stats.joins[0].strategy).toBe('broadcast');
      const fused = r.stats.tasks.filter((t) => t.kind === 'map' && t.join).map((t) => t.join!);
      expect(fused.length).toBeGreaterThan(0);
      for (const j of fused)
        expect(j).toMatchObject({ path: 'fused-aggregate', build: type === 'right' ? 'left' : 'right' });
    }
  });
  it('a key column of the probe side (grouped by, count_distinct) is read from the build side of an inner join', async () => {
    // l.k and r.k hold the same value on every inner match, so the build side's groups serve
    const q = (type: string, groupBy: string[]) =>
      planT({
        op: 'aggregate',
        groupBy,
        aggregates: [
          { fn: 'count_distinct', column: 'k', as: 'dk' },
          { fn: 'sum', column: 'a', as: 'sa' },
          { fn: 'count', as: 'n' },
        ],
        input: {
          op: 'join',
          type,
          on: [['k', 'k']],
          left: { op: 'scan', source: 'l' },
          right: { op: 'scan', source: 'r' },
        },
      });
    for (const [groupBy, g] of [
      [['rg'], 'rg'],
      [['k'], 'l.k'],
      [['rg', 'k'], 'rg, l.k'],
    ] as const) {
      const sql = (kw: string) =>
        `SELECT ${g}, count(DISTINCT l.k), sum(a), count(*) FROM read_parquet('${L}') l ${kw} JOIN read_parquet('${R}') r ON l.k = r.k GROUP BY ${g}`;
      await expectSame(q('inner', [...groupBy]), sql('INNER'), opts);
      const inner = await joinPaths(q('inner', [...groupBy]));
      expect(inner.length).toBeGreaterThan(0); // a loop over no join tasks would check nothing
      for (const j of inner) expect(j).toMatchObject({ path: 'fused-aggregate', build: 'right' });
      await expectSame(q('inner', [...groupBy]), sql('INNER'), { ...opts, broadcastBytes: undefined });
      // a left join may leave r.k missing where l.k is not: the probe side's own column stays, each probing batch grouped
      await expectSame(q('left', [...groupBy]), sql('LEFT'), opts);
      const left = await joinPaths(q('left', [...groupBy]));
      expect(left.length).toBeGreaterThan(0);
      for (const j of left)
        expect(j).toMatchObject(
          groupBy.includes('rg') ? { path: 'concatenated' } : { path: 'fused-aggregate', grouped: 'probe' },
        );
    }
  });
});

describe('eager aggregation below a join', () => {
  const aggs = [
    { fn: 'count', as: 'n' },
    { fn: 'count', column: 'b', as: 'nb' },
    { fn: 'count', column: 'd', as: 'nd' },
    { fn: 'sum', column: 'a', as: 'sa' },
    { fn: 'sum', column: 'b', as: 'sb' },
    { fn: 'sum', column: 'c', as: 'sc' },
    { fn: 'min', column: 'd', as: 'mind' },
    { fn: 'max', column: 'b', as: 'maxb' },
    { fn: 'avg', column: 'a', as: 'aa' },
    { fn: 'avg', column: 'c', as: 'ac' },
  ];
  const sqlAggs = 'count(*), count(b), count(d), sum(a), sum(b), sum(c), min(d), max(b), avg(a), avg(c)';
  const join = (type: string) => ({
    op: 'join',
    type,
    on: [['k', 'k']],
    left: { op: 'scan', source: 'l' },
    right: { op: 'scan', source: 'r' },
  });
  const KW: Record<string, string> = { inner: 'INNER', left: 'LEFT', right: 'RIGHT', full: 'FULL OUTER' };

  it.each(['inner', 'left', 'right', 'full'])('%s join, grouped by columns of both sides and a key', async (type) => {
    for (const groupBy of [['lg', 'rg'], ['k'], ['rg'], []]) {
      const q = planT({ op: 'aggregate', input: join(type), groupBy, aggregates: aggs });
      const cols = groupBy.map((g) => (g === 'k' ? 'l.k' : g));
      const sql = `SELECT ${cols.map((c) => `${c}, `).join('')}${sqlAggs} FROM read_parquet('${L}') l ${KW[type]} JOIN read_parquet('${R}') r ON l.k = r.k${cols.length ? ` GROUP BY ${cols.join(', ')}` : ''}`;
      await expectSame(q, sql, { workers: 2, partitions: 6 });
      const r = await runPlan(q, { workers: 2, partitions: 6, writeOutput: false });
      expect(r.stats.eager).toEqual(['aggregate-1']);
      // the sides were shuffled as partial aggregates: far fewer rows than the 3,000 + 400 read
      const sides = r.stats.shuffles.filter((s) => s.id.startsWith('join-1'));
      expect(sides.reduce((a, s) => a + s.partitionRows.reduce((x, y) => x + y, 0), 0)).toBeLessThan(1200);
      const off = await runPlan(q, { workers: 2, partitions: 6, writeOutput: false, eagerAggregation: false });
      expect(off.stats.eager).toEqual([]);
    }
  });
  it('with skew handling splitting the partial rows of the hot key', async () => {
    // Grouped by b (nearly unique on the left), key 1 keeps ~850 partial rows on the left after eager
    // aggregation (one per distinct b), so it is hot there; grouped by a right column alone it would be one row per map task.
    const q = planT({ op: 'aggregate', input: join('full'), groupBy: ['b', 'rg'], aggregates: aggs });
    const sql = `SELECT b, rg, ${sqlAggs} FROM read_parquet('${L}') l FULL OUTER JOIN read_parquet('${R}') r ON l.k = r.k GROUP BY b, rg`;
    const opts = {
      workers: 2,
      partitions: 6,
      skew: { strategy: 'key' as const, thresholdBytes: 1, factor: 1.5, advisoryPartitionBytes: 64 },
    };
    await expectSame(q, sql, opts);
    const r = await runPlan(q, { ...opts, writeOutput: false });
    expect(r.stats.eager).toEqual(['aggregate-1']);
    const split = r.stats.joins[0].splits.flatMap((s) => s.keys ?? []).find((k) => k.key[0] === '1');
    expect(split).toBeDefined();
    expect(split!.leftRows).toBeGreaterThan(500); // partial rows, not the 1,000 raw rows of key 1 ...
    expect(split!.leftRows).toBeLessThan(1000);
    expect(split!.tasks).toBeGreaterThan(1); // ... cut into pieces
    expect(r.stats.tasks.filter((t) => t.split?.startsWith('hot-key 1 piece')).length).toBeGreaterThan(1);
  });
  it('is not applied against a side with unique keys', async () => {
    const root = path.resolve(import.meta.dirname, '..', 'datasets', 'sample');
    const r = await runPlan(
      {
        version: 1,
        sources: { f: { parquet: path.join(root, 'fact.parquet') }, d: { parquet: path.join(root, 'dim.parquet') } },
        query: {
          op: 'aggregate',
          groupBy: ['region'],
          aggregates: [{ fn: 'sum', column: 'amount', as: 's' }],
          input: {
            op: 'join',
            type: 'inner',
            on: [['key', 'key']],
            left: { op: 'scan', source: 'f' },
            right: { op: 'scan', source: 'd' },
          },
        },
      },
      { workers: 2, writeOutput: false },
    );
    expect(r.stats.eager).toEqual([]);
    expect(r.numRows).toBe(8);
  });
  it('is not applied to count_distinct, which still gives the right answer', async () => {
    const q = planT({
      op: 'aggregate',
      input: join('inner'),
      groupBy: ['rg'],
      aggregates: [
        { fn: 'count_distinct', column: 'a', as: 'da' },
        { fn: 'count', as: 'n' },
      ],
    });
    await expectSame(
      q,
      `SELECT rg, count(DISTINCT a), count(*) FROM read_parquet('${L}') l JOIN read_parquet('${R}') r ON l.k = r.k GROUP BY rg`,
      { workers: 2 },
    );
    expect((await runPlan(q, { workers: 2, writeOutput: false })).stats.eager).toEqual([]);
  });
  it('--explain says when it applies', async () => {
    const { loadPlan, explainPlan } = await import('../dist/index.js');
    const text = explainPlan(
      await loadPlan(planT({ op: 'aggregate', input: join('left'), groupBy: ['rg'], aggregates: aggs }), {
        workers: 2,
      }),
    );
    expect(text).toMatch(
      /eager when a sample shows join keys repeating on both sides: each side of join-1 pre-aggregated by its join key/,
    );
  });
});
