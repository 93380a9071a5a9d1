// Skew splits, grace joins and spilled shuffles on keys other than one BIGINT:
// strings, multi-column keys, decimals of differing scales (and an integer
// against a decimal), wide decimals and timestamps of differing units. Each key
// pair runs with the hot-key split, the map-range split and a budget that spills
// and cuts reduce tasks into grace pieces, with each table on either side, and
// is compared with DuckDB; the statistics must show the path was taken.
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type RunOptions, type RunResult, type Stats, runPlan } from '../dist/index.js';
import {
  arrowTyped,
  duckTable,
  expectFileMatchesQuery,
  expectTypedEqual,
  sql,
  tmpDir,
  writeParquet,
} from './helpers.js';

const dir = tmpDir('sj-keytypes-');
const file = (n: string) => path.join(dir, n);
const spillDir = file('spill');
const part = (t: string, p: number) => file(`${t}-${p}.parquet`);

/**
 * A key k per row: 7 hot on both sides, 11 hot on this side only (`hot11`), 5% null, the rest over 0..149.
 * Every key column is a function of k, in the table's own types, so that equal k means equal keys.
 */
const keySql = (seed: number, share7: number, share11: number) => `CASE WHEN hash(i, ${seed}) % 100 < 5 THEN NULL
  WHEN hash(i, ${seed} + 1) % 100 < ${share7} THEN 7 WHEN hash(i, ${seed} + 1) % 100 < ${share7 + share11} THEN 11
  ELSE hash(i, ${seed} + 2) % 150 END`;

beforeAll(async () => {
  // Each table in several files (several map tasks, so that a split task's rows come in several blocks).
  // left: 1,000 rows in 4 files; k 7 on 20%, 11 on 15%
  await sql(`CREATE OR REPLACE TABLE kt_left AS SELECT i::BIGINT AS id, k::BIGINT AS i, 'key-' || k AS s,
      (k % 13)::INTEGER AS a, (k // 13)::BIGINT AS b, (k * 0.25)::DECIMAL(9,2) AS d,
      (k * 0.25 + 123456789012345678)::DECIMAL(30,4) AS w, make_timestamp(k * 1000000)::TIMESTAMP_MS AS ts_ms,
      make_timestamp(k * 1000 + 5)::TIMESTAMP_NS AS ts_ns
    FROM (SELECT i, (${keySql(1, 20, 15)})::BIGINT AS k FROM range(0, 1000) t(i))`);
  // right: 300 rows in 2 files; k 7 on 15%; the same keys in other types (and values that match nothing)
  await sql(`CREATE OR REPLACE TABLE kt_right AS SELECT (i * 3)::BIGINT AS rid, 'key-' || k AS s,
      (k % 13)::BIGINT AS a, (k // 13)::INTEGER AS b, (k * 0.25)::DECIMAL(12,3) AS d, k::DECIMAL(10,2) AS idec,
      (k * 0.25 + 123456789012345678)::DECIMAL(38,6) AS w,
      make_timestamp(k * 1000000 + CASE WHEN i % 9 = 0 THEN 1 ELSE 0 END) AS ts_us,
      make_timestamp(k * 1000 + 5) AS ts_us2
    FROM (SELECT i, (${keySql(7, 15, 0)})::BIGINT AS k FROM range(0, 300) t(i))`);
  for (const [t, n] of [
    ['left', 4],
    ['right', 2],
  ] as const) {
    const id = t === 'left' ? 'id' : 'rid';
    for (let p = 0; p < n; p++) {
      await writeParquet(part(t, p), `SELECT * FROM kt_${t} WHERE hash(${id}) % ${n} = ${p}`, 100);
    }
  }
});

/** Key pairs: [left table's columns, right table's columns] (the tables' types differ on every pair but the string). */
const PAIRS: { name: string; left: string[]; right: string[] }[] = [
  { name: 'string', left: ['s'], right: ['s'] },
  { name: 'two columns (int32, int64) = (int64, int32)', left: ['a', 'b'], right: ['a', 'b'] },
  { name: 'decimal(9,2) = decimal(12,3)', left: ['d'], right: ['d'] },
  { name: 'int64 = decimal(10,2)', left: ['i'], right: ['idec'] },
  { name: 'decimal(30,4) = decimal(38,6) (wide)', left: ['w'], right: ['w'] },
  { name: 'timestamp milliseconds = microseconds', left: ['ts_ms'], right: ['ts_us'] },
  { name: 'timestamp nanoseconds = microseconds', left: ['ts_ns'], right: ['ts_us2'] },
  { name: 'string and decimal(9,2) = string and decimal(12,3)', left: ['s', 'd'], right: ['s', 'd'] },
];

