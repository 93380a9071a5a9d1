// Grouping one or two columns of one-byte strings through a direct table of
// code pairs (agg/code-groups.ts): the hash grouping's ids and first rows on
// every byte, the empty string and null, with and without a selection, on
// empty and all-filtered batches, giving up on a longer value (and leaving
// its table clean); and the combiner's sums of decimal products narrowed to
// 64-bit lanes (agg/narrow.ts) against DuckDB, in partial and pass-through
// mode, with batches past 2^53 that fall back to 128-bit lanes; decimal
// sums over two banks (even and odd rows) on odd lengths, nulls on either
// side, one group, and past the carry chunk; string = and IN against
// literals without comparator closures (expr/filter-strings.ts), against
// DuckDB on nulls, empty strings, prefixes and multi-byte values.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runPlan } from '../dist/index.js';
import { codeGroups } from '../dist/agg/code-groups.js';
import { sumOnlyColumns, widenNarrowed } from '../dist/agg/narrow.js';
import { decimalSums, decimalSumsColumn } from '../dist/kernels/decimal.js';
import { strEqRows, strInRows } from '../dist/expr/filter-strings.js';
import { evalPredicate, selectRows } from '../dist/expr/filter.js';
import type { Column } from '../dist/kernels/column.js';
import { duckRows, hashGroups, sorted, tmpDir, writeParquet } from './helpers.js';

function strings(xs: (number[] | null)[]): Column {
  const offsets = new Int32Array(xs.length + 1);
  xs.forEach((x, i) => {
    offsets[i + 1] = offsets[i] + (x?.length ?? 0);
  });
  const values = new Uint8Array(offsets[xs.length]);
  xs.forEach((x, i) => x && values.set(x, offsets[i]));
  const valid = xs.includes(null) ? Uint8Array.from(xs, (x) => (x === null ? 0 : 1)) : null;
  return { type: { id: 'utf8' }, length: xs.length, values, offsets, valid };
}

function expectSameGroups(cols: Column[], sel?: { idx: Int32Array; n: number }) {
  const got = codeGroups(cols, false, undefined, sel?.idx ?? null, sel?.n ?? cols[0].length);
  const want = hashGroups(cols, sel);
  expect(got).not.toBeNull();
  expect(got!.nGroups).toBe(want.nGroups);
  expect(Array.from(got!.first)).toEqual(Array.from(want.first));
  expect(Array.from(got!.gid)).toEqual(Array.from(want.gid));
}

// every byte, the empty string and null, in an order that repeats pairs late
const N = 3000;
const a = strings(Array.from({ length: N }, (_, i) => (i % 17 === 5 ? null : i % 19 === 3 ? [] : [(i * 37) % 256])));
const b = strings(Array.from({ length: N }, (_, i) => (i % 23 === 7 ? null : i % 29 === 1 ? [] : [(i * 11) % 7])));

describe('one or two columns of one-byte strings, grouped by a direct table', () => {
  it("gives the hash grouping's ids and first rows, every byte, empty strings and nulls", () => {
    expectSameGroups([a]);
    expectSameGroups([a, b]);
    expectSameGroups([b, a]);
    expectSameGroups([strings([[0], [255], [0], null, [], [255]])]);
  });
  it('with a selection: the other rows get one id past the last group', () => {
    const idx = Int32Array.from({ length: N }, (_, k) => k).filter((i) => i % 3 !== 1);
    expectSameGroups([a, b], { idx, n: idx.length });
    expectSameGroups([a], { idx, n: 10 });
    // all filtered: no group, every row one past the last
    const none = codeGroups([a, b], false, undefined, new Int32Array(0), 0)!;
    expect(none.nGroups).toBe(0);
    expect(new Set(none.gid)).toEqual(new Set([0]));
  });
  it('empty batches', () => {
    const e = strings([]);
    expect(codeGroups([e, e])!.nGroups).toBe(0);
    expect(codeGroups([e])!.nGroups).toBe(0);
  });
  it('gives up on a value longer than a byte, first or late, and leaves its table clean', () => {
    expect(codeGroups([strings([[1, 2], [1]])])).toBeNull();
    const late = strings([...Array.from({ length: 500 }, (_, i) => [i % 5]), [65, 66], [1]]);
    expect(codeGroups([late])).toBeNull();
    expect(codeGroups([a, strings(Array.from({ length: N }, (_, i) => (i === N - 1 ? [7, 8] : [i % 3])))])).toBeNull();
    // the groups seen before giving up do not leak into the next grouping
    expectSameGroups([strings([[4], [3], [2], [1], [0]])]);
    expectSameGroups([a, b]);
  });
  it('takes no other column type, nor three columns', () => {
    const ints: Column = { type: { id: 'int32' }, length: 2, values: new Int32Array(2), valid: null };
    expect(codeGroups([ints])).toBeNull();
    expect(codeGroups([a, ints])).toBeNull();
    expect(codeGroups([a, b, a])).toBeNull();
  });
});

