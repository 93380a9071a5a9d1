// The answers of test/duck-answers.test.ts on `--engine spark`: the same as DuckDB's (the lowering rewrites what Spark
// means otherwise: a double cast to a decimal, float, bool and date text, round of NaN at negative digits), or
// refused with a clear error (upper() of a value whose case Java maps otherwise than DuckDB: ß → SS).
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runSql } from '../dist/index.js';
import { arrowTyped, duckTable, expectTypedEqual, sql, tmpDir, writeParquet } from './helpers.js';
import { NO_SPARK, REMOTE, requireSpark } from './spark-helpers.js';

const dir = tmpDir('sj-spark-duck-');
const S: Record<string, string> = {};

beforeAll(async () => {
  S.t = await writeParquet(
    path.join(dir, 't.parquet'),
    `SELECT * FROM (VALUES
      (1, 0.125::DOUBLE, 'inf', 't', '2024-01-05 extra', 'ß', 'nan'::DOUBLE, 1.5::REAL, 1.25::DECIMAL(38,2), 1.5::DECIMAL(30,4), 1.0::DOUBLE, 'abc'),
      (2, 0.135, 'infinity', 'yes', '2024-01-05T10:00', 'straße', 'inf'::DOUBLE, 0.1::REAL, 2.5, 2.12345, 2.5, 'Ǆx'),
      (3, 2.5, '-inf', '1', '2024-1-5', 'ﬁ', '-inf'::DOUBLE, 16777216::REAL, -1.01, -0.0001, 3.0, 'ſ'),
      (4, 1.005, 'NaN', 'no', '2024/01/05', 'İ', 12345.678, 0.3::REAL, 0, 99.9999, 4.0, 'X')
    ) v(id, x, s, b, d, u, n, r, da, db, f, plain)`,
    4,
  );
  await sql(`CREATE OR REPLACE VIEW t AS SELECT * FROM read_parquet('${S.t}')`);
  if (!NO_SPARK) requireSpark();
});

/** Spark's answer and DuckDB's to the same text: types and rows. */
async function same(text: string) {
  const r = await runSql(text, { sources: S, engine: 'spark', remote: REMOTE });
  expectTypedEqual(arrowTyped(r.toArrow()), await duckTable(text));
}

describe.skipIf(NO_SPARK)("spark: DuckDB's answers where they once differed", () => {
  it('casts: a double to a decimal, text to floats, bools and dates', async () => {
    await same('SELECT id, CAST(x AS DECIMAL(30,2)) AS c2, CAST(x AS DECIMAL(10,0)) AS c0 FROM t');
    await same('SELECT id, CAST(s AS DOUBLE) AS d, CAST(s AS FLOAT) AS f, CAST(b AS BOOLEAN) AS c FROM t');
    await same('SELECT id, CAST(d AS DATE) AS c FROM t');
  });

  it('round of NaN and infinities, float32 arithmetic and comparisons, wide decimals, a float joined to an integer', async () => {
    await same('SELECT id, round(n, -1) AS a, round(n, 0) AS c, round(n, 1) AS e FROM t');
    await same('SELECT id, r + r AS a, r * 3 AS m, r / 3 AS q, r + 1 AS p, r - 0.1 AS s FROM t');
    await same('SELECT id FROM t WHERE r > 0.3 OR r = 0.1');
    await same('SELECT da AS v FROM t UNION ALL SELECT db FROM t');
    await same('SELECT a.id, b.id AS bid FROM t a JOIN t b ON a.f = b.id');
  });

  it('upper() and lower() as DuckDB where Java maps alike, refused naming the value where it does not', async () => {
    await same('SELECT id, upper(plain) AS up, lower(plain) AS lo FROM t');
    const e = await runSql('SELECT upper(u) AS up FROM t', { sources: S, engine: 'spark', remote: REMOTE }).catch(
      (x) => x,
    );
    expect(e).toBeInstanceOf(Error);
    expect(e.message).toMatch(/upper\(\) of "(ß|straße|ﬁ)" on Spark maps its case otherwise than DuckDB/);
  });
});
