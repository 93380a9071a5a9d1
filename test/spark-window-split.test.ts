// Hot window partitions split on Spark (spark/window-split.ts, spark/window.ts): a Zipf partition key whose hottest
// key holds half the rows, thresholds low enough that it is split by ranges of the ORDER BY column; the two-pass
// rewrite gives DuckDB's answers and the local engine's for each function it splits, with ties and nulls in the
// ORDER BY column for rank, dense_rank and RANGE frames; `skewjoin lower` shows it, `--no-skew` leaves it out.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  arrowTyped,
  cli,
  duckTable,
  expectSame,
  expectTypedEqual,
  ourRun,
  tmpDir,
  writeParquet,
  writePlan,
} from './helpers.js';
import { NO_SPARK, REMOTE, requireSpark } from './spark-helpers.js';

const dir = tmpDir('sj-spark-window-split-');
const T = path.join(dir, 't.parquet');
const N = 6000;

// g: Zipf over 1000 values (g = 1 holds half the rows, g = 2 a sixth, ...); o unique; t with ties and nulls
beforeAll(async () => {
  await writeParquet(
    T,
    `SELECT (1000 // (1 + (i * 7919) % 1000))::INTEGER AS g, ((i * 4099) % ${N})::BIGINT AS o,
      CASE WHEN i % 17 = 0 THEN NULL ELSE (i * 13 % 40)::INTEGER END AS t,
      CASE WHEN i % 11 = 0 THEN NULL ELSE (i * 37 % 101) END::INTEGER AS x,
      ((i * 7919) % 20001 / 100)::DECIMAL(12,2) AS d
    FROM range(0, ${N}) r(i)`,
    1000,
  );
}, 120_000);

const execution = { partitions: 8, skew: { factor: 2, thresholdBytes: 1 } };
const cum = (unit: string) => ({ unit, start: 'unbounded preceding', end: 'current row' });
const plan = (orderBy: object[], functions: object[]) => ({
  version: 1,
  sources: { t: { parquet: T } },
  query: { op: 'window', input: { op: 'scan', source: 't' }, partitionBy: ['g'], orderBy, functions },
  execution,
});

// unique ORDER BY values: row_number and ROWS frames are deterministic
const UNIQUE = plan(
  [{ column: 'o' }],
  [
    { fn: 'row_number', as: 'rn' },
    { fn: 'rank', as: 'rk' },
    { fn: 'dense_rank', as: 'dr' },
    { fn: 'count', as: 'c' },
    { fn: 'count', column: 'x', frame: cum('rows'), as: 'cx' },
    { fn: 'sum', column: 'x', as: 'sx' },
    { fn: 'sum', column: 'd', frame: cum('rows'), as: 'sd' },
    { fn: 'avg', column: 'x', as: 'ax' },
    { fn: 'avg', column: 'd', as: 'ad' },
    { fn: 'min', column: 'x', as: 'mn' },
    { fn: 'max', column: 'd', frame: cum('rows'), as: 'mx' },
  ],
);
const W = 'PARTITION BY g ORDER BY o';
const UNIQUE_SQL = `SELECT *, row_number() OVER w AS rn, rank() OVER w AS rk, dense_rank() OVER w AS dr,
  count(*) OVER w AS c, count(x) OVER (${W} ROWS UNBOUNDED PRECEDING) AS cx, sum(x) OVER w AS sx,
  sum(d) OVER (${W} ROWS UNBOUNDED PRECEDING) AS sd, avg(x) OVER w AS ax, avg(d) OVER w AS ad, min(x) OVER w AS mn,
  max(d) OVER (${W} ROWS UNBOUNDED PRECEDING) AS mx
  FROM '${T}' WINDOW w AS (${W})`;

// ties and nulls in the ORDER BY column, descending, nulls first: peers never go to different pieces
const TIES = plan(
  [{ column: 't', desc: true, nulls: 'first' }],
  [
    { fn: 'rank', as: 'rk' },
    { fn: 'dense_rank', as: 'dr' },
    { fn: 'count', column: 'x', as: 'cx' },
    { fn: 'sum', column: 'd', as: 'sd' },
    { fn: 'avg', column: 'x', frame: cum('range'), as: 'ax' },
    { fn: 'max', column: 'x', as: 'mx' },
  ],
);
const TW = 'PARTITION BY g ORDER BY t DESC NULLS FIRST';
const TIES_SQL = `SELECT *, rank() OVER w AS rk, dense_rank() OVER w AS dr, count(x) OVER w AS cx,
  sum(d) OVER w AS sd, avg(x) OVER w AS ax, max(x) OVER w AS mx FROM '${T}' WINDOW w AS (${TW})`;

