// Row-range splits (skew/slices.ts, skew/cut.ts) end to end on small data: a
// hot key whose rows all sit in one row group of a sorted file (one map task)
// is cut inside that map output, by map ranges and by the hot-key grid, for
// every join type; the answer is DuckDB's and no task of a split partition
// holds more than 1.25 x the target the stats report.
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type RunResult, runPlan } from '../dist/index.js';
import { expectFileMatchesQuery, sql as duckSql, tmpDir } from './helpers.js';

const dir = tmpDir('sj-rowsplit-');
const file = (n: string) => path.join(dir, n);
const HOT_ROWS = 2500;

beforeAll(async () => {
  // Sorted by key: key 0's 2,500 rows open the file, all in its first row group of 3,000 rows;
  // 3,500 more rows over keys 1..500, a string column (its offsets are rebased in a row-range view).
  await duckSql(`COPY (SELECT i AS id, CASE WHEN i < ${HOT_ROWS} THEN 0 ELSE 1 + (hash(i) % 500) END::BIGINT AS k, 'l' || (i % 13) AS s
    FROM range(0, 6000) t(i) ORDER BY k, id) TO '${file('big.parquet')}' (FORMAT parquet, ROW_GROUP_SIZE 3000)`);
  // The same rows in random order: key 0's rows interleave with the others in every map output.
  await duckSql(
    `COPY (SELECT * FROM read_parquet('${file('big.parquet')}') ORDER BY hash(id + 17)) TO '${file('shuffled.parquet')}' (FORMAT parquet, ROW_GROUP_SIZE 3000)`,
  );
  // The other side: keys 1..500 once, key 0 eight times (hot on both sides: more output), keys 600..630 only here, a few nulls.
  await duckSql(`COPY (
    SELECT i::BIGINT AS k, i * 3 AS w FROM range(1, 501) t(i)
    UNION ALL SELECT 0::BIGINT, 7000 + i FROM range(0, 8) t(i)
    UNION ALL SELECT i::BIGINT, i FROM range(600, 631) t(i)
    UNION ALL SELECT NULL::BIGINT, i FROM range(0, 20) t(i)) TO '${file('small.parquet')}' (FORMAT parquet, ROW_GROUP_SIZE 200)`);
});

const TYPES = ['inner', 'left', 'right', 'full', 'semi', 'anti'] as const;
type JoinType = (typeof TYPES)[number];

/** The skewed file (sorted: big; in random order: shuffled) on the side the join type lets map ranges cut (the right side of a right join). */
function plan(type: JoinType, bigRight: boolean, big = 'big') {
  const [l, r] = bigRight ? ['small', big] : [big, 'small'];
  return {
    version: 1,
    sources: { l: { parquet: file(`${l}.parquet`) }, r: { parquet: file(`${r}.parquet`) } },
    query: {
      op: 'join',
      type,
      on: [['k', 'k']],
      left: { op: 'scan', source: 'l' },
      right: { op: 'scan', source: 'r' },
    },
  };
}
function query(type: JoinType, bigRight: boolean, big = 'big') {
  const [l, r] = bigRight ? ['small', big] : [big, 'small'];
  const L = `read_parquet('${file(`${l}.parquet`)}')`,
    R = `read_parquet('${file(`${r}.parquet`)}')`;
  if (type === 'semi') return `SELECT * FROM ${L} l WHERE EXISTS (SELECT 1 FROM ${R} r WHERE l.k = r.k)`;
  if (type === 'anti') return `SELECT * FROM ${L} l WHERE NOT EXISTS (SELECT 1 FROM ${R} r WHERE l.k = r.k)`;
  return `SELECT l.*, r.* FROM ${L} l ${{ inner: 'INNER', left: 'LEFT', right: 'RIGHT', full: 'FULL OUTER' }[type]} JOIN ${R} r ON l.k = r.k`;
}

/** Small targets: the non-skewed partitions hold about 6 KB; the hot one about 60 KB on the big side. */
const options = (strategy: 'partition' | 'key' | 'auto') => ({
  workers: 2,
  partitions: 8,
  broadcastBytes: 0,
  inThreadBytes: 0,
  skew: { enabled: true, strategy, factor: 2, thresholdBytes: 1, advisoryPartitionBytes: 12 * 1024 },
});

/** Run with an output file, check it against DuckDB, return the run (its stats). */
async function checked(
  type: JoinType,
  bigRight: boolean,
  strategy: 'partition' | 'key' | 'auto',
  more: object = {},
  big = 'big',
): Promise<RunResult> {
  const out = file(`out-${type}-${strategy}-${Math.random().toString(36).slice(2)}.parquet`);
  const r = await runPlan({ ...plan(type, bigRight, big), output: { path: out } }, { ...options(strategy), ...more });
  expect(await expectFileMatchesQuery(out, query(type, bigRight, big))).toBe(r.numRows);
  fs.rmSync(out);
  return r;
}

