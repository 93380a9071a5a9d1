// Broadcast joins: the side rules as a pure decision, every join type against
// DuckDB with the strategy the rules allow, the side measured after its
// filters, a star join probing two tables in one map task, the fallback to a
// shuffle when the measured side is too big, and the knobs (plan, library, CLI).
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type RunOptions, runPlan } from '../dist/index.js';
import { broadcastable, decideJoin, sidesToMeasure } from '../dist/physical/join/decide.js';
import { ROOT, cli, expectSame, tmpDir, writeParquet, writePlan } from './helpers.js';

const dir = tmpDir('sj-bcast-');
const F = path.join(dir, 'fact.parquet'),
  D = path.join(dir, 'dim.parquet'),
  E = path.join(dir, 'dim2.parquet');
const FACT = `read_parquet('${F}')`,
  DIM = `read_parquet('${D}')`,
  DIM2 = `read_parquet('${E}')`;

beforeAll(async () => {
  // fact: 6,000 rows over keys 0..299 (some null, some without a dimension row); dims: keys 0..249 and 0..99 by 2
  await writeParquet(
    F,
    `SELECT i::BIGINT AS id, CASE WHEN i % 53 = 0 THEN NULL ELSE ((i * 7) % 300)::BIGINT END AS k,
    (i % 11)::INTEGER AS c, (i * 0.25)::DOUBLE AS amount FROM range(0, 6000) t(i)`,
    1000,
  );
  await writeParquet(
    D,
    `SELECT i::INTEGER AS k, 'r' || (i % 6) AS region, CASE WHEN i % 9 = 0 THEN NULL ELSE i * 10 END::BIGINT AS w
    FROM range(0, 250) t(i)`,
    100,
  );
  await writeParquet(E, `SELECT (i * 2)::BIGINT AS k2, 'b' || (i % 4) AS brand FROM range(0, 50) t(i)`, 100);
});

const scanF = { op: 'scan', source: 'f' },
  scanD = { op: 'scan', source: 'd' };
const plan = (query: object) => ({
  version: 1,
  sources: { f: { parquet: F }, d: { parquet: D }, e: { parquet: E } },
  query,
});
const KW: Record<string, string> = { inner: 'INNER', left: 'LEFT', right: 'RIGHT', full: 'FULL OUTER' };
function sqlFor(type: string, l = FACT, r = DIM) {
  if (type === 'semi') return `SELECT * FROM ${l} l WHERE EXISTS (SELECT 1 FROM ${r} r WHERE l.k = r.k)`;
  if (type === 'anti') return `SELECT * FROM ${l} l WHERE NOT EXISTS (SELECT 1 FROM ${r} r WHERE l.k = r.k)`;
  return `SELECT l.*, r.* FROM ${l} l ${KW[type]} JOIN ${r} r ON l.k = r.k`;
}
const join = (type: string, left: object = scanF, right: object = scanD) => ({
  op: 'join',
  type,
  on: [['k', 'k']],
  left,
  right,
});
const run = (p: object, o: RunOptions = {}) => runPlan(p, { workers: 2, writeOutput: false, ...o });

