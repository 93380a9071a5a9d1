// Grouping one integer column of few values in one pass (agg/few-groups.ts):
// the same ids and first rows as the hash grouping, on edge values (nulls,
// negatives, 64-bit values alike in their low word), giving up beyond
// FEW_GROUPS; and aggregates grouped by such columns against DuckDB.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { FEW_GROUPS, fewGroups } from '../dist/agg/few-groups.js';
import { groupsOf } from '../dist/agg/aggregate.js';
import type { Column } from '../dist/kernels/column.js';
import { expectSame, hashGroups, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-few-');
const T = `read_parquet('${path.join(dir, 't.parquet')}')`;

const int32Col = (xs: (number | null)[]): Column => ({
  type: { id: 'int32' },
  length: xs.length,
  values: Int32Array.from(xs, (x) => x ?? 0),
  valid: xs.includes(null) ? Uint8Array.from(xs, (x) => (x === null ? 0 : 1)) : null,
});
const int64Col = (xs: (bigint | null)[]): Column => ({
  type: { id: 'int64' },
  length: xs.length,
  values: BigInt64Array.from(xs, (x) => x ?? 0n),
  valid: xs.includes(null) ? Uint8Array.from(xs, (x) => (x === null ? 0 : 1)) : null,
});

describe('one integer column of few values, grouped in one pass', () => {
  it("gives the hash grouping's ids and first rows", () => {
    const ints = Array.from({ length: 5000 }, (_, i) => ((i * 7919) % 13 === 3 ? null : ((i * 31) % 11) - 5));
    // values equal in their low word but not their high one, and the null row's zero among them
    const big = Array.from({ length: 5000 }, (_, i) =>
      i % 9 === 0 ? null : [0n, 1n << 32n, -1n, (1n << 32n) - 1n, -(1n << 40n), 5n][(i * 7) % 6],
    );
    for (const c of [int32Col(ints), int64Col(big), int32Col([7]), int32Col([null, null, 1]), int32Col([])]) {
      const few = fewGroups(c, true)!;
      const want = hashGroups([c]);
      expect(few).not.toBeNull();
      expect(few.nGroups).toBe(want.nGroups);
      expect(Array.from(few.first)).toEqual(Array.from(want.first));
      expect(Array.from(few.gid)).toEqual(Array.from(want.gid));
      expect(few.gid.buffer).toBeInstanceOf(SharedArrayBuffer);
    }
    expect(fewGroups(int64Col(big))!.nGroups).toBe(7);
  });
  it('gives up beyond FEW_GROUPS groups (the null group counted) and on other types', () => {
    expect(fewGroups(int32Col(Array.from({ length: FEW_GROUPS }, (_, i) => i)))!.nGroups).toBe(FEW_GROUPS);
    expect(fewGroups(int32Col(Array.from({ length: FEW_GROUPS + 1 }, (_, i) => i)))).toBeNull();
    expect(fewGroups(int32Col([...Array.from({ length: FEW_GROUPS }, (_, i) => i), null]))).toBeNull();
    expect(fewGroups({ type: { id: 'float64' }, length: 2, values: new Float64Array([1, 1]), valid: null })).toBeNull();
  });
});

describe('a selection, and two columns as one', () => {
  const n = 5000;
  const a = int32Col(Array.from({ length: n }, (_, i) => ((i * 7) % 3) - 1));
  const b = int32Col(Array.from({ length: n }, (_, i) => (i % 5 === 0 ? -2147483648 : (i * 13) % 4)));
  const sel = { idx: Int32Array.from({ length: 1800 }, (_, k) => 2 * k + (k % 3)), n: 1700 }; // the first 1,700 of 1,800 listed
  const same = (got: { gid: Int32Array; nGroups: number; first: Int32Array }, want: typeof got) => {
    expect(got.nGroups).toBe(want.nGroups);
    expect(Array.from(got.first)).toEqual(Array.from(want.first));
    expect(Array.from(got.gid)).toEqual(Array.from(want.gid));
  };
  it("fewGroups over selected rows: the hash grouping's ids, one past the last for the rest", () => {
    const got = fewGroups(a, false, undefined, sel.idx, sel.n)!;
    same(got, hashGroups([a], sel));
    expect(got.gid[1]).toBe(got.nGroups); // row 1 is not selected
  });
  it('two int32 columns without nulls group as pairs, with and without a selection', () => {
    const batch = { length: n, columns: [a, b] };
    same(groupsOf(batch, [0, 1]), hashGroups([a, b]));
    same(groupsOf(batch, [0, 1], sel), hashGroups([a, b], sel));
    same(groupsOf(batch, [1, 0], sel), hashGroups([b, a], sel));
    // many pairs (an id beside a flag): the hash grouping serves, the same ids
    const id = int32Col(Array.from({ length: n }, (_, i) => i % 997));
    same(groupsOf({ length: n, columns: [id, a] }, [0, 1], sel), hashGroups([id, a], sel));
    // a null in either column: the pair is not one value, the hash grouping serves
    const withNull = int32Col(Array.from({ length: n }, (_, i) => (i % 11 === 0 ? null : i % 2)));
    same(groupsOf({ length: n, columns: [a, withNull] }, [0, 1]), hashGroups([a, withNull]));
  });
});

describe("aggregates grouped by a column of few values: DuckDB's answer", () => {
  beforeAll(async () => {
    await writeParquet(
      path.join(dir, 't.parquet'),
      `SELECT CASE WHEN i % 23 = 0 THEN NULL ELSE ['north', 'south', 'islands', 'mountain', 'x', ''][1 + (i * 7) % 6] END AS region,
      CASE WHEN i % 19 = 0 THEN NULL ELSE ((i % 5) - 2)::BIGINT * 4294967296 + (i % 3) END AS big, (i % 4)::INTEGER AS small, (i * 0.25)::DOUBLE AS v
      FROM range(0, 30000) t(i)`,
      4096,
    );
  });
  it("grouped by two short columns, over a filter's selection", async () => {
    const plan = {
      version: 1,
      sources: { t: { parquet: path.join(dir, 't.parquet') } },
      query: {
        op: 'aggregate',
        groupBy: ['small', 'region'],
        aggregates: [
          { fn: 'count', as: 'n' },
          { fn: 'sum', column: 'v', as: 's' },
        ],
        input: { op: 'filter', where: { column: 'v', cmp: '>', value: 100 }, input: { op: 'scan', source: 't' } },
      },
    };
    await expectSame(
      plan,
      `SELECT small, region, count(*) AS n, sum(v) AS s FROM ${T} WHERE v > 100 GROUP BY small, region`,
    );
  });
  for (const by of ['region', 'big', 'small']) {
    it(`grouped by ${by}`, async () => {
      const plan = {
        version: 1,
        sources: { t: { parquet: path.join(dir, 't.parquet') } },
        query: {
          op: 'aggregate',
          groupBy: [by],
          aggregates: [
            { fn: 'count', as: 'n' },
            { fn: 'sum', column: 'v', as: 's' },
          ],
          input: { op: 'scan', source: 't' },
        },
      };
      await expectSame(plan, `SELECT ${by}, count(*) AS n, sum(v) AS s FROM ${T} GROUP BY ${by}`);
    });
  }
});