describe('decimal products narrowed to 64-bit lanes for the combiner', () => {
  const dir = tmpDir('sj-narrow-');
  const T = `read_parquet('${path.join(dir, 't.parquet')}')`;
  const col = (column: string) => ({ column });
  const v = (value: unknown) => ({ value });
  const f = (fn: string, ...args: object[]) => ({ fn, args });
  beforeAll(async () => {
    // rows 400-499 hold products past 2^53: their batches (row groups of 100) fall back to 128-bit lanes
    await writeParquet(
      path.join(dir, 't.parquet'),
      `SELECT i AS id, i % 4 AS g, ['A', 'N', 'R'][i % 3 + 1] AS flag,
        CASE WHEN i % 9 = 0 THEN NULL WHEN i BETWEEN 400 AND 499 THEN 9999999999999.99 - i
          ELSE (((i * 7919) % 2000003 - 1000000) / 100) END::DECIMAL(15,2) AS p,
        CASE WHEN i % 7 = 0 THEN NULL ELSE ((i * 13) % 11) / 100 END::DECIMAL(15,2) AS d,
        (((i * 5) % 9) / 100)::DECIMAL(15,2) AS t
      FROM range(0, 1200) t(i)`,
      100,
    );
  });
  const aggs = [
    { fn: 'sum', expr: f('*', f('*', col('p'), f('-', v(1), col('d'))), f('+', v(1), col('t'))), as: 'charge' },
    { fn: 'avg', expr: f('*', col('p'), f('-', v(1), col('d'))), as: 'disc' },
    { fn: 'count', expr: f('*', col('p'), col('d')), as: 'n' },
    { fn: 'max', expr: f('*', col('p'), col('t')), as: 'mx' },
  ];
  // DuckDB multiplies decimal(15,2)s within 18 digits: widened first, as this engine types the products
  const duck = `sum(p::DECIMAL(38,2) * (1 - d) * (1 + t))::VARCHAR, avg(p::DECIMAL(38,2) * (1 - d)),
    count(p * d)::VARCHAR, max(p::DECIMAL(38,2) * t)::VARCHAR`;
  const text = (x: unknown) => (x === null ? null : String(x));
  const row = (x: Record<string, unknown>) => [text(x.charge), Number(x.disc).toPrecision(9), String(x.n), text(x.mx)];
  const duckRow = (x: unknown[], k: number) => [x[k], Number(x[k + 1]).toPrecision(9), x[k + 2], x[k + 3]];

  for (const [what, by] of [
    ['few groups (partial states)', ['flag']],
    ['a group a row (rows pass through the combiner)', ['id']],
  ] as const) {
    it(`${what}: as DuckDB sums them`, async () => {
      const r = await runPlan(
        {
          version: 1,
          sources: { t: { parquet: 't.parquet' } },
          query: {
            op: 'aggregate',
            input: {
              op: 'filter',
              input: { op: 'scan', source: 't' },
              where: { left: col('g'), cmp: '!=', right: v(3) },
            },
            groupBy: [...by],
            aggregates: aggs,
          },
        } as never,
        { baseDir: dir, workers: 2, partitions: 2 },
      );
      const ours = r.toRows().map((x) => [String(x[by[0]]), ...row(x)]);
      const theirs = (await duckRows(`SELECT ${by[0]}::VARCHAR, ${duck} FROM ${T} WHERE g != 3 GROUP BY ${by[0]}`)).map(
        (x) => [x[0], ...duckRow(x, 1)],
      );
      expect(ours.length).toBe(theirs.length);
      expect(sorted(ours)).toEqual(sorted(theirs));
    });
  }

  it("a product a later expression reads stays in its type's lanes (q08's CASE over volume), as DuckDB sums it", async () => {
    // probe, compute (volume), project, compute (the CASE over volume): q08's operators after its broadcast joins
    await writeParquet(
      path.join(dir, 'u.parquet'),
      `SELECT i AS gk, ['zero', 'one', 'two', 'three'][i + 1] AS name FROM range(0, 4) t(i)`,
    );
    const r = await runPlan(
      {
        version: 1,
        sources: { t: { parquet: 't.parquet' }, u: { parquet: 'u.parquet' } },
        query: {
          op: 'aggregate',
          groupBy: ['flag'],
          aggregates: [
            {
              fn: 'sum',
              expr: { case: [{ when: { column: 'name', cmp: '=', value: 'one' }, then: col('volume') }], else: v(0) },
              as: 'part',
            },
            { fn: 'sum', column: 'volume', as: 'total' },
          ],
          input: {
            op: 'project',
            columns: [
              { name: 'flag', column: 'flag' },
              { name: 'name', column: 'name' },
              { name: 'volume', expr: f('*', col('p'), f('-', v(1), col('d'))) },
            ],
            input: {
              op: 'join',
              type: 'inner',
              on: [['g', 'gk']],
              left: { op: 'scan', source: 't' },
              right: { op: 'scan', source: 'u' },
            },
          },
        },
      } as never,
      { baseDir: dir, workers: 2, partitions: 2, inThreadBytes: 0 },
    );
    const ours = r.toRows().map((x) => [String(x.flag), text(x.part), text(x.total)]);
    const theirs = await duckRows(
      `SELECT flag, sum(CASE WHEN name = 'one' THEN p::DECIMAL(38,2) * (1 - d) ELSE 0 END)::VARCHAR,
        sum(p::DECIMAL(38,2) * (1 - d))::VARCHAR FROM ${T} JOIN read_parquet('${path.join(dir, 'u.parquet')}') ON g = gk
        GROUP BY flag`,
    );
    expect(ours.length).toBe(3);
    expect(sorted(ours)).toEqual(sorted(theirs));
  });

  it('sumOnlyColumns: columns read by sum and avg alone', () => {
    const agg = (fn: string, col: number) => ({ fn, col, as: 'x' }) as never;
    expect([
      ...sumOnlyColumns([0], [agg('sum', 1), agg('avg', 2), agg('max', 2), agg('count', 3), agg('sum', 0)]),
    ]).toEqual([1]);
    expect([...sumOnlyColumns([], [agg('sum', 4), agg('count', 4), agg('count_distinct', 5), agg('avg', 5)])]).toEqual([
      4,
    ]);
  });

  it('widenNarrowed: 64-bit lanes back to the schema 128-bit lanes, sign-extended, nulls kept', () => {
    const narrow: Column = {
      type: { id: 'decimal', precision: 18, scale: 6 },
      length: 3,
      values: BigInt64Array.from([-5n, 2n ** 52n, 0n]),
      valid: Uint8Array.from([1, 1, 0]),
    };
    const wide = { id: 'decimal', precision: 38, scale: 6 } as const;
    const b = { length: 3, columns: [narrow] };
    const w = widenNarrowed(b, [{ name: 'x', type: wide }]);
    expect(w.columns[0].type).toEqual(wide);
    expect(Array.from(w.columns[0].values as BigInt64Array)).toEqual([-5n, -1n, 2n ** 52n, 0n, 0n, 0n]);
    expect(w.columns[0].valid).toBe(narrow.valid);
    // nothing narrowed: the same batch
    expect(widenNarrowed(b, [{ name: 'x', type: narrow.type }])).toBe(b);
  });
});

