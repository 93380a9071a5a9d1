// Float answers of windows bit for bit as DuckDB's, where its ties decide an outer window's order (the fuzzer's
// seeds 7 and 11): an avg over a sliding frame of a decimal (one division of the exact sum, not two), a float sum
// over a sliding ROWS frame (summed afresh left to right, as DuckDB's segment tree sums a frame inside its leaves,
// not a running sum with values subtracted), a float running sum of huge and small values on one task and split
// into pieces (summed on from the carried sum value by value), and a 16-byte decimal cast to a double as DuckDB
// casts it (its integer part plus its fraction).
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { duckRows, ourRows, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-window-float-');
const T = path.join(dir, 't.parquet');

beforeAll(async () => {
  // d: a few decimal values repeated in each partition; f: tenths that drift when subtracted; h: huge and small
  await writeParquet(
    T,
    `SELECT i::BIGINT AS id, (i % 5)::INTEGER AS p,
      (((i * 7) % 5) * -0.37 - 0.37)::DECIMAL(9,2) AS d,
      ((i * 13) % 29) * 0.1 - 1.3 AS f,
      CASE WHEN i % 7 = 0 THEN 49382715604938271.4 + i ELSE ((i * 31) % 97) * 0.015 - 0.7 END AS h,
      ((i - 1000)::DECIMAL(18,0) * 0.0125 + 123456789012345678.5)::DECIMAL(30,4) AS w
    FROM range(0, 2000) t(i)`,
    250,
  );
});

const from = `FROM read_parquet('${T}')`;
const plan = (query: object, execution: object = {}) => ({
  version: 1,
  sources: { t: { parquet: T } },
  query,
  execution,
});
const window = (partitionBy: string[], functions: object[]) => ({
  op: 'window',
  input: { op: 'scan', source: 't', columns: ['id', 'p', 'd', 'f', 'h'] },
  partitionBy,
  orderBy: [{ column: 'id' }],
  functions,
});

/** Rows by id, each value as it is (no tolerance: the bits must be DuckDB's). */
async function same(q: object, sql: string, opts: object = {}) {
  const byId = (rows: unknown[][]) =>
    rows
      .map((r) => r.map((v) => (typeof v === 'bigint' ? Number(v) : v)))
      .sort((a, b) => (a[0] as number) - (b[0] as number));
  const ours = byId(await ourRows(q, opts));
  const theirs = byId(await duckRows(sql));
  expect(ours.length).toBe(theirs.length);
  let diff = 0;
  for (let i = 0; i < ours.length; i++) if (JSON.stringify(ours[i]) !== JSON.stringify(theirs[i])) diff++;
  expect(diff, `${JSON.stringify(ours.find((r, i) => JSON.stringify(r) !== JSON.stringify(theirs[i])))}`).toBe(0);
}

describe("window float answers as DuckDB's, bit for bit", () => {
  it('avg of a decimal over a sliding frame; a float sum over a sliding ROWS frame', async () => {
    const q = plan(
      window(
        ['p'],
        [
          { fn: 'avg', column: 'd', as: 'ad', frame: { unit: 'rows', start: { preceding: 1 }, end: { following: 1 } } },
          { fn: 'sum', column: 'f', as: 'sf', frame: { unit: 'rows', start: { preceding: 3 }, end: 'current row' } },
          { fn: 'avg', column: 'f', as: 'af', frame: { unit: 'rows', start: { preceding: 2 }, end: { following: 2 } } },
        ],
      ),
    );
    const over = 'PARTITION BY p ORDER BY id';
    await same(
      q,
      `SELECT id, p, d, f, h, avg(d) OVER (${over} ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING) AS ad,
        sum(f) OVER (${over} ROWS BETWEEN 3 PRECEDING AND CURRENT ROW) AS sf,
        avg(f) OVER (${over} ROWS BETWEEN 2 PRECEDING AND 2 FOLLOWING) AS af ${from}`,
    );
  });

  it('a float running sum of huge and small values: one task, and split into pieces', async () => {
    const q = (execution: object) =>
      plan(
        {
          op: 'window',
          input: {
            op: 'filter',
            input: { op: 'scan', source: 't', columns: ['id', 'p', 'h'] },
            where: { column: 'id', cmp: '<', value: 40 },
          },
          partitionBy: ['p'],
          orderBy: [{ column: 'id' }],
          functions: [{ fn: 'sum', column: 'h', as: 'rh' }],
        },
        execution,
      );
    const sql = `SELECT id, p, h, sum(h) OVER (PARTITION BY p ORDER BY id) AS rh ${from} WHERE id < 40`;
    await same(q({}), sql);
    await same(q({ partitions: 2, skew: { thresholdBytes: 1, advisoryPartitionBytes: 64 } }), sql);
  });

  it('a 16-byte decimal cast to a double as DuckDB casts it', async () => {
    const q = plan({
      op: 'project',
      input: { op: 'scan', source: 't', columns: ['id', 'w'] },
      columns: ['id', { name: 'x', expr: { cast: { column: 'w' }, to: 'float64' } }],
    });
    await same(q, `SELECT id, CAST(w AS DOUBLE) AS x ${from}`);
  });
});