const BASE: RunOptions = { workers: 2, partitions: 4, broadcastBytes: 0, inThreadBytes: 0 };
const SPLIT = { factor: 1, thresholdBytes: 1, advisoryPartitionBytes: 4096 };
/** The paths forced, and what the statistics must show for each. */
const MODES: { name: string; opts: RunOptions; took: (s: Stats) => void }[] = [
  {
    name: 'hot-key split',
    opts: { skew: { ...SPLIT, strategy: 'key' } },
    took: (s) => {
      const hot = s.joins[0].splits.filter((x) => x.method === 'hot-key');
      expect(hot.length).toBeGreaterThan(0);
      expect(s.tasks.filter((t) => t.kind === 'split').length).toBeGreaterThan(0);
    },
  },
  {
    name: 'map-range split',
    opts: { skew: { ...SPLIT, strategy: 'partition' } },
    took: (s) => expect(s.joins[0].splits.filter((x) => x.method === 'map-range').length).toBeGreaterThan(0),
  },
  {
    name: 'grace join under a spilling budget',
    opts: { memoryLimit: '24KB', spillDir, skew: { enabled: false } },
    took: (s) => {
      expect(s.spilledBytes).toBeGreaterThan(0);
      expect(s.tasks.some((t) => t.kind === 'reduce' && t.spillReadBytes > 0)).toBe(true);
      expect(s.tasks.filter((t) => /grace piece/.test(t.split ?? '')).length).toBeGreaterThan(1);
    },
  },
];

const files = { l: [0, 1, 2, 3].map((p) => part('left', p)), r: [0, 1].map((p) => part('right', p)) };
const T = { l: `read_parquet(['${files.l.join("', '")}'])`, r: `read_parquet(['${files.r.join("', '")}'])` };
const sources = { l: { parquet: files.l }, r: { parquet: files.r } };

const JOIN_SQL: Record<string, string> = {
  inner: 'JOIN',
  left: 'LEFT JOIN',
  right: 'RIGHT JOIN',
  full: 'FULL JOIN',
  semi: 'SEMI JOIN',
  anti: 'ANTI JOIN',
};
/** A join of two scans. */
const joinOf = (type: string, on: string[][], left: string, right: string, columns?: [string[], string[]]) => ({
  op: 'join',
  type,
  on,
  left: { op: 'scan', source: left, ...(columns ? { columns: columns[0] } : {}) },
  right: { op: 'scan', source: right, ...(columns ? { columns: columns[1] } : {}) },
});

/** The join of the two tables on a key pair, with `first` on the left. */
function joinCase(pair: (typeof PAIRS)[number], first: 'l' | 'r', type = 'inner') {
  const second = first === 'l' ? 'r' : 'l';
  const keys = { l: pair.left, r: pair.right };
  const on = keys[first].map((c, k) => [c, keys[second][k]]);
  const plan = { version: 1, sources, query: joinOf(type, on, first, second) };
  const cond = on.map(([a, b]) => `x."${a}" = y."${b}"`).join(' AND ');
  const kw = JOIN_SQL[type];
  // DuckDB reads a Parquet TIMESTAMP(MILLIS) as TIMESTAMP; the engine keeps the unit
  const all = (t: string, a: string) => (t === 'l' ? `${a}.* REPLACE (${a}.ts_ms::TIMESTAMP_MS AS ts_ms)` : `${a}.*`);
  const cols = type === 'semi' || type === 'anti' ? all(first, 'x') : `${all(first, 'x')}, ${all(second, 'y')}`;
  return { plan, query: `SELECT ${cols} FROM ${T[first]} x ${kw} ${T[second]} y ON ${cond}` };
}

/** Run on the pool writing Parquet, compare column types and rows (as multisets, inside DuckDB) with the query. */
async function expectSameInDuck(plan: object, query: string, opts: RunOptions): Promise<RunResult> {
  const out = file(`out-${Math.random().toString(36).slice(2)}.parquet`);
  const r = await runPlan({ ...plan, output: { path: out } }, opts);
  const types = (await duckTable(`SELECT * FROM (${query}) LIMIT 0`)).types;
  expectTypedEqual({ types: arrowTyped(r.toArrow().slice(0, 0)).types, rows: [] }, { types, rows: [] });
  expect(await expectFileMatchesQuery(out, query)).toBe(r.numRows);
  fs.rmSync(out);
  return r;
}

describe('skew splits, grace joins and spills on keys of every kind, across types', () => {
  for (const pair of PAIRS) {
    for (const mode of MODES) {
      it(`${pair.name}: ${mode.name}, each table on the left`, async () => {
        for (const first of ['l', 'r'] as const) {
          const { plan, query } = joinCase(pair, first);
          const opts = { ...BASE, ...mode.opts };
          const r = await expectSameInDuck(plan, query, opts);
          expect(r.numRows).toBeGreaterThan(3000); // the hot key 7 alone matches about 200 x 45 rows
          mode.took(r.stats);
        }
      });
    }
  }
});

