// A window task of more than 4096 rows whose keys are integers (ints, int64, dates, decimals) sorts them packed into
// one number a row and reads its partitions and peers off it (window/bounds.ts packedKeys), and sums integers and
// decimals as numbers (window/functions.ts): against DuckDB with nulls first and last, descending keys, negative
// values, several keys, no partition keys, and keys too wide to pack (the column sort then).
import path from 'node:path';
import { beforeAll, describe, it } from 'vitest';
import { expectSame, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-window-packed-');
const T = path.join(dir, 't.parquet');
const N = 6000;

beforeAll(async () => {
  await writeParquet(
    T,
    `SELECT i::BIGINT AS id,
      CASE WHEN i % 97 = 0 THEN NULL WHEN i % 4 = 0 THEN -3 ELSE (i * 7) % 41 - 20 END::INTEGER AS g,
      CASE WHEN i % 31 = 0 THEN NULL ELSE (i * 13) % 500 - 250 END::BIGINT AS o,
      CASE WHEN i % 23 = 0 THEN NULL ELSE (i * 7919) % 1000003 * 1000003 END::BIGINT AS wide,
      CASE WHEN i % 19 = 0 THEN NULL ELSE ((i * 7919) % 20001 - 10000) / 100 END::DECIMAL(12,2) AS d,
      ((i * 37) % 101 - 50)::INTEGER AS x,
      DATE '2024-01-01' + ((i * 3) % 400)::INTEGER AS dt,
      CASE WHEN i >= 4500 AND i % 7 = 0 THEN NULL ELSE (i * 11) % 300 - 100 END::INTEGER AS late,
      CASE WHEN i >= 4500 AND i % 5 = 0 THEN NULL ELSE (i * 17) % 900 END::BIGINT AS late64,
      CASE WHEN (i * 37) % 101 < 50 THEN 0 ELSE (i * 5) % 3 * 4000000000000000 END::BIGINT AS huge
    FROM range(0, ${N}) t(i)`,
    3000,
  );
});

type Key = { column: string; desc?: boolean; nulls?: 'first' | 'last' };
const orderSql = (ks: Key[]) =>
  ks.map((k) => `${k.column} ${k.desc ? 'DESC' : 'ASC'} NULLS ${k.nulls === 'first' ? 'FIRST' : 'LAST'}`).join(', ');

/** The window in one task (one partition, on the calling thread and the pool), against DuckDB's answer. */
async function check(partitionBy: string[], orderBy: Key[], extra: object[] = [], sql: string[] = []) {
  const over = [partitionBy.length ? `PARTITION BY ${partitionBy.join(', ')}` : '', `ORDER BY ${orderSql(orderBy)}`]
    .filter(Boolean)
    .join(' ');
  const functions = [
    { fn: 'rank', as: 'r' },
    { fn: 'dense_rank', as: 'dr' },
    { fn: 'sum', column: 'd', as: 'sd' },
    { fn: 'sum', column: 'x', as: 'sx' },
    { fn: 'count', column: 'd', as: 'cd' },
    { fn: 'avg', column: 'd', as: 'ad' },
    ...extra,
  ];
  const theirs = [
    `rank() OVER (${over}) AS r`,
    `dense_rank() OVER (${over}) AS dr`,
    `sum(d) OVER (${over}) AS sd`,
    `sum(x) OVER (${over}) AS sx`,
    `count(d) OVER (${over}) AS cd`,
    `avg(d) OVER (${over}) AS ad`,
    ...sql.map((s) => s.replace('$OVER', over)),
  ];
  const plan = {
    version: 1,
    sources: { t: { parquet: T } },
    query: { op: 'window', input: { op: 'scan', source: 't' }, partitionBy, orderBy, functions },
  };
  const query = `SELECT *, ${theirs.join(', ')} FROM read_parquet('${T}')`;
  await expectSame(plan, query, { partitions: 1, workers: 2, inThreadBytes: 0 });
  await expectSame(plan, query, { partitions: 1, inThreadBytes: '1GB' });
}

describe('a large window task over integer keys (packed sort)', () => {
  it('partition by an int with nulls, order by an int64 descending nulls first, then the id', async () => {
    await check(
      ['g'],
      [{ column: 'o', desc: true, nulls: 'first' }, { column: 'id' }],
      [
        { fn: 'row_number', as: 'rn' },
        { fn: 'lag', column: 'x', as: 'lx' },
      ],
      ['row_number() OVER ($OVER) AS rn', 'lag(x) OVER ($OVER) AS lx'],
    );
  });

  it('order by a decimal and a date with ties (peers), nulls last; partition by two keys', async () => {
    await check(['g', 'x'], [{ column: 'd' }, { column: 'dt', desc: true }]);
  });

  it('no partition keys: one partition ordered by a date', async () => {
    await check([], [{ column: 'dt', nulls: 'first' }]);
  });

  it('keys null in one input block only (read in place, block by block): partition by an int, order by an int64', async () => {
    await check(
      ['late'],
      [{ column: 'late64', desc: true, nulls: 'first' }, { column: 'id' }],
      [{ fn: 'row_number', as: 'rn' }],
      ['row_number() OVER ($OVER) AS rn'],
    );
    await check(
      [],
      [
        { column: 'late', nulls: 'last' },
        { column: 'late64', desc: true },
      ],
    );
  });

  it('the order keys packed apart from the counted partitions when both pass 2^53: peers end at a partition', async () => {
    // huge spans 8 x 10^15 alone and x's 101 values with it; the partitions of x below 0 hold one number, 0, which
    // the next partition starts with too: a peer run that crossed a partition's edge would change rank and the sums
    await check(['x'], [{ column: 'huge' }]);
    await check(['g'], [{ column: 'wide', desc: true }, { column: 'id' }]);
  });

  it('keys too wide to pack (order keys alone past 2^53: an int64 spanning 10^12, then two more): sorted by the columns', async () => {
    await check(['g'], [{ column: 'wide', desc: true }, { column: 'o' }, { column: 'id' }]);
  });
});
