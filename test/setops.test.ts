// Set operations (union, intersect, except, values) and the aggregates compiled onto plain ones (distinct,
// filter, grouping sets) against DuckDB: nulls, duplicates, widened types, empty inputs, under forced paths
// (the pool and the calling thread, spills under a tiny budget, every join shuffled, skew splits forced).
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type RunOptions, explainPlan, loadPlan, runPlan, runSql } from '../dist/index.js';
import { arrowTyped, duckTable, expectSame, expectTypedEqual, sql, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-setops-');
const A = path.join(dir, 'a.parquet'),
  B = path.join(dir, 'b.parquet'),
  E = path.join(dir, 'e.parquet'),
  C = path.join(dir, 'c.parquet'),
  D = path.join(dir, 'd.parquet'),
  F = path.join(dir, 'f.parquet'),
  G = path.join(dir, 'g.parquet');

beforeAll(async () => {
  // a: duplicates, nulls in every column; b: overlapping rows, other types (int64 k, decimal d, utf8 s)
  await writeParquet(
    A,
    `SELECT CASE WHEN i % 11 = 0 THEN NULL ELSE (i % 7) END::INTEGER AS k,
       CASE WHEN i % 13 = 0 THEN NULL ELSE 's' || (i % 5) END AS s,
       CASE WHEN i % 9 = 0 THEN NULL ELSE (i % 4) * 1.25 END::DECIMAL(6,2) AS d,
       (i % 3)::BIGINT AS g, i::BIGINT AS id
     FROM range(0, 400) t(i)`,
    64,
  );
  await writeParquet(
    B,
    `SELECT CASE WHEN i % 10 = 0 THEN NULL ELSE (i % 9) END::BIGINT AS k,
       CASE WHEN i % 8 = 0 THEN NULL ELSE 's' || (i % 6) END AS s,
       CASE WHEN i % 7 = 0 THEN NULL ELSE (i % 5) * 0.5 END::DECIMAL(9,3) AS d,
       (i % 4)::BIGINT AS g, i::BIGINT AS id
     FROM range(0, 150) t(i)`,
    64,
  );
  await writeParquet(E, `SELECT * FROM read_parquet('${A}') WHERE false`);
  // c and d: every key type the set operations take, nulls in each (none in nn), NaN and -0.0 against 0.0
  const typed = (k: string, mods: number[], zero: string) =>
    `SELECT CASE WHEN i % ${mods[0]} = 0 THEN NULL ELSE (i % 7) END::${k} AS k,
       CASE WHEN i % ${mods[1]} = 0 THEN NULL ELSE 's' || (i % 5) END AS s,
       CASE WHEN i % ${mods[2]} = 0 THEN NULL ELSE DATE '2020-01-01' + (i % 4)::INTEGER END AS dt,
       CASE i % 5 WHEN 0 THEN NULL WHEN 1 THEN 'NaN'::DOUBLE WHEN 2 THEN '${zero}'::DOUBLE ELSE (i % 3)::DOUBLE END AS f,
       CASE WHEN i % 7 = 0 THEN NULL ELSE TIMESTAMP '2020-01-01 00:00:00' + INTERVAL (i % 3) HOUR END AS ts,
       CASE WHEN i % 8 = 0 THEN NULL ELSE i % 2 = 0 END AS b,
       (i % 5)::BIGINT AS nn
     FROM range(0, 300) t(i)`;
  await writeParquet(C, typed('INTEGER', [11, 13, 6], '-0.0'), 64);
  await writeParquet(D, `${typed('BIGINT', [10, 4, 9], '0.0')} WHERE i % 3 <> 1`, 64);
  // f: d's rows 25 times over (5,000): a table over a 64 KB budget
  await writeParquet(F, `SELECT d.* FROM read_parquet('${D}') d, range(0, 25)`);
  // g: d's rows with k and s (its footer counts no null in them)
  await writeParquet(G, `SELECT * FROM read_parquet('${D}') WHERE k IS NOT NULL AND s IS NOT NULL`);
});

const sources = {
  a: { parquet: A },
  b: { parquet: B },
  e: { parquet: E },
  c: { parquet: C },
  d: { parquet: D },
  f: { parquet: F },
  g: { parquet: G },
};
const scan = (source: string, columns: string[]) => ({ op: 'scan', source, columns });
const plan = (query: object) => ({ version: 1, sources, query });
const ra = `read_parquet('${A}')`,
  rb = `read_parquet('${B}')`,
  re = `read_parquet('${E}')`,
  rc = `read_parquet('${C}')`,
  rd = `read_parquet('${D}')`;

/** The paths a set operation must give the same answer on. */
const PATHS: [string, RunOptions][] = [
  ['the pool', {}],
  ['the calling thread', { inThreadBytes: 1e9 }],
  ['a 64 KB budget, spilling', { memoryLimit: '64KB', spillDir: path.join(dir, 'spill'), partitions: 4 }],
  ['every join shuffled, splits forced', { broadcastBytes: 0, skew: { factor: 1, thresholdBytes: 1 }, partitions: 3 }],
];

describe('union, intersect, except, values', () => {
  const cases: [string, object, string][] = [
    [
      'union all of two sources, widened (int32 with int64, decimal(6,2) with decimal(9,3))',
      { op: 'union', all: true, inputs: [scan('a', ['k', 's', 'd']), scan('b', ['k', 's', 'd'])] },
      `SELECT k::BIGINT AS k, s, d FROM ${ra} UNION ALL SELECT k, s, d FROM ${rb}`,
    ],
    [
      'union (distinct) of three inputs, one empty, nulls equal',
      { op: 'union', inputs: [scan('a', ['k', 's']), scan('b', ['k', 's']), scan('e', ['k', 's'])] },
      `SELECT k::BIGINT AS k, s FROM ${ra} UNION SELECT k, s FROM ${rb} UNION SELECT k, s FROM ${re}`,
    ],
    [
      'union all: int with decimal is a decimal, decimal with float a float',
      {
        op: 'union',
        all: true,
        inputs: [
          {
            op: 'project',
            input: scan('a', ['g', 'd', 'id']),
            columns: ['g', 'd', { name: 'f', expr: { fn: '/', args: [{ column: 'id' }, { value: 4 }] } }],
          },
          { op: 'project', input: scan('b', ['d', 'id', 'g']), columns: ['d', 'g', 'id'] },
        ],
      },
      `SELECT g, d, id / 4 AS f FROM ${ra}
       UNION ALL SELECT d, g, id FROM ${rb}`,
    ],
    [
      'intersect (distinct)',
      { op: 'intersect', left: scan('a', ['k', 's']), right: scan('b', ['k', 's']) },
      `SELECT k::BIGINT AS k, s FROM ${ra} INTERSECT SELECT k, s FROM ${rb}`,
    ],
    [
      'intersect all',
      { op: 'intersect', all: true, left: scan('a', ['k', 's']), right: scan('b', ['k', 's']) },
      `SELECT k::BIGINT AS k, s FROM ${ra} INTERSECT ALL SELECT k, s FROM ${rb}`,
    ],
    [
      'except (distinct)',
      { op: 'except', left: scan('a', ['k', 'g']), right: scan('b', ['k', 'g']) },
      `SELECT k::BIGINT AS k, g FROM ${ra} EXCEPT SELECT k, g FROM ${rb}`,
    ],
    [
      'except all',
      { op: 'except', all: true, left: scan('a', ['k', 'g']), right: scan('b', ['k', 'g']) },
      `SELECT k::BIGINT AS k, g FROM ${ra} EXCEPT ALL SELECT k, g FROM ${rb}`,
    ],
    [
      'except all with an empty right side, intersect with an empty one',
      {
        op: 'union',
        all: true,
        inputs: [
          { op: 'except', all: true, left: scan('a', ['k', 'g']), right: scan('e', ['k', 'g']) },
          { op: 'intersect', left: scan('a', ['k', 'g']), right: scan('e', ['k', 'g']) },
        ],
      },
      `(SELECT k, g FROM ${ra} EXCEPT ALL SELECT k, g FROM ${re})
       UNION ALL (SELECT k, g FROM ${ra} INTERSECT SELECT k, g FROM ${re})`,
    ],
    [
      'values, joined to a source and unioned with it',
      {
        op: 'union',
        all: true,
        inputs: [
          {
            op: 'join',
            type: 'inner',
            left: scan('a', ['g', 's']),
            right: {
              op: 'values',
              columns: ['g2', 'label'],
              rows: [
                [0, 'zero'],
                [1, null],
                [2, 'two'],
                [null, 'n'],
              ],
            },
            on: [['g', 'g2']],
          },
          {
            op: 'values',
            columns: ['x', 'y', 'z', 'w'],
            rows: [
              [7, 'seven', 7, 'x'],
              [null, null, null, null],
            ],
          },
        ],
      },
      `SELECT a.g, a.s, v.g2, v.label FROM ${ra} a JOIN (VALUES (0::BIGINT, 'zero'), (1, NULL), (2, 'two'), (NULL, 'n')) v(g2, label) ON a.g = v.g2
       UNION ALL VALUES (7::BIGINT, 'seven', 7::BIGINT, 'x'), (NULL, NULL, NULL, NULL)`,
    ],
    [
      'values with types and a decimal column widened',
      {
        op: 'values',
        columns: ['a', 'b', 'c'],
        rows: [
          [1, 1.5, '2024-01-02'],
          [2, 2, null],
        ],
        types: ['int32', 'float64', 'date'],
      },
      `VALUES (1::INTEGER, 1.5::DOUBLE, DATE '2024-01-02'), (2, 2, NULL)`,
    ],
  ];
  for (const [name, q, duckSql] of cases) {
    for (const [how, opts] of PATHS)
      it(`${name}, on ${how}`, async () => {
        await expectSame(plan(q), duckSql, opts);
      });
  }

  it('sort and limit over a union', async () => {
    const q = {
      op: 'limit',
      count: 7,
      input: {
        op: 'sort',
        by: [
          { column: 'k', nulls: 'first' },
          { column: 'id', desc: true },
        ],
        input: { op: 'union', all: true, inputs: [scan('a', ['k', 'id']), scan('b', ['k', 'id'])] },
      },
    };
    await expectSame(
      plan(q),
      `SELECT * FROM (SELECT k::BIGINT AS k, id FROM ${ra} UNION ALL SELECT k, id FROM ${rb}) ORDER BY k NULLS FIRST, id DESC LIMIT 7`,
      {},
      true,
    );
  });

  it('mismatched kinds are a plan error naming both types and the input', async () => {
    const q = { op: 'union', inputs: [scan('a', ['k', 's']), scan('b', ['s', 'k'])] };
    await expect(runPlan(plan(q), { baseDir: dir })).rejects.toThrow(
      /query\.inputs\[1\].*union column 1 \("k"\): input 1 gives utf8 \("s"\), input 0 gives int32/,
    );
    const n = { op: 'except', left: scan('a', ['k']), right: scan('b', ['k', 's']) };
    await expect(runPlan(plan(n), { baseDir: dir })).rejects.toThrow(/query\.right: union input 1 has 2 column/);
    const v = { op: 'values', columns: ['a'], rows: [[1], ['x']] };
    await expect(runPlan(plan(v), { baseDir: dir })).rejects.toThrow(/query\.rows\[1\]\[0\]: column "a": utf8/);
  });
});

/** Distinct INTERSECT and EXCEPT of c and d, on every column type, planned as a semi or anti join when d is small. */
describe('distinct intersect and except: the join plan', () => {
  // small files: the estimates would seldom choose the join plan; `setOps: 'join'` takes it wherever it can
  const JOIN = { setOps: 'join' as const };
  const setOp = (op: string, cols: string[], left = 'c', right = 'd') => ({
    op,
    left: scan(left, cols),
    right: scan(right, cols),
  });
  // k is int32 in c and e, int64 in d
  const duckOp = (op: string, cols: string[], l = rc, r = rd) => {
    const k = l === rc && r === re ? 'k' : 'k::BIGINT AS k';
    return `SELECT ${cols.map((c) => (c === 'k' ? k : c)).join(', ')} FROM ${l} ${op} SELECT ${cols.join(', ')} FROM ${r}`;
  };
  const cases: [string, string, string[], string?, string?][] = [
    ['int32 against int64 keys with nulls both sides, duplicates on the left', 'except', ['k']],
    ['int32 against int64 keys with nulls both sides, duplicates on the left', 'intersect', ['k']],
    [
      'multi-column keys, nulls in some columns (k, s, dt), one column never null (nn)',
      'except',
      ['k', 's', 'nn', 'dt'],
    ],
    [
      'multi-column keys, nulls in some columns (k, s, dt), one column never null (nn)',
      'intersect',
      ['s', 'k', 'dt', 'nn'],
    ],
    ['strings and dates', 'except', ['s', 'dt']],
    ['floats: NaN equals NaN, -0.0 equals 0.0, nulls', 'except', ['f']],
    ['floats: NaN equals NaN, -0.0 equals 0.0, nulls', 'intersect', ['f', 'nn']],
    ['timestamps and booleans', 'except', ['ts', 'b']],
    ['timestamps and booleans', 'intersect', ['b', 'ts']],
    ['a column never null on either side alone', 'except', ['nn']],
    ['nulls on the left side only (joined on the columns themselves)', 'except', ['k', 's', 'dt'], 'c', 'g'],
    ['nulls on the left side only (joined on the columns themselves)', 'intersect', ['k', 's', 'dt'], 'c', 'g'],
    ['nulls on the right side only (joined on the columns themselves)', 'except', ['k', 's'], 'g', 'c'],
    ['nulls on the right side only (joined on the columns themselves)', 'intersect', ['s', 'k'], 'g', 'c'],
    ['an empty right side', 'except', ['k', 's'], 'c', 'e'],
    ['an empty right side', 'intersect', ['k', 's'], 'c', 'e'],
    ['an empty left side', 'except', ['k', 's'], 'e', 'd'],
    ['an empty left side', 'intersect', ['k', 's'], 'e', 'd'],
  ];
  const file = { c: rc, d: rd, e: re, g: `read_parquet('${G}')` };
  for (const [name, op, cols, l, r] of cases) {
    const left = l ?? 'c',
      right = r ?? 'd';
    const text = duckOp(op.toUpperCase(), cols, file[left as 'c'], file[right as 'c']);
    for (const [how, opts] of PATHS)
      it(`${op} ${name} (${left} ${op} ${right}), on ${how}`, async () => {
        await expectSame(plan(setOp(op, cols, left, right)), text, { ...opts, ...JOIN });
      });
    it(`${op} ${name} (${left} ${op} ${right}), the plan chosen by cost, broadcast off`, async () => {
      await expectSame(plan(setOp(op, cols, left, right)), text, { broadcastBytes: 0 });
    });
  }
  const explain = async (q: object, opts: RunOptions = {}) =>
    explainPlan(await loadPlan(plan(q), { baseDir: dir, workers: 2, ...opts }));
  it('EXCEPT as an anti join and a distinct, INTERSECT as a semi join: --explain names the keys', async () => {
    const except = await explain(setOp('except', ['k', 's', 'nn']), JOIN);
    expect(except).toMatch(/except-1: aggregate by \[k, s, nn\]/);
    // k and s may be null on both sides: joined on their values with nulls fixed and on the nulls' flags; nn as it is
    expect(except).toMatch(
      /except-1\.anti: anti hash join on k \(nulls fixed\) = k \(nulls fixed\) and s \(nulls fixed\) = s \(nulls fixed\) and nn = nn and nulls\(k, s\) = nulls\(k, s\) → except-1\.rows/,
    );
    expect(except).toMatch(/expected strategy: broadcast/);
    expect(except).not.toMatch(/except-1\.count/);
    expect(await explain(setOp('intersect', ['k']), JOIN)).toMatch(
      /intersect-1\.semi: semi hash join on k \(nulls fixed\) = k \(nulls fixed\) and nulls\(k\)/,
    );
    // g never holds a null in k or s: those join as they are
    expect(await explain(setOp('except', ['k', 's', 'dt'], 'c', 'g'), JOIN)).toMatch(
      /except-1\.anti: anti hash join on k = k and s = s and dt \(nulls fixed\) = dt \(nulls fixed\) and nulls\(dt\) = nulls\(dt\)/,
    );
  });
  it('chosen by cost where the join drops more of the left rows than the right side has: the right side broadcast, no shuffle but the distinct', async () => {
    // k and nn: 7 and 5 values on both sides (the footers' ranges), each of c's 300 rows expected to have a match
    const q = setOp('except', ['k', 'nn']);
    expect(await explain(q)).toMatch(
      /except-1\.anti: anti hash join on k \(nulls fixed\) = k \(nulls fixed\) and nn = nn/,
    );
    const r = await runPlan(plan(q), { baseDir: dir, workers: 2, writeOutput: false });
    expect(r.stats.joins.map((j) => [j.id, j.strategy])).toEqual([['except-1.anti', 'broadcast']]);
    expect(r.stats.shuffles.map((s) => s.id)).toEqual(['except-1.input']);
    // the same as an INTERSECT would keep every left row: the aggregate plan
    expect(await explain(setOp('intersect', ['k', 'nn']))).toMatch(/intersect-1\.count: aggregate/);
  });
  it('the join plan shuffled when its table does not fit the budget at run time: the same rows', async () => {
    for (const op of ['except', 'intersect']) {
      const q = plan(setOp(op, ['k', 's', 'dt'], 'c', 'f'));
      const opts = { memoryLimit: '64KB', spillDir: path.join(dir, 'spill-join'), partitions: 4 };
      const r = await runPlan(q, { baseDir: dir, workers: 2, writeOutput: false, ...opts, ...JOIN });
      expect(r.stats.joins.map((j) => [j.id, j.strategy])).toEqual([
        [`${op}-1.${op === 'except' ? 'anti' : 'semi'}`, 'shuffle'],
      ]);
      await expectSame(q, duckOp(op.toUpperCase(), ['k', 's', 'dt'], rc, `read_parquet('${F}')`), { ...opts, ...JOIN });
    }
  });
  it('broadcast off, a right side the join would drop fewer rows than, ALL, or a boolean column: the aggregate plan', async () => {
    expect(await explain(setOp('except', ['k']), { broadcastBytes: 0 })).toMatch(/except-1\.count: aggregate/);
    expect(await explain(setOp('except', ['k', 's', 'dt'], 'c', 'f'))).toMatch(/except-1\.count: aggregate/);
    expect(await explain({ ...setOp('except', ['k']), all: true }, JOIN)).toMatch(/except-1\.count: aggregate/);
    expect(await explain(setOp('intersect', ['k', 'b']), JOIN)).toMatch(/intersect-1\.count: aggregate/);
  });
});

describe('aggregates: distinct, filter, grouping sets', () => {
  const H = path.join(dir, 'hot.parquet');
  const rh = `read_parquet('${H}')`;
  beforeAll(async () => {
    // group 0 is hot: half the rows and 3,000 distinct values of x; the others few of each
    await writeParquet(
      H,
      `SELECT CASE WHEN i % 2 = 0 THEN 0 WHEN i % 97 = 0 THEN NULL ELSE i % 13 END::BIGINT AS g,
         CASE WHEN i % 5 = 0 THEN 'p' ELSE 'q' || (i % 3) END AS h,
         CASE WHEN i % 17 = 0 THEN NULL WHEN i % 2 = 0 THEN (i / 2) % 3000 ELSE i % 7 END::INTEGER AS x,
         CASE WHEN i % 19 = 0 THEN NULL ELSE (i % 40) * 0.25 END::DECIMAL(8,2) AS d,
         (i % 23) * 0.5::DOUBLE AS f, 's' || (i % 11) AS s
       FROM range(0, 12000) t(i)`,
      1000,
    );
  });
  const hot = (query: object) => ({ version: 1, sources: { h: { parquet: H } }, query });
  const agg = (groupBy: string[] | null, aggregates: object[], extra: object = {}) => ({
    op: 'aggregate',
    input: { op: 'scan', source: 'h' },
    ...(groupBy ? { groupBy } : {}),
    aggregates,
    ...extra,
  });
  const HOT_PATHS: [string, RunOptions][] = [
    ...PATHS,
    ['skew splits forced, no combiners', { skew: { factor: 1, thresholdBytes: 1 }, combiners: false, partitions: 4 }],
  ];
  const cases: [string, object, string][] = [
    [
      'count/sum/avg/min/max DISTINCT mixed with plain ones, by a hot key',
      agg(
        ['g'],
        [
          { fn: 'count', column: 'x', distinct: true, as: 'cx' },
          { fn: 'sum', column: 'x', distinct: true, as: 'sx' },
          { fn: 'avg', column: 'x', distinct: true, as: 'ax' },
          { fn: 'max', column: 'x', distinct: true, as: 'mx' },
          { fn: 'count', as: 'n' },
          { fn: 'sum', column: 'd', as: 'sd' },
          { fn: 'avg', column: 'f', as: 'af' },
          { fn: 'min', column: 's', as: 'ms' },
          { fn: 'count', column: 'x', as: 'nx' },
        ],
      ),
      `SELECT g, count(DISTINCT x) AS cx, sum(DISTINCT x)::BIGINT AS sx, avg(DISTINCT x) AS ax, max(DISTINCT x) AS mx,
         count(*) AS n, sum(d) AS sd, avg(f) AS af, min(s) AS ms, count(x) AS nx FROM ${rh} GROUP BY g`,
    ],
    [
      'distinct aggregates of two arguments (one a decimal), with plain ones',
      agg(
        ['h'],
        [
          { fn: 'count', column: 'x', distinct: true, as: 'cx' },
          { fn: 'sum', column: 'd', distinct: true, as: 'sd' },
          { fn: 'count_distinct', column: 's', as: 'cs' },
          { fn: 'count', as: 'n' },
          { fn: 'max', column: 'f', as: 'mf' },
        ],
      ),
      `SELECT h, count(DISTINCT x) AS cx, sum(DISTINCT d) AS sd, count(DISTINCT s) AS cs, count(*) AS n, max(f) AS mf
       FROM ${rh} GROUP BY h`,
    ],
    [
      'distinct aggregates of three arguments by a hot key with a null group, with plain avg and min of a string',
      agg(
        ['g'],
        [
          { fn: 'count', column: 'x', distinct: true, as: 'cx' },
          { fn: 'sum', column: 'd', distinct: true, as: 'sd' },
          { fn: 'avg', column: 'f', distinct: true, as: 'af' },
          { fn: 'count', column: 'd', distinct: true, as: 'cd' },
          { fn: 'count', as: 'n' },
          { fn: 'min', column: 's', as: 'ms' },
          { fn: 'avg', column: 'd', as: 'ad' },
        ],
      ),
      `SELECT g, count(DISTINCT x) AS cx, sum(DISTINCT d) AS sd, avg(DISTINCT f) AS af, count(DISTINCT d) AS cd,
         count(*) AS n, min(s) AS ms, avg(d) AS ad FROM ${rh} GROUP BY g`,
    ],
    [
      'grouping sets with two distinct arguments and a plain count',
      agg(
        null,
        [
          { fn: 'count', column: 'x', distinct: true, as: 'cx' },
          { fn: 'sum', column: 'd', distinct: true, as: 'sd' },
          { fn: 'count', as: 'n' },
          { fn: 'grouping', columns: ['g', 'h'], as: 'gid' },
        ],
        { groupingSets: [['g', 'h'], ['h'], []] },
      ),
      `SELECT g, h, count(DISTINCT x) AS cx, sum(DISTINCT d) AS sd, count(*) AS n, grouping(g, h) AS gid
       FROM ${rh} GROUP BY GROUPING SETS ((g, h), (h), ())`,
    ],
    [
      'a rollup of three keys (one hot, one with nulls), re-aggregated: avg, min/max of strings and decimals',
      agg(
        null,
        [
          { fn: 'count', as: 'n' },
          { fn: 'count', column: 'x', as: 'nx' },
          { fn: 'avg', column: 'd', as: 'ad' },
          { fn: 'min', column: 's', as: 'ms' },
          { fn: 'max', column: 'd', as: 'md' },
          { fn: 'sum', column: 'f', as: 'sf' },
          { fn: 'grouping', columns: ['g', 'h', 'x'], as: 'gid' },
        ],
        { groupingSets: [['g', 'h', 'x'], ['g', 'h'], ['g'], []] },
      ),
      `SELECT g, h, x, count(*) AS n, count(x) AS nx, avg(d) AS ad, min(s) AS ms, max(d) AS md, sum(f) AS sf,
         grouping(g, h, x) AS gid FROM ${rh} GROUP BY ROLLUP (g, h, x)`,
    ],
    [
      'grouping sets that do not nest (no set has every key): the rows expanded',
      agg(
        null,
        [
          { fn: 'count', as: 'n' },
          { fn: 'avg', column: 'd', as: 'ad' },
          { fn: 'grouping', columns: ['g', 'h'], as: 'gid' },
        ],
        { groupingSets: [['g'], ['h'], []] },
      ),
      `SELECT g, h, count(*) AS n, avg(d) AS ad, grouping(g, h) AS gid FROM ${rh} GROUP BY GROUPING SETS ((g), (h), ())`,
    ],
    [
      'count(DISTINCT x) alone by a hot key (count_distinct, split on group and value)',
      agg(['g'], [{ fn: 'count', column: 'x', distinct: true, as: 'cx' }]),
      `SELECT g, count(DISTINCT x) AS cx FROM ${rh} GROUP BY g`,
    ],
    [
      'FILTER (WHERE ...) on count(*), sum, a distinct count and an expression',
      agg(
        ['h'],
        [
          { fn: 'count', as: 'n', filter: { column: 'g', cmp: '=', value: 0 } },
          { fn: 'sum', column: 'd', as: 'sd', filter: { column: 'x', cmp: '>', value: 100 } },
          { fn: 'count', column: 'x', distinct: true, as: 'cx', filter: { column: 's', in: ['s1', 's2'] } },
          {
            fn: 'avg',
            expr: { fn: '*', args: [{ column: 'f' }, { value: 2 }] },
            as: 'af',
            filter: { not: { column: 'x', isNull: true } },
          },
        ],
      ),
      `SELECT h, count(*) FILTER (WHERE g = 0) AS n, sum(d) FILTER (WHERE x > 100) AS sd,
         count(DISTINCT x) FILTER (WHERE s IN ('s1', 's2')) AS cx, avg(f * 2) FILTER (WHERE x IS NOT NULL) AS af
       FROM ${rh} GROUP BY h`,
    ],
    [
      'distinct aggregates without groups, over no rows too',
      {
        op: 'union',
        all: true,
        inputs: [
          agg(
            [],
            [
              { fn: 'count', column: 'x', distinct: true, as: 'cx' },
              { fn: 'sum', column: 'x', distinct: true, as: 'sx' },
              { fn: 'count', as: 'n' },
            ],
          ),
          {
            op: 'aggregate',
            input: { op: 'filter', input: { op: 'scan', source: 'h' }, where: { column: 'g', cmp: '<', value: 0 } },
            groupBy: [],
            aggregates: [
              { fn: 'count', column: 'x', distinct: true, as: 'cx' },
              { fn: 'sum', column: 'x', distinct: true, as: 'sx' },
              { fn: 'count', as: 'n' },
            ],
          },
        ],
      },
      `SELECT count(DISTINCT x) AS cx, sum(DISTINCT x)::BIGINT AS sx, count(*) AS n FROM ${rh}
       UNION ALL SELECT count(DISTINCT x), sum(DISTINCT x)::BIGINT, count(*) FROM ${rh} WHERE g < 0`,
    ],
    [
      'grouping sets (a rollup) with grouping() bits',
      agg(
        null,
        [
          { fn: 'count', as: 'n' },
          { fn: 'sum', column: 'd', as: 'sd' },
          { fn: 'grouping', columns: ['g', 'h'], as: 'gid' },
          { fn: 'grouping', columns: ['h'], as: 'gh' },
        ],
        { groupingSets: [['g', 'h'], ['g'], []] },
      ),
      `SELECT g, h, count(*) AS n, sum(d) AS sd, grouping(g, h) AS gid, grouping(h) AS gh
       FROM ${rh} GROUP BY ROLLUP (g, h)`,
    ],
    [
      'grouping sets (a cube) with a distinct count and a filter',
      agg(
        null,
        [
          { fn: 'count', column: 'x', distinct: true, as: 'cx' },
          { fn: 'max', column: 'f', as: 'mf', filter: { column: 'h', cmp: '!=', value: 'p' } },
          { fn: 'grouping', columns: ['h', 'g'], as: 'gid' },
        ],
        { groupingSets: [['g', 'h'], ['g'], ['h'], []] },
      ),
      `SELECT g, h, count(DISTINCT x) AS cx, max(f) FILTER (WHERE h != 'p') AS mf, grouping(h, g) AS gid
       FROM ${rh} GROUP BY CUBE (g, h)`,
    ],
    [
      'grouping sets over no rows: a row per empty set (count 0), with a distinct sum',
      {
        op: 'aggregate',
        input: { op: 'filter', input: { op: 'scan', source: 'h' }, where: { column: 'g', cmp: '<', value: 0 } },
        groupingSets: [['g'], [], []],
        aggregates: [
          { fn: 'count', as: 'n' },
          { fn: 'sum', column: 'x', distinct: true, as: 'sx' },
          { fn: 'grouping', columns: ['g'], as: 'gg' },
        ],
      },
      `SELECT g, count(*) AS n, sum(DISTINCT x)::BIGINT AS sx, grouping(g) AS gg FROM ${rh} WHERE g < 0
       GROUP BY GROUPING SETS ((g), (), ())`,
    ],
    [
      // the sets nest (no DISTINCT): count(*) is counted at the first level without a column of ones, and the empty
      // set's row, added after it, still counts 0
      'a rollup over no rows: the grand total counts 0, its sum null',
      {
        op: 'aggregate',
        input: { op: 'filter', input: { op: 'scan', source: 'h' }, where: { column: 'g', cmp: '<', value: 0 } },
        groupingSets: [['g', 'h'], ['g'], []],
        aggregates: [
          { fn: 'count', as: 'n' },
          { fn: 'sum', column: 'd', as: 'sd' },
          { fn: 'avg', column: 'x', as: 'ax' },
        ],
      },
      `SELECT g, h, count(*) AS n, sum(d) AS sd, avg(x) AS ax FROM ${rh} WHERE g < 0 GROUP BY ROLLUP (g, h)`,
    ],
  ];
  it('plan errors name the field: grouping() of a column not grouped by, groupBy with groupingSets', async () => {
    const g = agg(null, [{ fn: 'grouping', columns: ['h'], as: 'x' }], { groupingSets: [['g']] });
    await expect(runPlan(hot(g), { baseDir: dir })).rejects.toThrow(
      /query\.aggregates\[0\]\.columns\[0\]: grouping\(\): "h" is not a group key/,
    );
    const b = agg(['g'], [{ fn: 'count', as: 'n' }], { groupingSets: [['g']] });
    await expect(runPlan(hot(b), { baseDir: dir })).rejects.toThrow(
      /query\.groupingSets: give groupBy or groupingSets/,
    );
    const s = agg(['g'], [{ fn: 'sum', column: 's', distinct: true, as: 'n' }]);
    await expect(runPlan(hot(s), { baseDir: dir })).rejects.toThrow(
      /query\.aggregates\[0\]\.column: sum needs a numeric column; "s" is utf8/,
    );
  });

  it('sum(DISTINCT x) by a hot key: the first shuffle is on (group, value), no partition holds the hot group alone', async () => {
    const q = agg(
      ['g'],
      [
        { fn: 'sum', column: 'x', distinct: true, as: 'sx' },
        { fn: 'count', as: 'n' },
      ],
    );
    const r = await runPlan(hot(q), { baseDir: dir, writeOutput: false, partitions: 4, inThreadBytes: 0 });
    const first = r.stats.shuffles.find((x) => x.id.endsWith('.partial.input'))!;
    const rows = [...first.partitionRows].sort((a, b) => a - b);
    // group 0 holds half of the 12,000 rows and 3,000 distinct values: by group alone one partition would hold them
    expect(rows.at(-1)!).toBeLessThan(1.5 * rows[1]);
    const second = r.stats.shuffles.find((x) => x.id.endsWith('.agg.input'))!;
    expect(second.partitionRows.reduce((a, b) => a + b, 0)).toBeLessThan(100); // combiners: a state per task and group
  });

  it('a rollup is aggregated by every key first: the coarser sets come from that small result, not from copies of each row', async () => {
    const q = agg(
      null,
      [
        { fn: 'count', as: 'n' },
        { fn: 'sum', column: 'd', as: 'sd' },
      ],
      { groupingSets: [['g', 'h'], ['g'], []] },
    );
    const r = await runPlan(hot(q), { baseDir: dir, writeOutput: false, partitions: 4, inThreadBytes: 0 });
    const total = (suffix: string) =>
      r.stats.shuffles.find((x) => x.id.endsWith(suffix))!.partitionRows.reduce((a, b) => a + b, 0);
    // 12,000 rows by (g, h): 15 groups of g (one null) times 4 of h, at most one state per map task and group
    expect(total('.partial.input')).toBeLessThan(12000);
    expect(total('.agg.input')).toBeLessThan(3 * 60 + 2);
  });

  it('distinct aggregates of two arguments by a hot key: no row copied per argument, each first shuffle on (group, value)', async () => {
    const q = agg(
      ['g'],
      [
        { fn: 'sum', column: 'x', distinct: true, as: 'sx' },
        { fn: 'avg', column: 'd', distinct: true, as: 'ad' },
        { fn: 'count', as: 'n' },
      ],
    );
    const r = await runPlan(hot(q), { baseDir: dir, writeOutput: false, partitions: 4, inThreadBytes: 0 });
    const firsts = r.stats.shuffles.filter((x) => x.id.endsWith('.partial.input'));
    expect(firsts).toHaveLength(2);
    for (const first of firsts) {
      const rows = [...first.partitionRows].sort((a, b) => a - b);
      expect(rows.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(12000);
      // group 0 holds half the rows: by group alone one partition would hold them
      expect(rows.at(-1)!).toBeLessThan(1.5 * rows[1]);
    }
  });

  for (const [name, q, duckSql] of cases) {
    for (const [how, opts] of HOT_PATHS)
      it(`${name}, on ${how}`, async () => {
        await expectSame(hot(q), duckSql, opts);
      });
  }
});

describe('SQL: set operations, VALUES, DISTINCT and FILTER aggregates, ROLLUP/CUBE/GROUPING SETS', () => {
  const views = async () => {
    for (const [t, f] of [
      ['sa', A],
      ['sb', B],
      ['se', E],
    ])
      await sql(`CREATE OR REPLACE VIEW ${t} AS SELECT * FROM read_parquet('${f}')`);
  };
  beforeAll(views);
  const S = { sa: A, sb: B, se: E };
  /** Our answer and DuckDB's to the same text (`duckText`: where DuckDB types a literal otherwise). */
  async function same(text: string, ordered = false, duckText = text, opts: RunOptions = {}) {
    const r = await runSql(text, { sources: S, workers: 2, ...opts });
    expectTypedEqual(arrowTyped(r.toArrow()), await duckTable(duckText), ordered);
  }
  const ETL: [string, string, boolean?][] = [
    ['UNION ALL of two sources', 'SELECT k, s FROM sa UNION ALL SELECT k, s FROM sb'],
    [
      'UNION (distinct), ordered, limited',
      'SELECT g, s FROM sa UNION SELECT g, s FROM sb ORDER BY g, s NULLS FIRST LIMIT 9',
      true,
    ],
    ['EXCEPT: what is missing', 'SELECT k, s FROM sa EXCEPT SELECT k, s FROM sb'],
    ['EXCEPT ALL and INTERSECT ALL', 'SELECT g FROM sa EXCEPT ALL SELECT g FROM sb INTERSECT ALL SELECT g FROM sa'],
    [
      'INTERSECT binds tighter than UNION; parentheses change it',
      `SELECT k FROM sa UNION SELECT k FROM sb INTERSECT SELECT k FROM se
       UNION ALL (SELECT g FROM sa UNION SELECT g FROM sb) INTERSECT SELECT k FROM sb`,
    ],
    [
      'operands with their own ORDER BY and LIMIT, the set ordered by position',
      '(SELECT id FROM sa ORDER BY id DESC LIMIT 3) UNION ALL (SELECT id FROM sb ORDER BY id LIMIT 2) ORDER BY 1',
      true,
    ],
    [
      'a set operation in FROM and in IN',
      `SELECT count(*) AS n FROM (SELECT k FROM sa UNION SELECT k FROM sb) u
       WHERE k IN (SELECT g FROM sa EXCEPT SELECT 1 FROM sb)`,
    ],
    [
      'a CTE over a UNION ALL, aggregated',
      'WITH u AS (SELECT g, d FROM sa UNION ALL SELECT g, d FROM sb) SELECT g, sum(d) AS sd, count(*) AS n FROM u GROUP BY g',
    ],
    [
      'ROLLUP totals with grouping()',
      `SELECT g, s, count(*) AS n, sum(d) AS sd, grouping(g, s) AS gid FROM sa GROUP BY ROLLUP (g, s)`,
    ],
    [
      'CUBE and GROUPING SETS, with a plain key besides',
      `SELECT g, s, k, count(*) AS n, grouping(s, k) AS gi FROM sa GROUP BY g, CUBE (s, k)`,
    ],
    [
      'GROUPING SETS with an empty set, HAVING and ORDER BY over them',
      `SELECT g, s, max(d) AS m FROM sa GROUP BY GROUPING SETS ((g, s), g, ()) HAVING count(*) > 3
       ORDER BY g NULLS LAST, s NULLS LAST`,
      true,
    ],
    [
      'an untyped NULL in a UNION takes the type of the other inputs (subtotal rows)',
      `SELECT g, NULL AS s, count(*) AS n FROM sa GROUP BY g
       UNION ALL SELECT NULL, s, count(*) FROM sb GROUP BY s
       UNION SELECT NULL, NULL, count(*) FROM sa`,
    ],
    [
      'distinct counts and sums per hot key, FILTER (WHERE ...)',
      `SELECT g, count(DISTINCT k) AS ck, sum(DISTINCT k) AS sk, avg(DISTINCT d) AS ad, count(*) AS n,
         count(*) FILTER (WHERE s = 's1') AS n1, sum(d) FILTER (WHERE k > 2) AS sd FROM sa GROUP BY g`,
    ],
  ];
  for (const [name, text, ordered] of ETL) {
    it(name, async () => {
      await same(text, ordered ?? false);
    });
    it(`${name}, every join shuffled, splits forced, a 64 KB budget`, async () => {
      await same(text, ordered ?? false, text, {
        broadcastBytes: 0,
        skew: { factor: 1, thresholdBytes: 1 },
        memoryLimit: '64KB',
        spillDir: path.join(dir, 'spill-sql'),
      });
    });
  }

  it('VALUES as a statement and as a FROM source with column aliases', async () => {
    await same(
      "VALUES (1, 'a', 1.5), (2, NULL, 2), (-3, 'c', NULL)",
      false,
      "VALUES (1::BIGINT, 'a', 1.5::DECIMAL(2,1)), (2, NULL, 2::DECIMAL(2,1)), (-3, 'c', NULL)",
    );
    await same(
      "SELECT t.y, count(*) AS n, sum(k) AS sk FROM sa JOIN (VALUES (1, 's1'), (2, 's2'), (3, NULL)) AS t(x, y) ON sa.k = t.x GROUP BY t.y",
      false,
      "SELECT t.y, count(*) AS n, sum(k) AS sk FROM sa JOIN (VALUES (1::BIGINT, 's1'), (2, 's2'), (3, NULL)) AS t(x, y) ON sa.k = t.x GROUP BY t.y",
    );
    await same("SELECT s FROM sa EXCEPT VALUES ('s1'), ('s2') ORDER BY s NULLS FIRST", true);
  });

  it('a SELECT without FROM is one row: alone, under WHERE, in a UNION with a NULL of the other side', async () => {
    await same(
      "SELECT 1 + 2 AS x, 'a' AS y, DATE '2020-01-02' - 1 AS d",
      false,
      "SELECT (1 + 2)::BIGINT AS x, 'a' AS y, DATE '2020-01-02' - 1 AS d",
    );
    await same('SELECT 1 AS x WHERE 1 = 0', false, 'SELECT 1::BIGINT AS x WHERE 1 = 0');
    await same(
      "SELECT s, count(*) AS n FROM sa GROUP BY s UNION ALL SELECT 'total', NULL ORDER BY s NULLS FIRST",
      true,
    );
    await expect(runSql('SELECT *', { sources: S })).rejects.toThrow(/line 1, column 8: SELECT \* needs a FROM clause/);
  });

  it('errors: a different number of columns, ORDER BY an expression of a set, VALUES of an expression', async () => {
    await expect(runSql('SELECT k, s FROM sa UNION SELECT k FROM sb', { sources: S })).rejects.toThrow(
      /line 1, column 1: each side of UNION needs the same number of columns; the left has 2, the right 1/,
    );
    await expect(runSql('SELECT k FROM sa UNION SELECT k FROM sb ORDER BY k + 1', { sources: S })).rejects.toThrow(
      /ORDER BY of a UNION, INTERSECT or EXCEPT must name an output column or its position/,
    );
    await expect(runSql('VALUES (1 + 2)', { sources: S })).rejects.toThrow(
      /line 1, column 11: VALUES holds literals only/,
    );
  });
});
