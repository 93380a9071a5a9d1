// ORDER BY a column where one value holds half the rows (physical/sort/range.ts): the hot value's rows are dealt
// over several ranges, so that no sort task holds more than 1.5x the median task's rows, on the range tasks' path,
// the join-fused path and spilled under a small budget; multi-column, DESC, NULLS FIRST, a hot NULL and a hot string.
// The answer is DuckDB's: the key columns in DuckDB's order, the rows of equal keys as multisets. With skew handling
// off the hot value stays in one range (the baseline `skewjoin bench --suite sort` measures). ORDER BY ... LIMIT:
// a top-N on the coordinator, DuckDB's keys in order.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type RunResult, runSql } from '../dist/index.js';
import { type Row, arrowTyped, duckRows, sorted, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-sort-dup-');
const S: Record<string, string> = {};
const spillDir = path.join(dir, 'spill');

beforeAll(async () => {
  // k: 500 in every even row, else spread over 0..999 (null every 13th); s: 'hot' with k's hot rows;
  // n: null in every even row (a hot null)
  S.f = await writeParquet(
    path.join(dir, 'f.parquet'),
    `SELECT i::BIGINT AS id,
      CASE WHEN i % 2 = 0 THEN 500 WHEN i % 13 = 1 THEN NULL ELSE (hash(i) % 1000)::BIGINT END AS k,
      CASE WHEN i % 2 = 0 THEN 'hot' ELSE 'v' || (hash(i * 3) % 700) END AS s,
      CASE WHEN i % 2 = 0 THEN NULL ELSE (hash(i * 5) % 900)::INTEGER END AS n
    FROM range(0, 40000) t(i)`,
    1000,
  );
  S.d = await writeParquet(
    path.join(dir, 'd.parquet'),
    `SELECT i::BIGINT AS k, 'name' || i AS name FROM range(0, 1000) t(i)`,
    1000,
  );
});

const base = { sources: S, workers: 2, inThreadBytes: 0, memoryLimit: '3MB', spillDir };

/** The sort's reduce tasks' rows, and their slowest over their median. */
function balance(r: RunResult): { rows: number[]; ratio: number } {
  const rows = r.stats.tasks
    .filter((t) => t.stage.startsWith('sort') && t.kind === 'reduce')
    .map((t) => t.rows)
    .sort((a, b) => a - b);
  const mid = rows.length >> 1;
  const median = rows.length % 2 ? rows[mid] : (rows[mid - 1] + rows[mid]) / 2;
  return { rows, ratio: rows[rows.length - 1] / median };
}

/** Ours equals DuckDB's: the first `keys` columns row by row in order, the whole rows as multisets. */
function expectSameOrder(ours: Row[], theirs: Row[], keys: number) {
  expect(ours.length).toBe(theirs.length);
  const keyOf = (rows: Row[]) => rows.map((r) => JSON.stringify(r.slice(0, keys)));
  expect(keyOf(ours)).toEqual(keyOf(theirs));
  expect(sorted(ours)).toEqual(sorted(theirs));
}

const ORDERS: [string, string, number][] = [
  ['k', 'SELECT k, id, s FROM f ORDER BY k', 1],
  ['k desc nulls first', 'SELECT k, id, s FROM f ORDER BY k DESC NULLS FIRST', 1],
  ['s, k desc (a hot string and number pair)', 'SELECT s, k, id FROM f ORDER BY s, k DESC', 2],
  ['n nulls first (a hot null)', 'SELECT n, id, s FROM f ORDER BY n NULLS FIRST', 1],
  [
    'k above a shuffle join (the join cuts the ranges)',
    'SELECT f.k, d.name, f.id FROM f JOIN d ON f.k = d.k ORDER BY f.k',
    1,
  ],
];

describe('ORDER BY a value holding half the rows', () => {
  it.each(ORDERS)(
    'by %s: no sort task over 1.5x the median, spilled, DuckDB order',
    async (_, text, keys) => {
      const r = await runSql(text, { ...base, broadcastBytes: 0 });
      const range = r.stats.shuffles.find((x) => x.id.endsWith('.range'))!;
      expect(range.partitions).toBeGreaterThanOrEqual(8);
      const { rows, ratio } = balance(r);
      expect(rows.length).toBeGreaterThanOrEqual(4);
      expect(ratio, `task rows ${rows.join(', ')}`).toBeLessThanOrEqual(1.5);
      expect(r.stats.spilledBytes).toBeGreaterThan(0);
      const duckText = text
        .replaceAll(' f ', ` read_parquet('${S.f}') f `)
        .replace(' d ', ` read_parquet('${S.d}') d `);
      expectSameOrder(arrowTyped(r.toArrow()).rows, await duckRows(duckText), keys);
    },
    60_000,
  );

  it('with skew handling off the hot value stays in one range: one task holds it (the baseline)', async () => {
    const r = await runSql('SELECT k, id FROM f ORDER BY k', { ...base, skew: { enabled: false } });
    const { rows, ratio } = balance(r);
    expect(ratio, `task rows ${rows.join(', ')}`).toBeGreaterThan(3);
    expect(rows[rows.length - 1]).toBeGreaterThanOrEqual(20000);
    expectSameOrder(arrowTyped(r.toArrow()).rows, await duckRows(`SELECT k, id FROM '${S.f}' ORDER BY k`), 1);
  });
});

describe('ORDER BY a value holding half the rows, with LIMIT (a top-N on the coordinator)', () => {
  it.each([
    ['a cut inside the hot value', 'SELECT k, id FROM f ORDER BY k LIMIT 25000'],
    ['desc, an offset', 'SELECT k, id FROM f ORDER BY k DESC NULLS FIRST LIMIT 3000 OFFSET 19000'],
    ['two keys', 'SELECT s, k, id FROM f ORDER BY s DESC, k LIMIT 30000'],
  ])("%s: DuckDB's keys in order, the rows of keys not cut by the limit as multisets", async (_, text) => {
    const r = await runSql(text, base);
    const ours = arrowTyped(r.toArrow()).rows,
      theirs = await duckRows(text.replace(' f ', ` read_parquet('${S.f}') f `));
    const keys = text.startsWith('SELECT s') ? 2 : 1;
    const keyOf = (x: Row) => JSON.stringify(x.slice(0, keys));
    expect(ours.map(keyOf)).toEqual(theirs.map(keyOf));
    // rows of the key the limit cuts through may be any of that key's rows
    const cut = keyOf(theirs[theirs.length - 1]);
    const whole = (rows: Row[]) => sorted(rows.filter((x) => keyOf(x) !== cut));
    expect(whole(ours)).toEqual(whole(theirs));
    expect(r.stats.tasks.some((t) => t.stage.startsWith('sort'))).toBe(false);
  });
});
