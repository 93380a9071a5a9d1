// Range joins (JOIN_STRATEGIES.range, physical/join/range.ts): a keyless inner join whose filter bounds a column of
// one side by a column of the other (<, <=, >, >=, BETWEEN, two bounds) sorts the smaller side and binary searches the
// larger one's rows, instead of a cross join's every pair. Answers against DuckDB's for each operator and type, nulls,
// duplicated bounds, empty sides, tasks cut by rows and by a row's matches, a tiny budget, SQL and a plan.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type RunResult, compileSql, explainPlan, loadPlan, runPlan, runSql } from '../dist/index.js';
import { type RangeShape, matchCounts, rangePairs, sortedOrder, withinIndex } from '../dist/kernels/range-join.js';
import { cli, duckRows, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-range-join-');
const file = (n: string) => path.join(dir, `${n}.parquet`);
const TABLES = ['ev', 'se', 'sm', 'pt', 'hv', 'bl'];
const sources = Object.fromEntries(TABLES.map((t) => [t, file(t)]));

beforeAll(async () => {
  // events: bounds with nulls and duplicates, in every type; ts2 makes each event an interval too
  await writeParquet(
    file('ev'),
    `SELECT i::BIGINT AS id, x AS ts, x + (i % 300) AS ts2, ((i * 31) % 1000)::INTEGER AS i32,
       CASE WHEN i % 1000 = 3 THEN 'NaN'::DOUBLE WHEN i % 89 = 0 THEN NULL ELSE x / 10.0 END AS f,
       (x / 100.0)::DECIMAL(12,2) AS d, DATE '2020-01-01' + (x // 17)::INTEGER AS dt,
       TIMESTAMP '2020-01-01' + to_seconds(x * 10) AS tm, (1152921504606846976 + x)::BIGINT AS big,
       (x / 100.0)::DECIMAL(30,4) AS dw
     FROM (SELECT i, CASE WHEN i % 97 = 0 THEN NULL ELSE (i * 7919) % 50000 END::BIGINT AS x FROM range(0, 20000) r(i))`,
    5000,
  );
  // sessions: pairs of overlapping intervals, some long, some empty, null bounds
  await writeParquet(
    file('se'),
    `SELECT j::BIGINT AS sid, lo, hi, lo / 10.0 AS flo, hi / 10.0 AS fhi, (lo / 100.0)::DECIMAL(10,3) AS dlo,
       (hi / 100.0)::DECIMAL(10,3) AS dhi, DATE '2020-01-01' + (lo // 17)::INTEGER AS dtlo,
       DATE '2020-01-01' + (hi // 17)::INTEGER AS dthi, TIMESTAMP '2020-01-01' + to_seconds(lo * 10) AS tlo,
       TIMESTAMP '2020-01-01' + to_seconds(hi * 10) AS thi, (1152921504606846976 + lo)::BIGINT AS blo,
       (1152921504606846976 + hi)::BIGINT AS bhi, (lo // 50)::INTEGER AS ilo, (hi // 50)::INTEGER AS ihi,
       (lo / 100.0)::DECIMAL(25,2) AS dwlo, (hi / 100.0)::DECIMAL(25,2) AS dwhi
     FROM (SELECT j, CASE WHEN j % 50 = 7 THEN NULL ELSE (j // 2) * 200 END::BIGINT AS lo,
       CASE WHEN j % 61 = 5 THEN NULL WHEN j % 100 = 42 THEN (j // 2) * 200 + 20000
            WHEN j % 77 = 1 THEN (j // 2) * 200 - 10 ELSE (j // 2) * 200 + 150 + (j % 2) * 100 END::BIGINT AS hi
       FROM range(0, 500) r(j))`,
    250,
  );
  await writeParquet(
    file('sm'),
    `SELECT i::BIGINT AS sid2, CASE WHEN i % 41 = 0 THEN NULL ELSE (i * 13) % 40000 END::BIGINT AS v FROM range(0, 3000) r(i)`,
    1000,
  );
  await writeParquet(
    file('pt'),
    `SELECT k::BIGINT AS pid, CASE WHEN k % 37 = 0 THEN NULL ELSE (k * 173) % 30000 END::BIGINT AS p FROM range(0, 300) r(k)`,
  );
  // a probing side whose few rows match every built row (a row's matches past a task's share)
  await writeParquet(
    file('hv'),
    `SELECT i::BIGINT AS hid, CASE WHEN i % 4000 = 17 THEN 1000000 ELSE -1 END::BIGINT AS hx FROM range(0, 12000) r(i)`,
    4000,
  );
  await writeParquet(file('bl'), `SELECT i::BIGINT AS bid, (i * 3)::BIGINT AS bval FROM range(0, 10000) r(i)`, 5000);
});

/** The query in DuckDB over the same files. */
const duckOf = (q: string) =>
  duckRows(
    q.replace(new RegExp(`\\b(${TABLES.join('|')}) (\\w+)\\b`, 'g'), (_, t, al) => `read_parquet('${file(t)}') ${al}`),
  );
const text = (rows: unknown[][]) => rows.map((r) => r.map(String));
const oursOf = (r: RunResult) => r.toRows().map((x) => Object.values(x).map(String));
const strategies = (r: RunResult) => r.stats.joins.map((j) => j.strategy);

/** Our answer (on the worker pool) equals DuckDB's; the join ran as a range join. */
async function same(q: string, opts: object = {}): Promise<RunResult> {
  const r = await runSql(q, { sources, workers: 2, inThreadBytes: 0, ...opts });
  expect(oursOf(r)).toEqual(text(await duckOf(q)));
  expect(strategies(r)).toEqual(['range']);
  return r;
}

const AGG = 'SELECT count(*) AS n, sum(a.id) AS s1, sum(b.sid) AS s2';

describe('one inequality between the sides', () => {
  it.each(['<', '<=', '>', '>='])(
    "a.ts %s b.lo: DuckDB's answer, nulls never match, duplicated bounds each",
    async (op) => {
      await same(`${AGG} FROM ev a JOIN se b ON a.ts ${op} b.lo`);
    },
  );

  it('a comma join with the comparison in WHERE', async () => {
    await same(
      'SELECT count(*) AS n, sum(a.sid2) AS s1, sum(b.sid) AS s2 FROM sm a, se b WHERE a.v < b.lo AND b.sid > 5',
    );
  });

  it('among hash joins: one side of the range join a join of its own', async () => {
    const q =
      'SELECT count(*) AS n, sum(a.id) AS s FROM ev a JOIN se b ON a.ts BETWEEN b.lo AND b.hi ' +
      'JOIN sm c ON c.sid2 = b.sid WHERE c.v > 100';
    const r = await runSql(q, { sources, workers: 2, inThreadBytes: 0, broadcastBytes: 0 });
    expect(oursOf(r)).toEqual(text(await duckOf(q)));
    expect(strategies(r)).toContain('range');
  });

  it('the smaller side on the left, the comparison written either way round', async () => {
    for (const on of ['b.sid2 > 0 AND a.lo <= b.v', 'b.v < a.hi'])
      await same(`SELECT count(*) AS n, sum(a.sid) AS s1, sum(b.sid2) AS s2 FROM se a JOIN sm b ON ${on}`);
  });
});

describe('a value between two bounds of the other side', () => {
  it.each([
    ['BETWEEN', 'a.ts BETWEEN b.lo AND b.hi'],
    ['>= and <', 'a.ts >= b.lo AND a.ts < b.hi'],
    ['> and <=', 'b.lo < a.ts AND b.hi >= a.ts'],
    ['> and <', 'a.ts > b.lo AND a.ts < b.hi'],
  ])('%s, the intervals built (long, empty and overlapping ones among them)', async (_, on) => {
    await same(`${AGG} FROM ev a JOIN se b ON ${on}`);
  });

  it('the points built, each interval of the larger side searching them', async () => {
    for (const on of ['p.p BETWEEN a.ts AND a.ts2', 'p.p > a.ts AND p.p < a.ts2'])
      await same(`SELECT count(*) AS n, sum(a.id) AS s1, sum(p.pid) AS s2 FROM pt p JOIN ev a ON ${on}`);
  });

  it('the joined rows themselves, and other conjuncts filtered above', async () => {
    const q =
      'SELECT a.id, b.sid, a.ts, b.lo FROM ev a JOIN se b ON a.ts >= b.lo AND a.ts < b.hi AND a.id + b.sid > 10000 ' +
      'ORDER BY a.id, b.sid';
    await same(q);
  });
});

describe('each type, compared as the filter compares it', () => {
  it.each([
    ['floats, NaN among them', 'a.f >= b.flo AND a.f <= b.fhi'],
    ['floats against integers', 'a.f > b.lo AND a.f < b.hi'],
    ['decimals of two scales', 'a.d BETWEEN b.dlo AND b.dhi'],
    ['decimals against integers', 'a.d >= b.ilo AND a.d < b.dhi'],
    ['wide decimals (16 bytes) of two scales', 'a.dw >= b.dwlo AND a.dw <= b.dwhi'],
    ['dates', 'a.dt >= b.dtlo AND a.dt < b.dthi'],
    ['timestamps', 'a.tm BETWEEN b.tlo AND b.thi'],
    ['dates against timestamps', 'a.dt >= b.tlo AND a.dt <= b.thi'],
    ['int64 against int32', 'a.ts >= b.ilo AND a.ts < b.ihi'],
    ['64-bit integers past 2^53 (keys not exact)', 'a.big > b.blo AND a.big <= b.bhi'],
  ])('%s', async (_, on) => {
    const r = await same(`${AGG} FROM ev a JOIN se b ON ${on}`);
    expect(Number(r.toRows()[0].n)).toBeGreaterThan(0);
  });
});

describe('sizes', () => {
  it('an empty side gives no rows (and one task)', async () => {
    for (const w of ['b.lo < 0', 'a.ts < 0']) {
      const r = await same(`${AGG} FROM ev a JOIN se b ON a.ts BETWEEN b.lo AND b.hi WHERE ${w}`);
      expect(r.stats.joins[0].tasks).toBe(1);
    }
  });

  it('the larger side is cut into tasks; a row matching more than a task holds is cut by the built positions', async () => {
    const r = await same('SELECT h.hid, b.bid FROM hv h JOIN bl b ON h.hx > b.bval ORDER BY h.hid, b.bid', {
      memoryLimit: '1MB',
      spillDir: tmpDir('sj-range-spill-'),
    });
    const j = r.stats.joins[0];
    expect(j.targetBytes).toBe(256 * 1024);
    const tasks = r.stats.tasks.filter((t) => t.stage === j.id);
    expect(tasks.length).toBe(j.tasks);
    // 3 rows match all 10,000 built rows: each of them in pieces of at most a task's pairs (the rows without a
    // match in no task)
    expect(j.tasks).toBeGreaterThanOrEqual(6);
    expect(tasks.reduce((a, t) => a + t.outputRows, 0)).toBe(30000);
    expect(Math.max(...tasks.map((t) => t.outputRows))).toBeLessThan(10000);
  });

  it('the interval join of 20,000 events is cut into tasks by rows under a tiny budget, spilling', async () => {
    const r = await same(
      'SELECT a.id, b.sid FROM ev a JOIN se b ON a.ts >= b.lo AND a.ts < b.hi ORDER BY a.id, b.sid',
      {
        memoryLimit: 1,
        spillDir: tmpDir('sj-range-spill-'),
      },
    );
    expect(r.stats.joins[0].tasks).toBeGreaterThanOrEqual(4);
    expect(r.stats.spilledBytes).toBeGreaterThan(0);
  });
});

describe('a plan and --explain', () => {
  it("a plan's keyless join with a filter of column comparisons above it runs as a range join", async () => {
    const plan = {
      version: 1,
      sources: { ev: { parquet: file('ev') }, se: { parquet: file('se') } },
      query: {
        op: 'aggregate',
        groupBy: [],
        aggregates: [
          { fn: 'count', as: 'n' },
          { fn: 'sum', column: 'id', as: 's' },
        ],
        input: {
          op: 'filter',
          where: {
            and: [
              { left: { column: 'lo' }, cmp: '<=', right: { column: 'ts' } },
              { left: { column: 'ts' }, cmp: '<=', right: { column: 'hi' } },
            ],
          },
          input: {
            op: 'join',
            type: 'inner',
            on: [],
            left: { op: 'scan', source: 'ev', columns: ['id', 'ts'] },
            right: { op: 'scan', source: 'se', columns: ['lo', 'hi'] },
          },
        },
      },
    };
    const r = await runPlan(plan, { workers: 2, inThreadBytes: 0, writeOutput: false });
    expect(oursOf(r)).toEqual(
      text(await duckOf('SELECT count(*), sum(a.id) FROM ev a JOIN se b ON a.ts BETWEEN b.lo AND b.hi')),
    );
    expect(strategies(r)).toEqual(['range']);
  });

  it('--explain names the strategy; --explain --analyze and the statistics say why', async () => {
    const q = 'SELECT count(*) AS n FROM ev a JOIN se b ON a.ts >= b.lo AND a.ts < b.hi';
    const text = explainPlan(await loadPlan(await compileSql(q, { sources })));
    expect(text).toMatch(/join-1: inner range join on ts >= lo and ts < hi/);
    expect(text).toMatch(/expected strategy: range/);
    expect(text).not.toMatch(/cross join/);
    const args = ['--source', `ev=${file('ev')}`, '--source', `se=${file('se')}`, '--explain', '--analyze', 'sql', q];
    const r = cli(args);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/join-1: strategy range: right side \(\d+ rows, .*\) sorted on its bound once/);
    expect(r.stdout).toMatch(
      /range join on ts >= lo and ts < hi: the smaller side \(right\) sorted on its lower bound/,
    );
    // not a range join: no comparison between the sides
    const cross = explainPlan(
      await loadPlan(await compileSql('SELECT count(*) FROM ev a, se b WHERE a.ts + b.lo = 7', { sources })),
    );
    expect(cross).toMatch(/cross join/);
  });
});

