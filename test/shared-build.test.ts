// The shared build: with the default broadcastBytes, a join side over it but within the shared-build bound
// (Settings.sharedBuildBytes, set here through the internal option) is built once in shared memory when the other
// side is larger, instead of shuffling both. A scan stopped at broadcastBytes is read on from where it stopped;
// every row of both files is read once, and the answer is DuckDB's.
import { beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { type RunOptions, runPlan } from '../dist/index.js';
import { SHARED_BUILD_ROWS, decideJoin, sideBounds } from '../dist/physical/join/decide.js';
import { checked } from '../dist/physical/join/broadcast-check.js';
import { expectSame, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-shared-build-');
const F = path.join(dir, 'big.parquet'),
  D = path.join(dir, 'mid.parquet');
const BIG = `read_parquet('${F}')`,
  MID = `read_parquet('${D}')`;
const F_ROWS = 400_000,
  D_ROWS = 20_000;

beforeAll(async () => {
  // big: 400,000 rows (about 14 MB in memory) in 80 row groups, 20 times mid's; some keys null
  await writeParquet(
    F,
    `SELECT i::BIGINT AS id, CASE WHEN i % 97 = 0 THEN NULL ELSE (i * 7) % 30000 END::BIGINT AS k,
    (i * 0.5)::DOUBLE AS v, 't' || (i % 50) AS tag FROM range(0, ${F_ROWS}) t(i)`,
    5000,
  );
  // mid: 20,000 rows (about 440 KB in memory) in 10 row groups; keys 0..19999
  await writeParquet(
    D,
    `SELECT i::BIGINT AS k, 'r' || (i % 6) AS region, (i * 3)::BIGINT AS w FROM range(0, ${D_ROWS}) t(i)`,
    2000,
  );
});

/** broadcastBytes under the mid side, the shared-build bound over it and under the big side */
const CAP = 100_000,
  SHARED = 1_000_000;
const big = { op: 'scan', source: 'f' },
  mid = { op: 'scan', source: 'd' };
const plan = (query: object) => ({ version: 1, sources: { f: { parquet: F }, d: { parquet: D } }, query });
const join = (type: string, left: object, right: object) => ({ op: 'join', type, on: [['k', 'k']], left, right });
const opts: RunOptions = { workers: 2, broadcastBytes: CAP, sharedBuildBytes: SHARED, inThreadBytes: 0 };
const run = (p: object, o: RunOptions = {}) => runPlan(p, { ...opts, writeOutput: false, ...o });
/** Rows read by scan tasks (tasks over rows read already are not scans) */
const scanned = (tasks: { rows: number; read?: string }[]) =>
  tasks.filter((t) => t.read !== undefined).reduce((a, t) => a + t.rows, 0);

describe('shared build: a side over broadcastBytes built once when the other is larger', () => {
  it("bounds each side by the other side's files and the shared bound, never under broadcastBytes", () => {
    expect(sideBounds(100, { left: 5000, right: 300 }, 1000)).toEqual({ left: 300, right: 1000 });
    expect(sideBounds(100, { left: 50, right: 300 }, 1000)).toEqual({ left: 300, right: 100 });
    expect(sideBounds(100, { left: 5000, right: 300 }, 0)).toEqual({ left: 100, right: 100 });
    expect(sideBounds(0, { left: 5000, right: 300 }, 1000)).toEqual({ left: 0, right: 0 });
    const bounds = { left: 300, right: 1000 };
    expect(decideJoin('inner', { left: 250, right: 400 }, 100, {}, bounds)).toMatchObject({ side: 'left' });
    expect(decideJoin('inner', { left: 350, right: 400 }, 100, {}, bounds)).toMatchObject({ side: 'right' });
    expect(decideJoin('left', { left: 250, right: 1001 }, 100, {}, bounds).strategy).toBe('shuffle');
    expect(decideJoin('full', { left: 1, right: 1 }, 100, {}, bounds).strategy).toBe('shuffle');
    expect(decideJoin('inner', { right: 900 }, 100, { left: 920 }, bounds).reason).toMatch(
      /right side 900 bytes > broadcastBytes 100 but <= the shared-build bound 1000/,
    );
  });

  it('a shared build takes at most SHARED_BUILD_ROWS rows; a side within broadcastBytes any number', () => {
    const d = { strategy: 'broadcast', side: 'right', reason: 'r' } as const;
    const node = {} as Parameters<typeof checked>[0]; // not read: the decision is taken from the rows alone
    const read = (rows: number, bytes: number) => ({ right: { rows, bytes, rest: null } });
    const over = checked(node, d, read(SHARED_BUILD_ROWS + 1, 5e7), 25e6, 6e7, 1e12);
    expect(over).toMatchObject({ strategy: 'shuffle' });
    expect(over.reason).toMatch(/rows are more than a shared build takes/);
    expect(checked(node, d, read(SHARED_BUILD_ROWS + 1, 2e7), 25e6, 3e7, 1e12)).toBe(d);
    expect(checked(node, d, read(10, 2e7), 25e6, 3e7, 1e6).strategy).toBe('shuffle'); // over the budget left
  });

  it('a scan stopped at broadcastBytes is read on and built; the larger side probes it, nothing shuffled', async () => {
    for (const [l, r, side] of [
      [big, mid, 'right'],
      [mid, big, 'left'],
    ] as const) {
      const p = plan(join('inner', l, r));
      const res = await run(p);
      const j = res.stats.joins[0];
      expect(j).toMatchObject({ strategy: 'broadcast', broadcast: { side, rows: D_ROWS } });
      expect(j.broadcast!.bytes).toBeGreaterThan(CAP);
      expect(j.reason).toMatch(/> broadcastBytes 100000 but <= the shared-build bound/);
      expect(res.stats.shuffles).toEqual([]);
      expect(scanned(res.stats.tasks)).toBe(F_ROWS + D_ROWS);
      const sql = `SELECT l.*, r.* FROM ${l === big ? BIG : MID} l JOIN ${r === big ? BIG : MID} r ON l.k = r.k`;
      await expectSame(p, sql, opts);
    }
  });

  it('an aggregate fused with the probe groups the rows read in both rounds', async () => {
    const p = plan({
      op: 'aggregate',
      groupBy: ['region'],
      aggregates: [
        { fn: 'count', as: 'n' },
        { fn: 'sum', column: 'v', as: 's' },
      ],
      input: join('inner', big, mid),
    });
    const res = await run(p);
    expect(res.stats.joins[0]).toMatchObject({ strategy: 'broadcast', broadcast: { side: 'right' } });
    const sql = `SELECT region, count(*), sum(v) FROM ${BIG} l JOIN ${MID} r ON l.k = r.k GROUP BY region`;
    await expectSame(p, sql, opts);
  });

  it('a side over the shared-build bound is shuffled from the rows read, each row read once', async () => {
    // 400 KB: mid's rows read (its 440 KB projected from the row groups read) are within the bound with slack, so
    // it is read on past the bound; 200 KB: they are not, and mid is not read on (the first read passes the cap
    // of 100 KB by the tasks under way, 3 row groups of 44 KB at most)
    for (const [bound, read] of [
      [400_000, (b: number) => b >= 400_000],
      [200_000, (b: number) => b < 300_000],
    ] as const) {
      const p = plan(join('left', big, mid));
      const res = await run(p, { sharedBuildBytes: bound });
      const j = res.stats.joins[0];
      expect(j.strategy).toBe('shuffle');
      const m = /right (?:over )?(\d+) bytes.* > broadcastBytes 100000 \(shared-build/.exec(j.reason);
      expect(m).not.toBeNull();
      expect(read(Number(m![1]))).toBe(true);
      const shuffled = res.stats.shuffles.find((s) => s.id === 'join-1.right')!.partitionRows;
      expect(shuffled.reduce((a, b) => a + b, 0)).toBe(D_ROWS);
      expect(scanned(res.stats.tasks)).toBe(F_ROWS + D_ROWS);
      await expectSame(p, `SELECT l.*, r.* FROM ${BIG} l LEFT JOIN ${MID} r ON l.k = r.k`, {
        ...opts,
        sharedBuildBytes: bound,
      });
    }
  });

  it('none when the other side has less than 16 times the rows of the side to build', async () => {
    // 184,000 of big's rows (9.2 times mid's, tags t0, t1, t10-t19, t2, t20-t29 in every row group): its rows are
    // projected from the splits read
    const under = { op: 'filter', where: { column: 'tag', cmp: '<', value: 't3' }, input: big };
    const p = plan(join('inner', under, mid));
    const res = await run(p);
    expect(res.stats.joins[0].strategy).toBe('shuffle');
    expect(res.stats.joins[0].reason).toMatch(
      /a shared build of its 20000 rows needs 16 times as many on the left side/,
    );
    expect(scanned(res.stats.tasks)).toBe(F_ROWS + D_ROWS);
    await expectSame(
      p,
      `SELECT l.*, r.* FROM (SELECT * FROM ${BIG} WHERE tag < 't3') l JOIN ${MID} r ON l.k = r.k`,
      opts,
    );
  });

  it('none when broadcastBytes is set (the bound is 0), nor for a full join', async () => {
    const set = await run(plan(join('inner', big, mid)), { sharedBuildBytes: undefined });
    expect(set.stats.joins[0].strategy).toBe('shuffle');
    const full = await run(plan(join('full', big, mid)));
    expect(full.stats.joins[0].strategy).toBe('shuffle');
  });
});
