// A union of a date column with a timestamp column (with and without a time zone) widens the date to its midnight, a
// timestamp of the other's kind, as DuckDB does: on the local engine (plan/bind-setops.ts) and on Spark
// (spark/setops.ts over the binder's casts), distinct and ALL, with nulls.
import path from 'node:path';
import { beforeAll, describe, it } from 'vitest';
import { expectSame, tmpDir, writeParquet } from './helpers.js';
import { NO_SPARK, REMOTE, requireSpark } from './spark-helpers.js';

const dir = tmpDir('sj-spark-union-dates-');
const D = path.join(dir, 'd.parquet');
const TS = path.join(dir, 'ts.parquet');
const TZ = path.join(dir, 'tz.parquet');

beforeAll(async () => {
  await writeParquet(
    D,
    `SELECT i::BIGINT AS id, CASE WHEN i = 3 THEN NULL ELSE DATE '2024-01-01' + i::INTEGER END AS t FROM range(0, 6) r(i)`,
  );
  await writeParquet(
    TS,
    `SELECT i::BIGINT AS id, TIMESTAMP '2024-01-02 00:00:00' + INTERVAL (i * 7) HOUR AS t FROM range(0, 6) r(i)`,
  );
  await writeParquet(
    TZ,
    `SELECT i::BIGINT AS id, TIMESTAMPTZ '2024-01-02 00:00:00+00' + INTERVAL (i * 7) HOUR AS t FROM range(0, 6) r(i)`,
  );
});

const plan = (other: string, all: boolean) => ({
  version: 1,
  sources: { d: { parquet: D }, o: { parquet: other } },
  query: {
    op: 'union',
    all,
    inputs: [
      { op: 'scan', source: 'd', columns: ['t'] },
      { op: 'scan', source: 'o', columns: ['t'] },
    ],
  },
});
const duck = (other: string, all: boolean) => `SELECT t FROM '${D}' UNION${all ? ' ALL' : ''} SELECT t FROM '${other}'`;

const cases = [
  ['timestamp', TS],
  ['timestamp with a time zone', TZ],
] as const;

describe('union of a date with a timestamp', () => {
  for (const [name, file] of cases)
    for (const all of [true, false])
      it(`local engine: a date with a ${name}, ${all ? 'ALL' : 'distinct'}`, async () => {
        await expectSame(plan(file, all), duck(file, all));
      });

  describe.skipIf(NO_SPARK)('on Spark', () => {
    beforeAll(() => requireSpark());
    for (const [name, file] of cases)
      it(`a date with a ${name}, ALL and distinct`, async () => {
        await expectSame(plan(file, true), duck(file, true), { engine: 'spark', remote: REMOTE });
        await expectSame(plan(file, false), duck(file, false), { engine: 'spark', remote: REMOTE });
      }, 600_000);
  });
});