describe('the kernel (kernels/range-join.ts)', () => {
  /** Keys with many ties: integers below `span`, a fraction of them halves. */
  const keys = (n: number, span: number, seed: number) => {
    let x = seed;
    const next = () => (x = (x * 1103515245 + 12345) % 2147483648) / 2147483648;
    return Float64Array.from({ length: n }, () => Math.floor(next() * span) + (next() < 0.2 ? 0.5 : 0));
  };
  const holds = (strict: boolean, lo: number, hi: number) => (strict ? lo < hi : lo <= hi);
  /** Does built position j match probing row i (the shape's meaning, written out)? */
  const matches = (
    s: RangeShape,
    a: Float64Array,
    b: Float64Array,
    x: Float64Array,
    y: Float64Array,
    i: number,
    j: number,
  ) => {
    switch (s.kind) {
      case 'above':
        return holds(s.strict, x[i], a[j]);
      case 'below':
        return holds(s.strict, a[j], x[i]);
      case 'around':
        return holds(s.loStrict, x[i], a[j]) && holds(s.hiStrict, a[j], y[i]);
      case 'within':
        return holds(s.loStrict, a[j], x[i]) && holds(s.hiStrict, x[i], b[j]);
    }
  };
  const shapes: RangeShape[] = [
    ...[true, false].flatMap((strict) => [{ kind: 'above', strict } as const, { kind: 'below', strict } as const]),
    ...[true, false].flatMap((loStrict) =>
      [true, false].flatMap((hiStrict) => [
        { kind: 'around', loStrict, hiStrict } as const,
        { kind: 'within', loStrict, hiStrict } as const,
      ]),
    ),
  ];

  it.each(shapes.map((s) => [JSON.stringify(s), s]))('%s: every pair once over two windows; counts agree', (_, s) => {
    const m = 300,
      n = 200;
    const raw = keys(m, 100, 7);
    // infinite keys (a NaN's) at the ends of the sorted keys
    raw[0] = -Infinity;
    raw[1] = Infinity;
    const len = keys(m, 30, 11);
    // built intervals non-empty (the coordinator drops the empty ones), sorted by their lower bound
    const keep = [...raw.keys()].filter((j) =>
      s.kind !== 'within' ? true : holds(s.loStrict || s.hiStrict, raw[j], raw[j] + len[j] - 2),
    );
    const ka = Float64Array.from(keep, (j) => raw[j]);
    const order = sortedOrder(ka);
    const a = Float64Array.from(order, (o) => ka[o]);
    const b = Float64Array.from(order, (o) => ka[o] + len[keep[o]] - 2);
    const x = keys(n, 110, 13),
      y = Float64Array.from(x, (v, i) => v + (i % 25));
    const valid = Uint8Array.from(x, (_, i) => (i % 17 === 3 ? 0 : 1));
    const built = s.kind === 'within' ? { a, b } : { a };
    x[3] = Infinity;
    x[4] = -Infinity;
    const probe = { x, y, valid };
    const got: string[] = [];
    const pi = new Int32Array(64),
      bi = new Int32Array(64);
    const out = {
      probe: pi,
      built: bi,
      flush: (k: number) => {
        for (let t = 0; t < k; t++) got.push(`${pi[t]}:${bi[t]}`);
      },
    };
    // two windows of the built positions give the pairs of the whole
    const tree = s.kind === 'within' ? withinIndex(b) : undefined;
    const half = a.length >> 1;
    rangePairs(s, built, probe, 0, n, 0, half, out, tree);
    rangePairs(s, built, probe, 0, n, half, a.length, out, tree);
    const want: string[] = [];
    for (let i = 0; i < n; i++)
      for (let j = 0; j < a.length; j++) if (valid[i] && matches(s, a, b, x, y, i, j)) want.push(`${i}:${j}`);
    expect(got.sort()).toEqual(want.sort());
    expect(want.length).toBeGreaterThan(0);
    const counts = matchCounts(s, built, probe, Float64Array.from(b).sort());
    const per = new Float64Array(n);
    for (const w of want) per[Number(w.split(':')[0])]++;
    expect([...counts]).toEqual([...per]);
  });
});