/** Reduce and split tasks of the join's split partitions; the rest of a hot-key split only where the join type lets it be cut. */
function splitTasks(r: RunResult, type: JoinType) {
  const restCut = type !== 'full';
  return r.stats.tasks.filter(
    (t) =>
      t.stage === 'join-1' &&
      t.split !== undefined &&
      (t.kind === 'split' || t.split.startsWith('map-range') || t.split.startsWith('hot-key')) &&
      (restCut || !t.split.startsWith('hot-key rest')),
  );
}

function expectBalanced(r: RunResult, type: JoinType) {
  const target = r.stats.joins[0].targetBytes;
  const tasks = splitTasks(r, type);
  expect(tasks.length).toBeGreaterThan(2);
  for (const t of tasks) {
    expect(
      t.inputBytes,
      `${t.kind} ${t.split}: ${t.inputBytes} bytes against a target of ${target}`,
    ).toBeLessThanOrEqual(1.25 * target);
  }
  // no task reads all the hot key's rows at once
  expect(Math.max(...tasks.map((t) => t.rows))).toBeLessThan(HOT_ROWS / 2);
}

describe.each(TYPES)('%s join, the hot key in one map task', (type) => {
  // map ranges cut the side the join type may split: the big side goes there (a full join has none)
  const bigRight = type === 'right';
  it('map ranges cut inside the one map output (a full join: no side may be cut)', async () => {
    const r = await checked(type, bigRight, 'partition');
    if (type === 'full') {
      expect(r.stats.joins[0].splits.map((s) => s.reason)).toContain('a full join splits no side by map ranges');
      return;
    }
    expect(r.stats.joins[0].splits.map((s) => s.method)).toContain('map-range');
    const side = bigRight ? 'right' : 'left';
    // pieces of map output 0 of the big side (row group 0 holds key 0)
    expect(r.stats.tasks.some((t) => new RegExp(`${side} t0:\\d+-\\d+`).test(t.split ?? ''))).toBe(true);
    expectBalanced(r, type);
  });
  it('auto: balanced whichever split it takes (key 0 is hot on both sides: output skew asks for its grid)', async () => {
    const r = await checked(type, bigRight, 'auto');
    expect(r.stats.joins[0].splits.filter((s) => s.method !== 'none').length).toBeGreaterThan(0);
    expectBalanced(r, type);
  });
  it.each([
    ['big', 'located'],
    ['shuffled', 'scattered'],
  ] as const)('the hot-key grid cuts the key from its rows found (%s input: rows %s)', async (big, mode) => {
    {
      const r = await checked(type, bigRight, 'key', {}, big);
      const hot = r.stats.joins[0].splits.filter((s) => s.method === 'hot-key');
      // sorted: the split tasks find few runs of key 0 and the grid reads them in place; shuffled: they cut the rows out
      const key0 = hot.find((s) => s.keys!.some((k) => k.key[0] === '0'))!;
      expect(key0.cut![mode]).toBeGreaterThan(0);
      expect(hot.flatMap((s) => s.keys!.map((k) => k.key[0]))).toContain('0');
      const pieces = r.stats.tasks.filter((t) => t.split?.startsWith('hot-key 0 piece'));
      expect(pieces.length).toBeGreaterThan(2);
      // joins[].splits counts the tasks that ran
      expect(hot.reduce((a, s) => a + s.tasks, 0)).toBe(
        r.stats.tasks.filter((t) => t.kind === 'reduce' && t.split?.startsWith('hot-key')).length,
      );
      // semi and anti joins: every right row of the key in one piece
      if (type === 'semi' || type === 'anti') expect(pieces.every((t) => t.split!.endsWith(',0'))).toBe(true);
      expectBalanced(r, type);
    }
  });
});

describe('spilled map outputs', () => {
  it.each(['partition', 'key'] as const)(
    'row ranges of spilled blocks are read back by the tasks (%s)',
    async (strategy) => {
      const spillDir = tmpDir('sj-rowsplit-spill-');
      const r = await checked('left', false, strategy, { memoryLimit: 1, spillDir });
      expect(r.stats.spilledBytes).toBeGreaterThan(0);
      // spilled blocks are cut out once by the split tasks, not read back by every task of a grid
      for (const s of r.stats.joins[0].splits) if (s.method === 'hot-key') expect(s.cut!.located).toBe(0);
      const cut = r.stats.tasks.filter((t) => /(left|right) (cut \d+\/\d+ )?t0:\d+-\d+/.test(t.split ?? ''));
      expect(cut.length).toBeGreaterThan(1);
      expect(cut.every((t) => t.spillReadBytes > 0)).toBe(true);
      expect(fs.readdirSync(spillDir)).toEqual([]); // nothing left behind
    },
  );
});
