// Semi and anti joins whose right side is too large to broadcast and whose left side fits
// (physical/join/marked.ts): the left side is built, the right side's map tasks mark the rows they match, and the
// marked (semi) or unmarked (anti) left rows go on. Against DuckDB: duplicate and null keys on both sides, two-column
// keys, an aggregate above, on the pool and on the calling thread, an empty left side; a left side over the cap (or
// the memory budget) falls back to the shuffle with its rows read once; --explain states the rule.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type RunOptions, runPlan } from '../dist/index.js';
import { cli, expectSame, tmpDir, writeParquet, writePlan } from './helpers.js';

const dir = tmpDir('sj-marked-');
const L = path.join(dir, 'l.parquet'),
  R = path.join(dir, 'r.parquet');
const L_ROWS = 3000,
  R_ROWS = 80_000;

beforeAll(async () => {
  // left: keys repeat twice, some null; right: some null, in 16 row groups; rk in order (as line items by order key:
  // the row groups past the cap have keys of their own), the even left keys; rks repeating, a third of the left's
  await writeParquet(
    L,
    `SELECT CASE WHEN i % 53 = 0 THEN NULL ELSE (i % 1500)::BIGINT END AS k, (i % 4)::INTEGER AS k2,
       CASE WHEN i % 53 = 0 THEN NULL ELSE (i % 1500 * 17)::BIGINT END AS ks,
       i::BIGINT AS v, 'p' || (i % 5) AS pri FROM range(0, ${L_ROWS}) t(i)`,
    500,
  );
  await writeParquet(
    R,
    `SELECT CASE WHEN i % 31 = 0 THEN NULL ELSE (i * 750 // ${R_ROWS} * 2)::BIGINT END AS rk, (i % 4)::INTEGER AS rk2,
       CASE WHEN i % 31 = 0 THEN NULL ELSE ((i * 7) % 1000 * 51)::BIGINT END AS rks,
       (i % 10)::INTEGER AS late FROM range(0, ${R_ROWS}) t(i)`,
    5000,
  );
});

/** Over the left side (about 100 KB) and under the filtered right side (about 640 KB of keys). */
const CAP = 200_000;
const LEFT = `read_parquet('${L}')`,
  RIGHT = `(SELECT * FROM read_parquet('${R}') WHERE late < 8)`;
const right = { op: 'filter', where: { column: 'late', cmp: '<', value: 8 }, input: { op: 'scan', source: 'r' } };
const plan = (query: object) => ({ version: 1, sources: { l: { parquet: L }, r: { parquet: R } }, query });
const join = (type: string, on: [string, string][], left: object = { op: 'scan', source: 'l' }) => ({
  op: 'join',
  type,
  on,
  left,
  right,
});
// dense keys: a direct table, rows marked; sparse keys: a table with a bitmap of its keys, key values marked
const ONE: [string, string][] = [['k', 'rk']],
  SPARSE: [string, string][] = [['ks', 'rks']],
  TWO: [string, string][] = [
    ['k', 'rk'],
    ['k2', 'rk2'],
  ];
const cond = (on: [string, string][]) => on.map(([a, b]) => `l.${a} = r.${b}`).join(' AND ');
const sqlFor = (type: string, on: [string, string][], left = LEFT) =>
  `SELECT * FROM ${left} l WHERE ${type === 'anti' ? 'NOT ' : ''}EXISTS (SELECT 1 FROM ${RIGHT} r WHERE ${cond(on)})`;
const opts = (o: RunOptions = {}): RunOptions => ({ workers: 2, broadcastBytes: CAP, inThreadBytes: 0, ...o });

describe('a semi or anti join marks its built left side', () => {
  for (const type of ['semi', 'anti']) {
    for (const [keys, on] of [
      ['one key', ONE],
      ['one sparse key', SPARSE],
      ['two keys', TWO],
    ] as const) {
      it(`${type} join, ${keys}`, async () => {
        const p = plan(join(type, on));
        for (const inThreadBytes of [0, '1GB']) await expectSame(p, sqlFor(type, on), opts({ inThreadBytes }));
        const s = (await runPlan(p, { ...opts(), writeOutput: false })).stats;
        expect(s.joins[0]).toMatchObject({ strategy: 'marked', broadcast: { side: 'left', rows: L_ROWS } });
        expect(s.joins[0].reason).toMatch(/right over \d+ bytes \(read stopped there\).*mark the rows they match/);
        expect(s.shuffles).toEqual([]);
        // each file's rows read once: the right side's rows read to measure it are marked as they are
        const scanned = s.tasks.filter((t) => t.read !== undefined).reduce((a, t) => a + t.rows, 0);
        expect(scanned).toBe(L_ROWS + R_ROWS);
      });
    }
  }

  it('with an aggregate and a sort above (TPC-H q04)', async () => {
    const q = {
      op: 'sort',
      by: [{ column: 'pri' }],
      input: { op: 'aggregate', groupBy: ['pri'], aggregates: [{ fn: 'count', as: 'n' }], input: join('semi', ONE) },
    };
    const sql = `SELECT pri, count(*) AS n FROM (${sqlFor('semi', ONE)}) GROUP BY pri ORDER BY pri`;
    await expectSame(plan(q), sql, opts(), true);
  });

  it('an empty left side gives no rows', async () => {
    const none = { op: 'filter', where: { column: 'v', cmp: '<', value: 0 }, input: { op: 'scan', source: 'l' } };
    for (const type of ['semi', 'anti'])
      await expectSame(plan(join(type, ONE, none)), sqlFor(type, ONE, `(SELECT * FROM ${LEFT} WHERE v < 0)`), opts());
  });

  it('a left side over the cap too: shuffled, each row read once', async () => {
    const p = plan(join('semi', ONE));
    const s = (await runPlan(p, { ...opts({ broadcastBytes: 20_000 }), writeOutput: false })).stats;
    expect(s.joins[0].strategy).toBe('shuffle');
    expect(s.shuffles.map((x) => x.id).sort()).toEqual(['join-1.left', 'join-1.right']);
    const scanned = s.tasks.filter((t) => t.read !== undefined).reduce((a, t) => a + t.rows, 0);
    expect(scanned).toBe(L_ROWS + R_ROWS);
    await expectSame(p, sqlFor('semi', ONE), opts({ broadcastBytes: 20_000 }));
  });

  it('a left side whose table exceeds the memory budget left: shuffled (and spilled), the same answer', async () => {
    const p = plan(join('anti', ONE));
    const o = opts({ memoryLimit: 2000, spillDir: tmpDir('sj-marked-spill-') });
    const s = (await runPlan(p, { ...o, writeOutput: false })).stats;
    expect(s.joins[0].strategy).toBe('shuffle');
    await expectSame(p, sqlFor('anti', ONE), o);
  });

  it('--explain states the rule', () => {
    const f = writePlan(tmpDir(), { ...plan(join('anti', ONE)), execution: { broadcastBytes: CAP } });
    const e = cli([f, '--explain']);
    expect(e.code).toBe(0);
    expect(e.stdout).toContain(
      `if the right side does not fit: the left side is read after its filters up to broadcastBytes ${(CAP / 1024).toFixed(0)} KB; if it ` +
        `fits, it is built once and the right side's map tasks mark the left rows they match (no shuffle)`,
    );
  });
});
