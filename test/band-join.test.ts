// Keyed band joins (physical/join/band.ts): an inner hash join whose filter bounds a column of one side by the
// other's searches each key's built rows sorted by their bound instead of making every pair of the key. The band's
// conjuncts leave the filter, so a task that still made every pair of a key would give too many rows: each answer
// against DuckDB's shows the band ran. Each operator, BETWEEN and two bounds, each type, nulls in keys and bounds,
// duplicated periods, a hot key with many periods; broadcast and shuffle, skew splits forced, a tiny budget, --explain.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type RunResult, compileSql, explainPlan, loadPlan, runSql } from '../dist/index.js';
import { cli, duckRows, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-band-join-');
const file = (n: string) => path.join(dir, `${n}.parquet`);
const TABLES = ['sa', 'pr'];
const sources = Object.fromEntries(TABLES.map((t) => [t, file(t)]));

beforeAll(async () => {
  // sales: sku 7 holds half the rows (the hot key); nulls in the key and in the day
  await writeParquet(
    file('sa'),
    `SELECT i::BIGINT AS id, CASE WHEN i % 101 = 0 THEN NULL WHEN i % 2 = 0 THEN 7 ELSE (i * 13) % 200 END::INTEGER AS sku,
       CASE WHEN i % 89 = 0 THEN NULL ELSE (i * 7919) % 3000 END::INTEGER AS day,
       DATE '2020-01-01' + ((i * 7919) % 3000)::INTEGER AS dt,
       TIMESTAMP '2020-01-01' + to_seconds(((i * 7919) % 3000) * 3600 + (i % 3600)) AS tm,
       (((i * 7919) % 3000) / 10.0)::DECIMAL(12,2) AS dec, (1152921504606846976 + (i * 7919) % 3000)::BIGINT AS big,
       CASE WHEN i % 997 = 5 THEN 'NaN'::DOUBLE ELSE ((i * 7919) % 3000) / 10.0 END AS f
     FROM range(0, 20000) r(i)`,
    5000,
  );
  // prices: per sku periods of 10 days (lo, hi inclusive), sku 7 with 300 of them; each 17th period twice, some
  // bounds null, some keys null, some periods empty
  await writeParquet(
    file('pr'),
    `SELECT row_number() OVER ()::BIGINT AS pid, CASE WHEN (k * 7 + j) % 211 = 5 THEN NULL ELSE k END::INTEGER AS sku,
       CASE WHEN (k + j) % 53 = 3 THEN NULL ELSE j * 10 END::INTEGER AS lo,
       CASE WHEN (k + j) % 59 = 4 THEN NULL WHEN (k + j) % 61 = 0 THEN j * 10 - 1 ELSE j * 10 + 9 END::INTEGER AS hi,
       DATE '2020-01-01' + (j * 10)::INTEGER AS dlo, DATE '2020-01-01' + (j * 10 + 9)::INTEGER AS dhi,
       TIMESTAMP '2020-01-01' + to_seconds(j * 10 * 3600) AS tlo,
       TIMESTAMP '2020-01-01' + to_seconds((j * 10 + 9) * 3600 + 1800) AS thi,
       (j * 1.0)::DECIMAL(10,3) AS declo, (j * 1.0 + 0.95)::DECIMAL(10,3) AS dechi,
       (1152921504606846976 + j * 10)::BIGINT AS blo, (1152921504606846976 + j * 10 + 9)::BIGINT AS bhi,
       CASE WHEN j % 97 = 1 THEN 'NaN'::DOUBLE ELSE j * 1.0 END AS flo, j * 1.0 + 0.9 AS fhi
     FROM range(0, 200) a(k), range(0, 300) b(j), range(0, 2) c(dup)
     WHERE (k = 7 OR j % 60 < 4) AND (dup = 0 OR j % 17 = 0)`,
    2000,
  );
});

const duckOf = (q: string) =>
  duckRows(
    q.replace(new RegExp(`\\b(${TABLES.join('|')}) (\\w+)\\b`, 'g'), (_, t, al) => `read_parquet('${file(t)}') ${al}`),
  );
const text = (rows: unknown[][]) => rows.map((r) => r.map(String));
const oursOf = (r: RunResult) => r.toRows().map((x) => Object.values(x).map(String));

/** Our answer (on the pool) equals DuckDB's; the join reports the band and the strategy expected. */
async function same(q: string, opts: object = {}, strategy?: string): Promise<RunResult> {
  const r = await runSql(q, { sources, workers: 2, inThreadBytes: 0, ...opts });
  expect(oursOf(r)).toEqual(text(await duckOf(q)));
  const j = r.stats.joins.find((x) => /band on/.test(x.reason));
  expect(j).toBeDefined();
  if (strategy) expect(j!.strategy).toBe(strategy);
  return r;
}

const AGG = 'SELECT count(*) AS n, sum(s.id) AS s1, sum(p.pid) AS s2';
const SHUFFLE = { broadcastBytes: 0 };

describe('each operator, both strategies', () => {
  it.each(['<', '<=', '>', '>='])('s.day %s p.lo', async (op) => {
    const q = `${AGG} FROM sa s JOIN pr p ON s.sku = p.sku AND s.day ${op} p.lo`;
    await same(q, {}, 'broadcast');
    await same(q, SHUFFLE, 'shuffle');
  });
});

describe('a value between two bounds of the other side', () => {
  it.each([
    ['BETWEEN', 's.day BETWEEN p.lo AND p.hi'],
    ['>= and <', 's.day >= p.lo AND s.day < p.hi'],
    ['> and <=', 'p.lo < s.day AND p.hi >= s.day'],
    ['> and <', 's.day > p.lo AND s.day < p.hi'],
  ])('%s (empty and null periods, duplicated ones)', async (_, on) => {
    const q = `${AGG} FROM sa s JOIN pr p ON s.sku = p.sku AND ${on}`;
    await same(q, {}, 'broadcast');
    await same(q, SHUFFLE, 'shuffle');
  });

  it('the points built: a key run of sales searched by each period (the smaller side built per task)', async () => {
    // sales of sku 7 only: fewer than its periods, so the shuffle task builds the sales and probes with the periods
    const q = `${AGG} FROM pr p JOIN (SELECT * FROM sa WHERE sku = 7 AND id < 400) s ON s.sku = p.sku AND s.day BETWEEN p.lo AND p.hi`;
    await same(q, SHUFFLE, 'shuffle');
    await same(q, {}, 'broadcast');
  });

  it('the joined rows themselves, other conjuncts filtered above', async () => {
    const q =
      'SELECT s.id, p.pid, s.day, p.lo FROM sa s JOIN pr p ON s.sku = p.sku AND s.day >= p.lo AND s.day <= p.hi ' +
      'AND s.id + p.pid > 5000 WHERE s.id < 3000 ORDER BY s.id, p.pid';
    await same(q, {});
    await same(q, SHUFFLE);
  });
});

describe('each type', () => {
  it.each([
    ['dates', 's.dt BETWEEN p.dlo AND p.dhi'],
    ['timestamps', 's.tm >= p.tlo AND s.tm < p.thi'],
    ['decimals of two scales', 's.dec BETWEEN p.declo AND p.dechi'],
    ['an integer against decimals', 's.day >= p.declo AND s.day <= p.dechi'],
    ['64-bit integers past 2^53 (keys not exact: the task checks its matches)', 's.big > p.blo AND s.big <= p.bhi'],
    ['floats, NaN among them (not exact)', 's.f >= p.flo AND s.f < p.fhi'],
  ])('%s', async (_, on) => {
    const q = `${AGG} FROM sa s JOIN pr p ON s.sku = p.sku AND ${on}`;
    const r = await same(q, SHUFFLE, 'shuffle');
    expect(Number(r.toRows()[0].n)).toBeGreaterThan(0);
    await same(q, {}, 'broadcast');
  });
});

describe('skew and memory', () => {
  const q = `${AGG} FROM sa s JOIN pr p ON s.sku = p.sku AND s.day BETWEEN p.lo AND p.hi`;

  it('the hot key split (thresholdBytes 1): its pieces search their periods', async () => {
    const r = await same(
      q,
      { ...SHUFFLE, partitions: 8, skew: { factor: 1.5, thresholdBytes: 1, advisoryPartitionBytes: 16 * 1024 } },
      'shuffle',
    );
    expect(r.stats.joins[0].splits.length).toBeGreaterThan(0);
  });

  it('a tiny budget (grace pieces, spilled shuffle)', async () => {
    const r = await same(q, { ...SHUFFLE, memoryLimit: '256KB', spillDir: tmpDir('sj-band-spill-') }, 'shuffle');
    expect(r.stats.spilledBytes).toBeGreaterThan(0);
  });

  it('the hot key makes only its matches: 10,000 sales of sku 7 against its 300 periods', async () => {
    const r = await same(
      'SELECT s.id, p.pid FROM sa s JOIN pr p ON s.sku = p.sku AND s.day BETWEEN p.lo AND p.hi WHERE s.sku = 7 ORDER BY s.id, p.pid',
      SHUFFLE,
    );
    // one period a day (the duplicated ones twice): about a match a sale, not 300
    expect(r.toRows().length).toBeLessThan(12000);
  });
});

describe('--explain', () => {
  it('names the band under the join and its strategy; --explain --analyze says it ran', async () => {
    const q = 'SELECT count(*) AS n FROM sa s JOIN pr p ON s.sku = p.sku AND s.day >= p.lo AND s.day < p.hi';
    const t = explainPlan(await loadPlan(await compileSql(q, { sources })));
    expect(t).toMatch(/join-1: inner hash join on sku = sku/);
    expect(t).toMatch(/band on day >= lo and day < hi: per key the built side's rows sorted by their bound/);
    const args = ['--source', `sa=${file('sa')}`, '--source', `pr=${file('pr')}`, '--explain', '--analyze', 'sql', q];
    const r = cli(args);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/band on day >= lo and day < hi/);
    // a keyless join stays a range join; an equi-join without a bound a plain hash join
    const plain = explainPlan(
      await loadPlan(
        await compileSql('SELECT count(*) FROM sa s JOIN pr p ON s.sku = p.sku AND s.day + p.lo = 7', { sources }),
      ),
    );
    expect(plain).not.toMatch(/band on/);
  });
});
