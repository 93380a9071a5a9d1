// Aggregates without GROUP BY (agg/ungrouped.ts: no group ids, sums and min/max in local variables) against DuckDB:
// every function over integers of each width, int64 beyond 2^53, floats with NaN and -0, decimals of 64 and 128
// bits (sums near 38 digits), dates, timestamps, strings and booleans (the grouped kernels' fallback); with nulls,
// under a dense filter (its selection carried to the combiner, expr/deferred.ts), a sparse one and one that keeps
// nothing; with and without combiners, on the pool and on the calling thread. Then the kernels against the grouped
// path over one group, state for state (the same words, the same float roundings), and the overflow errors of both.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runSql } from '../dist/index.js';
import { aggregateBatch } from '../dist/agg/functions.js';
import { finalAggregate, partialAggregate, partialSchema } from '../dist/agg/partial.js';
import { ungroupedAggregate } from '../dist/agg/ungrouped.js';
import { arrowTyped, duckTable, expectTypedEqual, sql, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-ungrouped-');
const T = path.join(dir, 't.parquet'),
  BIG = path.join(dir, 'big.parquet'),
  HUGE = path.join(dir, 'huge.parquet');

beforeAll(async () => {
  // 30,000 rows in row groups of 7,000 (map tasks); `big` and `neg` beyond 2^53 whose words differ in the low half
  // only (max/min compare the upper word signed, the lower unsigned), `b47` summing beyond 2^53 within int64
  await writeParquet(
    T,
    `SELECT i::BIGINT AS id, CASE WHEN i % 11 = 0 THEN NULL ELSE (i * 37 % 1001 - 500)::INTEGER END AS x,
      (i % 200 - 100)::TINYINT AS s8, CASE WHEN i % 5 = 0 THEN NULL ELSE (i * 13 % 30001 - 15000)::SMALLINT END AS s16,
      (i * 2654435761 % 4294967296)::UINTEGER AS u32,
      CASE WHEN i % 2 = 0 THEN 1152921504606846976 + i * 4099 ELSE -1152921504606846976 - i * 4097 END::BIGINT AS big,
      (-4611686018427387904 + (i * 2147483659) % 4294967296)::BIGINT AS neg,
      (140737488355328 + i * 7)::BIGINT AS b47,
      CASE WHEN i % 13 = 0 THEN NULL ELSE (i % 17) * 1.25 - 9.5 END::DOUBLE AS f,
      CASE WHEN i % 3 = 0 THEN NULL ELSE (i % 29) * 0.5 - 7 END::REAL AS r,
      CASE WHEN i = 7001 THEN 'NaN'::DOUBLE WHEN i % 2 = 0 THEN -0.0 ELSE 0.0 END::DOUBLE AS z,
      CASE WHEN i % 9 = 0 THEN NULL ELSE ((i * 7919) % 200001 - 100000) / 100 END::DECIMAL(12,2) AS d,
      CASE WHEN i % 7 = 0 THEN NULL
        ELSE ((i * 7919) % 2001 - 1000)::DECIMAL(38,2) * 3000000000000000000000000000000 END::DECIMAL(38,2) AS w,
      DATE '2020-01-01' + (i * 31 % 900)::INTEGER AS day,
      TIMESTAMP '2021-03-04 05:06:07' + to_microseconds(i * 1000003) AS ts,
      CASE WHEN i % 4 = 0 THEN NULL ELSE 'v' || (i * 7 % 23) END AS s, i % 3 = 1 AS flag
    FROM range(0, 30000) t(i)`,
    7000,
  );
  // one row group: two decimal(38,0) values summing beyond 38 digits, two int64 values beyond 64 bits
  await writeParquet(
    BIG,
    `SELECT 60000000000000000000000000000000000000::DECIMAL(38,0) AS w, 4611686018427387904::BIGINT AS b, 1 AS k
     FROM range(0, 2)`,
  );
  // decimal(38,0) summing to 10^38 - 1 exactly: the largest sum that fits
  await writeParquet(
    HUGE,
    `SELECT CASE WHEN i = 0 THEN 49999999999999999999999999999999999999
      ELSE 50000000000000000000000000000000000000 END::DECIMAL(38,0) AS w FROM range(0, 2) t(i)`,
  );
  await sql(`CREATE OR REPLACE VIEW t AS SELECT * FROM read_parquet('${T}')`);
  await sql(`CREATE OR REPLACE VIEW huge AS SELECT * FROM read_parquet('${HUGE}')`);
});

const AGGS = `count(*) AS n, count(x) AS nx, sum(x) AS sx, avg(x) AS ax, min(x) AS lx, max(x) AS hx,
  sum(s8) AS s8, min(s8) AS l8, max(s16) AS h16, sum(s16) AS s16, avg(s16) AS a16, sum(u32) AS su, max(u32) AS hu,
  min(big) AS lbig, max(big) AS hbig, min(neg) AS lneg, max(neg) AS hneg, sum(b47) AS s47, avg(b47) AS a47, count(f) AS nf, sum(f) AS sf, avg(f) AS af, min(f) AS lf, max(f) AS hf,
  sum(r) AS sr, min(r) AS lr, max(r) AS hr, min(z) AS lz, max(z) AS hz, count(d) AS nd, sum(d) AS sd, avg(d) AS ad,
  min(d) AS ld, max(d) AS hd, sum(w) AS sw, avg(w) AS aw, min(w) AS lw, max(w) AS hw, min(day) AS lday,
  max(day) AS hday, min(ts) AS lts, max(ts) AS hts, count(s) AS ns, min(s) AS ls, max(s) AS hs, min(flag) AS lflag,
  max(flag) AS hflag`;

const POOL = { workers: 2, inThreadBytes: 0 },
  THREAD = { inThreadBytes: '1GB' };

async function same(text: string, opts: object) {
  const r = await runSql(text, { sources: { t: T, huge: HUGE }, ...opts });
  expectTypedEqual(arrowTyped(r.toArrow()), await duckTable(text));
}

describe('aggregates without GROUP BY against DuckDB', () => {
  const WHERE = {
    all: '',
    dense: ' WHERE id % 10 <> 3', // 90% kept: the selection is carried to the combiner
    sparse: ' WHERE id % 10 = 3',
    none: ' WHERE id < 0',
    nulls: ' WHERE x IS NULL', // every x null: sum, min, max null, count 0
  };
  for (const [where, cond] of Object.entries(WHERE))
    for (const [on, opts] of Object.entries({ pool: POOL, 'calling thread': THREAD }))
      it(`every function, ${where} rows, on the ${on}, with and without combiners`, async () => {
        for (const combiners of [true, false]) await same(`SELECT ${AGGS} FROM t${cond}`, { ...opts, combiners });
      });

  it('computed columns under a dense filter, sums of values beyond 2^53 (balanced: within int64)', async () => {
    for (const opts of [POOL, THREAD]) {
      await same(
        `SELECT count(*) AS n, sum(d * 3) AS sd3, sum(d * d) AS dd, max(f * 2) AS hf2, avg(f * 2) AS af2
          FROM t WHERE id % 10 <> 3`,
        opts,
      );
      await same(
        `SELECT sum(big) AS s, avg(big) AS a, max(big) AS h, count(big) AS n FROM t WHERE id % 10 NOT IN (3, 4)`,
        opts,
      );
    }
  });

  it('a decimal(38,0) sum of exactly 10^38 - 1', async () => {
    for (const opts of [POOL, THREAD]) await same('SELECT sum(w) AS s, avg(w) AS a, count(*) AS n FROM huge', opts);
  });
});

describe('overflow: the grouped path errors', () => {
  // one row group (one map task): the partial sum that overflows is the whole sum, with one group or none
  for (const [c, msg] of [
    ['w', /sum of "s": decimal result 120000000000000000000000000000000000000 is beyond 38 digits$/],
    ['b', /sum of "s" overflows a 64-bit integer \(9223372036854775808\)$/],
  ] as const)
    it(`sum(${c}): the same message with GROUP BY a constant and without`, async () => {
      const run = (text: string, combiners: boolean) =>
        runSql(text, { sources: { big: BIG }, combiners, ...THREAD }).then(
          () => 'no error',
          (e: Error) => e.message,
        );
      for (const combiners of [true, false]) {
        const ungrouped = await run(`SELECT sum(${c}) AS s FROM big`, combiners);
        expect(ungrouped).toMatch(msg);
        // with combiners the map task's partial sum overflows, without them the aggregate's
        expect(ungrouped.includes('partial sum of')).toBe(combiners);
        expect(ungrouped).toBe(await run(`SELECT k, sum(${c}) AS s FROM big GROUP BY k`, combiners));
      }
    });
});

// ---- the kernels against the grouped path over one group ----

type Values = Int8Array | Int16Array | Int32Array | BigInt64Array | Float32Array | Float64Array | Uint8Array;
const col = (id: string, values: Values, valid: Uint8Array | null = null, extra: object = {}) => ({
  type: { id, ...extra },
  length: id === 'decimal' && (extra as any).precision > 18 ? values.length / 2 : values.length,
  values,
  valid,
});

/** A batch of every kernel's input type, n rows (random values, nulls), and a constant key column last. */
function batchOf(n: number, seed: number) {
  let s = seed;
  const rnd = () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
  const nulls = () => Uint8Array.from({ length: n }, () => (rnd() < 0.2 ? 0 : 1));
  const i32 = Int32Array.from({ length: n }, () => Math.floor((rnd() - 0.5) * 4e9));
  const i8 = Int8Array.from({ length: n }, () => Math.floor((rnd() - 0.5) * 250));
  const i64 = BigInt64Array.from(
    { length: n },
    () => BigInt(Math.floor((rnd() - 0.5) * 2 ** 56)) + BigInt(Math.floor(rnd() * 1000)),
  );
  const f64 = Float64Array.from({ length: n }, () => (rnd() - 0.5) * 1e6);
  const f32 = Float32Array.from({ length: n }, () => (rnd() - 0.5) * 1e3);
  const d64 = BigInt64Array.from({ length: n }, () => BigInt(Math.floor((rnd() - 0.5) * 2 ** 53)));
  const d128 = new BigInt64Array(2 * n);
  for (let i = 0; i < n; i++) {
    const x = BigInt(Math.floor((rnd() - 0.5) * 2 ** 53)) * 10n ** BigInt(Math.floor(rnd() * 20));
    d128[2 * i] = BigInt.asIntN(64, x);
    d128[2 * i + 1] = x >> 64n;
  }
  const columns = [
    col('int32', i32, nulls()),
    col('int8', i8),
    col('int64', i64, nulls()),
    col('float64', f64, nulls()),
    col('float32', f32),
    // no nulls: the loops over every row (min and max apart)
    col(
      'int64',
      i64.map((v, i) => (i % 2 ? -v : v - 3n)),
    ),
    col(
      'float64',
      f64.map((v, i) => (i === n >> 1 ? Number.NaN : i % 7 === 0 ? -0 : i === 3 ? -v * 1e300 : v)),
    ),
    col('decimal', d64, nulls(), { precision: 18, scale: 2 }),
    col('decimal', d128, nulls(), { precision: 38, scale: 3 }),
    col('int32', new Int32Array(n).fill(7)),
  ];
  return { length: n, columns };
}

const FNS = ['count', 'sum', 'avg', 'min', 'max'];
const aggsOf = (nCols: number) => [
  { fn: 'count', col: -1, as: 'n', type: { id: 'int64' } },
  ...Array.from({ length: nCols }, (_, c) =>
    FNS.map((fn) => ({ fn, col: c, as: `${fn}${c}`, type: { id: 'int64' } })),
  ).flat(),
];

/** A column's rows as comparable values: nulls as null, every lane. */
function cells(c: any): unknown[] {
  const lanes = c.values.length / c.length;
  return Array.from({ length: c.length }, (_, i) =>
    c.valid && c.valid[i] === 0 ? null : Array.from(c.values.slice(i * lanes, (i + 1) * lanes), (v) => String(v)),
  );
}
const sameColumns = (a: any[], b: any[]) => {
  expect(a.map((c) => c.type)).toEqual(b.map((c) => c.type));
  expect(a.map(cells)).toEqual(b.map(cells));
};

describe('the kernels: the grouped path over one group, state for state', () => {
  it('min and max of floats at their edges: NaN above every number, infinities, -0 and 0 (the first of equals)', () => {
    const I = Number.POSITIVE_INFINITY,
      N = Number.NaN;
    for (const vals of [
      [-I, -I],
      [I, I],
      [I, N, I],
      [N, N],
      [N, I],
      [-0, 0, 0],
      [0, -0],
      [1, N, 2],
      [N, -I, 3],
      [-I],
    ]) {
      const c = col('float64', Float64Array.from(vals));
      const b = { length: vals.length, columns: [c, col('int32', new Int32Array(vals.length))] };
      const aggs = ['min', 'max'].map((fn) => ({ fn, col: 0, as: fn, type: { id: 'float64' } }));
      const schema = partialSchema([{ name: 'c', type: c.type }], [], aggs);
      const got = partialAggregate(b, [], aggs, schema).columns.map((x: any) =>
        Object.is(x.values[0], -0) ? '-0' : String(x.values[0]),
      );
      const want = aggregateBatch(b, [1], aggs, [])
        .columns.slice(1)
        .map((x: any) => (Object.is(x.values[0], -0) ? '-0' : String(x.values[0])));
      expect(got, JSON.stringify(vals)).toEqual(want);
    }
  });

  for (const n of [0, 1, 3, 5000])
    it(`${n} rows: partial states (all rows and a selection), merged states, one batch aggregated`, () => {
      const b = batchOf(n, 17 + n);
      const key = b.columns.length - 1,
        aggs = aggsOf(key);
      const input = b.columns.map((c, i) => ({ name: `c${i}`, type: c.type }));
      const schemaG = partialSchema(input, [key], aggs),
        schema = partialSchema(input, [], aggs);
      const picked = Int32Array.from({ length: n }, (_, i) => i).filter((i) => i % 3 !== 1);
      for (const sel of [undefined, { idx: picked, n: picked.length }]) {
        const grouped = partialAggregate(b, [key], aggs, schemaG, sel);
        const ungrouped = partialAggregate(b, [], aggs, schema, sel);
        expect(ungrouped.length).toBe(1);
        if (n === 0 || (sel && sel.n === 0)) expect(grouped.length).toBe(0);
        else sameColumns(ungrouped.columns, grouped.columns.slice(1));
      }
      // states of two batches merged: with a key column, and without
      const s1 = partialAggregate(b, [key], aggs, schemaG),
        s2 = partialAggregate(batchOf(n, 5 + n), [key], aggs, schemaG);
      if (n > 0) {
        const both = {
          length: 2,
          columns: s1.columns.map((c: any, i: number) => {
            const d: any = s2.columns[i];
            const values = new (c.values.constructor as any)(c.values.length + d.values.length);
            values.set(c.values);
            values.set(d.values, c.values.length);
            const valid = c.valid || d.valid ? Uint8Array.of(...(c.valid ?? [1]), ...(d.valid ?? [1])) : null;
            return { ...c, length: 2, values, valid };
          }),
        };
        const out = aggs.map((a) => ({ name: a.as, type: a.type }));
        const fin = finalAggregate({ length: 2, columns: both.columns.slice(1) }, 0, aggs, out);
        const finG = finalAggregate(both, 1, aggs, out);
        sameColumns(fin.columns, finG.columns.slice(1));
      }
      const one = ungroupedAggregate(b, aggs);
      const oneG = aggregateBatch(b, [key], aggs, []);
      if (n > 0) sameColumns(one.columns, oneG.columns.slice(1));
      else expect(cells(one.columns[0])).toEqual([['0']]);
    });
});
