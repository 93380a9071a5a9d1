// The grouping hash table (agg/groups.ts groupWords: keys' words inline in the slots, rows past a cached table's
// groups grouped by pieces of their hash) and the grouping of several few-valued columns (agg/group-ids.ts
// foldFew, short strings read in place): ids against a map of the keys, then aggregates by one and two integer
// keys into many groups, null keys, a hot group and ROLLUP over short strings against DuckDB on the pool, the
// calling thread, spilling under a 64 KB budget and with splits forced.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { groupsOf } from '../dist/agg/group-ids.js';
import { groupRows } from '../dist/agg/groups.js';
import type { Batch, Column } from '../dist/kernels/column.js';
import { buildKeys } from '../dist/kernels/keys.js';
import { type RunOptions, runSql } from '../dist/index.js';
import { arrowTyped, duckTable, expectTypedEqual, tmpDir, writeParquet } from './helpers.js';

let seed = 11;
const rnd = () => {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return seed / 4294967296;
};
const ints = (n: number, f: (i: number) => number, nullEvery = 0, id: 'int32' | 'int64' = 'int32'): Column => {
  const v = Array.from({ length: n }, (_, i) => f(i));
  return {
    type: { id },
    length: n,
    values: id === 'int64' ? BigInt64Array.from(v, BigInt) : Int32Array.from(v),
    valid: nullEvery ? Uint8Array.from(v, (_, i) => (i % nullEvery === 3 ? 0 : 1)) : null,
  };
};
const enc = new TextEncoder(),
  dec = new TextDecoder();
const strings = (vals: string[], nullEvery = 0): Column => {
  const bytes = vals.map((s) => enc.encode(s));
  const offsets = new Int32Array(vals.length + 1);
  bytes.forEach((b, i) => {
    offsets[i + 1] = offsets[i] + b.length;
  });
  const values = new Uint8Array(offsets[vals.length]);
  bytes.forEach((b, i) => values.set(b, offsets[i]));
  const valid = nullEvery ? Uint8Array.from(vals, (_, i) => (i % nullEvery === 5 ? 0 : 1)) : null;
  return { type: { id: 'utf8' }, length: vals.length, values, offsets, valid };
};
const keyOf = (cols: Column[], i: number) =>
  cols
    .map((c) =>
      c.valid && !c.valid[i]
        ? 'null'
        : c.type.id === 'utf8'
          ? `'${dec.decode((c.values as Uint8Array).subarray(c.offsets![i], c.offsets![i + 1]))}'`
          : String(c.values[i]),
    )
    .join('|');

/**
 * Checks groups against a map of the keys: rows with one key have one id, ids are 0..nGroups-1, each group's first
 * row is its key's first row, unselected rows have nGroups. Returns whether ids follow first appearance.
 */
function expectGroups(cols: Column[], g: { gid: Int32Array; nGroups: number; first: Int32Array }, rows: number[]) {
  const ids = new Map<string, number>();
  for (const i of rows) {
    const k = keyOf(cols, i);
    const id = ids.get(k);
    if (id === undefined) {
      ids.set(k, g.gid[i]);
      expect(g.first[g.gid[i]]).toBe(i);
    } else expect(g.gid[i]).toBe(id);
  }
  expect(g.nGroups).toBe(ids.size);
  expect(new Set(ids.values()).size).toBe(ids.size);
  const picked = new Set(rows);
  for (let i = 0; i < g.gid.length; i++) if (!picked.has(i)) expect(g.gid[i]).toBe(g.nGroups);
  return [...ids.values()].every((id, k) => id === k);
}

