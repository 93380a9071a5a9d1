// The same plans on Spark (--engine spark, through the shared local Spark Connect
// server of test/spark-setup.ts) against DuckDB: every operator and join type,
// expressions and functions, decimals to 38 digits, dates, timestamps, nulls,
// params and sources; and the plan constructs refused at lowering.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { InputError, PlanError, runPlan } from '../dist/index.js';
import type { SparkStats } from '../dist/spark/engine.js';
import {
  arrowTyped,
  cli,
  duckTable,
  expectSame,
  expectTypedEqual,
  tmpDir,
  writeParquet,
  writePlan,
} from './helpers.js';
import { NO_SPARK, REMOTE, requireSpark } from './spark-helpers.js';

const dir = tmpDir('sj-spark-');
const T1 = path.join(dir, 't1.parquet'),
  T2 = path.join(dir, 't2.parquet');
const sources = { t1: { parquet: T1 }, t2: { parquet: T2 } };
const plan = (query: object, extra: object = {}) => ({ version: 1, sources, query, ...extra });
const scan = (source: string, columns?: string[]) => ({ op: 'scan', source, ...(columns ? { columns } : {}) });
const spark = () => ({ engine: 'spark' as const, remote: REMOTE });

beforeAll(async () => {
  if (NO_SPARK) return;
  requireSpark();
  // nulls in every column; 38-digit decimals; timestamps with microseconds
  await writeParquet(
    T1,
    `SELECT (i % 17)::INT AS k, CASE WHEN i % 7 = 0 THEN NULL ELSE 'g' || (i % 5) END AS g,
    (i * 1000003)::BIGINT AS v, CASE WHEN i % 11 = 0 THEN NULL ELSE (i * 12.34 - 500)::DECIMAL(12,2) END AS d,
    (i / 8.0)::DOUBLE AS f, DATE '2024-01-31' + (i * 3)::INT AS dt,
    TIMESTAMP '2024-02-29 10:00:00.123456' + (i * INTERVAL '1 hour 7 minutes') AS ts,
    CASE WHEN i % 9 = 0 THEN NULL ELSE '  Str_' || i || '%x ' END AS s, i % 3 = 0 AS b,
    ('-12345678901234567890.' || lpad(i::VARCHAR, 12, '0'))::DECIMAL(38,12) AS big
    FROM range(200) t(i)`,
    64,
  );
  await writeParquet(
    T2,
    `SELECT (i % 23)::INT AS k, 'n' || i AS name, (i * 1.5)::DECIMAL(10,1) AS w
    FROM range(40) t(i) WHERE i % 4 <> 1`,
  );
}, 120_000);

describe.skipIf(NO_SPARK)('spark engine: operators and joins', () => {
  it.each(['inner', 'left', 'right', 'full', 'semi', 'anti'])("%s join gives DuckDB's rows", async (type) => {
    const q = { op: 'join', type, left: scan('t1', ['k', 'v', 'g']), right: scan('t2'), on: [['k', 'k']] };
    const kw = {
      inner: 'JOIN',
      left: 'LEFT JOIN',
      right: 'RIGHT JOIN',
      full: 'FULL JOIN',
      semi: 'SEMI JOIN',
      anti: 'ANTI JOIN',
    }[type];
    const cols = type === 'semi' || type === 'anti' ? 'l.k, l.v, l.g' : 'l.k, l.v, l.g, r.k AS k_right, r.name, r.w';
    await expectSame(plan(q), `SELECT ${cols} FROM '${T1}' l ${kw} '${T2}' r ON l.k = r.k`, spark());
  });

  it('cross join, filter, project, aggregate (every function), sort with nulls first, limit with offset', async () => {
    const cross = { op: 'join', type: 'inner', left: scan('t2', ['k']), right: scan('t2', ['name']), on: [] };
    await expectSame(plan(cross), `SELECT a.k, b.name FROM '${T2}' a CROSS JOIN '${T2}' b`, spark());
    const agg = {
      op: 'aggregate',
      groupBy: ['g'],
      input: { op: 'filter', input: scan('t1'), where: { column: 'k', cmp: '<', value: 12 } },
      aggregates: [
        { fn: 'count', as: 'n' },
        { fn: 'count', column: 'd', as: 'nd' },
        { fn: 'count_distinct', column: 'k', as: 'dk' },
        { fn: 'sum', column: 'v', as: 'sv' },
        { fn: 'sum', column: 'd', as: 'sd' },
        { fn: 'sum', column: 'big', as: 'sbig' },
        { fn: 'avg', column: 'f', as: 'af' },
        { fn: 'min', column: 'dt', as: 'mindt' },
        { fn: 'max', column: 'ts', as: 'maxts' },
        { fn: 'min', column: 's', as: 'mins' },
        { fn: 'max', column: 'd', as: 'maxd' },
      ],
    };
    await expectSame(
      plan(agg),
      `SELECT g, count(*) AS n, count(d) AS nd, count(DISTINCT k) AS dk, sum(v) AS sv,
      sum(d)::DECIMAL(38,2) AS sd, sum(big) AS sbig, avg(f) AS af, min(dt) AS mindt, max(ts) AS maxts,
      min(s) AS mins, max(d) AS maxd
      FROM '${T1}' WHERE k < 12 GROUP BY g`,
      spark(),
    );
    const sorted = {
      op: 'limit',
      count: 15,
      offset: 5,
      input: {
        op: 'sort',
        input: scan('t1', ['g', 'd', 'v']),
        by: [{ column: 'g', nulls: 'first' }, { column: 'd', desc: true }, { column: 'v' }],
      },
    };
    await expectSame(
      plan(sorted),
      `SELECT g, d, v FROM '${T1}' ORDER BY g NULLS FIRST, d DESC NULLS LAST, v LIMIT 15 OFFSET 5`,
      spark(),
      true,
    );
  });
});

