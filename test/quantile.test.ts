// median, quantile_cont and quantile_disc (agg/functions.ts, agg/quantile.ts) against DuckDB: ties, nulls, groups
// with no value, even counts (interpolation), integers, floats with NaN, decimals of both signs, strings and dates
// (quantile_disc); in plans and SQL, with DISTINCT and FILTER, above a join, and in a hot partition that is never
// split (the functions are holistic: no partial state).
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PlanError, runPlan, runSql } from '../dist/index.js';
import { arrowTyped, duckTable, expectSame, expectTypedEqual, sql, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-quantile-');
const T = path.join(dir, 't.parquet'),
  D = path.join(dir, 'd.parquet');

beforeAll(async () => {
  // g: 7 groups, group 'g6' with no x at all; x repeats (ties); f with a NaN; d decimals of both signs
  await writeParquet(
    T,
    `SELECT i::BIGINT AS id, 'g' || (i % 7) AS g, (i % 3)::INTEGER AS h,
      CASE WHEN i % 7 = 6 OR i % 11 = 0 THEN NULL ELSE (i * 37 % 19)::INTEGER END AS x,
      CASE WHEN i = 40 THEN 'NaN'::DOUBLE WHEN i % 13 = 0 THEN NULL ELSE (i % 17) * 1.25 - 3 END::DOUBLE AS f,
      CASE WHEN i % 9 = 0 THEN NULL ELSE ((i * 7919) % 2001 - 1000) / 100 END::DECIMAL(12,2) AS d,
      1125899906842625::BIGINT + i * 1000003 AS big, 'v' || (i * 7 % 23) AS s,
      (DATE '2020-01-01' + (i % 50)::INTEGER) AS day
    FROM range(0, 3000) t(i)`,
    700,
  );
  await writeParquet(D, `SELECT (i % 20)::BIGINT AS k, 'dim' || (i % 4) AS dg FROM range(0, 40) t(i)`);
  await sql(`CREATE OR REPLACE VIEW t AS SELECT * FROM read_parquet('${T}')`);
  await sql(`CREATE OR REPLACE VIEW dim AS SELECT * FROM read_parquet('${D}')`);
});

const scan = { op: 'scan', source: 't' };
const plan = (query: object) => ({ version: 1, sources: { t: { parquet: T }, d: { parquet: D } }, query });
const AGGS = [
  { fn: 'median', column: 'x', as: 'mx' },
  { fn: 'quantile_cont', column: 'x', q: 0.25, as: 'q25' },
  { fn: 'quantile_cont', column: 'f', q: 0.9, as: 'f90' },
  { fn: 'median', column: 'f', as: 'mf' },
  { fn: 'median', column: 'd', as: 'md' },
  { fn: 'quantile_cont', column: 'd', q: 0.3, as: 'd30' },
  { fn: 'median', column: 'big', as: 'mbig' },
  { fn: 'quantile_disc', column: 'x', q: 0.26, as: 'x26' },
  { fn: 'quantile_disc', column: 's', q: 0.5, as: 's50' },
  { fn: 'quantile_disc', column: 'day', q: 1, as: 'day100' },
  { fn: 'quantile_disc', column: 'd', q: 0, as: 'd0' },
  { fn: 'count', column: 'x', as: 'n' },
  { fn: 'sum', column: 'x', as: 'sx' },
];
const AGGS_SQL = `median(x) AS mx, quantile_cont(x, 0.25) AS q25, quantile_cont(f, 0.9) AS f90, median(f) AS mf,
  median(d) AS md, quantile_cont(d, 0.3) AS d30, median(big) AS mbig, quantile_disc(x, 0.26) AS x26,
  quantile_disc(s, 0.5) AS s50, quantile_disc(day, 1) AS day100, quantile_disc(d, 0) AS d0, count(x) AS n,
  sum(x) AS sx`;

describe('quantiles in plans', () => {
  it('by group (one with no value), by two columns and over all rows, with and without combiners', async () => {
    for (const groupBy of [['g'], ['g', 'h'], []]) {
      const keys = groupBy.length ? `${groupBy.join(', ')}, ` : '';
      const by = groupBy.length ? ` GROUP BY ${groupBy.join(', ')}` : '';
      for (const combiners of [true, false])
        await expectSame(
          plan({ op: 'aggregate', input: scan, groupBy, aggregates: AGGS }),
          `SELECT ${keys}${AGGS_SQL} FROM t${by}`,
          { workers: 2, partitions: 4, combiners },
        );
    }
  });

  it('over no rows: no group, or one row of nulls (and a count of 0) over all rows', async () => {
    const empty = { op: 'filter', input: scan, where: { column: 'id', cmp: '<', value: 0 } };
    for (const groupBy of [['g'], []])
      await expectSame(
        plan({ op: 'aggregate', input: empty, groupBy, aggregates: AGGS }),
        `SELECT ${groupBy.length ? 'g, ' : ''}${AGGS_SQL} FROM t WHERE id < 0${groupBy.length ? ' GROUP BY g' : ''}`,
      );
  });

  it('a hot partition is aggregated whole, never split in two levels (no partial state): same answers', async () => {
    const r = await runPlan(plan({ op: 'aggregate', input: scan, groupBy: ['h'], aggregates: AGGS }), {
      writeOutput: false,
      workers: 2,
      partitions: 8,
      skew: { factor: 1.01, thresholdBytes: 1, advisoryPartitionBytes: 1024 },
    });
    const splits = r.stats.aggregates[0].splits;
    expect(splits.length).toBeGreaterThan(0);
    for (const s of splits)
      expect(s).toMatchObject({ method: 'none', reason: 'median is holistic: no mergeable partial state' });
    expectTypedEqual(arrowTyped(r.toArrow()), await duckTable(`SELECT h, ${AGGS_SQL} FROM t GROUP BY h`));
    // and without combiners' partial states in the shuffle: the map tasks ship rows
    expect(r.stats.shuffles[0].combine).toBeUndefined();
  });

  it('above a join (shuffle and broadcast, eager aggregation allowed): never rewritten below it', async () => {
    const join = {
      op: 'join',
      type: 'inner',
      on: [['h', 'k']],
      left: scan,
      right: { op: 'scan', source: 'd' },
    };
    const aggregates = [
      { fn: 'median', column: 'x', as: 'mx' },
      { fn: 'quantile_disc', column: 'dg', q: 0.5, as: 'dg50' },
      { fn: 'count', as: 'n' },
    ];
    const q = plan({ op: 'aggregate', input: join, groupBy: ['g'], aggregates });
    const text = `SELECT g, median(x) AS mx, quantile_disc(dg, 0.5) AS dg50, count(*) AS n
      FROM t JOIN dim ON h = k GROUP BY g`;
    for (const broadcastBytes of [0, undefined])
      await expectSame(q, text, { workers: 2, partitions: 3, eagerAggregation: true, broadcastBytes });
  });

  it('refuses what does not apply: a string to quantile_cont, q missing, out of range, or given to median', async () => {
    const bad = async (agg: object) => {
      const e = await runPlan(plan({ op: 'aggregate', input: scan, groupBy: [], aggregates: [agg] }), {
        writeOutput: false,
      }).catch((x) => x);
      expect(e).toBeInstanceOf(PlanError);
      return (e as Error).message;
    };
    expect(await bad({ fn: 'median', column: 's', as: 'm' })).toBe(
      'query.aggregates[0].column: median needs a numeric column; "s" is utf8',
    );
    expect(await bad({ fn: 'quantile_cont', column: 'x', as: 'm' })).toBe(
      'query.aggregates[0].q: quantile_cont needs "q", the fraction from 0 to 1',
    );
    expect(await bad({ fn: 'median', column: 'x', q: 0.3, as: 'm' })).toBe(
      'query.aggregates[0].q: median takes no "q" (got 0.3)',
    );
    expect(await bad({ fn: 'quantile_disc', column: 'x', q: 1.5, as: 'm' })).toMatch(/q.*1/);
  });
});

describe('quantiles in SQL', () => {
  const same = async (text: string) => {
    const r = await runSql(text, { sources: { t: T, dim: D }, workers: 2 });
    expectTypedEqual(arrowTyped(r.toArrow()), await duckTable(text));
  };
  it('median, quantile_cont, quantile_disc and percentile_cont/_disc WITHIN GROUP', async () => {
    await same(`SELECT g, ${AGGS_SQL} FROM t GROUP BY g`);
    await same(
      `SELECT g, percentile_cont(0.75) WITHIN GROUP (ORDER BY x) AS p75,
        percentile_disc(0.5) WITHIN GROUP (ORDER BY s ASC) AS s50 FROM t GROUP BY g`,
    );
    await same('SELECT median(x + h) AS m, quantile_cont(f * 2, 0.5) AS q FROM t WHERE h = 1');
  });
  it('with DISTINCT, FILTER, and beside count(DISTINCT) of one and two columns', async () => {
    await same('SELECT g, median(DISTINCT x) AS m, median(x) FILTER (WHERE h = 0) AS mf FROM t GROUP BY g');
    await same('SELECT g, median(x) AS m, count(DISTINCT x) AS dx, sum(DISTINCT h) AS sh FROM t GROUP BY g');
    await same('SELECT g, median(x) AS m, count(DISTINCT x) AS dx, count(DISTINCT s) AS ds FROM t GROUP BY g');
    await same(
      'SELECT h, quantile_disc(s, 0.5) AS m, count(DISTINCT s) AS ds, avg(DISTINCT x) AS ax FROM t GROUP BY h',
    );
  });
  it('a fraction that is not a number from 0 to 1 is an error at its position', async () => {
    const e = await runSql('SELECT quantile_cont(x, 2) FROM t', { sources: { t: T } }).catch((x) => x);
    expect((e as Error).message).toBe(
      'line 1, column 25: quantile_cont(): the fraction must be a number from 0 to 1, got 2',
    );
    const w = await runSql('SELECT median(0.5) WITHIN GROUP (ORDER BY x) FROM t', { sources: { t: T } }).catch(
      (x) => x,
    );
    expect((w as Error).message).toBe(
      'line 1, column 20: WITHIN GROUP takes percentile_cont or percentile_disc, not median()',
    );
  });
});
