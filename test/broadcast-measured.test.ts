// Broadcast chosen from the sides' sizes measured after their filters, not the
// files' sizes: a large file filtered to a few rows is broadcast, either side
// the join type allows; a side read up to the cap and found too big is shuffled
// (or probes) from the rows already read, its rest read once by its map tasks.
import { beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { type RunOptions, runPlan } from '../dist/index.js';
import { cli, duckRows, expectSame, tmpDir, writeParquet, writePlan } from './helpers.js';

const dir = tmpDir('sj-bmeasured-');
const F = path.join(dir, 'big.parquet'),
  D = path.join(dir, 'mid.parquet');
const BIG = `read_parquet('${F}')`,
  MID = `read_parquet('${D}')`;
const F_ROWS = 60_000,
  D_ROWS = 20_000;

beforeAll(async () => {
  // big: 60,000 rows in 12 row groups, of which tag = 't7' keeps 1,200 (about 40 KB); some keys null
  await writeParquet(
    F,
    `SELECT i::BIGINT AS id, CASE WHEN i % 97 = 0 THEN NULL ELSE (i * 7) % 30000 END::BIGINT AS k,
    (i * 0.5)::DOUBLE AS v, 't' || (i % 50) AS tag FROM range(0, ${F_ROWS}) t(i)`,
    5000,
  );
  // mid: 20,000 rows (about 440 KB in memory) in 10 row groups; keys 0..19999, half of big's keys find none
  await writeParquet(
    D,
    `SELECT i::BIGINT AS k, 'r' || (i % 6) AS region, (i * 3)::BIGINT AS w FROM range(0, ${D_ROWS}) t(i)`,
    2000,
  );
});

/** broadcastBytes between the filtered big side (~40 KB) and the mid side (~440 KB), the big file (~1.7 MB) over twice it */
const CAP = 100_000;
const small = { op: 'filter', where: { column: 'tag', cmp: '=', value: 't7' }, input: { op: 'scan', source: 'f' } };
const mid = { op: 'scan', source: 'd' };
const SMALL = `(SELECT * FROM ${BIG} WHERE tag = 't7')`;
const plan = (query: object) => ({ version: 1, sources: { f: { parquet: F }, d: { parquet: D } }, query });
const join = (type: string, left: object, right: object) => ({ op: 'join', type, on: [['k', 'k']], left, right });
const run = (p: object, o: RunOptions = {}) =>
  runPlan(p, { workers: 2, writeOutput: false, broadcastBytes: CAP, ...o });
const KW: Record<string, string> = { inner: 'INNER', left: 'LEFT', right: 'RIGHT', full: 'FULL OUTER' };
function sqlFor(type: string, l: string, r: string) {
  if (type === 'semi') return `SELECT * FROM ${l} l WHERE EXISTS (SELECT 1 FROM ${r} r WHERE l.k = r.k)`;
  if (type === 'anti') return `SELECT * FROM ${l} l WHERE NOT EXISTS (SELECT 1 FROM ${r} r WHERE l.k = r.k)`;
  return `SELECT l.*, r.* FROM ${l} l ${KW[type]} JOIN ${r} r ON l.k = r.k`;
}
/** Rows read by scan tasks (tasks over rows read already are not scans): each row of both files exactly once. */
const scanned = (tasks: { rows: number; read?: string }[]) =>
  tasks.filter((t) => t.read !== undefined).reduce((a, t) => a + t.rows, 0);

describe('broadcast from measured, post-filter sizes', () => {
  it('a large file whose filtered side is small is broadcast (the files say 17 times the threshold)', async () => {
    for (const inThreadBytes of [0, '1GB']) {
      const r = await run(plan(join('semi', mid, small)), { inThreadBytes });
      expect(r.stats.joins[0]).toMatchObject({ strategy: 'broadcast', broadcast: { side: 'right', rows: 1200 } });
      expect(r.stats.joins[0].broadcast!.bytes).toBeLessThan(CAP);
      expect(r.stats.shuffles).toEqual([]);
      expect(scanned(r.stats.tasks)).toBe(F_ROWS + D_ROWS);
    }
    await expectSame(plan(join('semi', mid, small)), sqlFor('semi', MID, SMALL), { workers: 2, broadcastBytes: CAP });
  });

  it('a side over the cap stops being read there and is shuffled from the rows read, the rest read once', async () => {
    // a left join may broadcast only its right side: the mid table, over the cap. (A run on the calling thread
    // reads a file's row groups in one task, plan/map-splits.ts mergeScans: nothing to stop there.)
    {
      // runtime filters off: the small side partitioned first would drop mid's unmatched rows before their shuffle
      const r = await run(plan(join('left', small, mid)), { inThreadBytes: 0, runtimeFilters: 'off' });
      const j = r.stats.joins[0];
      expect(j.strategy).toBe('shuffle');
      expect(j.reason).toMatch(/right over \d+ bytes \(read stopped there\) > broadcastBytes 100000/);
      // the read stopped before the last of mid's 10 row groups: the rows read are partitioned by tasks of their own
      const fromRows = r.stats.tasks.filter((t) => t.stage === 'join-1' && t.read === undefined && t.kind === 'map');
      expect(fromRows.length).toBeGreaterThan(0);
      expect(fromRows.length).toBeLessThan(10);
      expect(r.stats.shuffles.map((s) => s.id).sort()).toEqual(['join-1.left', 'join-1.right']);
      expect(r.stats.shuffles.find((s) => s.id === 'join-1.right')!.partitionRows.reduce((a, b) => a + b, 0)).toBe(
        D_ROWS,
      );
      expect(scanned(r.stats.tasks)).toBe(F_ROWS + D_ROWS);
    }
    await expectSame(plan(join('left', small, mid)), sqlFor('left', SMALL, MID), {
      workers: 2,
      broadcastBytes: CAP,
      inThreadBytes: 0,
    });
  });

  it('the side read first goes over the cap, the other fits: its rows read are probed, its rest by its map tasks', async () => {
    // mid's estimate is the smaller, so it is read first (and stops at the cap); then the filtered big side fits
    const p = plan(join('inner', mid, small));
    const r = await run(p, { inThreadBytes: 0 });
    expect(r.stats.joins[0]).toMatchObject({ strategy: 'broadcast', broadcast: { side: 'right', rows: 1200 } });
    expect(r.stats.joins[0].reason).toMatch(/the left side is over \d+ bytes \(read stopped there\)/);
    expect(r.stats.shuffles).toEqual([]);
    expect(scanned(r.stats.tasks)).toBe(F_ROWS + D_ROWS);
    await expectSame(p, sqlFor('inner', MID, SMALL), { workers: 2, broadcastBytes: CAP, inThreadBytes: 0 });
    // with an aggregate above, fused with the probe: the rows read are grouped as the rest are
    const agg = plan({
      op: 'aggregate',
      groupBy: ['region'],
      aggregates: [
        { fn: 'count', as: 'n' },
        { fn: 'sum', column: 'v', as: 's' },
      ],
      input: join('inner', mid, small),
    });
    await expectSame(
      agg,
      `SELECT region, count(*), sum(v) FROM ${MID} l JOIN ${SMALL} r ON l.k = r.k GROUP BY region`,
      { workers: 2, broadcastBytes: CAP, inThreadBytes: 0 },
    );
  });

  it("an aggregate's output is measured whole, a broadcast probe's output up to the cap", async () => {
    // the aggregate's input file is 17 times the threshold; its 1,200 groups are small
    const agg = { op: 'aggregate', groupBy: ['k'], aggregates: [{ fn: 'count', as: 'n' }], input: small };
    const a = plan(join('semi', mid, agg));
    const ra = await run(a, { inThreadBytes: 0 });
    expect(ra.stats.joins.find((j) => j.id === 'join-1')).toMatchObject({
      strategy: 'broadcast',
      broadcast: { side: 'right' },
    });
    await expectSame(a, `SELECT * FROM ${MID} l WHERE k IN (SELECT k FROM ${SMALL})`, {
      workers: 2,
      broadcastBytes: CAP,
      inThreadBytes: 0,
    });
    // a right join may broadcast its left side only: a semi join of the big file with a broadcast filtered mid
    const below = (under: number) => ({ op: 'filter', where: { column: 'k', cmp: '<', value: under }, input: mid });
    const probe = (under: number) => join('semi', { op: 'scan', source: 'f' }, below(under));
    const probeSql = (under: number) => `(SELECT * FROM ${BIG} WHERE k IN (SELECT k FROM ${MID} WHERE k < ${under}))`;
    const count = async (under: number) => Number((await duckRows(`SELECT count(*) FROM ${probeSql(under)}`))[0][0]);
    // about 200 rows of the big file: the probe's output fits and is built
    const fits = plan(join('right', probe(100), small));
    const rf = await run(fits, { inThreadBytes: 0 });
    expect(rf.stats.joins.find((j) => j.id === 'join-1')).toMatchObject({
      strategy: 'broadcast',
      broadcast: { side: 'left', rows: await count(100) },
    });
    await expectSame(fits, sqlFor('right', probeSql(100), SMALL), {
      workers: 2,
      broadcastBytes: CAP,
      inThreadBytes: 0,
    });
    // about 6,000 rows (180 KB): the probe's map tasks stop at the cap, the rows read are shuffled, the rest probed and shuffled
    const over = plan(join('right', probe(3000), small));
    const ro = await run(over, { inThreadBytes: 0, runtimeFilters: 'off' }); // every row shuffled, none filtered
    const j1 = ro.stats.joins.find((j) => j.id === 'join-1')!;
    expect(j1.strategy).toBe('shuffle');
    expect(j1.reason).toMatch(/left over \d+ bytes \(read stopped there\)/);
    expect(ro.stats.shuffles.find((x) => x.id === 'join-1.left')!.partitionRows.reduce((x, y) => x + y, 0)).toBe(
      await count(3000),
    );
    // the big file twice (each side once), mid once
    expect(scanned(ro.stats.tasks)).toBe(2 * F_ROWS + D_ROWS);
    await expectSame(over, sqlFor('right', probeSql(3000), SMALL), {
      workers: 2,
      broadcastBytes: CAP,
      inThreadBytes: 0,
    });
  });

  // every join type with the small side on either side: broadcast where the type allows that side, else shuffled
  // (a semi or anti join's left side is built when its right side does not fit: the right side marks its rows)
  const allowed: Record<string, ('left' | 'right')[]> = {
    inner: ['left', 'right'],
    left: ['right'],
    semi: ['left', 'right'],
    anti: ['left', 'right'],
    right: ['left'],
    full: [],
  };
  for (const type of Object.keys(allowed)) {
    for (const at of ['left', 'right'] as const) {
      it(`${type} join, the small side on the ${at}`, async () => {
        const [l, r, lq, rq] = at === 'left' ? [small, mid, SMALL, MID] : [mid, small, MID, SMALL];
        const p = plan(join(type, l, r));
        await expectSame(p, sqlFor(type, lq, rq), { workers: 2, broadcastBytes: CAP, inThreadBytes: 0 });
        const s = (await run(p, { inThreadBytes: 0 })).stats;
        // a semi or anti join's small left side is built and marked by the right side's map tasks: `marked`
        const marked = (type === 'semi' || type === 'anti') && at === 'left';
        const want = allowed[type].includes(at) ? (marked ? 'marked' : 'broadcast') : 'shuffle';
        expect(s.joins[0].strategy).toBe(want);
        if (want !== 'shuffle') expect(s.joins[0].broadcast).toMatchObject({ side: at, rows: 1200 });
        expect(scanned(s.tasks)).toBe(F_ROWS + D_ROWS);
      });
    }
  }

  it('--explain states the rule, --explain --analyze what ran', () => {
    const f = writePlan(tmpDir(), { ...plan(join('semi', mid, small)), execution: { broadcastBytes: CAP } });
    const e = cli([f, '--explain']);
    expect(e.code).toBe(0);
    expect(e.stdout).toMatch(
      new RegExp(
        'expected strategy: shuffle: right side may be broadcast, right [\\d.]+ [KM]B > broadcastBytes 97.7 KB ' +
          '\\(from the files, before filters\\); see note 1\\n(.|\\n)*notes:\\n   1\\. at run time the right side is read ' +
          'after its filters, up to broadcastBytes 97.7 KB; the smaller that fits is broadcast, else the rows read are shuffled',
      ),
    );
    const a = cli([f, '--explain', '--analyze', '--workers', '2']);
    expect(a.code).toBe(0);
    expect(a.stdout).toMatch(
      /join-1: strategy broadcast: right side \(1200 rows, .*\) built once .*<= broadcastBytes 100000/,
    );
  });
});
