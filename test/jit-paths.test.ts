// The kernels whose loops were split into functions of their own (so that V8's
// early-compiled loop code never meets an untried path): the rarely taken
// paths, forced on small data, against DuckDB. A grouping table that grows
// (more than 65,536 groups in one batch, the loop resumed after each growth),
// with and without a selection; join keys past 2^53 (no direct table), and
// keys of two columns (the hashed probe), whose last partial chunk of pairs
// is emitted after the probing loop.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Batch } from '../dist/kernels/column.js';
import { buildKeys } from '../dist/kernels/keys.js';
import { groupRows } from '../dist/agg/groups.js';
import { expectSame, expectSameInDuck, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-jit-');
const MANY = path.join(dir, 'many.parquet'),
  BIG = path.join(dir, 'big.parquet'),
  SMALL = path.join(dir, 'small.parquet');

beforeAll(async () => {
  // 200,000 rows in one row group: about 150,000 keys (nulls among them), so one batch's table grows several times
  await writeParquet(
    MANY,
    `
    SELECT CASE WHEN i % 1000 = 0 THEN NULL ELSE (i * 7919) % 150001 END::BIGINT AS k,
      'x' || (i % 90001) AS s, (i % 97)::INTEGER AS v
    FROM range(0, 200000) t(i)`,
    200000,
  );
  // keys beyond 2^53 (a direct table cannot hold them) and a two-column key
  await writeParquet(
    BIG,
    `
    SELECT CASE WHEN i % 17 = 0 THEN NULL ELSE 9007199254740993::BIGINT * (i % 5 + 1) + (i % 40) END AS k,
      (i % 3)::INTEGER AS k2, i::INTEGER AS a
    FROM range(0, 5000) t(i)`,
    5000,
  );
  await writeParquet(
    SMALL,
    `
    SELECT CASE WHEN i % 11 = 0 THEN NULL ELSE 9007199254740993::BIGINT * (i % 7 + 1) + (i % 50) END AS k,
      (i % 4)::INTEGER AS k2, i::INTEGER AS b
    FROM range(0, 700) t(i)`,
    700,
  );
});

const sources = { many: { parquet: MANY }, big: { parquet: BIG }, small: { parquet: SMALL } };
const ONE = { workers: 1, partitions: 1, broadcastBytes: 0 };

describe('a grouping table that grows inside one batch', () => {
  for (const combiners of [true, false]) {
    it(`150,000 groups of 200,000 rows by a bigint and by (bigint, string) (combiners ${combiners})`, async () => {
      for (const groupBy of [['k'], ['k', 's']]) {
        const plan = {
          version: 1,
          sources,
          execution: { ...ONE, combiners },
          query: {
            op: 'aggregate',
            input: { op: 'scan', source: 'many' },
            groupBy,
            aggregates: [
              { fn: 'count', as: 'n' },
              { fn: 'sum', column: 'v', as: 'sv' },
            ],
          },
        };
        const n = await expectSameInDuck(
          plan,
          `SELECT ${groupBy.join(', ')}, count(*) AS n, sum(v) AS sv FROM '${MANY}' GROUP BY ${groupBy.join(', ')}`,
        );
        expect(n).toBeGreaterThan(groupBy.length === 1 ? 140000 : 190000);
      }
    });
  }

  it('groupRows with a selection: ids as a map of first occurrences gives them, unselected rows one past the last', () => {
    const n = 180000;
    const keys = BigInt64Array.from({ length: n }, (_, i) => BigInt((i * 7919) % 160001));
    const b: Batch = { length: n, columns: [{ type: { id: 'int64' }, length: n, values: keys, valid: null }] };
    const k = buildKeys(b, [0], [{ kind: 'int' }]);
    const idx = Int32Array.from({ length: n >> 1 }, (_, j) => 2 * j + 1);
    const g = groupRows(k, { idx, n: idx.length });
    const ids = new Map<bigint, number>();
    const firsts: number[] = [];
    for (const i of idx)
      if (!ids.has(keys[i])) {
        ids.set(keys[i], ids.size);
        firsts.push(i);
      }
    expect(ids.size).toBeGreaterThan(65536);
    expect(g.nGroups).toBe(ids.size);
    expect(Array.from(g.first)).toEqual(firsts);
    let wrong = 0;
    for (let i = 0; i < n; i++) if (g.gid[i] !== (i % 2 ? ids.get(keys[i]) : ids.size)) wrong++;
    expect(wrong).toBe(0);
  });

  it('groupRows on runs of one key (rows clustered by it): the run takes its group, across the table growing, against a map', () => {
    // runs of 1-6 rows; a key comes back in a later run (not adjacent); 76K groups grow the table mid-run
    const n = 400000;
    const keys = new BigInt64Array(n);
    for (let i = 0, run = 0; i < n; run++) {
      const len = 1 + (run % 6);
      const key = BigInt(run % 3 === 2 ? run - 2 : run) * 1000003n;
      for (let j = 0; j < len && i < n; j++) keys[i++] = key;
    }
    const b: Batch = { length: n, columns: [{ type: { id: 'int64' }, length: n, values: keys, valid: null }] };
    const g = groupRows(buildKeys(b, [0], [{ kind: 'int' }]));
    const ids = new Map<bigint, number>();
    let wrong = 0;
    for (let i = 0; i < n; i++) {
      if (!ids.has(keys[i])) ids.set(keys[i], ids.size);
      if (g.gid[i] !== ids.get(keys[i])) wrong++;
    }
    expect(ids.size).toBeGreaterThan(65536);
    expect(g.nGroups).toBe(ids.size);
    expect(wrong).toBe(0);
  });

  it('groupRows on one 64-bit key without nulls (its own loop): keys compared beyond their hash, the table grown, against a map', () => {
    // keys that share their 32-bit hash (found among 2^18 spread keys): only the words tell them
    // apart, and a loop trusting the hash would merge them
    const cand = BigInt64Array.from({ length: 1 << 18 }, (_, k) => BigInt(k) * 2654435761n + (BigInt(k % 1000) << 40n));
    const ch = buildKeys(
      { length: cand.length, columns: [{ type: { id: 'int64' }, length: cand.length, values: cand, valid: null }] },
      [0],
      [{ kind: 'int' }],
    ).hash;
    const seen = new Map<number, number>();
    const twins: bigint[] = [];
    for (let k = 0; k < cand.length; k++) {
      const j = seen.get(ch[k]);
      if (j === undefined) seen.set(ch[k], k);
      else twins.push(cand[j], cand[k]);
    }
    expect(twins.length).toBeGreaterThan(0);
    const n = 150000;
    const keys = BigInt64Array.from({ length: n }, (_, i) =>
      i % 5 === 0 ? twins[(i / 5) % twins.length] : BigInt((i * 7919) % 70001) + (i % 3 === 0 ? 4294967296n : 0n),
    );
    const b: Batch = { length: n, columns: [{ type: { id: 'int64' }, length: n, values: keys, valid: null }] };
    const g = groupRows(buildKeys(b, [0], [{ kind: 'int' }]));
    const ids = new Map<bigint, number>();
    const firsts: number[] = [];
    for (let i = 0; i < n; i++)
      if (!ids.has(keys[i])) {
        ids.set(keys[i], ids.size);
        firsts.push(i);
      }
    expect(ids.size).toBeGreaterThan(65536);
    expect(g.nGroups).toBe(ids.size);
    expect(Array.from(g.first)).toEqual(firsts);
    let wrong = 0;
    for (let i = 0; i < n; i++) if (g.gid[i] !== ids.get(keys[i])) wrong++;
    expect(wrong).toBe(0);
  });
});

describe('joins by keys past 2^53 and by two columns', () => {
  for (const type of ['inner', 'left', 'right', 'full', 'semi', 'anti']) {
    it(`${type} join`, async () => {
      const cols =
        type === 'semi' || type === 'anti' ? 'l.k, l.k2, l.a' : 'l.k, l.k2, l.a, r.k AS rk, r.k2 AS rk2, r.b';
      const sqlType = `${type.toUpperCase()} JOIN`;
      for (const on of [
        [['k', 'k']],
        [
          ['k', 'k'],
          ['k2', 'k2'],
        ],
      ]) {
        const right =
          type === 'semi' || type === 'anti'
            ? { op: 'scan', source: 'small' }
            : {
                op: 'project',
                input: { op: 'scan', source: 'small' },
                columns: [{ name: 'rk', column: 'k' }, { name: 'rk2', column: 'k2' }, 'b'],
              };
        const rightOn = type === 'semi' || type === 'anti' ? on : on.map(([l, r]) => [l, r === 'k' ? 'rk' : 'rk2']);
        const plan = {
          version: 1,
          sources,
          execution: ONE,
          query: { op: 'join', type, on: rightOn, left: { op: 'scan', source: 'big' }, right },
        };
        const cond = on.map(([l, r]) => `l.${l} = r.${r}`).join(' AND ');
        await expectSame(plan, `SELECT ${cols} FROM '${BIG}' l ${sqlType} '${SMALL}' r ON ${cond}`);
      }
    });
  }
});