describe('grouping hash table', () => {
  const n = 300_000;
  const all = Array.from({ length: n }, (_, i) => i);
  const some = all.filter(() => rnd() < 0.4);
  const sel = { idx: Int32Array.from(some), n: some.length };

  it('two 32-bit keys into ~150K groups: past the cached table, grouped by pieces of the hash (ids piece by piece)', () => {
    const cols = [ints(n, () => Math.floor(rnd() * 200_000)), ints(n, (i) => (i * 7) % 3)];
    const b: Batch = { length: n, columns: cols };
    const g = groupsOf(b, [0, 1]);
    expect(g.nGroups).toBeGreaterThan(100_000);
    // ids by pieces do not follow first appearance across pieces (one table would)
    expect(expectGroups(cols, g, all)).toBe(false);
    expectGroups(cols, groupsOf(b, [0, 1], sel), some);
  });

  it('one 32-bit key, rows clustered by it (runs of one key), many groups, and a selection', () => {
    const cols = [ints(n, (i) => Math.floor(i / 3) * 5)];
    const b: Batch = { length: n, columns: cols };
    expectGroups(cols, groupsOf(b, [0]), all);
    expectGroups(cols, groupsOf(b, [0], sel), some);
  });

  it('nullable 64-bit keys (a word of null flags): nulls one group per null pattern, many groups', () => {
    const cols = [ints(n, () => Math.floor(rnd() * 90_000), 7, 'int64'), ints(n, (i) => i % 2, 5, 'int64')];
    const b: Batch = { length: n, columns: cols };
    const g = groupsOf(b, [0, 1]);
    expect(g.nGroups).toBeGreaterThan(50_000);
    expectGroups(cols, g, all);
    expectGroups(cols, groupsOf(b, [0, 1], sel), some);
    // groupRows over keys built by kernels/keys.ts takes the same table (key words as a matrix)
    expectGroups(cols, groupRows(buildKeys(b, [0, 1], [{ kind: 'int' }, { kind: 'int' }]), sel), some);
  });

  it('a hot key among many (a third of the rows): one group, every row of it', () => {
    const cols = [ints(n, (i) => (i % 3 === 0 ? 42 : 100 + Math.floor(rnd() * 100_000)))];
    const g = groupsOf({ length: n, columns: cols }, [0]);
    expectGroups(cols, g, all);
    const hot = g.gid[0];
    let rows = 0;
    for (let i = 0; i < n; i++) if (g.gid[i] === hot) rows++;
    expect(rows).toBe(n / 3);
  });

  it('several few-valued columns (flags, short strings read in place, a small int) folded, with nulls', () => {
    const m = 50_000;
    const pick = (xs: string[]) => xs[Math.floor(rnd() * xs.length)];
    const cols = [
      strings(
        Array.from({ length: m }, () => pick(['A', 'N', 'R'])),
        0,
      ),
      strings(
        Array.from({ length: m }, () => pick(['REG AIR', 'MAIL', '', 'TRUCK', 'AIRSHIP8'])),
        13,
      ),
      ints(m, () => Math.floor(rnd() * 9), 17, 'int64'),
    ];
    const b: Batch = { length: m, columns: cols };
    const rows = Array.from({ length: m }, (_, i) => i);
    const g = groupsOf(b, [0, 1, 2]);
    expect(g.nGroups).toBeGreaterThan(100);
    expect(expectGroups(cols, g, rows)).toBe(true);
    const s = rows.filter(() => rnd() < 0.5);
    expectGroups(cols, groupsOf(b, [0, 1, 2], { idx: Int32Array.from(s), n: s.length }), s);
  });

  it('a string past 8 bytes among few-valued columns, and a column of many values: the other paths, same groups', () => {
    const m = 40_000;
    const long = strings(Array.from({ length: m }, (_, i) => (i % 4 === 0 ? 'LONGER THAN EIGHT' : `s${i % 3}`)));
    const flag = strings(Array.from({ length: m }, (_, i) => 'xy'[i % 2]));
    const many = ints(m, () => Math.floor(rnd() * 30_000));
    const rows = Array.from({ length: m }, (_, i) => i);
    expectGroups([long, flag], groupsOf({ length: m, columns: [long, flag] }, [0, 1]), rows);
    expectGroups([flag, many], groupsOf({ length: m, columns: [flag, many] }, [0, 1]), rows);
  });
});

describe('aggregates into many groups against DuckDB', () => {
  const dir = tmpDir('sj-group-hash-');
  const T = path.join(dir, 't.parquet'),
    U = path.join(dir, 'u.parquet');
  beforeAll(async () => {
    // 300K rows: (a, b) ~ 200K groups, a third of them hot (a = 7, b = 7), nulls in both keys, short strings
    await writeParquet(
      T,
      `SELECT CASE WHEN i % 3 = 0 THEN 7 WHEN i % 101 = 0 THEN NULL ELSE (i * 7919) % 150001 END::INTEGER AS a,
         CASE WHEN i % 3 = 0 THEN 7 WHEN i % 89 = 0 THEN NULL ELSE (i % 4) END::BIGINT AS b,
         (['AIR', 'REG AIR', 'TRUCK', 'MAIL', 'FOB', 'SHIP', 'RAIL'])[1 + i % 7] AS mode,
         (['A', 'N', 'R'])[1 + (i // 7) % 3] AS flag,
         (i % 1000)::BIGINT AS x
       FROM range(0, 300000) t(i)`,
      50_000,
    );
    await writeParquet(
      U,
      `SELECT ((i * 7919) % 150001)::INTEGER AS a, (i % 4)::BIGINT AS b FROM range(0, 100000) t(i) WHERE i % 2 = 0`,
      50_000,
    );
  });
  const PATHS: [string, RunOptions][] = [
    ['the pool', { inThreadBytes: 0 }],
    ['the calling thread', { inThreadBytes: 1e9 }],
    ['a 64 KB budget, spilling', { memoryLimit: '64KB', spillDir: path.join(dir, 'spill'), partitions: 4 }],
    ['splits forced', { skew: { factor: 1, thresholdBytes: 1 }, partitions: 3 }],
  ];
  const QUERIES: [string, string][] = [
    ['two integer keys, many groups, null keys, a hot group', 'SELECT a, b, count(*) AS n, sum(x) AS s FROM t GROUP BY a, b'],
    ['one key, many groups', 'SELECT a, count(*) AS n, min(x) AS lo FROM t GROUP BY a'],
    ['EXCEPT of two integer keys', 'SELECT a, b FROM t EXCEPT SELECT a, b FROM u'],
    ['count(DISTINCT) per key', 'SELECT b, count(DISTINCT a) AS d FROM t GROUP BY b'],
    [
      'ROLLUP over a flag and a short string',
      'SELECT flag, mode, count(*) AS n, sum(x) AS s FROM t GROUP BY ROLLUP (flag, mode)',
    ],
  ];
  for (const [pathName, opts] of PATHS)
    for (const [name, text] of QUERIES)
      it(`${name}: ${pathName}`, async () => {
        const r = await runSql(text, { sources: { t: T, u: U }, workers: 2, ...opts });
        const duckText = text.replace(/\bFROM t\b/g, `FROM read_parquet('${T}')`).replace(/\bFROM u\b/g, `FROM read_parquet('${U}')`);
        expectTypedEqual(arrowTyped(r.toArrow()), await duckTable(duckText));
      });
});