describe('every join type on a hot string key and a timestamp key across units', () => {
  for (const type of ['left', 'right', 'full', 'semi', 'anti']) {
    for (const mode of [MODES[0], MODES[2]]) {
      it(`${type}: ${mode.name}`, async () => {
        for (const pair of [PAIRS[0], PAIRS[5], PAIRS[7]]) {
          const { plan, query } = joinCase(pair, 'l', type);
          expect((await expectSameInDuck(plan, query, { ...BASE, ...mode.opts })).numRows).toBeGreaterThan(0);
        }
      });
    }
  }
});

describe('keys whose bits agree and values differ', () => {
  it('uint64 above 2^63 never matches a negative int64 (broadcast, shuffled, split); timestamps compare across units', async () => {
    // 2^64 - k has the 64-bit word of -k: a join comparing words matched them
    await writeParquet(
      file('signed.parquet'),
      `SELECT (i % 40 - 20)::BIGINT AS x, (i % 7)::TINYINT AS y,
      (TIMESTAMP '1995-01-01' + to_hours(i % 5))::TIMESTAMP_MS AS t FROM range(0, 400) t(i)`,
      50,
    );
    await writeParquet(
      file('unsigned.parquet'),
      `SELECT
      CASE WHEN i % 2 = 0 THEN 18446744073709551616 - (i % 20 + 1) ELSE i % 20 END::UBIGINT AS u,
      (TIMESTAMP '1995-01-01' + to_hours(i % 3) + to_microseconds((i % 2)::BIGINT))::TIMESTAMP_NS AS tn
      FROM range(0, 200) t(i)`,
      50,
    );
    const srcs = { s: { parquet: file('signed.parquet') }, u: { parquet: file('unsigned.parquet') } };
    const S = `(SELECT x, y, t::TIMESTAMP_MS AS t FROM read_parquet('${file('signed.parquet')}'))`;
    const U = `read_parquet('${file('unsigned.parquet')}')`;
    for (const [l, r] of [
      ['x', 'u'],
      ['y', 'u'],
    ]) {
      const plan = { version: 1, sources: srcs, query: joinOf('inner', [[l, r]], 's', 'u') };
      for (const opts of [{ workers: 2 }, BASE, { ...BASE, skew: { ...SPLIT, strategy: 'key' as const } }]) {
        const res = await expectSameInDuck(plan, `SELECT * FROM ${S} a JOIN ${U} b ON a.${l} = b.${r}`, opts);
        expect(res.numRows).toBeGreaterThan(0);
      }
    }
    const where = { left: { column: 't' }, cmp: '<', right: { column: 'tn' } };
    const cross = joinOf('inner', [], 's', 'u', [['t'], ['tn']]);
    const cmp = { version: 1, sources: srcs, query: { op: 'filter', where, input: cross } };
    const res = await expectSameInDuck(cmp, `SELECT a.t, b.tn FROM ${S} a, ${U} b WHERE a.t < b.tn`, BASE);
    expect(res.numRows).toBeGreaterThan(0);
  });
});

describe('grace pieces with rows on one side only', () => {
  it('left, anti and full joins keep the rows of pieces the other side has none of', async () => {
    // the right side, built and cut into pieces, holds two keys (in 600 rows): most pieces have left rows only
    await writeParquet(
      file('few-left.parquet'),
      `SELECT i::BIGINT AS k, 'l' || i AS s, (i * 0.5)::DECIMAL(9,2) AS d
      FROM range(0, 60) t(i)`,
      20,
    );
    await writeParquet(
      file('few-right.parquet'),
      `SELECT (1 + i % 2)::INTEGER AS k, 'l' || (1 + i % 2) AS s,
      ((1 + i % 2) * 0.5)::DECIMAL(12,3) AS d, i::BIGINT AS v FROM range(0, 600) t(i)`,
      100,
    );
    const fl = `read_parquet('${file('few-left.parquet')}')`,
      fr = `read_parquet('${file('few-right.parquet')}')`;
    for (const type of ['left', 'anti', 'full']) {
      for (const key of ['k', 's', 'd']) {
        const few = { a: { parquet: file('few-left.parquet') }, b: { parquet: file('few-right.parquet') } };
        const plan = { version: 1, sources: few, query: joinOf(type, [[key, key]], 'a', 'b') };
        const cols = type === 'anti' ? 'x.*' : 'x.*, y.*';
        const sql = `SELECT ${cols} FROM ${fl} x ${JOIN_SQL[type]} ${fr} y ON x.${key} = y.${key}`;
        const opts = { ...BASE, memoryLimit: '8KB', spillDir, skew: { enabled: false } };
        const r = await expectSameInDuck(plan, sql, opts);
        const pieces = r.stats.tasks.filter((t) => /grace piece/.test(t.split ?? ''));
        expect(pieces.length, `${type} on ${key}`).toBeGreaterThan(1);
      }
    }
  });
});