describe('decimal sums over two banks (even and odd rows)', () => {
  /** A decimal column of n rows (64- or 128-bit lanes) from value(i), null where value(i) is null. */
  function dec(precision: number, n: number, value: (i: number) => bigint | null): Column {
    const wide = precision > 18,
      values = new BigInt64Array(wide ? 2 * n : n),
      valid = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const x = value(i);
      valid[i] = x === null ? 0 : 1;
      if (x === null) continue;
      if (wide) {
        values[2 * i] = BigInt.asIntN(64, x);
        values[2 * i + 1] = x >> 64n;
      } else values[i] = x;
    }
    return { type: { id: 'decimal', precision, scale: 2 }, length: n, values, valid };
  }
  function check(c: Column, gid: Int32Array, groups: number) {
    const want: bigint[] = new Array(groups).fill(0n),
      cnt = new Float64Array(groups);
    const at = (i: number) => {
      const v = c.values as BigInt64Array;
      return c.type.precision! > 18 ? (v[2 * i + 1] << 64n) + BigInt.asUintN(64, v[2 * i]) : v[i];
    };
    for (let i = 0; i < c.length; i++)
      if (c.valid![i]) {
        want[gid[i]] += at(i);
        cnt[gid[i]]++;
      }
    expect(decimalSums(c, gid, groups, cnt)).toEqual(want.map((x, k) => (cnt[k] === 0 ? null : x)));
    const col = decimalSumsColumn(c, gid, groups, cnt, { id: 'decimal', precision: 38, scale: 2 }, 'x');
    for (let k = 0; k < groups; k++) {
      const v = col.values as BigInt64Array;
      if (cnt[k] > 0) expect((v[2 * k + 1] << 64n) + BigInt.asUintN(64, v[2 * k])).toBe(want[k]);
      else expect(col.valid![k]).toBe(0);
    }
  }
  it('odd and even lengths, nulls on either bank, one group and several', () => {
    for (const n of [0, 1, 2, 3, 4, 5, 101]) {
      for (const p of [15, 30]) {
        const c = dec(p, n, (i) => (i % 4 === 1 ? null : BigInt((i * 7919) % 100003) - 50000n));
        check(c, new Int32Array(n), 1);
        check(
          c,
          Int32Array.from({ length: n }, (_, i) => (i * 5) % 3),
          3,
        );
        // every value in a group of its own; the last group empty
        check(
          c,
          Int32Array.from({ length: n }, (_, i) => i),
          n + 1,
        );
      }
    }
  });
  it('past the carry chunk (2^20 rows), with values near the 64-bit limits', () => {
    const n = (1 << 20) + 3,
      big = 2n ** 62n;
    const c64 = dec(18, n, (i) => (i % 1000 === 7 ? null : i % 2 ? 999999999999999999n - BigInt(i) : -BigInt(i)));
    check(
      c64,
      Int32Array.from({ length: n }, (_, i) => i & 1),
      2,
    );
    const c128 = dec(38, n, (i) => (i % 3 === 0 ? big * BigInt(i % 11) : -BigInt(i)));
    check(
      c128,
      Int32Array.from({ length: n }, (_, i) => (i >> 4) % 3),
      3,
    );
  });
});

