// Set operations, VALUES, distinct and filtered aggregates and grouping sets on Spark (--engine spark, the shared
// local server of test/spark-setup.ts) against DuckDB: the bound plan's union, values, expand and repeat lowered
// to plain Spark SQL (src/spark/setops.ts).
import path from 'node:path';
import { beforeAll, describe, it } from 'vitest';
import { expectSame, tmpDir, writeParquet } from './helpers.js';
import { NO_SPARK, REMOTE, requireSpark } from './spark-helpers.js';

const dir = tmpDir('sj-spark-setops-');
const A = path.join(dir, 'a.parquet'),
  B = path.join(dir, 'b.parquet');
const sources = { a: { parquet: A }, b: { parquet: B } };
const plan = (query: object) => ({ version: 1, sources, query });
const scan = (source: string, columns: string[]) => ({ op: 'scan', source, columns });
const spark = { engine: 'spark' as const, remote: REMOTE };
const ra = `read_parquet('${A}')`,
  rb = `read_parquet('${B}')`;

beforeAll(async () => {
  if (NO_SPARK) return;
  requireSpark();
  await writeParquet(
    A,
    `SELECT CASE WHEN i % 11 = 0 THEN NULL ELSE (i % 7) END::INTEGER AS k,
       CASE WHEN i % 13 = 0 THEN NULL ELSE 's' || (i % 5) END AS s,
       CASE WHEN i % 9 = 0 THEN NULL ELSE (i % 4) * 1.25 END::DECIMAL(6,2) AS d, (i % 3)::BIGINT AS g
     FROM range(0, 300) t(i)`,
  );
  await writeParquet(
    B,
    `SELECT CASE WHEN i % 10 = 0 THEN NULL ELSE (i % 9) END::BIGINT AS k,
       CASE WHEN i % 8 = 0 THEN NULL ELSE 's' || (i % 6) END AS s, (i % 4)::BIGINT AS g
     FROM range(0, 120) t(i)`,
  );
}, 120_000);

describe.skipIf(NO_SPARK)('spark engine: set operations and grouping', () => {
  it('union all (widened), union, intersect (all), except (all), values', async () => {
    const q = {
      op: 'union',
      all: true,
      inputs: [
        { op: 'union', inputs: [scan('a', ['k', 's']), scan('b', ['k', 's'])] },
        { op: 'intersect', all: true, left: scan('a', ['k', 's']), right: scan('b', ['k', 's']) },
        { op: 'except', all: true, left: scan('a', ['k', 's']), right: scan('b', ['k', 's']) },
        { op: 'intersect', left: scan('a', ['k', 's']), right: scan('b', ['k', 's']) },
        { op: 'except', left: scan('a', ['k', 's']), right: scan('b', ['k', 's']) },
        {
          op: 'values',
          columns: ['x', 'y'],
          rows: [
            [7, 'v'],
            [null, null],
          ],
        },
      ],
    };
    await expectSame(
      plan(q),
      `(SELECT k::BIGINT AS k, s FROM ${ra} UNION SELECT k, s FROM ${rb})
       UNION ALL (SELECT k::BIGINT, s FROM ${ra} INTERSECT ALL SELECT k, s FROM ${rb})
       UNION ALL (SELECT k::BIGINT, s FROM ${ra} EXCEPT ALL SELECT k, s FROM ${rb})
       UNION ALL (SELECT k::BIGINT, s FROM ${ra} INTERSECT SELECT k, s FROM ${rb})
       UNION ALL (SELECT k::BIGINT, s FROM ${ra} EXCEPT SELECT k, s FROM ${rb})
       UNION ALL VALUES (7::BIGINT, 'v'), (NULL, NULL)`,
      spark,
    );
  });
  it('distinct sums and counts, a filter, grouping sets with grouping()', async () => {
    const q = {
      op: 'aggregate',
      input: scan('a', ['k', 's', 'd', 'g']),
      groupingSets: [['g', 's'], ['g'], []],
      aggregates: [
        { fn: 'sum', column: 'k', distinct: true, as: 'sk' },
        { fn: 'count', column: 's', distinct: true, as: 'cs' },
        { fn: 'count', as: 'n', filter: { column: 'k', cmp: '>', value: 2 } },
        { fn: 'sum', column: 'd', as: 'sd' },
        { fn: 'grouping', columns: ['g', 's'], as: 'gid' },
      ],
    };
    await expectSame(
      plan(q),
      `SELECT g, s, sum(DISTINCT k)::BIGINT AS sk, count(DISTINCT s) AS cs, count(*) FILTER (WHERE k > 2) AS n,
         sum(d) AS sd, grouping(g, s) AS gid FROM ${ra} GROUP BY ROLLUP (g, s)`,
      spark,
    );
  });
});
