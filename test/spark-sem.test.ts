// Where Spark's SQL means something else than ours (issue 38, item 3), the lowering
// rewrites it to our answer, which is DuckDB's: a float or a decimal cast to an
// integer, substr from 0 or of a negative length, x / -0.0 and NaN / 0, round of a
// double, a timestamp with a time zone as text, text read as a number, a date, a
// timestamp or a bool; and the session settings the SQL's meaning rests on are
// pinned, whatever the session had. Run on the shared local Spark Connect server
// (test/spark-setup.ts); the lowering alone without one.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import * as arrow from 'apache-arrow';
import { InputError, runPlan } from '../dist/index.js';
import { loadPlan } from '../dist/plan/load.js';
import { SparkConnectClient } from '../dist/spark/client.js';
import { parseRemote } from '../dist/spark/remote.js';
import { SQL_SETTINGS } from '../dist/spark/lower-expr.js';
import { lowerPlan } from '../dist/spark/lower.js';
import { arrowTyped, expectSame, expectTypedEqual, tmpDir, writeParquet } from './helpers.js';
import { NO_SPARK, REMOTE, requireSpark } from './spark-helpers.js';

const dir = tmpDir('sj-spark-sem-');
const T = path.join(dir, 't.parquet');
const plan = (columns: (string | object)[], where?: object) => ({
  version: 1,
  sources: { t: { parquet: T } },
  query: {
    op: 'project',
    input: where ? { op: 'filter', input: { op: 'scan', source: 't' }, where } : { op: 'scan', source: 't' },
    columns: ['i', ...columns],
  },
});
const spark = () => ({ engine: 'spark' as const, remote: REMOTE });
const e = (name: string, expr: object) => ({ name, expr });
const col = (column: string) => ({ column });
const v = (value: unknown) => ({ value });

// f: halves and a .7 (a float to an integer rounds half to even); d: a decimal half (half away from zero);
// z: both zeros; n: NaN, Infinity and a number; s: multi-byte characters; tz: timestamps with a time zone
const ROWS = `SELECT * FROM (VALUES
  (1, 2.7::DOUBLE, 2.50::DECIMAL(6,2), 'hello', TIMESTAMPTZ '2024-01-01 10:00:00.5+00', -0.0::DOUBLE, 'nan'::DOUBLE, ' 12 ', '2024-01-05T10:00'),
  (2, 2.5::DOUBLE, -2.50::DECIMAL(6,2), 'ü€x', TIMESTAMPTZ '2024-01-01 02:00:00+00', 0.0::DOUBLE, 'inf'::DOUBLE, '2.5', '2024-01-05 10:00:00.25'),
  (3, -3.5::DOUBLE, 2.49::DECIMAL(6,2), '', NULL, -1.0::DOUBLE, 6.0::DOUBLE, '-7.5', '2024-01-05 10:00:00+02:00'),
  (4, NULL, NULL, NULL, TIMESTAMPTZ '2023-12-31 23:59:59.123456+00', NULL, NULL, '1e3', NULL)
) t(i, f, d, s, tz, z, n, ns, tss)`;

beforeAll(async () => {
  await writeParquet(T, ROWS);
  if (!NO_SPARK) requireSpark();
});