describe('which side may be broadcast (pure)', () => {
  it("follows Spark's rules per join type", () => {
    expect(broadcastable('inner').sort()).toEqual(['left', 'right']);
    for (const t of ['left', 'semi', 'anti'] as const) expect(broadcastable(t)).toEqual(['right']);
    expect(broadcastable('right')).toEqual(['left']);
    expect(broadcastable('full')).toEqual([]);
  });
  it('broadcasts the smaller allowed side that fits, never with a threshold of 0 or a full join', () => {
    expect(decideJoin('inner', { left: 10, right: 20 }, 100)).toMatchObject({ strategy: 'broadcast', side: 'left' });
    expect(decideJoin('inner', { left: 500, right: 20 }, 100)).toMatchObject({ strategy: 'broadcast', side: 'right' });
    expect(decideJoin('left', { left: 10, right: 20 }, 100)).toMatchObject({ strategy: 'broadcast', side: 'right' });
    expect(decideJoin('right', { left: 10, right: 5 }, 100)).toMatchObject({ strategy: 'broadcast', side: 'left' });
    expect(decideJoin('right', { right: 5 }, 100).strategy).toBe('shuffle');
    expect(decideJoin('full', { left: 1, right: 1 }, 100)).toMatchObject({
      strategy: 'shuffle',
      reason: expect.stringMatching(/neither/),
    });
    expect(decideJoin('inner', { left: 1, right: 1 }, 0)).toMatchObject({
      strategy: 'shuffle',
      reason: expect.stringMatching(/off/),
    });
    expect(decideJoin('semi', { right: 101 }, 100)).toMatchObject({
      strategy: 'shuffle',
      reason: expect.stringMatching(/101 bytes > broadcastBytes 100/),
    });
  });
  it('a side read in part (stopped at the cap) is never broadcast; the reason says so', () => {
    expect(decideJoin('inner', { right: 50 }, 100, { left: 120 })).toMatchObject({
      strategy: 'broadcast',
      side: 'right',
      reason: expect.stringMatching(/the left side is over 120 bytes \(read stopped there\)/),
    });
    expect(decideJoin('inner', {}, 100, { left: 120, right: 101 })).toMatchObject({
      strategy: 'shuffle',
      reason: expect.stringMatching(/left over 120 bytes.*right over 101 bytes.*> broadcastBytes 100/),
    });
  });
  it('measures every allowed side a cap can stop (scans), others only within twice the threshold, smaller estimate first', () => {
    const scans = { left: true, right: true },
      neither = { left: false, right: false };
    expect(sidesToMeasure('inner', { left: 5000, right: 190 }, 100, scans)).toEqual(['right', 'left']);
    expect(sidesToMeasure('inner', { left: 150, right: 190 }, 100, neither)).toEqual(['left', 'right']);
    expect(sidesToMeasure('anti', { left: 1, right: 190 }, 100, neither)).toEqual(['right']);
    expect(sidesToMeasure('anti', { left: 1, right: 201 }, 100, neither)).toEqual([]);
    expect(sidesToMeasure('anti', { left: 1, right: 1e9 }, 100, scans)).toEqual(['right']);
    expect(sidesToMeasure('full', { left: 1, right: 1 }, 100, scans)).toEqual([]);
    expect(sidesToMeasure('inner', { left: 1, right: 1 }, 0, scans)).toEqual([]);
  });
});