describe('string = and IN against literals', () => {
  const enc = new TextEncoder();
  const vals = ['AIR', 'AIR REG', 'AI', 'AIRR', '', null, 'é', 'éé', 'air', 'AIR'];
  const col = strings(vals.map((x) => (x === null ? null : Array.from(enc.encode(x)))));
  const run = (f: (out: Uint8Array) => void) => {
    const out = new Uint8Array(vals.length).fill(9);
    f(out);
    return Array.from(out);
  };
  it('equality and inequality: the length first, then the bytes; null rows null', () => {
    const eq = (lit: string, negate: boolean) =>
      run((out) =>
        strEqRows(out, col.offsets!, col.values as Uint8Array, col.valid, enc.encode(lit), negate, vals.length),
      );
    expect(eq('AIR', false)).toEqual([1, 0, 0, 0, 0, 2, 0, 0, 0, 1]);
    expect(eq('AIR', true)).toEqual([0, 1, 1, 1, 1, 2, 1, 1, 1, 0]);
    expect(eq('', false)).toEqual([0, 0, 0, 0, 1, 2, 0, 0, 0, 0]);
    expect(eq('é', false)).toEqual([0, 0, 0, 0, 0, 2, 1, 0, 0, 0]);
  });
  it('IN: true on a match, else null when the list holds a null, else false', () => {
    const isIn = (lits: string[], nullInList: boolean) =>
      run((out) =>
        strInRows(
          out,
          col.offsets!,
          col.values as Uint8Array,
          col.valid,
          lits.map((x) => enc.encode(x)),
          nullInList,
          vals.length,
        ),
      );
    expect(isIn(['AIR', 'AIR REG'], false)).toEqual([1, 1, 0, 0, 0, 2, 0, 0, 0, 1]);
    expect(isIn(['AIR', 'éé'], true)).toEqual([1, 2, 2, 2, 2, 2, 2, 1, 2, 1]);
    expect(isIn([], false)).toEqual([0, 0, 0, 0, 0, 2, 0, 0, 0, 0]);
    expect(isIn([''], false)).toEqual([0, 0, 0, 0, 1, 2, 0, 0, 0, 0]);
  });
  it('filters as DuckDB does (=, !=, IN with and without a null)', async () => {
    const dir = tmpDir('sj-streq-');
    const file = path.join(dir, 's.parquet');
    await writeParquet(
      file,
      `SELECT i, CASE WHEN i % 7 = 0 THEN NULL ELSE ['AIR', 'AIR REG', 'AI', '', 'é', 'REG AIR', 'air'][i % 8 + 1] END AS m
       FROM range(0, 500) t(i)`,
      100,
    );
    const cases: [object, string][] = [
      [{ column: 'm', cmp: '=', value: 'AIR' }, "m = 'AIR'"],
      [{ column: 'm', cmp: '!=', value: 'AIR' }, "m != 'AIR'"],
      [{ column: 'm', in: ['AIR', 'AIR REG', ''] }, "m IN ('AIR', 'AIR REG', '')"],
      [{ not: { column: 'm', in: ['AIR', null] } }, "NOT (m IN ('AIR', NULL))"],
      [
        {
          and: [
            { column: 'm', in: ['é', 'AI'] },
            { column: 'm', cmp: '!=', value: 'AI' },
          ],
        },
        "m IN ('é', 'AI') AND m != 'AI'",
      ],
    ];
    for (const [where, text] of cases) {
      const r = await runPlan(
        {
          version: 1,
          sources: { s: { parquet: file } },
          query: { op: 'filter', input: { op: 'scan', source: 's' }, where },
        } as never,
        { workers: 1 },
      );
      const ours = r.toRows().map((x) => [String(x.i), x.m]);
      const theirs = await duckRows(`SELECT i::VARCHAR, m FROM read_parquet('${file}') WHERE ${text}`);
      // NOT (m IN ('AIR', NULL)) is never true: null where the list holds no match
      if (!text.includes('NULL')) expect(theirs.length).toBeGreaterThan(0);
      expect(sorted(ours)).toEqual(sorted(theirs));
    }
  });
});