describe.skipIf(NO_SPARK)('spark semantics: the local engine (DuckDB) answers', () => {
  it('casts to integers round as ours; substr from 0 and of negative lengths; x / -0.0, NaN / 0; round of a double', async () => {
    const substr = (...args: object[]) => ({ fn: 'substr', args: [col('s'), ...args] });
    const minus = (c: string, k: number) => ({ fn: '-', args: [col(c), v(k)] });
    const div = (a: object, b: object) => ({ fn: '/', args: [a, b] });
    await expectSame(
      plan([
        e('fi', { cast: col('f'), to: 'int64' }),
        e('fi32', { cast: col('f'), to: 'int32' }),
        e('di', { cast: col('d'), to: 'int64' }),
        e('di16', { cast: col('d'), to: 'int16' }),
        e('s0', substr(v(0), v(2))),
        e('s0all', substr(v(0))),
        e('sneg', substr(v(3), v(-1))),
        e('snn', substr(v(-2), v(-2))),
        e('sfar', substr(v(-10), v(8))),
        e('scomp', substr(minus('i', 2), minus('i', 3))),
        e('one_z', div(v(1), col('z'))),
        e('mone_z', div(v(-1), col('z'))),
        e('n_0', div(col('n'), v(0))),
        e('n_z', div(col('n'), col('z'))),
        e('z_z', div(col('z'), col('z'))),
        e('rnd', {
          fn: 'round',
          args: [{ fn: '+', args: [{ cast: col('i'), to: 'float64' }, v(0.005)] }, v(2)],
        }),
        e('rndf', { fn: 'round', args: [col('f')] }),
      ]),
      `SELECT i, CAST(f AS BIGINT) AS fi, CAST(f AS INTEGER) AS fi32, CAST(d AS BIGINT) AS di,
      CAST(d AS SMALLINT) AS di16, substr(s, 0, 2) AS s0, substr(s, 0) AS s0all, substr(s, 3, -1) AS sneg,
      substr(s, -2, -2) AS snn, substr(s, -10, 8) AS sfar, substr(s, i - 2, i - 3) AS scomp,
      1 / z AS one_z, -1 / z AS mone_z, n / 0 AS n_0, n / z AS n_z, z / z AS z_z,
      round(i::DOUBLE + 0.005, 2) AS rnd, round(f) AS rndf FROM '${T}'`,
      spark(),
    );
  });

  it("a timestamp with a time zone as text is DuckDB's (+00)", async () => {
    await expectSame(
      plan([e('x', { cast: col('tz'), to: 'utf8' })]),
      `SELECT i, CAST(tz AS VARCHAR) AS x FROM '${T}'`,
      spark(),
    );
  });

  it("a NaN in a filter: DuckDB's rows (NaN is above every number, and equal to itself)", async () => {
    await expectSame(
      plan(['n'], {
        or: [
          { column: 'n', cmp: '>', value: 5 },
          { column: 'i', cmp: '=', value: 4 },
        ],
      }),
      `SELECT i, n FROM '${T}' WHERE n > 5 OR i = 4`,
      spark(),
    );
  });

  it('text is read as ours reads it (an integer rounded from "2.5", an offset counted); other text fails', async () => {
    const p = plan([
      e('int', { cast: col('ns'), to: 'int64' }),
      e('dec', { cast: col('ns'), to: 'decimal(8,2)' }),
      e('dbl', { cast: col('ns'), to: 'float64' }),
      e('ts', { cast: col('tss'), to: 'timestamp' }),
      e('dt', { cast: { fn: 'substr', args: [col('tss'), v(1), v(10)] }, to: 'date' }),
    ]);
    const ours = arrowTyped((await runPlan(p, { writeOutput: false })).toArrow());
    expect(ours.rows[2]).toEqual(['3', '-8', '-7.50', -7.5, '2024-01-05 08:00:00', '2024-01-05']);
    const theirs = arrowTyped((await runPlan(p, { ...spark(), writeOutput: false })).toArrow());
    expectTypedEqual(theirs, ours);
    // what Spark's casts read and ours (DuckDB's) does not: a year alone as a date, ' t' as true, full-width digits
    const bad = async (s: string, to: string) => {
      const q = plan([e('x', { cast: { fn: 'concat', args: [col('s'), v(s)] }, to })], {
        column: 'i',
        cmp: '=',
        value: 3,
      });
      const local = await runPlan(q, { writeOutput: false }).catch((x) => x);
      expect(local, `local: ${s} as ${to}`).toBeInstanceOf(Error);
      const err = await runPlan(q, { ...spark(), writeOutput: false }).catch((x) => x);
      expect(err, `spark: ${s} as ${to}`).toBeInstanceOf(InputError);
      expect(err.message).toContain(`value "${s}" cannot be cast to ${to}`);
    };
    await bad('2024', 'date');
    await bad(' t', 'bool');
    await bad('１２', 'decimal(8,2)');
    await bad('1.5d', 'float64');
    await bad('2024-01-05 10', 'timestamp');
  });

  it('the settings the SQL rests on are pinned: a session set otherwise gives the same answer', async () => {
    const p = plan([
      e('bs', v('a\\b')),
      e('sw', { fn: 'starts_with', args: [{ fn: 'concat', args: [v('x\\'), col('s')] }, v('x\\h')] }),
      e('yr', { fn: 'year', args: [col('tz')] }),
    ]);
    const lowered = lowerPlan(await loadPlan(p));
    const client = new SparkConnectClient(parseRemote(REMOTE));
    const run = async () => {
      const batches: arrow.RecordBatch[] = [];
      await client.execute(
        lowered.sql,
        (ev) => {
          if (ev.kind === 'arrow') batches.push(...arrow.tableFromIPC(ev.data).batches);
        },
        { sources: lowered.sources },
      );
      return arrowTyped(new arrow.Table(batches)).rows;
    };
    try {
      // a session where backslashes in literals are not escapes and the time zone is New York's
      await client.setConfig({
        'spark.sql.parser.escapedStringLiterals': 'true',
        'spark.sql.session.timeZone': 'America/New_York',
      });
      const hostile = await run();
      expect(hostile.find((r) => r[0] === '2')).not.toEqual(['2', 'a\\b', false, '2024']);
      await client.setConfig(lowered.settings);
      const rows = await run();
      expect(rows.find((r) => r[0] === '2')).toEqual(['2', 'a\\b', false, '2024']);
      expect(rows.find((r) => r[0] === '1')).toEqual(['1', 'a\\b', true, '2024']);
    } finally {
      await client.close();
    }
  });
});

// no server needed: the lowering alone
describe('spark semantics: the lowering', () => {
  it('pins every setting the SQL rests on, and rewrites the casts, substr, / and round', async () => {
    const lp = await loadPlan(
      plan([
        e('fi', { cast: col('f'), to: 'int64' }),
        e('di', { cast: col('d'), to: 'int64' }),
        e('s0', { fn: 'substr', args: [col('s'), v(0), v(2)] }),
        e('s1', { fn: 'substr', args: [col('s'), v(2), v(3)] }),
        e('q', { fn: '/', args: [v(1), col('z')] }),
      ]),
    );
    const l = lowerPlan(lp);
    for (const [k, x] of Object.entries(SQL_SETTINGS)) expect(l.settings[k], k).toBe(x);
    expect(l.settings['spark.sql.parser.escapedStringLiterals']).toBe('false');
    expect(l.settings['spark.sql.ansi.enabled']).toBe('true');
    // the plan's column names (s is one of the SQL's aliases: positional)
    expect(l.sql).toMatch(/CAST\(rint\(f\) AS BIGINT\)/);
    expect(l.sql).toMatch(/CAST\(round\(d, 0\) AS BIGINT\)/);
    expect(l.sql).toContain('substring(__sj3, 2, 3)'); // start >= 1, length >= 0: Spark's own
    expect(l.sql).toContain('substring(__sj3, 1, 1)'); // start 0, length 2: the first character
    expect(l.sql).toMatch(/startswith\(CAST\(z AS STRING\), '-'\)/); // the sign of a zero divisor
  });
});
