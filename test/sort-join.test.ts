// A sort above a join: a shuffle join's reduce tasks cut their output into the
// sort's ranges themselves (stats: the range shuffle `partitionedBy: 'join'`),
// for every join type, with a hot sort value, under budgets small enough to
// spill, with skew splits; where the join is broadcast the range
// tasks do it (`'tasks'`). Each written file holds DuckDB's rows in DuckDB's
// order, and no spill file is left.
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type RunOptions, type RunResult, runPlan } from '../dist/index.js';
import { duckRows, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-sort-join-');
const file = (n: string) => path.join(dir, n);
const spillDir = file('spill');
const SHUFFLE = { broadcastBytes: 0, inThreadBytes: 0 } as const;

beforeAll(async () => {
  // Left: key 7 carries 40% of the rows, 10% null keys, the rest over 0..299; v has a hot value (0) and nulls.
  await writeParquet(
    file('left.parquet'),
    `SELECT i::BIGINT AS id,
      CASE WHEN i % 10 = 3 THEN NULL WHEN i % 5 < 2 THEN 7 ELSE hash(i) % 300 END::BIGINT AS k,
      CASE WHEN i % 17 = 0 THEN NULL WHEN i % 3 = 0 THEN 0 ELSE (hash(i * 5) % 1000)::DOUBLE / 10 END AS v,
      'l' || (i % 13) AS s FROM range(0, 4000) t(i)`,
    500,
  );
  // Right: key 7 hot too (few rows, so the hot key's output stays small), keys 400.. found only here.
  await writeParquet(
    file('right.parquet'),
    `SELECT CASE WHEN i % 12 = 5 THEN NULL WHEN i % 40 = 0 THEN 7 WHEN i % 10 = 1 THEN 400 + i % 21
      ELSE hash(i * 7) % 250 END::BIGINT AS k, (i * 3)::BIGINT AS w FROM range(0, 1200) t(i)`,
    300,
  );
});

const L = `read_parquet('${file('left.parquet')}')`,
  R = `read_parquet('${file('right.parquet')}')`;
const sources = { l: { parquet: file('left.parquet') }, r: { parquet: file('right.parquet') } };
const join = (type: string) => ({
  op: 'join',
  type,
  on: [['k', 'k']],
  left: { op: 'scan', source: 'l' },
  right: { op: 'scan', source: 'r' },
});
const joinSql = (type: string) => {
  if (type === 'semi') return `SELECT * FROM ${L} l WHERE EXISTS (SELECT 1 FROM ${R} r WHERE l.k = r.k)`;
  if (type === 'anti') return `SELECT * FROM ${L} l WHERE NOT EXISTS (SELECT 1 FROM ${R} r WHERE l.k = r.k)`;
  return `SELECT l.*, r.k AS k_1, r.w FROM ${L} l ${{ inner: 'INNER', left: 'LEFT', right: 'RIGHT', full: 'FULL OUTER' }[type]} JOIN ${R} r ON l.k = r.k`;
};
const leftovers = () => (fs.existsSync(spillDir) ? fs.readdirSync(spillDir) : []);

/** Run the plan to a Parquet file; its rows in file order must be DuckDB's `sql` ordered by `orderBy`, compared on `cols`. */
async function expectOrdered(
  query: object,
  sql: string,
  orderBy: string,
  cols: string[],
  opts: RunOptions,
): Promise<RunResult> {
  const out = file(`sorted-${Math.random().toString(36).slice(2)}.parquet`);
  const r = await runPlan({ version: 1, sources, query, output: { path: out } }, { workers: 2, spillDir, ...opts });
  const on = cols.map((c) => `a.${c} IS DISTINCT FROM b.${c}`).join(' OR ');
  const [[diff, n, m]] = await duckRows(`SELECT count(*) FILTER (WHERE ${on}), count(a.n), count(b.n) FROM
    (SELECT row_number() OVER () AS n, * FROM read_parquet('${out}')) a FULL JOIN (SELECT row_number() OVER (ORDER BY ${orderBy}) AS n, * FROM (${sql})) b ON a.n = b.n`);
  expect(Number(n)).toBeGreaterThan(0);
  expect([Number(diff), Number(n)]).toEqual([0, Number(m)]);
  fs.rmSync(out);
  expect(leftovers()).toEqual([]);
  return r;
}

const rangeShuffle = (r: RunResult) => r.stats.shuffles.find((x) => x.id === 'sort-1.range')!;
const skewed = {
  skew: { enabled: true, strategy: 'key', factor: 2, thresholdBytes: 1, advisoryPartitionBytes: 2048 },
} as const;

describe.each(['inner', 'left', 'right', 'full', 'semi', 'anti'])('sort above a %s join', (type) => {
  const rightCols = type !== 'semi' && type !== 'anti';
  // a total order: w is unique per right row, id per left row
  const by = rightCols
    ? [{ column: 'w', desc: true }, { column: 'id' }]
    : [
        { column: 'k', nulls: 'first' },
        { column: 'id', desc: true },
      ];
  const orderBy = rightCols ? 'w DESC NULLS LAST, id' : 'k NULLS FIRST, id DESC';
  const cols = rightCols ? ['id', 'w', 'v'] : ['id', 'k', 's'];
  // semi and anti joins give few rows: only a 1-byte budget makes them spill
  const budget = rightCols ? '2MB' : 1;
  it(`under a ${budget === 1 ? '1-byte' : budget} budget: the join cuts its output into ranges, spilled, DuckDB's order`, async () => {
    const r = await expectOrdered({ op: 'sort', by, input: join(type) }, joinSql(type), orderBy, cols, {
      memoryLimit: budget,
      partitions: 8,
      ...SHUFFLE,
    });
    expect(rangeShuffle(r).partitionedBy).toBe('join');
    expect(r.stats.spilledBytes).toBeGreaterThan(0);
    expect(
      r.stats.tasks.filter((t) => t.stage === 'sort-1' && t.kind === 'reduce').some((t) => t.spillReadBytes > 0),
    ).toBe(true);
  });
  it('a hot sort value (v = 0, a third of the left rows) with skew splits: dealt over several ranges', async () => {
    const hot = Number((await duckRows(`SELECT count(*) FROM (${joinSql(type)}) WHERE v = 0`))[0][0]);
    const r = await expectOrdered(
      { op: 'sort', by: [{ column: 'v' }], input: join(type) },
      joinSql(type),
      'v NULLS LAST',
      ['v'],
      { memoryLimit: '1MB', partitions: 8, ...SHUFFLE, ...skewed },
    );
    const range = rangeShuffle(r);
    expect(range.partitionedBy).toBe('join');
    expect(range.partitionRows.reduce((a, b) => a + b, 0)).toBe(
      Number((await duckRows(`SELECT count(*) FROM (${joinSql(type)})`))[0][0]),
    );
    expect(Math.max(...range.partitionRows)).toBeLessThan(hot / 2);
  });
});

describe('sort above a join: the other paths', () => {
  it('a sort key computed from both sides, below a filter: the join cuts the ranges', async () => {
    const query = {
      op: 'sort',
      by: [{ column: 'x', desc: true }, { column: 'id' }, { column: 'w' }],
      input: {
        op: 'project',
        columns: [
          'id',
          'w',
          {
            name: 'x',
            expr: { fn: '+', args: [{ column: 'w' }, { fn: '%', args: [{ column: 'id' }, { value: 7 }] }] },
          },
        ],
        input: { op: 'filter', where: { column: 's', cmp: '!=', value: 'l3' }, input: join('full') },
      },
    };
    const sql = `SELECT id, w, w + id % 7 AS x FROM (${joinSql('full')}) WHERE s != 'l3'`;
    const r = await expectOrdered(query, sql, 'x DESC NULLS LAST, id, w', ['id', 'w', 'x'], {
      memoryLimit: '2MB',
      partitions: 8,
      ...SHUFFLE,
    });
    expect(rangeShuffle(r).partitionedBy).toBe('join');
  });
  it('a projection that only chooses columns, between the join and the sort: the join cuts the chosen columns into the ranges', async () => {
    const query = {
      op: 'sort',
      by: [{ column: 'w', desc: true }, { column: 'id' }],
      input: { op: 'project', columns: ['w', 's', 'id'], input: join('inner') },
    };
    const sql = `SELECT w, s, id FROM (${joinSql('inner')})`;
    const r = await expectOrdered(query, sql, 'w DESC, id', ['w', 's', 'id'], {
      memoryLimit: '1MB',
      partitions: 8,
      ...SHUFFLE,
      ...skewed,
    });
    expect(rangeShuffle(r).partitionedBy).toBe('join');
    expect(r.stats.spilledBytes).toBeGreaterThan(0);
  });
  it('sorted by a hot join key the pilots may not see: ranges far larger than planned are cut again', async () => {
    // the hot key 7's partition is split (not a pilot): its rows fall into one range, then recut
    const r = await expectOrdered(
      { op: 'sort', by: [{ column: 'k' }, { column: 'id' }, { column: 'w' }], input: join('inner') },
      joinSql('inner'),
      'k, id, w',
      ['id', 'k', 'w'],
      { memoryLimit: '4MB', partitions: 8, ...SHUFFLE, ...skewed },
    );
    const range = rangeShuffle(r);
    expect(range.partitionedBy).toBe('join');
    expect(range.recutRanges).toBeGreaterThan(0);
    const hot = Number((await duckRows(`SELECT count(*) FROM (${joinSql('inner')}) WHERE k = 7`))[0][0]);
    expect(Math.max(...range.partitionRows)).toBeLessThan(hot / 2);
  });
  it('a broadcast join: its probing tasks return rows and range tasks cut them (the path before)', async () => {
    const r = await expectOrdered(
      { op: 'sort', by: [{ column: 'w', desc: true }, { column: 'id' }], input: join('inner') },
      joinSql('inner'),
      'w DESC, id',
      ['id', 'w'],
      { memoryLimit: '2MB', inThreadBytes: 0 },
    );
    expect(r.stats.joins[0].strategy).toBe('broadcast');
    expect(rangeShuffle(r).partitionedBy).toBe('tasks');
  });
});
