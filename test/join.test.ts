// Every join type against DuckDB: integer, mixed-width, string and
// multi-column keys, null keys on both sides, several files, 1 and many
// workers and partitions.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { duckRows, expectSame, ourRows, sorted, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-join-');
const L1 = path.join(dir, 'left-1.parquet'),
  L2 = path.join(dir, 'left-2.parquet'),
  R = path.join(dir, 'right.parquet');
const LEFT = `read_parquet(['${L1}', '${L2}'])`,
  RIGHT = `read_parquet('${R}')`;

beforeAll(async () => {
  const left = (lo: number, hi: number) => `
    SELECT i::BIGINT AS id,
      CASE WHEN i % 37 = 0 THEN NULL ELSE (i % 50)::BIGINT END AS k,
      CASE WHEN i % 41 = 0 THEN NULL ELSE 's' || (i % 30) END AS s,
      (i % 3)::INTEGER AS k2,
      CASE WHEN i % 5 = 0 THEN NULL ELSE (i * 0.5)::DOUBLE END AS v
    FROM range(${lo}, ${hi}) t(i)`;
  await writeParquet(L1, left(0, 1200), 250);
  await writeParquet(L2, left(1200, 2000), 250);
  await writeParquet(
    R,
    `
    SELECT CASE WHEN i % 29 = 0 THEN NULL ELSE (i % 70)::INTEGER END AS k,
      CASE WHEN i % 31 = 0 THEN NULL ELSE 's' || (i % 45) END AS s,
      (i % 4)::SMALLINT AS k2,
      i::BIGINT AS w
    FROM range(0, 300) t(i)`,
    100,
  );
});

const plan = (type: string, on: [string, string][]) => ({
  version: 1,
  sources: { l: { parquet: [L1, L2] }, r: { parquet: R } },
  query: { op: 'join', type, on, left: { op: 'scan', source: 'l' }, right: { op: 'scan', source: 'r' } },
});

function sqlFor(type: string, on: [string, string][]): string {
  const cond = on.map(([a, b]) => `l.${a} = r.${b}`).join(' AND ');
  if (type === 'semi') return `SELECT l.* FROM ${LEFT} l WHERE EXISTS (SELECT 1 FROM ${RIGHT} r WHERE ${cond})`;
  if (type === 'anti') return `SELECT l.* FROM ${LEFT} l WHERE NOT EXISTS (SELECT 1 FROM ${RIGHT} r WHERE ${cond})`;
  const kw = { inner: 'INNER', left: 'LEFT', right: 'RIGHT', full: 'FULL OUTER' }[type];
  return `SELECT l.*, r.* FROM ${LEFT} l ${kw} JOIN ${RIGHT} r ON ${cond}`;
}

const TYPES = ['inner', 'left', 'right', 'full', 'semi', 'anti'];
const KEYS: [string, [string, string][]][] = [
  ['int64 with int32 keys', [['k', 'k']]],
  ['string keys', [['s', 's']]],
  [
    'two-column keys (int32 with int16)',
    [
      ['k', 'k'],
      ['k2', 'k2'],
    ],
  ],
];

describe.each(KEYS)('%s', (_name, on) => {
  it.each(TYPES)('%s join matches DuckDB, shuffled and broadcast', async (type) => {
    const rows = await expectSame(plan(type, on), sqlFor(type, on), { workers: 2, partitions: 7, broadcastBytes: 0 });
    expect(rows.length).toBeGreaterThan(0);
    // the default threshold broadcasts a side of these small files wherever the join type allows one
    await expectSame(plan(type, on), sqlFor(type, on), { workers: 2 });
  });
});

describe('parallelism does not change the answer', () => {
  it.each(TYPES)('%s join: 1 worker x 1 partition equals 2 workers x 16 partitions', async (type) => {
    const on: [string, string][] = [['k', 'k']];
    const a = await ourRows(plan(type, on), { workers: 1, partitions: 1, broadcastBytes: 0 });
    const b = await ourRows(plan(type, on), { workers: 2, partitions: 16, broadcastBytes: 0 });
    expect(sorted(a)).toEqual(sorted(b));
    expect(sorted(a)).toEqual(sorted(await duckRows(sqlFor(type, on))));
  });
});

describe('null keys', () => {
  it.each([0, undefined])(
    'never match, yet outer and anti joins keep their rows (broadcastBytes %s)',
    async (broadcastBytes) => {
      const full = await ourRows(plan('full', [['k', 'k']]), { workers: 2, partitions: 5, broadcastBytes });
      const leftNulls = full.filter((r) => r[1] === null && r[0] !== null);
      const rightNulls = full.filter((r) => r[0] === null && r[5] === null);
      expect(leftNulls.every((r) => r[5] === null && r[8] === null)).toBe(true);
      expect(leftNulls.length).toBe(55); // ids 0..1999 divisible by 37
      expect(rightNulls.length).toBe(11); // rows 0..299 divisible by 29
      const anti = await ourRows(plan('anti', [['k', 'k']]), { workers: 2, partitions: 5, broadcastBytes });
      expect(anti.filter((r) => r[1] === null).length).toBe(55);
      const inner = await ourRows(plan('inner', [['k', 'k']]), { workers: 2, partitions: 5, broadcastBytes });
      expect(inner.some((r) => r[1] === null)).toBe(false);
    },
  );
});

describe('column naming', () => {
  it('suffixes taken right names with _right, then _right2', async () => {
    const { runPlan } = await import('../dist/index.js');
    const r = await runPlan(
      {
        version: 1,
        sources: { l: { parquet: [L1, L2] }, r: { parquet: R } },
        query: {
          op: 'join',
          type: 'inner',
          on: [['k', 'k']],
          left: {
            op: 'project',
            input: { op: 'scan', source: 'l' },
            columns: ['k', 's', { name: 's_right', column: 'id' }],
          },
          right: { op: 'scan', source: 'r', columns: ['k', 's'] },
        },
      },
      { workers: 1 },
    );
    expect(r.schema.map((f) => f.name)).toEqual(['k', 's', 's_right', 'k_right', 's_right2']);
  });
});

describe('empty inputs', () => {
  it.each(TYPES)('%s join with an empty right side', async (type) => {
    const p = plan(type, [['k', 'k']]);
    (p.query as any).right = {
      op: 'filter',
      input: { op: 'scan', source: 'r' },
      where: { column: 'w', cmp: '<', value: 0 },
    };
    const q = sqlFor(type, [['k', 'k']]).replaceAll(`${RIGHT} r`, `(SELECT * FROM ${RIGHT} WHERE w < 0) r`);
    await expectSame(p, q, { workers: 2, partitions: 3, broadcastBytes: 0 });
    await expectSame(p, q, { workers: 2 });
  });
});