describe('broadcast joins against DuckDB', () => {
  it.each(['inner', 'left', 'right', 'full', 'semi', 'anti'])('%s join', async (type) => {
    await expectSame(plan(join(type)), sqlFor(type), { workers: 2 });
    const r = await run(plan(join(type)));
    const j = r.stats.joins[0];
    if (type === 'full') {
      expect(j.strategy).toBe('shuffle');
      expect(r.stats.shuffles.map((s) => s.id)).toEqual(['join-1.left', 'join-1.right']);
    } else {
      expect(j.strategy).toBe('broadcast');
      // right joins broadcast the left side (here the big one); the others the small dimension
      expect(j.broadcast!.side).toBe(type === 'right' ? 'left' : 'right');
      expect(r.stats.shuffles).toEqual([]); // the other side was never shuffled
      expect(r.stats.tasks.filter((t) => t.kind === 'reduce')).toEqual([]);
    }
  });
  it('the fact table as the right side of an inner join: the small left side is built', async () => {
    await expectSame(plan(join('inner', scanD, scanF)), `SELECT l.*, r.* FROM ${DIM} l JOIN ${FACT} r ON l.k = r.k`, {
      workers: 2,
    });
    expect((await run(plan(join('inner', scanD, scanF)))).stats.joins[0].broadcast!.side).toBe('left');
  });
  it('a star join: two tables probed in a row, then a partial aggregate, in the fact map tasks', async () => {
    const dim2 = {
      op: 'project',
      input: { op: 'scan', source: 'e' },
      columns: [{ name: 'c2', column: 'k2' }, 'brand'],
    };
    const q = plan({
      op: 'aggregate',
      groupBy: ['region', 'brand'],
      aggregates: [
        { fn: 'count', as: 'n' },
        { fn: 'sum', column: 'amount', as: 's' },
        { fn: 'max', column: 'w', as: 'mw' },
      ],
      input: { op: 'join', type: 'left', on: [['c', 'c2']], left: join('inner'), right: dim2 },
    });
    await expectSame(
      q,
      `SELECT region, brand, count(*), sum(amount), max(w) FROM ${FACT} l JOIN ${DIM} r ON l.k = r.k
      LEFT JOIN ${DIM2} e ON l.c = e.k2 GROUP BY region, brand`,
      { workers: 2 },
    );
    const r = await run(q);
    expect(r.stats.joins.map((j) => [j.id, j.strategy])).toEqual(
      expect.arrayContaining([
        ['join-1', 'broadcast'],
        ['join-2', 'broadcast'],
      ]),
    );
    expect(r.stats.shuffles.map((s) => s.id)).toEqual(['aggregate-1.input']);
    // one map task per fact row group did scan, both probes and the combiner
    const factTasks = r.stats.tasks.filter((t) => t.source === 'scan-1');
    expect(factTasks.length).toBeGreaterThan(0);
    expect(factTasks.every((t) => t.kind === 'map' && t.stage === 'aggregate-1')).toBe(true);
    expect(factTasks.reduce((a, t) => a + t.rows, 0)).toBe(6000);
    expect(r.stats.tasks.filter((t) => t.stage.startsWith('join-') && t.kind !== 'map')).toEqual([]);
    expect(r.stats.shuffles[0].combine!.rowsBefore).toBeGreaterThan(r.stats.shuffles[0].combine!.rowsAfter);
  });
  it('a probe fused with the aggregate above: the table is grouped once where it is built, every join type it serves', async () => {
    const aggs = [
      { fn: 'count', as: 'n' },
      { fn: 'sum', column: 'amount', as: 's' },
      { fn: 'max', column: 'w', as: 'mw' },
    ];
    const sel = 'count(*), sum(amount), max(w)'; // min/max of the grouped side only
    const cases: [object, string, string][] = [
      // grouped by the table's columns (inner joins, either side built): the table's group ids, computed once
      [
        { groupBy: ['region'], input: join('inner') },
        `SELECT region, ${sel} FROM ${FACT} l JOIN ${DIM} r ON l.k = r.k GROUP BY region`,
        'table',
      ],
      [
        { groupBy: ['region'], input: join('inner', scanD, scanF) },
        `SELECT region, ${sel} FROM ${DIM} l JOIN ${FACT} r ON l.k = r.k GROUP BY region`,
        'table',
      ],
      [{ groupBy: [], input: join('inner') }, `SELECT ${sel} FROM ${FACT} l JOIN ${DIM} r ON l.k = r.k`, 'table'],
      // grouped by the probing side's columns (a right join's table is its left side): each probing batch is grouped
      ...(['left', 'right', 'semi', 'anti'] as const).map((t): [object, string, string] => {
        const g = t === 'right' ? 'region' : 'c';
        return [
          {
            groupBy: [g],
            input: join(t),
            aggregates: [
              { fn: 'count', as: 'n' },
              { fn: 'sum', column: 'amount', as: 's' },
            ],
          },
          t === 'semi' || t === 'anti'
            ? `SELECT c, count(*), sum(amount) FROM ${FACT} l WHERE ${t === 'anti' ? 'NOT ' : ''}EXISTS (SELECT 1 FROM ${DIM} r WHERE l.k = r.k) GROUP BY c`
            : `SELECT ${g}, count(*), sum(amount) FROM ${FACT} l ${KW[t]} JOIN ${DIM} r ON l.k = r.k GROUP BY ${g}`,
          'batch',
        ];
      }),
    ];
    for (const [q, sql, groups] of cases) {
      const p = plan({ op: 'aggregate', aggregates: aggs, ...q });
      for (const inThreadBytes of [0, '1GB']) {
        await expectSame(p, sql, { workers: 2, inThreadBytes });
        const r = await run(p, { inThreadBytes });
        expect(r.stats.joins[0].strategy).toBe('broadcast');
        const fused = r.stats.tasks.filter((t) => t.kind === 'map' && t.join).map((t) => t.join!);
        expect(fused.length, sql).toBeGreaterThan(0);
        for (const j of fused) expect(j, sql).toMatchObject({ path: 'fused-aggregate', groups });
      }
    }
  });
  it('measures a side after its filters: a filtered side under the threshold is broadcast', async () => {
    const filtered = { op: 'filter', input: scanD, where: { column: 'k', cmp: '<', value: 20 } };
    const whole = (await run(plan(join('inner', scanF, scanD)))).stats.joins[0].broadcast!.bytes;
    const r = await run(plan(join('inner', scanF, filtered)), { broadcastBytes: Math.floor(whole * 0.6) });
    expect(r.stats.joins[0]).toMatchObject({ strategy: 'broadcast', broadcast: { side: 'right', rows: 20 } });
    await expectSame(plan(join('semi', scanF, filtered)), sqlFor('semi', FACT, `(SELECT * FROM ${DIM} WHERE k < 20)`), {
      workers: 2,
      broadcastBytes: Math.floor(whole * 0.6),
    });
  });
  it('a measured side above the threshold is shuffled from the rows already read', async () => {
    const whole = (await run(plan(join('left')))).stats.joins[0].broadcast!.bytes;
    const r = await run(plan(join('left')), { broadcastBytes: whole - 1 });
    expect(r.stats.joins[0].strategy).toBe('shuffle');
    expect(r.stats.joins[0].reason).toMatch(new RegExp(`right ${whole} bytes > broadcastBytes ${whole - 1}`));
    expect(r.stats.shuffles.map((s) => s.id).sort()).toEqual(['join-1.left', 'join-1.right']);
    await expectSame(plan(join('left')), sqlFor('left'), { workers: 2, broadcastBytes: whole - 1 });
  });
  it('execution.broadcastBytes in the plan, and the library option over it', async () => {
    const off = { ...plan(join('inner')), execution: { broadcastBytes: 0 } };
    expect((await run(off)).stats.joins[0].strategy).toBe('shuffle');
    expect((await run(off, { broadcastBytes: '1MB' })).stats.joins[0].strategy).toBe('broadcast');
    expect((await run({ ...plan(join('inner')), execution: { broadcastBytes: '64KB' } })).stats.joins[0].strategy).toBe(
      'broadcast',
    );
  });
});

