// Broadcast probes that look each probing row's group up by its key
// (physical/join/keyed.ts): the key-group array narrowed to bytes or 16-bit words at
// the group counts where one value no longer fits, the lookup of null keys,
// keys outside the span and keys no row has, and whole runs against DuckDB
// at those group counts, inner and left (and right, inner with the table on
// the left), with nulls in keys, group values and aggregated columns; where
// it does not serve (a key twice, min of a table column), pairs still do.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { keyGroups, lookupGroups } from '../dist/physical/join/keyed.js';
import { buildKeys } from '../dist/kernels/keys.js';
import { directTable } from '../dist/kernels/table.js';
import type { Batch } from '../dist/kernels/column.js';
import { arrowTyped, duckRows, duckTable, expectTypedEqual, ourRun, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-keyed-');
const F = path.join(dir, 'fact.parquet'),
  FACT = `read_parquet('${F}')`;
const dimFile = (groups: number) => path.join(dir, `dim${groups}.parquet`);
const BOUNDARIES = [255, 256, 257, 65535, 65536, 65537];

const int64Batch = (keys: (number | null)[]): Batch => ({
  length: keys.length,
  columns: [
    {
      type: { id: 'int64' },
      length: keys.length,
      values: BigInt64Array.from(keys, (k) => BigInt(k ?? 0)),
      valid: keys.some((k) => k === null) ? Uint8Array.from(keys, (k) => (k === null ? 0 : 1)) : null,
    },
  ],
});
const keysOf = (keys: (number | null)[]) => buildKeys(int64Batch(keys), [0], [{ kind: 'int' }], undefined, false);

describe('key groups (pure)', () => {
  it('bytes up to 255 groups, 16-bit words up to 65535, else 32-bit; nGroups where no row has the key', () => {
    const direct = Int32Array.from([0, -1, 1, 2]);
    const gid = Int32Array.from([7, 0, 7]);
    const kinds = BOUNDARIES.map((g) => keyGroups(direct, gid, g).constructor.name);
    expect(kinds).toEqual(['Uint8Array', 'Uint16Array', 'Uint16Array', 'Uint16Array', 'Int32Array', 'Int32Array']);
    for (const g of BOUNDARIES) expect([...keyGroups(direct, gid, g)]).toEqual([7, g, 0, 7]);
    expect([...keyGroups(direct, null, 1)]).toEqual([0, 1, 0, 0]); // no group columns: one group
  });
  it('looks keys up: null keys, keys outside the span and keys without a row take `miss`', () => {
    // table keys 10, 12, 13 (11 has no row): rows 0..2 in groups 5, 6, 5 of 300 (16-bit words)
    const t = directTable(keysOf([10, 12, 13]))!;
    expect(t.direct).not.toBeNull();
    const kg = keyGroups(t.direct!, Int32Array.from([5, 6, 5]), 300);
    const probe = keysOf([13, null, 11, 9, 14, 10, 12, -5, 2 ** 40]);
    const out = new Int32Array(9);
    lookupGroups(kg, 300, t.base, probe, 0, 9, 301, out);
    expect([...out]).toEqual([5, 301, 301, 301, 301, 5, 6, 301, 301]);
    lookupGroups(kg, 300, t.base, probe, 5, 7, 300, out); // a range, written from 0
    expect([...out.subarray(0, 2)]).toEqual([5, 6]);
    // a span at the edges of the 32-bit integers, and one beyond them (the float path): keys whose low word alone would match do not
    for (const [keys, probes, want] of [
      [
        [-(2 ** 31), -(2 ** 31) + 2],
        [-(2 ** 31), 2 ** 31, -(2 ** 31) + 2, 2 ** 32 - 2 ** 31, -(2 ** 31) + 1],
        [0, 9, 1, 9, 9],
      ],
      [
        [2 ** 31 - 3, 2 ** 31 - 1],
        [2 ** 31 - 1, -1, 2 ** 31 - 3, 2 ** 31 - 3 - 2 ** 32, 2 ** 31],
        [1, 9, 0, 9, 9],
      ],
      [
        [2 ** 31 - 1, 2 ** 31 + 1],
        [2 ** 31 + 1, -(2 ** 31) + 1, 2 ** 31 - 1, 2 ** 31],
        [1, 9, 0, 9],
      ],
      [
        [-5, 3],
        [-5, 3, 2 ** 32 - 5, 2 ** 32 + 3, -(2 ** 32) - 5, -4],
        [0, 1, 9, 9, 9, 9],
      ],
    ] as const) {
      const tt = directTable(keysOf([...keys]))!;
      const g = keyGroups(tt.direct!, Int32Array.from([0, 1]), 2);
      const o = new Int32Array(probes.length);
      lookupGroups(g, 2, tt.base, keysOf([...probes]), 0, probes.length, 9, o);
      expect([...o], String(keys)).toEqual([...want]);
    }
  });
});

describe('broadcast probes grouped by key, against DuckDB', () => {
  beforeAll(async () => {
    // fact: keys over -40..131,559 (outside every dimension's span at both ends, odd keys without a row), some null;
    // amounts and quantities with nulls
    await writeParquet(
      F,
      `SELECT CASE WHEN i % 13 = 0 THEN NULL ELSE (i * 7919) % 131600 - 40 END::BIGINT AS k,
      CASE WHEN i % 17 = 0 THEN NULL ELSE (i % 1000) - 300 END::BIGINT AS qty,
      CASE WHEN i % 19 = 0 THEN NULL ELSE (i % 977) * 0.5 END::DOUBLE AS amount FROM range(0, 100000) t(i)`,
      25000,
    );
    // dimensions: even keys 0, 2, 4, … (unique: a direct table), `groups` groups by g counting the null group
    for (const groups of BOUNDARIES) {
      await writeParquet(
        dimFile(groups),
        `SELECT (i * 2)::BIGINT AS k,
        CASE WHEN i >= ${groups - 1} AND i % 97 = 5 THEN NULL ELSE i % ${groups - 1} END::INTEGER AS g, i::BIGINT AS w
        FROM range(0, ${Math.max(40000, groups + 200)}) t(i)`,
        50000,
      );
    }
  });
  const plan = (dim: string, join: object, groupBy: string[], aggregates: object[]) => ({
    version: 1,
    sources: { f: { parquet: F }, d: { parquet: dim } },
    query: { op: 'aggregate', groupBy, aggregates, input: join },
  });
  const scanF = { op: 'scan', source: 'f' },
    scanD = { op: 'scan', source: 'd' };
  const AGGS = [
    { fn: 'count', as: 'n' },
    { fn: 'count', column: 'qty', as: 'nq' },
    { fn: 'sum', column: 'qty', as: 'sq' },
    { fn: 'sum', column: 'amount', as: 'sa' },
    { fn: 'avg', column: 'amount', as: 'aa' },
  ];
  const SEL = 'count(*), count(qty), sum(qty), sum(amount), avg(amount)';
  /** Runs the plan (on the pool, or on the calling thread), compares with DuckDB, returns each fused task's lookup. */
  async function lookups(p: object, sql: string, inThreadBytes: number | string = 0) {
    const r = await ourRun(p, { workers: 2, inThreadBytes });
    const ours = arrowTyped(r.toArrow()),
      theirs = await duckTable(sql);
    expectTypedEqual({ ...ours, rows: [] }, { ...theirs, rows: [] });
    // exact: amounts are halves, so their sums and averages are exact in float64 whatever the order; each row
    // rendered once (the helpers' sort renders rows per comparison: seconds at 64K rows)
    const text = (rows: unknown[][]) =>
      rows.map((x) => JSON.stringify(x, (_, v) => (typeof v === 'bigint' ? String(v) : v))).sort();
    expect(text(ours.rows)).toEqual(text(theirs.rows));
    expect(r.stats.joins[0].strategy).toBe('broadcast');
    const ls = r.stats.tasks.filter((t) => t.kind === 'map' && t.join).map((t) => t.join!.lookup);
    expect(ls.length, sql).toBeGreaterThan(0);
    return new Set(ls);
  }

  it.each(BOUNDARIES)('%i groups of the table: inner, left, right and the table on the left', async (groups) => {
    const D = dimFile(groups),
      DIM = `read_parquet('${D}')`;
    const cases: [object, string][] = [
      [
        { op: 'join', type: 'inner', on: [['k', 'k']], left: scanF, right: scanD },
        `FROM ${FACT} f JOIN ${DIM} d ON f.k = d.k`,
      ],
      [
        { op: 'join', type: 'left', on: [['k', 'k']], left: scanF, right: scanD },
        `FROM ${FACT} f LEFT JOIN ${DIM} d ON f.k = d.k`,
      ],
      [
        { op: 'join', type: 'right', on: [['k', 'k']], left: scanD, right: scanF },
        `FROM ${DIM} d RIGHT JOIN ${FACT} f ON f.k = d.k`,
      ],
      [
        { op: 'join', type: 'inner', on: [['k', 'k']], left: scanD, right: scanF },
        `FROM ${DIM} d JOIN ${FACT} f ON f.k = d.k`,
      ],
    ];
    // on the pool and on the calling thread, by turns; at 64K groups (results of 64K rows, slow to compare) a left
    // or a right join, by turns (the table is bigger than the fact's 100K rows there: only an outer join's inner
    // side is sure to be broadcast)
    for (const [i, [join, from]] of (groups > 1000 ? [cases[1 + (groups % 2)]] : cases).entries()) {
      expect(
        await lookups(plan(D, join, ['g'], AGGS), `SELECT g, ${SEL} ${from} GROUP BY g`, (i + groups) % 2 ? '1GB' : 0),
        from,
      ).toEqual(new Set(['key-groups']));
    }
  });

  it('the number of groups is the one at the boundary (the null group counted)', async () => {
    for (const groups of BOUNDARIES) {
      const [[n]] = await duckRows(`SELECT count(*) FROM (SELECT DISTINCT g FROM read_parquet('${dimFile(groups)}'))`);
      expect(Number(n)).toBe(groups);
    }
  });

  it('no group columns, inner and left', async () => {
    const D = dimFile(256),
      DIM = `read_parquet('${D}')`;
    for (const [type, kw] of [
      ['inner', 'JOIN'],
      ['left', 'LEFT JOIN'],
    ]) {
      const p = plan(D, { op: 'join', type, on: [['k', 'k']], left: scanF, right: scanD }, [], AGGS);
      expect(await lookups(p, `SELECT ${SEL} FROM ${FACT} f ${kw} ${DIM} d ON f.k = d.k`)).toEqual(
        new Set(['key-groups']),
      );
    }
  });

  it('pairs where keys do not serve: a key twice in the table, min of a table column', async () => {
    const D = dimFile(257),
      DIM = `read_parquet('${D}')`;
    const twice = path.join(dir, 'twice.parquet');
    await writeParquet(twice, `SELECT * FROM ${DIM} UNION ALL SELECT 4::BIGINT, 3, 9`, 50000);
    const join = { op: 'join', type: 'inner', on: [['k', 'k']], left: scanF, right: scanD };
    const p1 = plan(twice, join, ['g'], AGGS);
    expect(
      await lookups(p1, `SELECT g, ${SEL} FROM ${FACT} f JOIN read_parquet('${twice}') d ON f.k = d.k GROUP BY g`),
    ).toEqual(new Set(['pairs']));
    const p2 = plan(D, join, ['g'], [...AGGS, { fn: 'min', column: 'w', as: 'mw' }]);
    expect(await lookups(p2, `SELECT g, ${SEL}, min(w) FROM ${FACT} f JOIN ${DIM} d ON f.k = d.k GROUP BY g`)).toEqual(
      new Set(['pairs']),
    );
  });
});
