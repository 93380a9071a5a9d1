// A window without ORDER BY over a hot partition (skew/window.ts unsplittableWhole): count, sum, avg, min and max over
// the whole partition (and the ranks, every row a peer) split as a two-level aggregate: the hot partition's rows
// dealt over several ranges of the partition keys, partials per piece, combined per partition and given back to its
// rows in every piece. Against DuckDB with thresholds forcing the split, on the pool and under a 64 KB budget;
// `--explain --analyze` and the statistics say how the partition was split; functions it cannot combine keep the
// partition whole and say why.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type RunResult, compileSql, explainAnalyze, explainPlan, loadPlan, runPlan, runSql } from '../dist/index.js';
import { arrowTyped, duckTable, expectTypedEqual, sql, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-window-whole-');
const T = path.join(dir, 't.parquet');

beforeAll(async () => {
  // g: 'hot' in half the rows, a single-row partition, nulls; x, f, d, s: values with nulls (x all null in 'allnull')
  await writeParquet(
    T,
    `SELECT i::BIGINT AS id,
      CASE WHEN i % 50 = 0 THEN NULL WHEN i = 7 THEN 'single' WHEN i % 5 = 1 THEN 'allnull'
           WHEN i % 2 = 0 THEN 'hot' ELSE 'g' || (i % 7) END AS g,
      CASE WHEN i % 11 = 0 OR i % 5 = 1 THEN NULL ELSE (i * 37) % 101 - 50 END::INTEGER AS x,
      CASE WHEN i % 13 = 0 THEN NULL ELSE ((i * 7) % 23) * 0.75 END::DOUBLE AS f,
      CASE WHEN i % 19 = 0 THEN NULL ELSE ((i * 7919) % 20001 - 10000) / 100 END::DECIMAL(12,2) AS d,
      CASE WHEN i % 9 = 0 THEN NULL ELSE 'v' || ((i * 7) % 31) END AS s
    FROM range(0, 6000) t(i)`,
    500,
  );
  await sql(`CREATE OR REPLACE VIEW t AS SELECT * FROM read_parquet('${T}')`);
});

const SKEW = {
  sources: { t: T },
  workers: 2,
  inThreadBytes: 0,
  partitions: 8,
  skew: { factor: 1.5, thresholdBytes: 1, advisoryPartitionBytes: 4096 },
};

const FNS = `count(*) OVER w AS c, count(x) OVER w AS cx, sum(x) OVER w AS sx, sum(d) OVER w AS sd,
  sum(f) OVER w AS sf, avg(x) OVER w AS ax, avg(d) OVER w AS ad, avg(f) OVER w AS af, min(s) OVER w AS mins,
  max(x) OVER w AS mx, min(d) OVER w AS mind, rank() OVER w AS r, dense_rank() OVER w AS dr,
  percent_rank() OVER w AS pr, cume_dist() OVER w AS cd`;

const splitsOf = (r: RunResult) => (r.stats.windows ?? []).flatMap((w) => w.splits);

async function same(text: string, opts: object) {
  const r = await runSql(text, opts);
  expectTypedEqual(arrowTyped(r.toArrow()), await duckTable(text));
  return r;
}

describe('a window without ORDER BY over a hot partition, split as a two-level aggregate', () => {
  it.each([
    ['on the pool', {}],
    ['under a 64 KB budget (spilled)', { memoryLimit: '64KB', spillDir: path.join(dir, 'spill') }],
  ])('count/sum/avg/min/max and the ranks over the whole partition, %s: DuckDB answers', async (_, more) => {
    const r = await same(`SELECT *, ${FNS} FROM t WINDOW w AS (PARTITION BY g)`, { ...SKEW, ...more });
    const split = splitsOf(r).filter((s) => s.method === 'aggregate');
    expect(split.length).toBeGreaterThan(0);
    expect(split[0].pieces).toBeGreaterThan(2);
    // the hot partition's rows are in several pieces: no piece holds more than 1.5x the median piece
    const pieces = r.stats.tasks
      .filter(
        (t) => t.stage === 'window-1' && /^range \d+\/\d+$/.test(t.split ?? '') && t.partition === split[0].partition,
      )
      .map((t) => t.rows)
      .sort((a, b) => a - b);
    expect(pieces.length).toBe(split[0].pieces);
    expect(pieces[pieces.length - 1]).toBeLessThanOrEqual(1.5 * pieces[pieces.length >> 1]);
    expect(r.stats.tasks.some((t) => t.split?.endsWith('carried'))).toBe(true);
  });

  it('several partition keys, one partition (no PARTITION BY), and a window over an aggregate', async () => {
    await same(
      `SELECT id, g, s, count(*) OVER (PARTITION BY g, s IS NULL) AS c, sum(x) OVER (PARTITION BY g, s IS NULL) AS sx,
        max(s) OVER (PARTITION BY g, s IS NULL) AS ms FROM t`,
      SKEW,
    );
    const one = { ...SKEW, partitions: 1, skew: { factor: 0.5, thresholdBytes: 1, advisoryPartitionBytes: 4096 } };
    const r = await same('SELECT id, sum(f) OVER () AS sf, avg(x) OVER () AS ax, count(*) OVER () AS c FROM t', one);
    expect(splitsOf(r).some((s) => s.method === 'aggregate')).toBe(true);
    await same(
      `SELECT g, n, sum(n) OVER (PARTITION BY g IS NULL) AS total FROM (SELECT g, count(*) AS n FROM t GROUP BY g) AS a`,
      SKEW,
    );
  });

  it('a function it cannot combine (row_number without ORDER BY) keeps the partition whole and says why', async () => {
    const r = await runSql('SELECT id, g, x, row_number() OVER (PARTITION BY g) AS rn FROM t', SKEW);
    const none = splitsOf(r).filter((s) => s.method === 'none');
    expect(none.length).toBeGreaterThan(0);
    expect(none[0].reason).toMatch(/no orderBy, and row_number→rn is not an aggregate over the whole partition/);
  });

  it('--explain says how a hot partition is split; --explain --analyze which partition was', async () => {
    const text = `SELECT g, x, sum(x) OVER (PARTITION BY g) AS sx FROM read_parquet('${T}')`;
    const { sources: _, ...opts } = SKEW;
    const lp = await loadPlan(await compileSql(text), opts);
    expect(explainPlan(lp)).toMatch(/split as a two-level aggregate: its rows dealt over ranges of \[g\]/);
    const r = await runPlan(lp.plan, opts);
    expect(explainAnalyze(lp, r.stats)).toMatch(
      /partition \d+ \(\d+ rows, .*\): split as a two-level aggregate: its rows dealt over \d+ piece\(s\)/,
    );
  });
});

describe('frames to the partition end over a hot partition split by ranges: what the pieces after carry', () => {
  it.each([
    ['on the pool', {}],
    ['under a 64 KB budget (spilled)', { memoryLimit: '64KB', spillDir: path.join(dir, 'spill') }],
  ])(
    'ROWS/RANGE from the current row to the end, whole-partition frames, last_value, %s: DuckDB answers',
    async (_, more) => {
      const rest = 'ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING';
      const all = 'ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING';
      const r = await same(
        `SELECT *, count(*) OVER (u ${rest}) AS c, sum(x) OVER (u ${rest}) AS sx, sum(d) OVER (u ${rest}) AS sd,
        sum(f) OVER (u ${rest}) AS sf, min(s) OVER (u ${rest}) AS mins, max(d) OVER (u ${rest}) AS maxd,
        last_value(s) OVER (u ${rest}) AS ls, last_value(x) OVER (u ${all}) AS lx, sum(x) OVER (u ${all}) AS tx,
        min(x) OVER (u ${all}) AS tminx, count(x) OVER (u ${all}) AS tcx, row_number() OVER u AS rn,
        avg(x) OVER (u ${rest}) AS ax, avg(d) OVER (u ${rest}) AS ad, avg(f) OVER (u ${rest}) AS af,
        sum(x) OVER (u ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running
      FROM t WINDOW u AS (PARTITION BY g ORDER BY x DESC NULLS FIRST, id)`,
        { ...SKEW, ...more },
      );
      const split = splitsOf(r).filter((x) => x.method === 'ranges');
      expect(split.length).toBeGreaterThan(0);
      expect(split[0].pieces).toBeGreaterThan(2);
      expect(r.stats.tasks.some((t) => t.split?.endsWith('carried'))).toBe(true);
    },
  );

  it('RANGE from the current row over ties (peers kept in one piece), and with the ranks', async () => {
    const r = await same(
      `SELECT *, sum(x) OVER w AS sx, count(*) OVER w AS c, max(s) OVER w AS ms, avg(d) OVER w AS ad, rank() OVER (PARTITION BY g ORDER BY f) AS rk
      FROM t WINDOW w AS (PARTITION BY g ORDER BY f RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING)`,
      SKEW,
    );
    expect(splitsOf(r).some((x) => x.method === 'ranges')).toBe(true);
  });
});