describe('the command line', () => {
  const planFile = () =>
    writePlan(
      tmpDir(),
      plan({ op: 'aggregate', groupBy: ['region'], aggregates: [{ fn: 'count', as: 'n' }], input: join('inner') }),
    );
  it('--explain shows the expected strategy, --explain --analyze the one taken and why', () => {
    const f = planFile();
    expect(cli([f, '--explain']).stdout).toMatch(/expected strategy: broadcast \(right side built once/);
    expect(cli([f, '--explain', '--no-broadcast']).stdout).toMatch(/expected strategy: shuffle: broadcast turned off/);
    const a = cli([f, '--explain', '--analyze', '--workers', '2']);
    expect(a.code).toBe(0);
    expect(a.stdout).toMatch(
      /join-1: strategy broadcast: right side \(250 rows, .*\) built once .*<= broadcastBytes 25165824/,
    );
    const s = cli([f, '--explain', '--analyze', '--broadcast-threshold', '1KB', '--workers', '2']);
    expect(s.stdout).toMatch(/join-1: strategy shuffle \(.* > broadcastBytes 1024\)/);
  });
  it('rejects a bad threshold', () => {
    const r = cli([planFile(), '--broadcast-threshold', 'lots']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--broadcast-threshold must be a size/);
    const p = writePlan(tmpDir(), { ...plan(join('inner')), execution: { broadcastBytes: -1 } });
    const e = cli([p]);
    expect(e.code).toBe(2);
    expect(e.stderr).toMatch(/execution\.broadcastBytes/);
  });
  it('the quick start broadcasts its dimension', () => {
    const f = path.join(tmpDir(), 's.json');
    expect(cli(['plans/quickstart.json', '--quiet', '--stats', f], ROOT).code).toBe(0);
    const s = JSON.parse(fs.readFileSync(f, 'utf8'));
    expect(s.joins[0]).toMatchObject({ id: 'join-1', strategy: 'broadcast' });
  });
});