describe('spark engine: hot window partitions split', () => {
  it('`skewjoin lower` samples the window here and shows the split; --no-skew and other functions leave it plain', () => {
    const f = writePlan(dir, UNIQUE);
    const r = cli(['lower', '--to', 'spark', f]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/sampled \S+ here: \d+ rows of its 6000 in \d+ ms; 2 hot partitions/);
    expect(r.stdout).toMatch(/split window \S+: partition 1 in [2-9] pieces by o \(cut at \d+(, \d+)*\)/);
    expect(r.stdout).toContain('AS __pc');
    expect(r.stdout).toContain('BROADCAST(o)');
    const off = cli(['lower', '--to', 'spark', f, '--no-skew']);
    expect(off.code, off.stderr).toBe(0);
    expect(off.stdout).not.toContain('split window');
    expect(off.stdout).not.toContain('__pc');
    // lag is not carried across pieces here: the window keeps the plain lowering
    const lag = plan([{ column: 'o' }], [{ fn: 'lag', column: 'x', as: 'lx' }]);
    const plain = cli(['lower', '--to', 'spark', writePlan(dir, lag, 'lag.json')]);
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stdout).not.toContain('split window');
  });

  it("the local engine gives DuckDB's answers on these plans", async () => {
    await expectSame(UNIQUE, UNIQUE_SQL);
    await expectSame(TIES, TIES_SQL);
  });

  describe.skipIf(NO_SPARK)('on Spark', () => {
    beforeAll(() => requireSpark());

    // one run each (a Spark query takes a minute on the loaded machine): its answer against DuckDB's, and its stats
    const sparkRun = async (p: object, query: string) => {
      const [r, theirs] = await Promise.all([ourRun(p, { engine: 'spark', remote: REMOTE }), duckTable(query)]);
      expectTypedEqual(arrowTyped(r.toArrow()), theirs);
      return (
        r.stats as {
          spark: { splitWindows: { keys: string[][]; pieces: number[] }[]; windowSampling: { method: string }[] };
        }
      ).spark;
    };

    it("split, each function gives DuckDB's answer (unique ORDER BY values)", async () => {
      const s = await sparkRun(UNIQUE, UNIQUE_SQL);
      expect(s.splitWindows).toHaveLength(1);
      expect(s.splitWindows[0].keys).toContainEqual(['1']);
      expect(s.splitWindows[0].pieces[0]).toBeGreaterThan(1);
    }, 600_000);

    it("split, ties and nulls in the ORDER BY column give DuckDB's answers", async () => {
      await expectSame(TIES, TIES_SQL, { engine: 'spark', remote: REMOTE });
    }, 600_000);

    // (each (g, o) is one row: the aggregate keeps the Zipf key's skew)
    it("a window over an aggregate is sampled on Spark and split, with DuckDB's answers", async () => {
      const agg = {
        op: 'aggregate',
        input: { op: 'scan', source: 't' },
        groupBy: ['g', 'o'],
        aggregates: [{ fn: 'sum', column: 'x', as: 'sx' }],
      };
      const p = {
        ...TIES,
        query: {
          op: 'window',
          input: agg,
          partitionBy: ['g'],
          orderBy: [{ column: 'o' }],
          functions: [
            { fn: 'dense_rank', as: 'dr' },
            { fn: 'sum', column: 'sx', as: 'ssx' },
          ],
        },
      };
      const s = await sparkRun(
        p,
        `SELECT *, dense_rank() OVER w AS dr, sum(sx) OVER w AS ssx
         FROM (SELECT g, o, sum(x) AS sx FROM '${T}' GROUP BY g, o) WINDOW w AS (PARTITION BY g ORDER BY o)`,
      );
      expect(s.windowSampling.map((w) => w.method)).toEqual(['spark']);
      expect(s.splitWindows).toHaveLength(1);
    }, 600_000);
  });
});