describe('range tests over 64-bit lanes (expr/range64.ts)', () => {
  it('as DuckDB filters: decimals and bigints, nulls, values past 2^53 midway, after another term', async () => {
    const dir = tmpDir('sj-range64-');
    const file = path.join(dir, 'r.parquet');
    await writeParquet(
      file,
      `SELECT i, CASE WHEN i % 9 = 0 THEN NULL ELSE ((i * 7) % 13 - 6) / 100 END::DECIMAL(15,2) AS d,
         CASE WHEN i % 11 = 0 THEN NULL WHEN i % 97 = 50 THEN 9007199254740993 + i WHEN i % 89 = 3 THEN -9007199254740993 - i
           ELSE (i * 31) % 1000 - 500 END::BIGINT AS b
       FROM range(0, 3000) t(i)`,
      500,
    );
    const v = (value: unknown, type?: string) => (type ? { value, type } : { value });
    const cases: [object, string][] = [
      [
        {
          and: [
            { left: { column: 'd' }, cmp: '>=', right: v('-0.02', 'decimal(15,2)') },
            { left: { column: 'd' }, cmp: '<=', right: v('0.03', 'decimal(15,2)') },
          ],
        },
        'd BETWEEN -0.02 AND 0.03',
      ],
      [{ left: { column: 'b' }, cmp: '>', right: v(100) }, 'b > 100'],
      [
        {
          and: [
            { left: { column: 'i' }, cmp: '>', right: v(40) },
            { left: { column: 'b' }, cmp: '<', right: v(-100) },
          ],
        },
        'i > 40 AND b < -100',
      ],
      [
        {
          and: [
            { left: { column: 'd' }, cmp: '!=', right: v('0.01', 'decimal(15,2)') },
            { left: { column: 'b' }, cmp: '!=', right: v(7) },
          ],
        },
        'd != 0.01 AND b != 7',
      ],
    ];
    for (const [where, text] of cases) {
      const r = await runPlan(
        {
          version: 1,
          sources: { r: { parquet: file } },
          query: { op: 'filter', input: { op: 'scan', source: 'r' }, where },
        } as never,
        { workers: 1 },
      );
      const ours = r.toRows().map((x) => String(x.i));
      const theirs = (await duckRows(`SELECT i::VARCHAR FROM read_parquet('${file}') WHERE ${text}`)).map((x) => x[0]);
      expect(theirs.length).toBeGreaterThan(10);
      expect(ours.sort()).toEqual((theirs as string[]).sort());
    }
  });
});