describe.skipIf(NO_SPARK)('spark engine: quantiles', () => {
  it('median and quantile_cont as PERCENTILE, quantile_disc as PERCENTILE_DISC; a decimal median refused', async () => {
    const agg = {
      op: 'aggregate',
      groupBy: ['g'],
      input: scan('t1'),
      aggregates: [
        { fn: 'median', column: 'v', as: 'mv' },
        { fn: 'quantile_cont', column: 'f', q: 0.3, as: 'f30' },
        { fn: 'quantile_disc', column: 'k', q: 0.75, as: 'k75' },
      ],
    };
    await expectSame(
      plan(agg),
      `SELECT g, median(v) AS mv, quantile_cont(f, 0.3) AS f30, quantile_disc(k, 0.75) AS k75 FROM '${T1}' GROUP BY g`,
      spark(),
    );
    const dec = { ...agg, aggregates: [{ fn: 'median', column: 'd', as: 'md' }] };
    const e = await runPlan(plan(dec), { ...spark(), writeOutput: false }).catch((x) => x);
    expect(e).toBeInstanceOf(PlanError);
    expect((e as Error).message).toMatch(
      /aggregates\[0\]: median of a decimal\(12,2\) column has no exact Spark lowering/,
    );
  });
});

describe.skipIf(NO_SPARK)('spark engine: expressions', () => {
  const e = (name: string, expr: object) => ({ name, expr });
  it("arithmetic, decimals, strings, dates, case, cast and predicates give DuckDB's values", async () => {
    const q = {
      op: 'project',
      input: {
        op: 'filter',
        input: scan('t1'),
        where: {
          or: [
            { column: 's', like: '%_1%' },
            { column: 'k', between: [3, 5] },
            { column: 'g', in: ['g1', 'g4'] },
            { column: 'd', isNull: true },
          ],
        },
      },
      columns: [
        'k',
        { name: 'kk', column: 'k' },
        e('add', { fn: '+', args: [{ column: 'v' }, { column: 'k' }] }),
        e('div', { fn: '/', args: [{ column: 'v' }, { fn: '-', args: [{ column: 'k' }, { value: 3 }] }] }),
        e('mod', { fn: '%', args: [{ column: 'v' }, { fn: '-', args: [{ column: 'k' }, { value: 3 }] }] }),
        e('dmul', { fn: '*', args: [{ column: 'd' }, { value: 0.06 }] }),
        e('dsub', { fn: '-', args: [{ column: 'd' }, { value: '1.005', type: 'decimal(10,3)' }] }),
        e('neg', { fn: 'neg', args: [{ column: 'd' }] }),
        e('abs', { fn: 'abs', args: [{ column: 'd' }] }),
        e('rnd', { fn: 'round', args: [{ column: 'd' }, { value: 1 }] }),
        e('fl', { fn: 'floor', args: [{ column: 'f' }] }),
        e('ce', { fn: 'ceil', args: [{ column: 'd' }] }),
        e('co', { fn: 'coalesce', args: [{ column: 'g' }, { value: 'none' }] }),
        e('ni', { fn: 'nullif', args: [{ column: 'k' }, { value: 4 }] }),
        e('cat', { fn: 'concat', args: [{ column: 'g' }, { value: '-' }, { column: 'k' }] }),
        e('sub', { fn: 'substr', args: [{ column: 's' }, { value: 3 }, { value: 4 }] }),
        e('low', { fn: 'lower', args: [{ column: 's' }] }),
        e('up', { fn: 'upper', args: [{ column: 's' }] }),
        e('len', { fn: 'length', args: [{ column: 's' }] }),
        e('tr', { fn: 'trim', args: [{ column: 's' }] }),
        e('sw', { fn: 'starts_with', args: [{ fn: 'trim', args: [{ column: 's' }] }, { value: 'Str_1' }] }),
        e('ew', { fn: 'ends_with', args: [{ column: 's' }, { value: 'x ' }] }),
        e('ct', { fn: 'contains', args: [{ column: 's' }, { value: '%' }] }),
        e('y', { fn: 'year', args: [{ column: 'dt' }] }),
        e('m', { fn: 'month', args: [{ column: 'ts' }] }),
        e('dd', { fn: 'day', args: [{ column: 'dt' }] }),
        e('addm', { fn: 'date_add', args: [{ column: 'dt' }, { value: 1 }, { value: 'month' }] }),
        e('addy', { fn: 'date_add', args: [{ column: 'dt' }, { column: 'k' }, { value: 'year' }] }),
        e('addd', { fn: 'date_add', args: [{ column: 'ts' }, { value: 40 }] }),
        e('diff', { fn: 'date_diff', args: [{ value: '2024-01-01' }, { column: 'dt' }] }),
        e('cs', {
          case: [
            { when: { column: 'k', cmp: '>', value: 10 }, then: { column: 'd' } },
            { when: { column: 'b', cmp: '=', value: true }, then: { value: 1 } },
          ],
        }),
        e('cst', { cast: { column: 'k' }, to: 'utf8' }),
        e('cd', { cast: { column: 'd' }, to: 'float64' }),
        e('cmp', {
          fn: 'and',
          args: [
            { fn: '>=', args: [{ column: 'f' }, { value: 3 }] },
            { fn: 'not', args: [{ fn: 'is_null', args: [{ column: 'g' }] }] },
          ],
        }),
        e('bigx', { fn: '+', args: [{ column: 'big' }, { column: 'big' }] }),
      ],
    };
    await expectSame(
      plan(q),
      `SELECT k, k AS kk, v + k AS add, v / (k - 3) AS div, CASE WHEN k = 3 THEN NULL ELSE v % (k - 3) END AS mod,
      d * 0.06 AS dmul, d - 1.005::DECIMAL(10,3) AS dsub, -d AS neg, abs(d) AS abs, round(d, 1) AS rnd,
      floor(f) AS fl, ceil(d)::DECIMAL(11,0) AS ce,
      coalesce(g, 'none') AS co, nullif(k, 4) AS ni, (g || '-' || k) AS cat, substr(s, 3, 4) AS sub,
      lower(s) AS low, upper(s) AS up,
      length(s)::BIGINT AS len, trim(s) AS tr, starts_with(trim(s), 'Str_1') AS sw, ends_with(s, 'x ') AS ew,
      contains(s, '%') AS ct,
      year(dt)::BIGINT AS y, month(ts)::BIGINT AS m, day(dt)::BIGINT AS dd, (dt + INTERVAL 1 MONTH)::DATE AS addm,
      (dt + to_years(k::INT))::DATE AS addy, ts + INTERVAL 40 DAY AS addd, (dt - DATE '2024-01-01')::BIGINT AS diff,
      CASE WHEN k > 10 THEN d WHEN b = true THEN 1 END AS cs, k::VARCHAR AS cst, d::DOUBLE AS cd,
      f >= 3 AND NOT (g IS NULL) AS cmp, big + big AS bigx
      FROM '${T1}' WHERE s LIKE '%_1%' OR k BETWEEN 3 AND 5 OR g IN ('g1', 'g4') OR d IS NULL`,
      spark(),
    );
  });
});

