// The partitioned shared build (physical/join/partitioned.ts): a side the shared build on one thread refuses (here:
// without 16 times its rows on the other side) but whose table fits the memory budget is hashed, sorted by part and
// built by the pool's tasks into one shared table, probed by the other side's map tasks: nothing shuffled. Forced on
// small data by the knobs the shared build has (broadcastBytes under the side, the internal sharedBuildBytes over
// it); every answer is DuckDB's.
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type RunOptions, explainAnalyze, explainPlan, loadPlan, runPlan } from '../dist/index.js';
import { buildKeys } from '../dist/kernels/keys.js';
import { JoinProbe } from '../dist/kernels/join.js';
import { KeyTable, int32s } from '../dist/kernels/table.js';
import { allocateTable, buildPart, insertDeferred, sortRange } from '../dist/kernels/table-part.js';
import { decidePartitioned } from '../dist/physical/join/decide.js';
import { expectSame, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-partitioned-');
const BIG = path.join(dir, 'big.parquet'),
  MID = path.join(dir, 'mid.parquet'),
  HOT = path.join(dir, 'hot.parquet');
const B = `read_parquet('${BIG}')`,
  M = `read_parquet('${MID}')`,
  H = `read_parquet('${HOT}')`;
const MID_ROWS = 20_000;

beforeAll(async () => {
  // big: 60,000 rows, 3 times mid's (a shared build on one thread needs 16 times); some keys null
  await writeParquet(
    BIG,
    `SELECT i::BIGINT AS id, CASE WHEN i % 97 = 0 THEN NULL ELSE (i * 7) % 24000 END::BIGINT AS k,
    'g' || (i % 13) AS s, 'k' || ((i * 11) % 30000) AS ks, (i * 0.5)::DOUBLE AS v FROM range(0, 60000) t(i)`,
    5000,
  );
  // mid: 20,000 rows (about 600 KB in memory), keys 0..19999 and some repeated, some null; a string key s
  await writeParquet(
    MID,
    `SELECT CASE WHEN i % 501 = 0 THEN NULL ELSE (i * 13) % 19000 END::BIGINT AS k, 'g' || (i % 17) AS s,
    CASE WHEN i % 333 = 0 THEN NULL ELSE 'k' || i END AS ks, 'r' || (i % 6) AS region, (i * 3)::BIGINT AS w FROM range(0, ${MID_ROWS}) t(i)`,
    2000,
  );
  // hot: mid's shape with 40% of its rows on key 7
  await writeParquet(
    HOT,
    `SELECT CASE WHEN i % 5 < 2 THEN 7 ELSE i END::BIGINT AS k, 'g' || (i % 17) AS s, 'k' || i AS ks,
    'r' || (i % 6) AS region, (i * 3)::BIGINT AS w FROM range(0, ${MID_ROWS}) t(i)`,
    2000,
  );
});

const opts: RunOptions = { workers: 2, broadcastBytes: 100_000, sharedBuildBytes: 1 << 30, inThreadBytes: 0 };
const sources = { big: { parquet: BIG }, mid: { parquet: MID }, hot: { parquet: HOT } };
const plan = (query: object) => ({ version: 1, sources, query });
const scan = (source: string, columns?: string[]) => ({ op: 'scan', source, ...(columns ? { columns } : {}) });
const join = (type: string, left: object, right: object, on: string[][] = [['k', 'k']]) => ({
  op: 'join',
  type,
  on,
  left,
  right,
});
const run = (p: object, o: RunOptions = {}) => runPlan(p, { ...opts, writeOutput: false, ...o });

/** Each join's strategy, and the build parts of a partitioned one. */
async function partitioned(p: object, side: 'left' | 'right', o: RunOptions = {}) {
  const res = await run(p, o);
  const j = res.stats.joins[0];
  expect(j.strategy, j.reason).toBe('partitioned');
  expect(j.broadcast!.side).toBe(side);
  expect(j.reason).toMatch(/needs 16 times as many .* built partitioned by all workers/);
  expect(j.parts!.length).toBeGreaterThanOrEqual(2);
  expect(j.parts!.reduce((a, x) => a + x.rows, 0)).toBe(j.broadcast!.rows);
  // neither side of the join shuffled
  expect(res.stats.shuffles.filter((x) => x.id.startsWith('join-1'))).toEqual([]);
  // the build's tasks ran: hashing (map) and parts (reduce) under the join's build stage
  const build = res.stats.tasks.filter((t) => t.stage === 'join-1.build' && t.error === undefined);
  expect(build.filter((t) => t.kind === 'reduce').length).toBe(j.parts!.length);
  expect(build.filter((t) => t.kind === 'map').length).toBe(j.hashMs!.length);
  return res;
}

// each case runs several plans and their DuckDB answers: longer than the default on the loaded machine
describe('partitioned shared build: forced on small data', { timeout: 300_000 }, () => {
  it('inner joins, either side built, null keys, against DuckDB', async () => {
    for (const [l, r, side, lsql, rsql] of [
      [scan('big'), scan('mid'), 'right', B, M],
      [scan('mid'), scan('big'), 'left', M, B],
    ] as const) {
      const p = plan(join('inner', l, r));
      await partitioned(p, side);
      await expectSame(p, `SELECT l.*, r.* FROM ${lsql} l JOIN ${rsql} r ON l.k = r.k`, opts);
    }
  });

  it('left, semi and anti joins build the right side; a right join the left', async () => {
    for (const type of ['left', 'semi', 'anti'] as const) {
      const p = plan(join(type, scan('big'), scan('mid')));
      await partitioned(p, 'right');
      const sql =
        type === 'left'
          ? `SELECT l.*, r.* FROM ${B} l LEFT JOIN ${M} r ON l.k = r.k`
          : `SELECT * FROM ${B} l WHERE ${type === 'anti' ? 'NOT ' : ''}EXISTS (SELECT 1 FROM ${M} r WHERE r.k = l.k)`;
      await expectSame(p, sql, opts);
    }
    const p = plan(join('right', scan('mid'), scan('big')));
    await partitioned(p, 'left');
    await expectSame(p, `SELECT l.*, r.* FROM ${M} l RIGHT JOIN ${B} r ON l.k = r.k`, opts);
  });

  it('multi-column and string keys (the chained layout)', async () => {
    const multi = plan(
      join('inner', scan('big'), scan('mid'), [
        ['k', 'k'],
        ['s', 's'],
      ]),
    );
    await partitioned(multi, 'right');
    await expectSame(multi, `SELECT l.*, r.* FROM ${B} l JOIN ${M} r ON l.k = r.k AND l.s = r.s`, opts);
    const str = plan({
      op: 'aggregate',
      groupBy: ['region'],
      aggregates: [
        { fn: 'count', as: 'n' },
        { fn: 'sum', column: 'v', as: 'sv' },
      ],
      input: join('inner', scan('big', ['ks', 'v']), scan('mid', ['ks', 'region']), [['ks', 'ks']]),
    });
    // (no eager aggregation: it would aggregate both sides by s and shuffle them)
    await partitioned(str, 'right', { eagerAggregation: false });
    await expectSame(str, `SELECT region, count(*), sum(v) FROM ${B} l JOIN ${M} r ON l.ks = r.ks GROUP BY region`, {
      ...opts,
      eagerAggregation: false,
    });
  });

  it('a hot key on the built side is one part: its rows there, the answer the same', async () => {
    const p = plan(join('inner', scan('big'), scan('hot')));
    const res = await partitioned(p, 'right');
    const parts = res.stats.joins[0].parts!;
    // 8,000 of the 20,000 rows share key 7, so one part holds at least those
    expect(Math.max(...parts.map((x) => x.rows))).toBeGreaterThanOrEqual(8000);
    await expectSame(p, `SELECT l.*, r.* FROM ${B} l JOIN ${H} r ON l.k = r.k`, opts);
  });

  it('runs the same on the calling thread as on the pool', async () => {
    const p = plan(join('inner', scan('big'), scan('mid')));
    const res = await partitioned(p, 'right', { inThreadBytes: 1 << 30 });
    expect(res.stats.inThread).toBe(true);
    await expectSame(p, `SELECT l.*, r.* FROM ${B} l JOIN ${M} r ON l.k = r.k`, { ...opts, inThreadBytes: 1 << 30 });
  });

  it('a part task whose worker dies is retried and builds the same', async () => {
    process.env.SKEWJOIN_FAULTS = 'crash:join-1.build:reduce:1:once,crash:join-1.build:map:0:once';
    try {
      const p = plan(join('inner', scan('big'), scan('mid')));
      const res = await partitioned(p, 'right');
      expect(res.stats.tasks.filter((t) => t.stage === 'join-1.build' && t.error !== undefined).length).toBe(2);
      await expectSame(p, `SELECT l.*, r.* FROM ${B} l JOIN ${M} r ON l.k = r.k`, opts);
    } finally {
      delete process.env.SKEWJOIN_FAULTS;
    }
  });

  it('under a tiny memory budget the sides are shuffled (and spill), leaving no spill file', async () => {
    const spill = tmpDir('sj-partitioned-spill-');
    const o = { memoryLimit: 65536, spillDir: spill };
    const p = plan(join('inner', scan('big'), scan('mid')));
    const res = await run(p, o);
    const j = res.stats.joins[0];
    expect(j.strategy).toBe('shuffle');
    expect(j.reason).toMatch(/over 0.5 of the memory budget left|exceeds the memory budget left/);
    expect(res.stats.spilledBytes).toBeGreaterThan(0);
    await expectSame(p, `SELECT l.*, r.* FROM ${B} l JOIN ${M} r ON l.k = r.k`, { ...opts, ...o });
    expect(fs.readdirSync(spill)).toEqual([]);
  });

  it('is off with an explicit broadcastBytes (the shared build is), and --explain says the rule and the choice', async () => {
    const p = plan(join('inner', scan('big'), scan('mid')));
    const off = await runPlan(p, { workers: 2, broadcastBytes: 100_000, inThreadBytes: 0, writeOutput: false });
    expect(off.stats.joins[0].strategy).toBe('shuffle');
    const lp = await loadPlan(p, opts);
    const text = explainPlan(lp);
    expect(text).toMatch(/expected strategy: partitioned \(right side hash-partitioned and built by all workers/);
    expect(text).toMatch(/partitioned join-1\.right: collected, its parts built by all workers/);
    expect(text).toMatch(
      /is built partitioned by all workers when read whole, its table fits 0.5 of the memory budget left .* and the other side has 2 times its rows/,
    );
    const res = await run(p);
    const analyzed = explainAnalyze(lp, res.stats);
    expect(analyzed).toMatch(/join-1: strategy partitioned: right side \(20000 rows/);
    expect(analyzed).toMatch(/build per part: 0: \d+ rows [\d.]+ ms; 1: /);
  });
});

describe('the partitioned table and rule (pure)', () => {
  it('decides partitioned within half the budget left, the smaller table, else shuffle', () => {
    const whole = {
      left: { rows: 1000, bytes: 50_000, probing: 2000 },
      right: { rows: 2000, bytes: 40_000, probing: 4000 },
    };
    expect(decidePartitioned('inner', whole, 1e6, 'r')).toMatchObject({ strategy: 'partitioned', side: 'left' });
    expect(decidePartitioned('left', whole, 1e6, 'r')).toMatchObject({ strategy: 'partitioned', side: 'right' });
    expect(decidePartitioned('full', whole, 1e6, 'r').strategy).toBe('shuffle');
    const over = decidePartitioned('inner', whole, 200_000, 'r');
    expect(over.strategy).toBe('shuffle');
    expect(over.reason).toMatch(/not built partitioned: .* over 0.5 of the memory budget left/);
    // a side probed by fewer than twice its rows is not built: the probing side is shuffled instead
    const few = decidePartitioned('left', { right: { rows: 2000, bytes: 40_000, probing: 3999 } }, 1e6, 'r');
    expect(few.strategy).toBe('shuffle');
    expect(few.reason).toMatch(/the right side's 2000 rows have 3999 probing them, under 2 times as many/);
  });

  it('parts built apart (deferred rows too) probe as the table built on one thread', () => {
    let x = 11;
    const rnd = () => {
      x = (x * 1103515245 + 12345) & 0x7fffffff;
      return x;
    };
    const col = (n: number, f: (i: number) => number, nullEvery = 0) => {
      const values = new BigInt64Array(new SharedArrayBuffer(8 * n));
      const valid = nullEvery ? new Uint8Array(n).fill(1) : null;
      for (let i = 0; i < n; i++) {
        values[i] = BigInt(f(i));
        if (valid && i % nullEvery === 0) valid[i] = 0;
      }
      return { type: { id: 'int64' as const }, length: n, values, valid };
    };
    let deferred = 0;
    for (const [n, keys, parts] of [
      [30, 1, 8], // 8 slots a part, about half taken: runs reach a part's end
      [3000, 1, 16],
      [2000, 2, 8],
    ] as const) {
      for (let rep = 0; rep < (n < 100 ? 400 : 5); rep++) {
        const b = {
          length: n,
          columns: [col(n, () => (rnd() >> 8) % (n * 4), 9), col(n, () => (rnd() >> 8) % 3)].slice(0, keys),
        };
        const cols = keys === 1 ? [0] : [0, 1];
        const k = buildKeys(
          b,
          cols,
          cols.map(() => ({ kind: 'int' }) as const),
        );
        const one = new KeyTable(k, true, undefined, true);
        const t = allocateTable(k);
        const R = 3;
        const rows = { order: int32s(n, true), starts: int32s(R * (parts + 1), true), ranges: R };
        for (let r = 0; r < R; r++)
          sortRange(k.hash, Math.floor((r * n) / R), Math.floor(((r + 1) * n) / R), r, t.mask, parts, rows);
        const built = Array.from({ length: parts }, (_, p) => buildPart(t, k, p, parts, rows));
        let unique = built.every((p) => p.unique);
        const d = built.map((p) => p.deferred);
        deferred += d.reduce((a, y) => a + y.length, 0);
        if (t.slots) unique = insertDeferred(t, k, d) && unique;
        const pairs = (table: KeyTable) => {
          const out: string[] = [];
          new JoinProbe('inner', k, table).probe(k, (pi, bi, m) => {
            for (let j = 0; j < m; j++) out.push(`${pi[j]}:${bi[j]}`);
          });
          return out.join();
        };
        expect(pairs(new KeyTable(k, true, { ...t, unique: t.slots ? unique : false }))).toBe(pairs(one));
        if (t.slots) expect(unique).toBe(one.unique);
      }
    }
    expect(deferred).toBeGreaterThan(0);
  });
});
