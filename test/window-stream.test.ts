// A window task whose rows arrive in their order within each partition (as a file written in key order is read)
// computes row_number, rank, dense_rank and running counts and sums in the input's order, without sorting
// (window/stream.ts): against DuckDB with nulls in the summed columns, decimals and ints, ROWS and RANGE frames; the
// rows leave in the input's order (what shows the path was taken). Ties, a partition out of order, or another
// function send the task back to the sort, with the same answers.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectSame, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-window-stream-');
const T = path.join(dir, 't.parquet');
const N = 6000;

beforeAll(async () => {
  // id increases down the file; o increases with it, three rows each (ties); g a partition (six rows in a run), null
  // for some rows
  await writeParquet(
    T,
    `SELECT i::BIGINT AS id,
      CASE WHEN i % 97 = 0 THEN NULL ELSE ((i // 6) * 7) % 41 - 20 END::INTEGER AS g,
      (i // 3)::INTEGER AS o,
      CASE WHEN i % 19 = 0 THEN NULL ELSE ((i * 7919) % 20001 - 10000) / 100 END::DECIMAL(12,2) AS d,
      CASE WHEN i < 50 THEN NULL ELSE ((i * 37) % 101 - 50) END::INTEGER AS x
    FROM range(0, ${N}) t(i)`,
    1000,
  );
});

const FNS = [
  { fn: 'row_number', as: 'rn' },
  { fn: 'rank', as: 'r' },
  { fn: 'dense_rank', as: 'dr' },
  { fn: 'sum', column: 'd', as: 'sd' },
  { fn: 'sum', column: 'x', as: 'sx', frame: { unit: 'rows', start: 'unbounded preceding', end: 'current row' } },
  { fn: 'count', column: 'x', as: 'cx' },
  { fn: 'count', as: 'c' },
];
const SQL = (over: string) =>
  [
    `row_number() OVER (${over}) AS rn`,
    `rank() OVER (${over}) AS r`,
    `dense_rank() OVER (${over}) AS dr`,
    `sum(d) OVER (${over}) AS sd`,
    `sum(x) OVER (${over} ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS sx`,
    `count(x) OVER (${over}) AS cx`,
    `count(*) OVER (${over}) AS c`,
  ].join(', ');

/** The window in one task, on the pool and on the calling thread, against DuckDB; our rows' ids in output order. */
async function check(orderBy: object[], over: string, fns = FNS, sql = SQL(over)): Promise<number[]> {
  const plan = {
    version: 1,
    sources: { t: { parquet: T } },
    query: { op: 'window', input: { op: 'scan', source: 't' }, partitionBy: ['g'], orderBy, functions: fns },
  };
  const query = `SELECT *, ${sql} FROM read_parquet('${T}')`;
  await expectSame(plan, query, { partitions: 1, inThreadBytes: '1GB' });
  const rows = await expectSame(plan, query, { partitions: 1, workers: 2, inThreadBytes: 0 });
  return rows.map((r) => Number(r[0]));
}

const ascending = (ids: number[]) => ids.every((x, i) => i === 0 || x > ids[i - 1]);

describe('a window task over rows already in order (no sort)', () => {
  it('partition by an int with nulls, order by the file order: the running functions in input order', async () => {
    const ids = await check([{ column: 'id' }], 'PARTITION BY g ORDER BY id');
    expect(ascending(ids)).toBe(true);
  });

  it('order by a key with ties: sorted (RANGE frames take the peers), same answers', async () => {
    // only what ties cannot change: ranks and RANGE frames
    const tieFree = (f: { fn: string; frame?: object }) => f.fn !== 'row_number' && f.frame === undefined;
    const over = 'PARTITION BY g ORDER BY o';
    const sql = SQL(over)
      .split(', ')
      .filter((s) => !s.startsWith('row_number') && !s.includes('ROWS'))
      .join(', ');
    const ids = await check([{ column: 'o' }], over, FNS.filter(tieFree), sql);
    expect(ascending(ids)).toBe(false);
  });

  it('order by the file order descending: each partition out of order, sorted', async () => {
    const ids = await check([{ column: 'id', desc: true }], 'PARTITION BY g ORDER BY id DESC');
    expect(ascending(ids)).toBe(false);
  });

  it('with lag beside them: sorted, same answers', async () => {
    const fns = [...FNS, { fn: 'lag', column: 'x', as: 'lx' }];
    const ids = await check(
      [{ column: 'id' }],
      'PARTITION BY g ORDER BY id',
      fns,
      `${SQL('PARTITION BY g ORDER BY id')}, lag(x) OVER (PARTITION BY g ORDER BY id) AS lx`,
    );
    expect(ascending(ids)).toBe(false);
  });
});