describe.skipIf(NO_SPARK)('spark engine: params, sources, refusals', () => {
  it('a parameter and a source override', async () => {
    const p = plan(
      { op: 'filter', input: scan('t1', ['k', 'dt']), where: { column: 'dt', cmp: '>=', value: { param: 'FROM' } } },
      { params: { FROM: { type: 'date', default: '2024-03-01' } } },
    );
    const other = tmpDir('sj-spark-src-');
    await writeParquet(path.join(other, 'a.parquet'), `SELECT k, dt FROM '${T1}' WHERE k < 5`);
    await writeParquet(path.join(other, 'b.parquet'), `SELECT k, dt FROM '${T1}' WHERE k >= 12`);
    await expectSame(p, `SELECT k, dt FROM '${T1}' WHERE (k < 5 OR k >= 12) AND dt >= DATE '2024-05-01'`, {
      ...spark(),
      params: { FROM: '2024-05-01' },
      sources: { t1: other },
    });
  });

  it('sources given as URIs (file:, a glob) are bound from the schema Spark gives them and read by Spark', async () => {
    const other = tmpDir('sj-spark-uri-');
    await writeParquet(path.join(other, 'p1.parquet'), `SELECT k, name, w FROM '${T2}' WHERE k < 10`);
    await writeParquet(path.join(other, 'p2.parquet'), `SELECT k, name, w FROM '${T2}' WHERE k >= 10`);
    const p = {
      version: 1,
      sources: { t1: { parquet: `file://${T1}` }, t2: { parquet: `file://${other}/p*.parquet` } },
      execution: { skew: { factor: 1, thresholdBytes: 1 } },
      query: { op: 'join', type: 'full', left: scan('t1', ['k', 'v', 'd', 'ts']), right: scan('t2'), on: [['k', 'k']] },
    };
    const r = await runPlan(p, { ...spark(), writeOutput: false });
    expectTypedEqual(
      arrowTyped(r.toArrow()),
      await duckTable(`SELECT l.k, l.v, l.d, l.ts, r.k AS k_right, r.name, r.w
      FROM '${T1}' l FULL JOIN '${other}/p*.parquet' r ON l.k = r.k`),
    );
    const s = (r.stats as SparkStats).spark;
    expect(s.sql).toContain(`parquet.\`file://${other}/p*.parquet\``);
    // a URI side is sampled on Spark (its rows are not known here): counted, then one aggregation of a sample
    expect(s.sampling?.map((x) => [x.side, x.method, x.sideRows])).toEqual([
      ['left', 'spark', 200],
      ['right', 'spark', 30],
    ]);
    expect(s.sampling?.[0].sql).toMatch(/GROUP BY GROUPING SETS \(\(k0\), \(\)\)/);
    // an override may be a URI too; a URI Spark does not find is an input error (exit 3) naming the source
    const missing = await runPlan(p, { ...spark(), sources: { t2: `file://${other}/none.parquet` } }).catch((e) => e);
    expect(missing).toBeInstanceOf(InputError);
    expect(missing.message).toMatch(/^source "t2": spark: \[PATH_NOT_FOUND\]/);
    // a local path not found here is the remote server's to find (a cluster may mount it)
    const gone = await runPlan(p, { ...spark(), sources: { t2: path.join(other, 'gone.parquet') } }).catch((e) => e);
    expect(gone).toBeInstanceOf(InputError);
    expect(gone.message).toMatch(/^source "t2": spark: \[PATH_NOT_FOUND\].*gone\.parquet/);
  });

  it('refuses a float written as text, naming the JSON path (exit 2)', async () => {
    const p = plan({
      op: 'project',
      input: scan('t1'),
      columns: [{ name: 'x', expr: { cast: { column: 'f' }, to: 'utf8' } }],
    });
    const err = await runPlan(p, { ...spark(), baseDir: dir }).catch((e) => e);
    expect(err).toBeInstanceOf(PlanError);
    expect(err.message).toMatch(
      /^query\.columns\[0\]\.expr\.cast.*Spark writes floating-point numbers as text differently/,
    );
    expect(err.exitCode).toBe(2);
  });
});

