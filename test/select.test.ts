// Filters compiled as selections (src/expr/select.ts): range tests of exact
// columns against constants of another scale, merged ranges of one column,
// 64- and 128-bit values beyond 2^53, unsigned columns, dates, timestamps,
// string equality and lists, column-to-column comparisons, disjunctions and
// nulls everywhere: the rows kept are DuckDB's, and on random constants the
// same as the generic expression kernels'.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runPlan } from '../dist/index.js';
import { compileExpr } from '../dist/expr/compile.js';
import { compileFilter } from '../dist/expr/select.js';
import { duckRows, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-select-');
const T = `read_parquet('${path.join(dir, 't.parquet')}')`;
const col = (column: string) => ({ column });
const v = (value: unknown, type?: string) => (type ? { value, type } : { value });
const f = (fn: string, ...args: object[]) => ({ fn, args });
/** A comparison in the expression form (a simple `column cmp value` would take the literal filter kernel). */
const cmp = (left: object, op: string, right: object) => ({ left, cmp: op, right });

beforeAll(async () => {
  await writeParquet(
    path.join(dir, 't.parquet'),
    `SELECT i AS id,
      CASE WHEN i % 7 = 0 THEN NULL ELSE (i * 37) % 101 - 50 END::INTEGER AS a,
      CASE WHEN i % 5 = 0 THEN NULL ELSE (i * 13) % 61 - 30 END::INTEGER AS b,
      CASE WHEN i % 9 = 0 THEN NULL ELSE CASE i % 3 WHEN 0 THEN 9007199254740990 + i % 7 WHEN 1 THEN -1000000000000000000 - i % 5 ELSE i % 50 - 25 END END::BIGINT AS big,
      CASE WHEN i % 6 = 0 THEN NULL ELSE (i * 7919) % 4000000000 END::UINTEGER AS u,
      CASE WHEN i % 4 = 0 THEN NULL ELSE (((i * 7919) % 20003 - 10000) / 1000)::DECIMAL(15,3) END AS p,
      CASE WHEN i % 8 = 0 THEN NULL ELSE ((i * 104729) % 1000003 - 500000)::DECIMAL(30,4) * 1000000000000000 / 7 END::DECIMAL(30,4) AS w,
      CASE WHEN i % 11 = 0 THEN NULL ELSE DATE '2022-06-01' + ((i * 17) % 700)::INTEGER END AS d,
      CASE WHEN i % 10 = 0 THEN NULL ELSE DATE '2022-06-01' + ((i * 29) % 700)::INTEGER END AS e,
      CASE WHEN i % 12 = 0 THEN NULL ELSE TIMESTAMP '2023-01-01 00:00:00' + to_minutes((i * 997) % 100000) END AS ts,
      CASE WHEN i % 13 = 0 THEN NULL ELSE ['abc', 'ab', '', 'xyz', 'abcd', 'MAIL', 'AIR REG', 'AIR'][i % 8 + 1] END AS s
    FROM range(0, 600) t(i)`,
    128,
  );
});

/** The ids a filter keeps, ours and DuckDB's. */
async function keeps(where: object, sqlWhere: string) {
  const r = await runPlan(
    {
      version: 1,
      sources: { t: { parquet: 't.parquet' } },
      query: { op: 'project', columns: ['id'], input: { op: 'filter', input: { op: 'scan', source: 't' }, where } },
    },
    { baseDir: dir, workers: 2, partitions: 2, broadcastBytes: 0 },
  );
  const ours = r
    .toRows()
    .map((x) => String(x.id))
    .sort();
  const theirs = (await duckRows(`SELECT id FROM ${T} WHERE ${sqlWhere}`)).map((x) => String(x[0])).sort();
  return { ours, theirs };
}

describe('filters as selections, against DuckDB', () => {
  const cases: [string, object, string][] = [
    ['decimal against a constant of finer scale', cmp(col('p'), '>=', v(-1.2345)), 'p >= -1.2345'],
    ['decimal below a constant of finer scale', cmp(col('p'), '<', v(0.0005)), 'p < 0.0005'],
    ['decimal equal to a constant no value can equal', cmp(col('p'), '=', v(0.0005)), 'p = 0.0005'],
    ['decimal unequal to a constant no value can equal', cmp(col('p'), '!=', v(0.0005)), 'p <> 0.0005'],
    ['decimal equal, constant of coarser scale', cmp(col('p'), '=', v(-3.5)), 'p = -3.5'],
    ['constant on the left', cmp(v(2.5), '>', col('p')), '2.5 > p'],
    [
      'merged range of one column (and nested)',
      { and: [{ and: [cmp(col('p'), '>=', v(-2)), cmp(col('p'), '<', v(3.25))] }, cmp(col('p'), '<=', v(3))] },
      'p >= -2 AND p < 3.25 AND p <= 3',
    ],
    [
      '128-bit decimal beyond 2^53',
      cmp(col('w'), '>', v('123456789012345678.5', 'decimal(30,4)')),
      `w > 123456789012345678.5`,
    ],
    [
      '128-bit decimal range',
      { and: [cmp(col('w'), '>=', v('-300000000000000000000', 'decimal(30,4)')), cmp(col('w'), '<', v(0.00005))] },
      'w >= -300000000000000000000 AND w < 0.00005',
    ],
    ['int64 beyond 2^53', cmp(col('big'), '>', v('9007199254740993', 'int64')), 'big > 9007199254740993'],
    ['int64 equal beyond 2^53', cmp(col('big'), '=', v('9007199254740993', 'int64')), 'big = 9007199254740993'],
    ['int64 unequal beyond 2^53', cmp(col('big'), '!=', v('9007199254740993', 'int64')), 'big <> 9007199254740993'],
    ['unsigned 32-bit above 2^31', cmp(col('u'), '>=', v(3000000000)), 'u >= 3000000000'],
    ['integer against a decimal constant', cmp(col('a'), '<', v(-10.5)), 'a < -10.5'],
    ['integer to integer column', cmp(col('a'), '<', col('b')), 'a < b'],
    ['date to date column', cmp(col('d'), '>=', col('e')), 'd >= e'],
    [
      'date range with a folded date_add',
      {
        and: [
          cmp(col('d'), '>=', v('2023-01-01', 'date')),
          cmp(col('d'), '<', f('date_add', v('2023-01-01', 'date'), v(3), v('month'))),
        ],
      },
      `d >= DATE '2023-01-01' AND d < DATE '2023-04-01'`,
    ],
    [
      'timestamp against a string',
      cmp(col('ts'), '<', v('2023-02-15 12:00:00')),
      `ts < TIMESTAMP '2023-02-15 12:00:00'`,
    ],
    ['string equal', cmp(col('s'), '=', v('abc')), `s = 'abc'`],
    ['string unequal, empty string', cmp(col('s'), '!=', v('')), `s <> ''`],
    ['string in a list', { expr: col('s'), in: ['AIR', 'AIR REG', '', 'ab'] }, `s IN ('AIR', 'AIR REG', '', 'ab')`],
    ['null constant keeps nothing', cmp(col('a'), '=', v(null)), 'a = NULL'],
    [
      'or of ands, shared columns',
      {
        or: [
          { and: [cmp(col('p'), '<', v(0)), cmp(col('d'), '>', v('2023-03-01', 'date'))] },
          cmp(col('s'), '=', v('ab')),
          { and: [cmp(col('a'), '>', v(40)), cmp(col('p'), '>', v(0))] },
        ],
      },
      `(p < 0 AND d > DATE '2023-03-01') OR s = 'ab' OR (a > 40 AND p > 0)`,
    ],
    [
      'and after or, not in between',
      {
        and: [
          { or: [cmp(col('a'), '<', v(0)), cmp(col('b'), '<', v(0))] },
          { not: cmp(col('s'), '=', v('abc')) },
          cmp(col('u'), '<', v(3500000000)),
        ],
      },
      `(a < 0 OR b < 0) AND NOT (s = 'abc') AND u < 3500000000`,
    ],
  ];
  for (const [name, where, sqlWhere] of cases) {
    it(name, async () => {
      const w = JSON.parse(JSON.stringify(where));
      const { ours, theirs } = await keeps(w, sqlWhere);
      expect(ours).toEqual(theirs);
    });
  }

  it('the cases keep some rows and drop some', async () => {
    const { theirs: some } = await keeps(cases[0][1], cases[0][2]);
    expect(some.length).toBeGreaterThan(50);
    expect(some.length).toBeLessThan(550);
  });
});

describe('selections against the expression kernels', () => {
  const D = (precision: number, scale: number) => ({ id: 'decimal', precision, scale });
  const n = 4000;
  /** A 1-lane column of scaled integers (some beyond 2^53), every seventh null. */
  function words64(type: object, gen: (i: number) => bigint) {
    const values = new BigInt64Array(n),
      valid = new Uint8Array(n).fill(1);
    for (let i = 0; i < n; i++) {
      values[i] = gen(i);
      if (i % 7 === 0) valid[i] = 0;
    }
    return { type, length: n, values, valid };
  }
  function words128(gen: (i: number) => bigint) {
    const values = new BigInt64Array(2 * n),
      valid = new Uint8Array(n).fill(1);
    for (let i = 0; i < n; i++) {
      const x = gen(i);
      values[2 * i] = BigInt.asIntN(64, x);
      values[2 * i + 1] = x >> 64n;
      if (i % 5 === 0) valid[i] = 0;
    }
    return { type: D(30, 4), length: n, values, valid };
  }
  const r = (i: number, m: number) => BigInt(((i * 2654435761) >>> 0) % m) - BigInt(m >> 1);
  const cols = [
    words64(D(15, 2), (i) => r(i, 20001)),
    words64({ id: 'int64' }, (i) =>
      i % 3 === 0 ? 2n ** 53n + r(i, 9) : i % 3 === 1 ? -(2n ** 60n) + r(i, 9) : r(i, 101),
    ),
    words128((i) => (i % 2 ? r(i, 2001) * 10n ** 20n + r(i, 97) : r(i, 2001))),
    {
      type: { id: 'int32' },
      length: n,
      values: Int32Array.from({ length: n }, (_, i) => Number(r(i, 301))),
      valid: null,
    },
  ];
  const batch = { length: n, columns: cols };
  const colE = (k: number) => ({ k: 'col', col: k, type: cols[k].type, name: `c${k}` });
  const lit = (value: bigint, type: object) => ({ k: 'lit', value, type });
  const fn = (name: string, ...args: object[]) => ({ k: 'fn', fn: name, args, type: { id: 'bool' }, what: 'test' });
  const constants: [bigint, object][] = [
    [0n, { id: 'int64' }],
    [-3n, { id: 'int64' }],
    [12345n, D(10, 3)],
    [-12345n, D(10, 3)],
    [-999n, D(5, 2)],
    [7n, D(3, 1)],
    [2n ** 53n + 1n, { id: 'int64' }],
    [-(2n ** 60n) + 2n, { id: 'int64' }],
    [5n * 10n ** 22n + 3n, D(30, 4)],
    [-(10n ** 23n), D(30, 4)],
  ];

  it('every operator, every constant: the rows the kernels find true', () => {
    let kept = 0,
      checked = 0;
    for (let k = 0; k < cols.length; k++) {
      for (const [c, t] of constants) {
        for (const op of ['<', '<=', '>', '>=', '=', '!=']) {
          for (const e of [
            fn(op, colE(k), lit(c, t)),
            fn(op, lit(c, t), colE(k)),
            fn('and', fn(op, colE(k), lit(c, t)), fn('>', colE(k), lit(-5n, { id: 'int64' }))),
          ]) {
            const want = compileExpr(e as never)(batch as never);
            const expected: number[] = [];
            for (let i = 0; i < n; i++)
              if (want.values[i] === 1 && (want.valid === null || want.valid[i] === 1)) expected.push(i);
            const got = compileFilter(e as never)(batch as never);
            expect(Array.from(got.idx.subarray(0, got.n)), `${op} on column ${k}, constant ${c}`).toEqual(expected);
            kept += expected.length;
            checked += n;
          }
        }
      }
    }
    expect(kept).toBeGreaterThan(checked / 10);
    expect(kept).toBeLessThan(checked);
  });
});