describe('three-valued AND and OR by table, true rows without a branch', () => {
  // x and y take 0 (false), 1 (true) and null: every pair of truth values, in `x = 1` and `y = 1`
  const vals = [0, 1, null];
  const xs = vals.flatMap((x) => vals.map(() => x)),
    ys = vals.flatMap(() => vals);
  const int = (v: (number | null)[]): Column => ({
    type: { id: 'int32' },
    length: v.length,
    values: Int32Array.from(v, (x) => x ?? 0),
    valid: Uint8Array.from(v, (x) => (x === null ? 0 : 1)),
  });
  const b = { length: 9, columns: [int(xs), int(ys)] };
  const x = { kind: 'cmp', col: 0, op: '=', value: 1 } as const,
    y = { kind: 'cmp', col: 1, op: '=', value: 1 } as const;
  it("SQL's AND and OR of every pair (false 0, true 1, null 2)", () => {
    const and = xs.map((a, i) => (a === 0 || ys[i] === 0 ? 0 : a === null || ys[i] === null ? 2 : 1));
    const or = xs.map((a, i) => (a === 1 || ys[i] === 1 ? 1 : a === null || ys[i] === null ? 2 : 0));
    expect(Array.from(evalPredicate(b, { kind: 'and', preds: [x, y] } as never))).toEqual(and);
    expect(Array.from(evalPredicate(b, { kind: 'or', preds: [x, y] } as never))).toEqual(or);
    expect(Array.from(evalPredicate(b, { kind: 'not', pred: { kind: 'or', preds: [x, y] } } as never))).toEqual(
      or.map((t) => (t === 2 ? 2 : 1 - t)),
    );
  });
  it('selectRows keeps the true rows only, in order', () => {
    const s = selectRows(b, { kind: 'or', preds: [x, y] } as never);
    expect(Array.from(s.idx.subarray(0, s.n))).toEqual([1, 3, 4, 5, 7]);
    const none = selectRows({ length: 0, columns: [int([]), int([])] }, { kind: 'and', preds: [x, y] } as never);
    expect(none.n).toBe(0);
  });
});