// no server needed: the lowering alone
describe('skewjoin lower --to spark', () => {
  it('the local engine refuses a URI source (exit 3): only Spark reads it', async () => {
    const p = plan(scan('t1'));
    p.sources = { t1: { parquet: 's3a://bucket/t1.parquet' } } as typeof sources;
    const err = await runPlan(p).catch((e) => e);
    expect(err).toBeInstanceOf(InputError);
    expect(err.message).toBe(
      'source "t1": s3a://bucket/t1.parquet is a URI, which only --engine spark reads (Spark reads it itself)',
    );
  });

  it('prints the settings and the SQL of a plan; a refused construct is exit 2 with its JSON path', async () => {
    const r = cli(['lower', '--to', 'spark', 'plans/tpch/q05.json', '--param', 'REGION=EUROPE']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('spark.sql.ansi.enabled=true');
    expect(r.stdout).toContain('spark.sql.decimalOperations.allowPrecisionLoss=false');
    // the plan's own column names inside
    expect(r.stdout).toMatch(/LEFT SEMI JOIN .* WHERE \(r_name = 'EUROPE'\)/s);
    expect(r.stdout).toMatch(/ORDER BY revenue DESC NULLS LAST/);
    expect(r.stdout).toContain('parquet.`file:///');
    await writeParquet(T1.replace('t1', 'floats'), 'SELECT 1.5::DOUBLE AS f');
    const bad = plan({
      op: 'project',
      input: scan('t1'),
      columns: [{ name: 'x', expr: { fn: 'concat', args: [{ column: 'f' }] } }],
    });
    bad.sources = { t1: { parquet: T1.replace('t1', 'floats') } } as typeof sources;
    const refused = cli(['lower', '--to', 'spark', writePlan(dir, bad, 'floats.json')]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      /query\.columns\[0\]\.expr\.args\[0\].*Spark writes floating-point numbers as text differently/,
    );
  });
});
