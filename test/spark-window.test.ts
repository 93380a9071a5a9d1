// Windows lowered to Spark SQL (--engine spark) against DuckDB: ranks, ntile, lag/lead with a default, running and
// sliding frames, a RANGE of days, result types cast to the plan's.
import path from 'node:path';
import { beforeAll, describe, it } from 'vitest';
import { expectSame, tmpDir, writeParquet } from './helpers.js';
import { NO_SPARK, REMOTE, requireSpark } from './spark-helpers.js';

const dir = tmpDir('sj-spark-window-');
const T = path.join(dir, 't.parquet');

beforeAll(async () => {
  if (NO_SPARK) return;
  requireSpark();
  await writeParquet(
    T,
    `SELECT i::BIGINT AS id, CASE WHEN i % 3 = 0 THEN 'hot' ELSE 'g' || (i % 4) END AS g,
      (i * 13 % 20)::INTEGER AS o, CASE WHEN i % 11 = 0 THEN NULL ELSE (i * 37 % 101) END::INTEGER AS x,
      ((i * 7919) % 20001 / 100)::DECIMAL(12,2) AS d, DATE '2024-01-01' + (i * 3 % 40)::INTEGER AS dt
    FROM range(0, 300) t(i)`,
    100,
  );
}, 120_000);

describe.skipIf(NO_SPARK)('spark engine: windows', () => {
  it("gives DuckDB's answers", async () => {
    const rows = { unit: 'rows', start: { preceding: 2 }, end: 'current row' };
    const days = { unit: 'range', start: { preceding: 3 }, end: 'current row' };
    const q = (input: object, partitionBy: string[], orderBy: object[], functions: object[]) => ({
      op: 'window',
      input,
      partitionBy,
      orderBy,
      functions,
    });
    const inner = q(
      { op: 'scan', source: 't' },
      ['g'],
      [{ column: 'o' }, { column: 'id' }],
      [
        { fn: 'row_number', as: 'rn' },
        { fn: 'rank', as: 'r' },
        { fn: 'ntile', n: 3, as: 'nt' },
        { fn: 'lag', column: 'x', offset: 2, default: 0, as: 'lg' },
        { fn: 'lead', column: 'd', as: 'ld' },
        { fn: 'sum', column: 'd', as: 'sd' },
        { fn: 'avg', column: 'x', frame: rows, as: 'ax' },
        { fn: 'first_value', column: 'x', as: 'fv' },
      ],
    );
    const outer = q(
      inner,
      ['g'],
      [{ column: 'dt' }],
      [
        { fn: 'count', frame: days, as: 'c3' },
        { fn: 'percent_rank', as: 'pr' },
      ],
    );
    const over = 'PARTITION BY g ORDER BY o ASC NULLS LAST, id ASC NULLS LAST';
    await expectSame(
      { version: 1, sources: { t: { parquet: T } }, query: outer },
      `SELECT *, count(*) OVER (PARTITION BY g ORDER BY dt RANGE BETWEEN INTERVAL 3 DAY PRECEDING AND CURRENT ROW) AS c3,
         percent_rank() OVER (PARTITION BY g ORDER BY dt) AS pr
       FROM (SELECT *, row_number() OVER (${over}) AS rn, rank() OVER (${over}) AS r, ntile(3) OVER (${over}) AS nt,
         lag(x, 2, 0) OVER (${over}) AS lg, lead(d) OVER (${over}) AS ld, sum(d) OVER (${over}) AS sd,
         avg(x) OVER (${over} ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS ax, first_value(x) OVER (${over}) AS fv
         FROM '${T}')`,
      { engine: 'spark', remote: REMOTE },
    );
  });

  it("distinct window aggregates (collect_set in Spark SQL) give DuckDB's answers", async () => {
    const rows = { unit: 'rows', start: { preceding: 3 }, end: { following: 1 } };
    const query = {
      op: 'window',
      input: { op: 'scan', source: 't' },
      partitionBy: ['g'],
      orderBy: [{ column: 'o' }, { column: 'id' }],
      functions: [
        { fn: 'count', column: 'x', distinct: true, as: 'cx' },
        { fn: 'sum', column: 'd', distinct: true, frame: rows, as: 'sd' },
        { fn: 'avg', column: 'x', distinct: true, frame: rows, as: 'ax' },
        { fn: 'max', column: 'x', distinct: true, as: 'mx' },
      ],
    };
    const over = 'PARTITION BY g ORDER BY o ASC NULLS LAST, id ASC NULLS LAST';
    await expectSame(
      { version: 1, sources: { t: { parquet: T } }, query },
      `SELECT *, count(DISTINCT x) OVER (${over}) AS cx,
         sum(DISTINCT d) OVER (${over} ROWS BETWEEN 3 PRECEDING AND 1 FOLLOWING) AS sd,
         avg(DISTINCT x) OVER (${over} ROWS BETWEEN 3 PRECEDING AND 1 FOLLOWING) AS ax, max(x) OVER (${over}) AS mx
       FROM '${T}'`,
      { engine: 'spark', remote: REMOTE },
    );
  });
});
