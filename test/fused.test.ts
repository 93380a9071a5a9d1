// The scan → compute → aggregate kernels of the TPC-H path: exact arithmetic
// fused into one generated loop (float64 below 2^53, the general bigint
// kernels for a batch beyond it), one-pass decimal sums over 64- and 128-bit
// lanes, and the combiner that merges per-batch partial states. Against
// DuckDB, and against the general kernels and bigint arithmetic on edge
// values: nulls, negative decimals, values past 2^53 and past 64 bits.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runPlan } from '../dist/index.js';
import { compileExpr } from '../dist/expr/compile.js';
import { arith } from '../dist/expr/arith.js';
import { constColumn } from '../dist/expr/vector.js';
import { decimalAt, concatBatches } from '../dist/kernels/column.js';
import { decimalSums } from '../dist/kernels/decimal.js';
import { combine } from '../dist/agg/combiner.js';
import { partialAggregate, partialSchema } from '../dist/agg/partial.js';
import { groupsOf } from '../dist/agg/aggregate.js';
import { cellText } from '../dist/io/output.js';
import { duckRows, sorted, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-fused-');
const T = `read_parquet('${path.join(dir, 't.parquet')}')`;
const col = (column: string) => ({ column });
const v = (value: unknown, type?: string) => (type ? { value, type } : { value });
const f = (fn: string, ...args: object[]) => ({ fn, args });

beforeAll(async () => {
  // row groups of 100: the rows past 2^53 (a, w) sit in some batches only, so some batches fuse and others fall back
  await writeParquet(
    path.join(dir, 't.parquet'),
    `SELECT i AS id, i % 5 AS g,
      CASE WHEN i % 6 = 0 THEN NULL ELSE (((i * 7919) % 200003 - 100000) / 100)::DECIMAL(15,2) END AS p,
      CASE WHEN i % 4 = 0 THEN NULL ELSE (((i * 31) % 2001 - 1000) / 1000)::DECIMAL(5,3) END AS q,
      CASE WHEN i BETWEEN 300 AND 399 THEN 9007199254740000 + i ELSE (i * 37) % 2001 - 1000 END::BIGINT AS a,
      CASE WHEN i % 7 = 0 THEN NULL ELSE (i * 13) % 61 - 30 END::INTEGER AS b,
      CASE WHEN i % 8 = 0 THEN NULL WHEN i BETWEEN 500 AND 599 THEN (i - 550) * 12345678901234567890123.4567
        ELSE ((i * 104729) % 1000003 - 500000) / 10000 END::DECIMAL(30,4) AS w,
      CASE WHEN i % 9 = 0 THEN NULL ELSE ['', 'A', 'N', 'R', 'ab', 'abc', 'é', 'F'][i % 8 + 1] END AS flag,
      CASE WHEN i = 777 THEN 'a longer code' WHEN i % 3 = 0 THEN 'O' ELSE 'F' END AS status
    FROM range(0, 800) t(i)`,
    100,
  );
});

describe('fused exact arithmetic and sums, against DuckDB', () => {
  it('projections: decimals of several scales, 64-bit and 128-bit values, nulls', async () => {
    const exprs: [object, string][] = [
      [f('*', f('*', col('p'), f('-', v(1), col('q'))), f('+', v(1), col('q'))), 'p * (1 - q) * (1 + q)'],
      [f('-', f('*', col('a'), col('b')), col('p')), 'a * b - p'],
      [f('+', col('w'), col('p')), 'w + p'],
      [f('*', col('w'), col('q')), 'w * q'],
      [f('-', col('a'), f('*', col('b'), v(1000))), 'a - b * 1000'],
    ];
    const r = await runPlan(
      {
        version: 1,
        sources: { t: { parquet: 't.parquet' } },
        query: {
          op: 'project',
          input: { op: 'scan', source: 't' },
          columns: [{ name: 'id', expr: col('id') }, ...exprs.map(([e], i) => ({ name: `c${i}`, expr: e }))],
        },
      },
      { baseDir: dir, workers: 2 },
    );
    const ours = r
      .toRows()
      .map((x) => [String(x.id), ...exprs.map((_, i) => (x[`c${i}`] === null ? null : String(x[`c${i}`])))]);
    const theirs = await duckRows(
      `SELECT id::VARCHAR, ${exprs.map(([, s]) => `(${s})::VARCHAR`).join(', ')} FROM ${T}`,
    );
    expect(sorted(ours)).toEqual(sorted(theirs));
  });

  it('grouped sums and averages of expressions, beyond 64 bits in some groups', async () => {
    const r = await runPlan(
      {
        version: 1,
        sources: { t: { parquet: 't.parquet' } },
        query: {
          op: 'aggregate',
          input: { op: 'scan', source: 't' },
          groupBy: ['g'],
          aggregates: [
            { fn: 'sum', expr: f('*', col('p'), f('-', v(1), col('q'))), as: 's1' },
            { fn: 'sum', column: 'w', as: 's2' },
            { fn: 'avg', column: 'w', as: 'a2' },
            { fn: 'sum', column: 'p', as: 's3' },
            { fn: 'avg', column: 'p', as: 'a3' },
            { fn: 'sum', expr: f('+', col('w'), col('p')), as: 's4' },
            { fn: 'count', column: 'q', as: 'n' },
          ],
        },
      },
      { baseDir: dir, workers: 2, partitions: 2 },
    );
    const ours = r
      .toRows()
      .map((x) => [
        String(x.g),
        x.s1,
        x.s2,
        Number(x.a2).toPrecision(9),
        x.s3,
        Number(x.a3).toPrecision(9),
        x.s4,
        String(x.n),
      ]);
    const theirs = (
      await duckRows(
        `SELECT g::VARCHAR, sum(p * (1 - q))::VARCHAR, sum(w)::VARCHAR, avg(w), sum(p)::VARCHAR, avg(p), sum(w + p)::VARCHAR, count(q)::VARCHAR FROM ${T} GROUP BY g`,
      )
    ).map((x) => [x[0], x[1], x[2], Number(x[3]).toPrecision(9), x[4], Number(x[5]).toPrecision(9), x[6], x[7]]);
    expect(sorted(ours)).toEqual(sorted(theirs));
  });
});

describe('grouping by short strings (as integer codes)', () => {
  it('codes of up to 3 bytes, empty and null values, and a column with one longer value, as DuckDB groups them', async () => {
    for (const by of [['flag'], ['flag', 'status'], ['status', 'g']]) {
      const r = await runPlan(
        {
          version: 1,
          sources: { t: { parquet: 't.parquet' } },
          query: {
            op: 'aggregate',
            input: { op: 'scan', source: 't' },
            groupBy: by,
            aggregates: [
              { fn: 'count', as: 'n' },
              { fn: 'sum', column: 'p', as: 's' },
            ],
          },
        },
        { baseDir: dir, workers: 2, partitions: 2 },
      );
      const ours = r.toRows().map((x) => [...by.map((k) => (x[k] === null ? null : String(x[k]))), String(x.n), x.s]);
      const theirs = await duckRows(
        `SELECT ${by.map((k) => `${k}::VARCHAR`).join(', ')}, count(*)::VARCHAR, sum(p)::VARCHAR FROM ${T} GROUP BY ${by.join(', ')}`,
      );
      expect(theirs.length).toBeGreaterThan(3);
      expect(sorted(ours)).toEqual(sorted(theirs));
    }
  });
});

describe('grouping by strings of up to 8 bytes (as 64-bit words)', () => {
  it('values of 4 to 8 bytes, multi-byte characters, empty and null; a zero byte or a 9-byte value keeps the bytes; as DuckDB groups them', async () => {
    const U = path.join(dir, 'u.parquet');
    await writeParquet(
      U,
      `SELECT i % 4 AS g, (i % 100)::BIGINT AS v,
        CASE WHEN i % 13 = 0 THEN NULL ELSE ['', 'east', 'islands', 'mountain', 'abcdefgh', 'abcdefg', 'né', 'éééé', 'abcd', 'abc'][i % 10 + 1] END AS s8,
        ['a', 'a' || chr(0), 'abcd', 'abcd' || chr(0), 'abcdefg' || chr(0), chr(0)][i % 6 + 1] AS z,
        CASE WHEN i = 5 THEN 'abcdefghi' ELSE ['east', 'west', 'mountain'][i % 3 + 1] END AS long9
      FROM range(0, 1000) t(i)`,
      250,
    );
    for (const by of [['s8'], ['z'], ['long9'], ['s8', 'g'], ['g', 'z']]) {
      const r = await runPlan(
        {
          version: 1,
          sources: { u: { parquet: U } },
          query: {
            op: 'aggregate',
            input: { op: 'scan', source: 'u' },
            groupBy: by,
            aggregates: [
              { fn: 'count', as: 'n' },
              { fn: 'sum', column: 'v', as: 's' },
            ],
          },
        },
        { baseDir: dir, workers: 2, partitions: 2 },
      );
      const ours = r
        .toRows()
        .map((x) => [...by.map((k) => (x[k] === null ? null : String(x[k]))), String(x.n), String(x.s)]);
      const theirs = await duckRows(
        `SELECT ${by.map((k) => `${k}::VARCHAR`).join(', ')}, count(*)::VARCHAR, sum(v)::VARCHAR FROM read_parquet('${U}') GROUP BY ${by.join(', ')}`,
      );
      expect(theirs.length).toBeGreaterThan(2);
      expect(sorted(ours)).toEqual(sorted(theirs));
    }
  });
  it('groupsOf: one group per distinct value, "a" and "a\\0" apart', () => {
    const vals = ['mountain', 'a', 'a\0', 'east', 'mountain', '', 'a', 'é', 'a\0'];
    const bytes = vals.map((x) => new TextEncoder().encode(x));
    const offsets = new Int32Array(vals.length + 1);
    bytes.forEach((b, i) => {
      offsets[i + 1] = offsets[i] + b.length;
    });
    const values = new Uint8Array(offsets[vals.length]);
    bytes.forEach((b, i) => values.set(b, offsets[i]));
    const g = groupsOf(
      { length: vals.length, columns: [{ type: { id: 'utf8' }, length: vals.length, values, offsets, valid: null }] },
      [0],
    );
    expect(g.nGroups).toBe(6);
    expect([...g.gid]).toEqual([0, 1, 2, 3, 0, 4, 1, 5, 2]);
  });
});

describe('dense filters before a combiner: the selection carried, not gathered', () => {
  const dropped = { left: f('%', col('id'), v(10)), cmp: '!=', right: v(3) }; // keeps 90% of each batch
  it('groups only in dropped rows vanish; an overflow only in dropped rows is no error; the combiner counts kept rows', async () => {
    const key = {
      case: [{ when: { left: f('%', col('id'), v(10)), cmp: '=', right: v(3) }, then: v('gone') }],
      else: col('flag'),
    };
    const plan = (groupBy: string[]) => ({
      version: 1,
      sources: { t: { parquet: 't.parquet' } },
      query: {
        op: 'aggregate',
        groupBy,
        aggregates: [
          { fn: 'sum', expr: f('*', col('p'), f('-', v(1), col('q'))), as: 's' },
          { fn: 'avg', column: 'w', as: 'aw' },
          { fn: 'min', column: 'p', as: 'mn' },
          { fn: 'max', column: 'k', as: 'mk' },
          { fn: 'count', column: 'q', as: 'nq' },
          { fn: 'count', as: 'n' },
          { fn: 'sum', expr: f('*', col('big'), v(100)), as: 'sb' },
        ],
        input: {
          op: 'filter',
          where: dropped,
          input: {
            op: 'project',
            input: { op: 'scan', source: 't' },
            columns: [
              'id',
              'p',
              'q',
              'w',
              { name: 'k', expr: key },
              {
                name: 'big',
                expr: {
                  case: [
                    {
                      when: { left: f('%', col('id'), v(10)), cmp: '=', right: v(3) },
                      then: v('9223372036854775000', 'int64'),
                    },
                  ],
                  else: col('b'),
                },
              },
            ],
          },
        },
      },
    });
    const sql = (
      by: string,
    ) => `SELECT ${by ? `${by}::VARCHAR, ` : ''}sum(p * (1 - q))::VARCHAR, avg(w), min(p)::VARCHAR, max(k), count(q)::VARCHAR, count(*)::VARCHAR, sum(big * 100)::VARCHAR
      FROM (SELECT *, CASE WHEN id % 10 = 3 THEN 'gone' ELSE flag END AS k, CASE WHEN id % 10 = 3 THEN 9223372036854775000 ELSE b END AS big FROM ${T}) WHERE id % 10 <> 3 ${by ? `GROUP BY ${by}` : ''}`;
    for (const by of [['k'], []]) {
      const r = await runPlan(plan(by) as never, { baseDir: dir, workers: 2, partitions: 2 });
      const ours = r
        .toRows()
        .map((x) => [
          ...by.map((c) => (x[c] === null ? null : String(x[c]))),
          x.s,
          Number(x.aw).toPrecision(9),
          x.mn,
          x.mk,
          String(x.nq),
          String(x.n),
          String(x.sb),
        ]);
      const theirs = (await duckRows(sql(by.join(', ')))).map((x) => {
        const o = by.length;
        return [...x.slice(0, o), x[o], Number(x[o + 1]).toPrecision(9), ...x.slice(o + 2)];
      });
      expect(sorted(ours)).toEqual(sorted(theirs));
      expect(ours.some((x) => x[0] === 'gone')).toBe(false);
      expect(r.stats.shuffles[0].combine.rowsBefore).toBe(720);
    }
  });
});

describe('dense filters before a combiner that passes rows through', () => {
  it('a high-cardinality group-by behind a dense filter: pass-through states of the kept rows only', async () => {
    await writeParquet(
      path.join(dir, 'u.parquet'),
      `SELECT i AS id, i % 20000 AS k, (((i * 7919) % 20001 - 10000) / 100)::DECIMAL(12,2) AS p FROM range(0, 40000) t(i)`,
      40000,
    );
    const r = await runPlan(
      {
        version: 1,
        sources: { u: { parquet: 'u.parquet' } },
        query: {
          op: 'aggregate',
          groupBy: ['k'],
          aggregates: [
            { fn: 'sum', expr: f('*', col('p'), v(2)), as: 's' },
            { fn: 'count', as: 'n' },
          ],
          input: {
            op: 'filter',
            where: { left: f('%', col('id'), v(7)), cmp: '!=', right: v(0) },
            input: { op: 'scan', source: 'u' },
          },
        },
      },
      { baseDir: dir, workers: 1, partitions: 2 },
    );
    const ours = r.toRows().map((x) => [String(x.k), x.s, String(x.n)]);
    const theirs = await duckRows(
      `SELECT k::VARCHAR, sum(p * 2)::VARCHAR, count(*)::VARCHAR FROM read_parquet('${path.join(dir, 'u.parquet')}') WHERE id % 7 <> 0 GROUP BY k`,
    );
    expect(sorted(ours)).toEqual(sorted(theirs));
    const c = r.stats.shuffles[0].combine;
    expect(c.passThroughTasks).toBeGreaterThan(0);
    expect(c.rowsBefore).toBe(40000 - Math.ceil(40000 / 7));
  });
});

describe('kernels against bigint arithmetic', () => {
  const D = (precision: number, scale: number) => ({ id: 'decimal', precision, scale });
  const n = 3000,
    rows = n;
  const rnd = (i: number, m: number) => BigInt(((i * 2654435761) >>> 0) % m) - BigInt(m >> 1);
  function column(type: { id: string; precision?: number }, gen: (i: number) => bigint, nullEvery: number, n = rows) {
    const wide = type.id === 'decimal' && type.precision! > 18;
    const values = new BigInt64Array(wide ? 2 * n : n),
      valid = new Uint8Array(n).fill(1);
    for (let i = 0; i < n; i++) {
      const x = gen(i);
      if (wide) {
        values[2 * i] = BigInt.asIntN(64, x);
        values[2 * i + 1] = x >> 64n;
      } else values[i] = x;
      if (i % nullEvery === 0) valid[i] = 0;
    }
    return { type, length: n, values, valid };
  }

  it('a fused tree equals the general kernels, row by row, on batches that fit and batches that do not', () => {
    const price = column(D(15, 2), (i) => rnd(i, 2000001), 9);
    const disc = column(D(15, 2), (i) => rnd(i, 21), 11);
    for (const big of [false, true]) {
      const a = column({ id: 'int64' }, (i) => (big && i === 1234 ? 2n ** 53n + 7n : rnd(i, 100001)), 13);
      const b = { length: n, columns: [price, disc, a] };
      const c = (k: number, type: object) => ({ k: 'col', col: k, type, name: `c${k}` });
      const one = { k: 'lit', value: 1n, type: { id: 'int64' } };
      const minus = { k: 'fn', fn: '-', args: [one, c(1, D(15, 2))], type: D(16, 2), what: 'x' };
      const e = {
        k: 'fn',
        fn: '*',
        args: [{ k: 'fn', fn: '*', args: [c(0, D(15, 2)), minus], type: D(31, 4), what: 'x' }, c(2, { id: 'int64' })],
        type: D(38, 4),
        what: 'x',
      };
      const got = compileExpr(e as never)(b as never);
      const general = arith(
        '*',
        arith(
          '*',
          price as never,
          arith('-', constColumn(1n, { id: 'int64' }, n), disc as never, D(16, 2) as never, 'x'),
          D(31, 4) as never,
          'x',
        ),
        a as never,
        D(38, 4) as never,
        'x',
      );
      for (let i = 0; i < n; i++) {
        const valid = general.valid === null || general.valid[i] === 1;
        expect(got.valid === null || got.valid[i] === 1).toBe(valid);
        if (valid) expect(decimalAt(got, i)).toBe(decimalAt(general, i));
      }
      if (big)
        expect(decimalAt(got, 1234)).toBe(
          BigInt.asIntN(64, price.values[1234]) * (100n - disc.values[1234]) * (2n ** 53n + 7n),
        );
    }
  });

  it('decimal sums: 64-bit lanes and 128-bit lanes, negative, past 64 bits, nulls, per group', () => {
    const cases = [
      column(D(15, 2), (i) => rnd(i, 2 * 10 ** 9) * 1000n, 7),
      column(D(30, 4), (i) => (i % 3 === 0 ? rnd(i, 999) * 10n ** 24n + rnd(i + 1, 1000) : rnd(i, 10 ** 9)), 5),
      column(D(38, 0), (i) => (i % 2 ? -(10n ** 37n) + BigInt(i) : 10n ** 37n - BigInt(i)), 4),
    ];
    const groups = 9,
      gid = Int32Array.from({ length: n }, (_, i) => (i * 31 + 5) % groups);
    for (const c of cases) {
      const want: bigint[] = new Array(groups).fill(0n),
        cnt = new Float64Array(groups);
      for (let i = 0; i < n; i++)
        if (c.valid[i]) {
          want[gid[i]] += decimalAt(c as never, i);
          cnt[gid[i]]++;
        }
      cnt[3] = 0; // a group with no value is null
      const got = decimalSums(c as never, gid, groups, cnt);
      expect(got).toEqual(want.map((x, k) => (k === 3 ? null : x)));
    }
  });

  it('the combiner merges partial states of several batches into those of their concatenation', () => {
    const schema = [
      { name: 'g', type: { id: 'int32' } },
      { name: 'p', type: D(15, 2) },
      { name: 'w', type: D(30, 4) },
    ];
    const batches = [0, 1, 2].map((k) => {
      const m = 700 + k * 100;
      const g = {
        type: schema[0].type,
        length: m,
        values: Int32Array.from({ length: m }, (_, i) => (i * (k + 3)) % 11),
        valid: null,
      };
      const p = column(D(15, 2), (i) => rnd(i + k, 20001), 3, m);
      const w = column(D(30, 4), (i) => rnd(i * 7 + k, 2001) * 10n ** 20n, 4, m);
      return { length: m, columns: [g, p, w] };
    });
    const aggs = [
      { fn: 'sum', col: 1, as: 's', type: D(38, 2), decimal: true },
      { fn: 'avg', col: 2, as: 'a', type: { id: 'float64' }, decimal: true },
      { fn: 'count', col: -1, as: 'n', type: { id: 'int64' } },
      { fn: 'max', col: 1, as: 'm', type: D(15, 2) },
      { fn: 'sum', col: 2, as: 's2', type: D(38, 4), decimal: true },
    ];
    const c = { groupBy: [0], aggs, schema };
    const merged = combine(batches as never, c as never);
    const whole = partialAggregate(
      concatBatches(schema as never, batches as never),
      [0],
      aggs as never,
      partialSchema(schema as never, [0], aggs as never),
    );
    const rows = (b: { length: number; columns: unknown[] }) =>
      Array.from({ length: b.length }, (_, i) => b.columns.map((x) => cellText(x as never, i)));
    expect(merged.mode).toBe('partial');
    expect(merged.rowsIn).toBe(2400);
    expect(merged.batches.length).toBe(1);
    expect(merged.rowsOut).toBe(11);
    expect(sorted(rows(merged.batches[0] as never))).toEqual(sorted(rows(whole as never)));
  });

  it('a map task smaller than the pass-through sample is judged on all its rows: passed through as they came, or aggregated', () => {
    const schema = [
      { name: 'k', type: { id: 'int32' } },
      { name: 'd', type: { id: 'int32' } },
    ];
    const batch = (m: number, key: (i: number) => number, d: (i: number) => number) => ({
      length: m,
      columns: [
        { type: schema[0].type, length: m, values: Int32Array.from({ length: m }, (_, i) => key(i)), valid: null },
        { type: schema[1].type, length: m, values: Int32Array.from({ length: m }, (_, i) => d(i)), valid: null },
      ],
    });
    const count = [{ fn: 'count', col: -1, as: 'n', type: { id: 'int64' } }];
    const c = { groupBy: [0], aggs: count, schema, passRows: true };
    // 10,000 rows (below the 16,384 sampled), a key per row: the batches go on as they are, not copied
    const many = [
      batch(
        6000,
        (i) => i,
        () => 0,
      ),
      batch(
        4000,
        (i) => 6000 + i,
        () => 0,
      ),
    ];
    const passed = combine(many as never, c as never, true);
    expect(passed).toMatchObject({ mode: 'pass-through', rowsIn: 10000, rowsOut: 10000 });
    expect(passed.batches).toHaveLength(2);
    expect(passed.batches[0]).toBe(many[0]);
    // the same rows where rows may not pass (a state per row instead)
    const states = combine(many as never, c as never, false);
    expect(states.mode).toBe('pass-through');
    expect(states.batches[0].length).toBe(10000);
    // few keys: aggregated
    expect(
      combine(
        [
          batch(
            10000,
            (i) => i % 50,
            () => 0,
          ),
        ] as never,
        c as never,
        true,
      ),
    ).toMatchObject({ mode: 'partial', rowsOut: 50 });
    // few keys but a distinct (key, value) pair per row: count_distinct's states do not shrink either
    const distinct = { ...c, aggs: [{ fn: 'count_distinct', col: 1, as: 'nd', type: { id: 'int64' } }] };
    expect(
      combine(
        [
          batch(
            10000,
            (i) => i % 50,
            (i) => i,
          ),
        ] as never,
        distinct as never,
        true,
      ).mode,
    ).toBe('pass-through');
    // below 4,096 rows a task aggregates, a key per row or not
    expect(
      combine(
        [
          batch(
            3000,
            (i) => i,
            () => 0,
          ),
        ] as never,
        c as never,
        true,
      ),
    ).toMatchObject({ mode: 'partial', rowsOut: 3000 });
  });

  it('the first look: 90% of the first 4,096 rows distinct passes through at once; below that the whole sample decides', () => {
    const schema = [{ name: 'k', type: { id: 'int32' } }];
    const batch = (m: number, key: (i: number) => number) => ({
      length: m,
      columns: [
        { type: schema[0].type, length: m, values: Int32Array.from({ length: m }, (_, i) => key(i)), valid: null },
      ],
    });
    const c = {
      groupBy: [0],
      aggs: [{ fn: 'count', col: -1, as: 'n', type: { id: 'int64' } }],
      schema,
      passRows: true,
    };
    // 3,700 of the first 4,096 distinct (90.3%): through, though the rest of the sample repeats one key
    // (the whole sample, 3,700 groups in 16,384 rows, would aggregate: the first look decides)
    expect(combine([batch(20000, (i) => (i < 4096 ? i % 3700 : 0))] as never, c as never, true).mode).toBe(
      'pass-through',
    );
    // 3,500 of them (85%): the whole sample is looked at, 3,500 groups in 16,384 rows: aggregated
    expect(combine([batch(20000, (i) => (i < 4096 ? i % 3500 : 0))] as never, c as never, true)).toMatchObject({
      mode: 'partial',
      rowsOut: 3500,
    });
    // 85% first, then distinct keys: 15,788 groups in the sample, through
    expect(combine([batch(20000, (i) => (i < 4096 ? i % 3500 : i))] as never, c as never, true).mode).toBe(
      'pass-through',
    );
  });
});
