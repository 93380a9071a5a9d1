// Scan, filter, project, aggregate, sort and limit against DuckDB on a small
// table with nulls, strings, int64 values above 2^53 (in runs of consecutive
// values, which doubles cannot tell apart), uint64 values above 2^63, dates and timestamps.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runPlan } from '../dist/index.js';
import { duckRows, duckTable, expectSame, ourRows, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-ops-');
const T = path.join(dir, 't.parquet');
const E = path.join(dir, 'empty.parquet');
const SRC = `read_parquet('${T}')`;

beforeAll(async () => {
  const q = `
    SELECT i::BIGINT AS id,
      CASE WHEN i % 7 = 0 THEN NULL ELSE 'g' || (i % 5) END AS g,
      (i % 3)::TINYINT AS h,
      CASE WHEN i % 11 = 0 THEN NULL ELSE (i * 37 % 101)::INTEGER END AS x,
      CASE WHEN i % 13 = 0 THEN NULL ELSE (i % 17) * 1.25::DOUBLE END AS f,
      9007199254740993::BIGINT + (i // 3) * 1000003 + i % 3 AS big,
      (i % 4 = 0) AS flag,
      DATE '2024-01-01' + (i % 40)::INTEGER AS d,
      TIMESTAMP '2024-01-01 00:00:00' + to_microseconds(i * 3600000123) AS ts,
      (i % 200)::UTINYINT AS u8,
      (CASE WHEN i % 3 = 0 THEN 9223372036854775808::UBIGINT + i * 123456789012345 ELSE i * 4000000000 END)::UBIGINT AS u64,
      CASE WHEN i % 19 = 0 THEN NULL ELSE (i % 300 - 150)::SMALLINT END AS s16
    FROM range(0, 1500) t(i)`;
  await writeParquet(T, q, 200);
  await writeParquet(E, `${q} LIMIT 0`, 200);
});

const base = (query: object, extra: object = {}) => ({
  version: 1,
  sources: { t: { parquet: T }, e: { parquet: E } },
  query,
  ...extra,
});
const scan = (columns?: string[]) => ({ op: 'scan', source: 't', ...(columns ? { columns } : {}) });

describe('scan and project', () => {
  it('reads every column type, 64-bit integers exact', async () => {
    const rows = await expectSame(base(scan()), `SELECT * FROM ${SRC}`);
    expect(rows.length).toBe(1500);
    expect(rows.some((r) => r[5] === '9007199254740993')).toBe(true);
  });
  it('shuffles every column type, nulls included, through a join', async () => {
    const q = {
      op: 'join',
      type: 'inner',
      on: [
        ['h', 'h'],
        ['id', 'id'],
      ],
      left: scan(),
      right: scan(['id', 'h', 'g', 's16', 'ts']),
    };
    const rows = await expectSame(
      base(q),
      `SELECT l.*, r.id, r.h, r.g, r.s16, r.ts FROM ${SRC} l JOIN ${SRC} r ON l.h = r.h AND l.id = r.id`,
      { workers: 2, partitions: 7, broadcastBytes: 0 },
    );
    // and through a broadcast table in shared memory
    await expectSame(
      base(q),
      `SELECT l.*, r.id, r.h, r.g, r.s16, r.ts FROM ${SRC} l JOIN ${SRC} r ON l.h = r.h AND l.id = r.id`,
      { workers: 2 },
    );
    expect(rows.length).toBe(1500);
  });
  it('reads only the listed columns, in the listed order', async () => {
    const r = await runPlan(base(scan(['x', 'id'])), { workers: 1 });
    expect(r.schema.map((f) => f.name)).toEqual(['x', 'id']);
    await expectSame(base(scan(['x', 'id'])), `SELECT x, id FROM ${SRC}`);
  });
  it('selects, orders and renames', async () => {
    const q = { op: 'project', input: scan(), columns: ['g', { name: 'ident', column: 'id' }, 'big'] };
    const r = await runPlan(base(q), { workers: 2 });
    expect(r.schema.map((f) => f.name)).toEqual(['g', 'ident', 'big']);
    await expectSame(base(q), `SELECT g, id, big FROM ${SRC}`);
  });
});

describe('filter', () => {
  const cases: [string, object, string][] = [
    ['= on int', { column: 'x', cmp: '=', value: 42 }, 'x = 42'],
    ['!= on string (nulls drop)', { column: 'g', cmp: '!=', value: 'g1' }, "g != 'g1'"],
    ['< on double', { column: 'f', cmp: '<', value: 5 }, 'f < 5'],
    // rows 3..5 hold 9007199255740996..8; as doubles ...996 and ...997 are the same number
    [
      '<= on int64 beyond 2^53 (string literal)',
      { column: 'big', cmp: '<=', value: '9007199255740996' },
      'big <= 9007199255740996',
    ],
    ['< on int64 beyond 2^53', { column: 'big', cmp: '<', value: '9007199255740997' }, 'big < 9007199255740997'],
    ['= on int64 beyond 2^53', { column: 'big', cmp: '=', value: '9007199255740996' }, 'big = 9007199255740996'],
    ['> on date', { column: 'd', cmp: '>', value: '2024-01-20' }, "d > DATE '2024-01-20'"],
    [
      '>= on timestamp',
      { column: 'ts', cmp: '>=', value: '2024-02-01T00:00:00' },
      "ts >= TIMESTAMP '2024-02-01 00:00:00'",
    ],
    ['= on bool', { column: 'flag', cmp: '=', value: true }, 'flag = true'],
    ['in', { column: 'g', in: ['g0', 'g3', 'zz'] }, "g IN ('g0', 'g3', 'zz')"],
    ['in with null', { column: 'x', in: [1, 2, 3, null] }, 'x IN (1, 2, 3, NULL)'],
    ['isNull', { column: 'x', isNull: true }, 'x IS NULL'],
    ['isNull false', { column: 'g', isNull: false }, 'g IS NOT NULL'],
    [
      'and',
      {
        and: [
          { column: 'h', cmp: '=', value: 1 },
          { column: 'f', cmp: '>', value: 3 },
        ],
      },
      'h = 1 AND f > 3',
    ],
    [
      'or with nulls',
      {
        or: [
          { column: 'x', cmp: '<', value: 10 },
          { column: 'g', cmp: '=', value: 'g2' },
        ],
      },
      "x < 10 OR g = 'g2'",
    ],
    ['not (three-valued)', { not: { column: 'x', cmp: '>', value: 50 } }, 'NOT (x > 50)'],
    [
      'not of or',
      {
        not: {
          or: [
            { column: 'g', cmp: '=', value: 'g1' },
            { column: 'x', isNull: true },
          ],
        },
      },
      "NOT (g = 'g1' OR x IS NULL)",
    ],
    ['uint64 above 2^63', { column: 'u64', cmp: '>', value: '9300000000000000000' }, 'u64 > 9300000000000000000'],
    ['uint64 at 2^63', { column: 'u64', cmp: '<', value: '9223372036854775809' }, 'u64 < 9223372036854775809'],
  ];
  it.each(cases)('%s', async (_n, where, cond) => {
    const rows = await expectSame(base({ op: 'filter', input: scan(), where }), `SELECT * FROM ${SRC} WHERE ${cond}`, {
      workers: 2,
    });
    expect(rows.length).toBeGreaterThan(0); // an empty answer would hide a wrong one
  });
  it('the 64-bit fixtures decide: a double or signed comparison gives other answers', async () => {
    expect((await duckTable(`SELECT big, u64 FROM ${SRC} LIMIT 0`)).types).toEqual(['BIGINT', 'UBIGINT']);
    const n = async (cond: string) => Number((await duckRows(`SELECT count(*) FROM ${SRC} WHERE ${cond}`))[0][0]);
    for (const [op, v] of [
      ['<=', '9007199255740996'],
      ['<', '9007199255740997'],
      ['=', '9007199255740996'],
    ]) {
      expect(await n(`big ${op} ${v}`)).not.toBe(await n(`big::DOUBLE ${op} ${v}::DOUBLE`));
    }
    const above = await n('u64 > 9300000000000000000');
    expect(above).toBeGreaterThan(0);
    expect(above).toBeLessThan(await n('u64 >= 9223372036854775808')); // values on both sides of the literal, all above 2^63
    expect(await n('u64 < 9223372036854775809')).toBeGreaterThan(await n('u64 < 9223372036854775808')); // row 0 is exactly 2^63
  });
});

describe('aggregate', () => {
  const aggs = [
    { fn: 'count', as: 'n' },
    { fn: 'count', column: 'x', as: 'nx' },
    { fn: 'sum', column: 'x', as: 'sx' },
    { fn: 'sum', column: 'big', as: 'sbig' },
    { fn: 'sum', column: 'f', as: 'sf' },
    { fn: 'min', column: 'g', as: 'ming' },
    { fn: 'max', column: 'f', as: 'maxf' },
    { fn: 'min', column: 'd', as: 'mind' },
    { fn: 'max', column: 'big', as: 'maxbig' },
    { fn: 'avg', column: 'x', as: 'ax' },
    { fn: 'avg', column: 'f', as: 'af' },
    { fn: 'count_distinct', column: 'h', as: 'cdh' },
  ];
  const sqlAggs = `count(*), count(x), sum(x), sum(big), sum(f), min(g), max(f), min(d), max(big), avg(x), avg(f), count(DISTINCT h)`;
  const noDistinct = aggs.slice(0, -1);
  const sqlNoDistinct = sqlAggs.replace(', count(DISTINCT h)', '');

  for (const combiners of [true, false]) {
    it(`by a string key with null groups (combiners ${combiners})`, async () => {
      await expectSame(
        base({ op: 'aggregate', input: scan(), groupBy: ['g'], aggregates: noDistinct }),
        `SELECT g, ${sqlNoDistinct} FROM ${SRC} GROUP BY g`,
        { workers: 2, partitions: 4, combiners },
      );
    });
  }
  it('with count_distinct, by two columns', async () => {
    await expectSame(
      base({ op: 'aggregate', input: scan(), groupBy: ['g', 'h'], aggregates: aggs }),
      `SELECT g, h, ${sqlAggs} FROM ${SRC} GROUP BY g, h`,
      { workers: 2, partitions: 3 },
    );
  });
  it('empty groupBy gives one row', async () => {
    const q = base({ op: 'filter', where: { column: 'id', cmp: '<', value: 900 }, input: scan() });
    const rows = await expectSame(
      base({ op: 'aggregate', input: q.query, groupBy: [], aggregates: aggs }),
      `SELECT ${sqlAggs} FROM ${SRC} WHERE id < 900`,
      { workers: 2 },
    );
    expect(rows.length).toBe(1);
  });
  it('an integer sum beyond 64 bits is an error naming the aggregate, not a wrong number', async () => {
    await expect(
      runPlan(
        base({ op: 'aggregate', input: scan(), groupBy: [], aggregates: [{ fn: 'sum', column: 'big', as: 'total' }] }),
        { workers: 2 },
      ),
    ).rejects.toThrow(/sum of "total" overflows a 64-bit integer/);
  });
  it('empty groupBy over empty input gives one row: count 0, others null', async () => {
    const q = { op: 'aggregate', input: { op: 'scan', source: 'e' }, groupBy: [], aggregates: aggs };
    const rows = await expectSame(base(q), `SELECT ${sqlAggs.replaceAll('FROM', '')} FROM read_parquet('${E}')`, {
      workers: 2,
    });
    expect(rows).toEqual([['0', '0', null, null, null, null, null, null, null, null, null, '0']]);
  });
  it('groups over empty input give no rows', async () => {
    const rows = await ourRows(
      base({ op: 'aggregate', input: { op: 'scan', source: 'e' }, groupBy: ['g'], aggregates: aggs }),
    );
    expect(rows).toEqual([]);
  });
  it('sums of int64 values beyond 2^53 are exact', async () => {
    const rows = await expectSame(
      base({ op: 'aggregate', input: scan(), groupBy: ['h'], aggregates: [{ fn: 'sum', column: 'big', as: 's' }] }),
      `SELECT h, sum(big) FROM ${SRC} GROUP BY h`,
      { workers: 2 },
    );
    expect(rows.every((r) => typeof r[1] === 'string' && BigInt(r[1] as string) > 2n ** 60n)).toBe(true);
  });
  it('1 worker and 1 partition give the same groups as many', async () => {
    const q = base({ op: 'aggregate', input: scan(), groupBy: ['x'], aggregates: noDistinct });
    const sql = `SELECT x, ${sqlNoDistinct} FROM ${SRC} GROUP BY x`;
    await expectSame(q, sql, { workers: 1, partitions: 1 });
    await expectSame(q, sql, { workers: 2, partitions: 13 });
  });
});

describe('sort and limit', () => {
  it('sorts by several keys, desc and nulls first', async () => {
    const q = {
      op: 'sort',
      input: scan(['id', 'g', 'x']),
      by: [{ column: 'g', desc: true, nulls: 'first' }, { column: 'x' }, { column: 'id', desc: true }],
    };
    await expectSame(
      base(q),
      `SELECT id, g, x FROM ${SRC} ORDER BY g DESC NULLS FIRST, x ASC NULLS LAST, id DESC`,
      { workers: 2 },
      true,
    );
  });
  it('nulls last by default, also when descending', async () => {
    const q = { op: 'sort', input: scan(['id', 'f']), by: [{ column: 'f', desc: true }, { column: 'id' }] };
    await expectSame(base(q), `SELECT id, f FROM ${SRC} ORDER BY f DESC NULLS LAST, id`, { workers: 2 }, true);
  });
  it('limit with offset after sort', async () => {
    const q = {
      op: 'limit',
      count: 7,
      offset: 3,
      input: { op: 'sort', input: scan(['id', 'big']), by: [{ column: 'big', desc: true }] },
    };
    const rows = await expectSame(
      base(q),
      `SELECT id, big FROM ${SRC} ORDER BY big DESC LIMIT 7 OFFSET 3`,
      { workers: 2 },
      true,
    );
    expect(rows.length).toBe(7);
  });
  it('limit over a sort (top-k) with ties, nulls and several keys', async () => {
    // ties on g and nulls: ordered by a unique last key so that the expected rows are exact
    for (const [count, offset] of [
      [10, 0],
      [5, 20],
      [0, 0],
      [400, 0],
    ]) {
      const q = {
        op: 'limit',
        count,
        offset,
        input: {
          op: 'sort',
          input: scan(['id', 'g', 'f']),
          by: [{ column: 'g', nulls: 'first' }, { column: 'f', desc: true }, { column: 'id' }],
        },
      };
      const rows = await expectSame(
        base(q),
        `SELECT id, g, f FROM ${SRC} ORDER BY g ASC NULLS FIRST, f DESC NULLS LAST, id LIMIT ${count} OFFSET ${offset}`,
        { workers: 2 },
        true,
      );
      expect(rows.length).toBe(count);
    }
  });
  it('top-k gives the first k rows of the full sort, ties in input order', async () => {
    const { sortIndices, topIndices } = await import('../dist/kernels/sort.js');
    const n = 5000;
    const v = Int32Array.from({ length: n }, (_, i) => (i * 7919) % 13); // many ties
    const valid = Uint8Array.from({ length: n }, (_, i) => (i % 17 === 0 ? 0 : 1));
    const b = { length: n, columns: [{ type: { id: 'int32' }, length: n, values: v, valid }] };
    for (const keys of [[{ col: 0, desc: false, nullsFirst: false }], [{ col: 0, desc: true, nullsFirst: true }]]) {
      const all = Array.from(sortIndices(b as any, keys));
      for (const k of [1, 7, 100, 1249, 3000])
        expect(Array.from(topIndices(b as any, keys, k))).toEqual(all.slice(0, k));
    }
  });
  it("sorts by a column of every type in DuckDB's order, in memory and as an external sort", async () => {
    const spillDir = path.join(dir, 'spill');
    for (const c of ['g', 'h', 'x', 'f', 'big', 'flag', 'd', 'ts', 'u8', 'u64', 's16']) {
      for (const [desc, nulls] of [
        [false, 'last'],
        [true, 'first'],
      ] as const) {
        const q = { op: 'sort', input: scan(['id', c]), by: [{ column: c, desc, nulls }, { column: 'id' }] };
        const sql = `SELECT id, ${c} FROM ${SRC} ORDER BY ${c} ${desc ? 'DESC' : 'ASC'} NULLS ${nulls.toUpperCase()}, id`;
        // descending with nulls first: as an external sort (a 1-byte budget spills every range)
        const rows = await expectSame(
          base(q),
          sql,
          { workers: 2, ...(desc ? { memoryLimit: 1, spillDir } : {}) },
          true,
        );
        expect(rows.length).toBe(1500);
      }
    }
  });
  it('limit without sort returns count rows', async () => {
    const rows = await ourRows(base({ op: 'limit', count: 25, input: scan(['id']) }));
    expect(rows.length).toBe(25);
  });
  it('operators compose above a sort: a filter on sorted, limited rows', async () => {
    const q = {
      op: 'filter',
      where: { column: 'x', cmp: '>', value: 20 },
      input: { op: 'limit', count: 100, input: { op: 'sort', input: scan(['id', 'x']), by: [{ column: 'id' }] } },
    };
    await expectSame(base(q), `SELECT * FROM (SELECT id, x FROM ${SRC} ORDER BY id LIMIT 100) WHERE x > 20`, {
      workers: 2,
    });
  });
});

describe('a whole query', () => {
  it('join, filter, aggregate, sort on the bundled sample matches DuckDB', async () => {
    const root = path.resolve(import.meta.dirname, '..', 'datasets', 'sample');
    const plan = {
      version: 1,
      sources: { f: { parquet: path.join(root, 'fact.parquet') }, d: { parquet: path.join(root, 'dim.parquet') } },
      query: {
        op: 'sort',
        by: [{ column: 'region' }],
        input: {
          op: 'aggregate',
          groupBy: ['region'],
          aggregates: [
            { fn: 'count', as: 'n' },
            { fn: 'sum', column: 'amount', as: 's' },
            { fn: 'max', column: 'name', as: 'm' },
          ],
          input: {
            op: 'join',
            type: 'left',
            on: [['key', 'key']],
            left: { op: 'filter', input: { op: 'scan', source: 'f' }, where: { column: 'qty', cmp: '>=', value: 3 } },
            right: { op: 'scan', source: 'd' },
          },
        },
      },
    };
    const rows = await expectSame(
      plan,
      `SELECT region, count(*), sum(amount), max(name) FROM read_parquet('${root}/fact.parquet') f
      LEFT JOIN read_parquet('${root}/dim.parquet') d ON f.key = d.key WHERE qty >= 3 GROUP BY region ORDER BY region NULLS LAST`,
      { workers: 2 },
      true,
    );
    expect(rows.length).toBe(9); // 8 regions and the null-key group
  });
});
