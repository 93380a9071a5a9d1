// Expressions against DuckDB on edge values: nulls in every argument,
// decimal scale changes, negative decimals, integer overflow, division by
// zero, LIKE, month steps, case unification; the plan errors they can raise;
// cross joins; and the TPC-H-shaped revenue query, exact to the cent.
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runPlan } from '../dist/index.js';
import { cellText } from '../dist/io/output.js';
import { cli, duckRows, sorted, tmpDir, writeParquet, writePlan } from './helpers.js';

const dir = tmpDir('sj-expr-');
const T = `read_parquet('${path.join(dir, 't.parquet')}')`;
const opts = { baseDir: dir, workers: 2, partitions: 3, broadcastBytes: 0 } as const;
const col = (column: string) => ({ column });
const v = (value: unknown, type?: string) => (type ? { value, type } : { value });
const f = (fn: string, ...args: object[]) => ({ fn, args });

/** Text of a cell as both engines print it (floats to 12 digits; inf/nan spelled alike). */
function norm(x: unknown): unknown {
  if (x === null || x === undefined) return null;
  const s = String(x);
  if (/^-?inf(inity)?$/i.test(s)) return s.startsWith('-') ? '-inf' : 'inf';
  if (/^-?nan$/i.test(s)) return 'nan';
  if (/^-?\d+\.\d*e?[-+]?\d*$|e[-+]\d+$/i.test(s) && !/^-?\d+\.\d+$/.test(s)) return Number(s).toPrecision(12);
  return s;
}

/** Run a projection of expressions over t.parquet and compare with DuckDB's SQL for each, as text. */
async function same(cases: [object, string][], floatCols: number[] = []) {
  const r = await runPlan(
    {
      version: 1,
      sources: { t: { parquet: 't.parquet' } },
      query: {
        op: 'project',
        input: { op: 'scan', source: 't' },
        columns: [{ name: 'id', expr: col('id') }, ...cases.map(([e], i) => ({ name: `c${i}`, expr: e }))],
      },
    },
    opts,
  );
  const ours = r.batches.flatMap((b) =>
    Array.from({ length: b.length }, (_, i) =>
      b.columns.map((c, k) => {
        const t = cellText(c, i);
        return k > 0 && floatCols.includes(k - 1) && t !== null ? norm(Number(t).toPrecision(12)) : norm(t);
      }),
    ),
  );
  const theirs = (
    await duckRows(`SELECT id::VARCHAR, ${cases.map(([, s]) => `(${s})::VARCHAR`).join(', ')} FROM ${T}`)
  ).map((row) =>
    row.map((x, k) =>
      k > 0 && floatCols.includes(k - 1) && x !== null && !/inf|nan/i.test(String(x))
        ? Number(x).toPrecision(12)
        : norm(x),
    ),
  );
  expect(sorted(ours)).toEqual(sorted(theirs));
}

beforeAll(async () => {
  await writeParquet(
    path.join(dir, 't.parquet'),
    `SELECT i AS id,
      CASE WHEN i % 5 = 0 THEN NULL ELSE (i * 37) % 23 - 11 END::BIGINT AS a,
      CASE WHEN i % 7 = 0 THEN NULL ELSE (i * 13) % 9 - 4 END::INTEGER AS b,
      CASE WHEN i % 6 = 0 THEN NULL ELSE (((i * 7919) % 200003 - 100000) / 100)::DECIMAL(15,2) END AS p,
      CASE WHEN i % 4 = 0 THEN NULL ELSE (((i * 31) % 2001 - 1000) / 1000)::DECIMAL(5,3) END AS q,
      CASE WHEN i % 8 = 0 THEN NULL ELSE (i * 0.37 - 10)::DOUBLE END AS x,
      CASE WHEN i % 9 = 0 THEN NULL ELSE ['abc', 'héllo wörld', 'PROMO BRUSHED', '', 'a_b%c', '  pad  ', 'xyz', 'ab'][i % 8 + 1] END AS s,
      CASE WHEN i % 10 = 0 THEN NULL ELSE ['b', 'l', 'RUS', 'o w', '_', 'z', ''][i % 7 + 1] END AS t,
      CASE WHEN i % 11 = 0 THEN NULL ELSE ['2024-01-31', '2023-01-31', '2024-02-29', '2023-12-31', '2000-02-29', '1900-01-31', '1999-03-30', '2024-03-31'][i % 8 + 1]::DATE END AS d,
      CASE WHEN i % 12 = 0 THEN NULL ELSE (i % 27) - 13 END::INTEGER AS n,
      CASE WHEN i % 11 = 0 THEN NULL ELSE ['2024-01-31', '2023-01-31', '2024-02-29', '2023-12-31', '2000-02-29', '1900-01-31', '1999-03-30', '2024-03-31'][i % 8 + 1]::TIMESTAMP + to_minutes(i * 97) END AS ts
    FROM range(0, 120) t(i)`,
    50,
  );
});

describe('arithmetic', () => {
  it('integers: + - * % and /, nulls in every argument, division by zero as DuckDB', async () => {
    await same([
      [f('+', col('a'), col('b')), 'a + b'],
      [f('-', col('a'), col('b')), 'a - b'],
      [f('*', col('a'), col('b')), 'a * b'],
      [f('%', col('a'), col('b')), 'a % b'],
      [f('neg', col('a')), '-a'],
      [f('abs', col('b')), 'abs(b)'],
      [f('%', col('a'), v(0)), 'a % 0'],
      [f('+', col('a'), v(null)), 'a + NULL'],
    ]);
    await same(
      [
        [f('/', col('a'), col('b')), 'a / b'],
        [f('/', col('a'), v(0)), 'a / 0'],
        [f('/', v(0), v(0)), '0 / 0'],
      ],
      [0, 1, 2],
    );
  });

  it('decimals: scale changes, negatives, literal typing (0.06 + 0.01 is exactly 0.07)', async () => {
    await same([
      [f('+', col('p'), col('q')), 'p + q'],
      [f('-', col('q'), col('p')), 'q - p'],
      [f('*', col('p'), col('q')), 'p * q'],
      [f('*', col('p'), f('-', v(1), col('q'))), 'p * (1 - q)'],
      [f('%', col('p'), col('q')), 'p % q'],
      [f('+', col('a'), col('q')), 'a + q'],
      [f('neg', col('q')), '-q'],
      [f('abs', col('p')), 'abs(p)'],
      [f('round', col('p'), v(1)), 'round(p, 1)'],
      [f('round', col('q')), 'round(q)'],
      [f('floor', col('q')), 'floor(q)'],
      [f('ceil', col('q')), 'ceil(q)'],
      [f('+', v(0.06), v(0.01)), '0.06 + 0.01'],
      [f('*', col('p'), v(100)), 'p * 100'],
      [{ value: '1.5', type: 'decimal(15,2)' }, '1.5::DECIMAL(15,2)'],
    ]);
    await same(
      [
        [f('/', col('p'), col('q')), 'p / q'],
        [f('+', col('p'), col('x')), 'p + x'],
        [f('*', col('x'), v(0.5)), 'x * 0.5'],
      ],
      [0, 1, 2],
    );
  });

  it('an integer overflow is an error naming the expression (exit 1), with no output file', () => {
    const out = path.join(dir, 'overflow.csv');
    const plan = writePlan(
      dir,
      {
        version: 1,
        sources: { t: { parquet: 't.parquet' } },
        output: { path: out },
        query: {
          op: 'project',
          input: { op: 'scan', source: 't' },
          columns: [
            { name: 'big', expr: f('*', col('id'), v(92233720368547)) },
            { name: 'x', expr: f('*', f('*', col('id'), v(92233720368547)), v(100000)) },
          ],
        },
      },
      'overflow.json',
    );
    const r = cli([plan]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/query\.columns\[1\]\.expr \("\*"\): result -?\d+ overflows int64/);
    expect(fs.existsSync(out)).toBe(false);
  });

  it('aggregates over expressions: exact sums into decimal(38, s)', async () => {
    const r = await runPlan(
      {
        version: 1,
        sources: { t: { parquet: 't.parquet' } },
        query: {
          op: 'aggregate',
          input: { op: 'scan', source: 't' },
          groupBy: ['b'],
          aggregates: [
            { fn: 'sum', expr: f('*', col('p'), f('-', v(1), col('q'))), as: 'rev' },
            { fn: 'max', expr: f('abs', col('q')), as: 'mq' },
            { fn: 'count', expr: col('p'), as: 'np' },
          ],
        },
      },
      opts,
    );
    const ours = r.toRows().map((x) => [x.b === null ? null : String(x.b), x.rev, x.mq, String(x.np)]);
    const theirs = await duckRows(
      `SELECT b::VARCHAR, sum(p * (1 - q))::VARCHAR, max(abs(q))::VARCHAR, count(p)::VARCHAR FROM ${T} GROUP BY b`,
    );
    expect(sorted(ours)).toEqual(sorted(theirs));
    expect(r.schema[1].type).toMatchObject({ id: 'decimal', precision: 38, scale: 5 });
  });
});

describe('strings, dates, nulls, case', () => {
  it('string functions and LIKE with %, _ and a computed pattern', async () => {
    await same([
      [f('concat', col('s'), v('-'), col('t')), `(s || '-' || t)`],
      [f('substr', col('s'), v(2), v(3)), 'substr(s, 2, 3)'],
      [f('substr', col('s'), col('n')), 'substr(s, n)'],
      [f('lower', col('s')), 'lower(s)'],
      [f('upper', col('s')), 'upper(s)'],
      [f('length', col('s')), 'length(s)'],
      [f('trim', col('s')), 'trim(s)'],
      [f('starts_with', col('s'), col('t')), 'starts_with(s, t)'],
      [f('ends_with', col('s'), v('d')), `ends_with(s, 'd')`],
      [f('contains', col('s'), col('t')), 'contains(s, t)'],
      [
        { case: [{ when: { column: 's', like: 'PROMO%' }, then: v(1) }], else: v(0) },
        `CASE WHEN s LIKE 'PROMO%' THEN 1 ELSE 0 END`,
      ],
      [
        { case: [{ when: { column: 's', like: '_é%' }, then: v(true) }], else: v(false) },
        `CASE WHEN s LIKE '_é%' THEN true ELSE false END`,
      ],
      [
        {
          case: [
            { when: { expr: col('s'), like: f('concat', v('%'), col('t'), v('%')) }, then: v('y') },
            { when: { column: 's', like: '%b_' }, then: v('z') },
          ],
        },
        `CASE WHEN s LIKE ('%' || t || '%') THEN 'y' WHEN s LIKE '%b_' THEN 'z' END`,
      ],
      [f('coalesce', col('t'), col('s'), v('none')), `coalesce(t, s, 'none')`],
      [f('nullif', col('s'), v('abc')), `nullif(s, 'abc')`],
    ]);
  });

  it('LIKE with several %: pieces found in order, overlapping, at the ends; a constant computed pattern', async () => {
    const likes = [
      '%l%o%',
      '%o%l%',
      'h%l%d',
      '%ab%b%',
      '%b%b%',
      '%%',
      'P%O%O%D',
      '%RUS%ED',
      '%wö%ld%',
      '%é%é%',
      'a%%c',
      '%b%c%',
    ];
    await same([
      ...likes.map((p): [object, string] => [
        { case: [{ when: { column: 's', like: p }, then: v(1) }], else: v(0) },
        `CASE WHEN s LIKE '${p}' THEN 1 ELSE 0 END`,
      ]),
      [
        {
          case: [{ when: { expr: col('s'), like: f('concat', v('%'), v('l'), v('%'), v('o'), v('%')) }, then: v(1) }],
          else: v(0),
        },
        `CASE WHEN s LIKE concat('%', 'l', '%', 'o', '%') THEN 1 ELSE 0 END`,
      ],
      [
        { case: [{ when: { expr: col('s'), like: f('nullif', v('%'), v('%')) }, then: v(1) }], else: v(0) },
        `CASE WHEN s LIKE nullif('%', '%') THEN 1 ELSE 0 END`,
      ],
    ]);
  });

  it('dates: parts, month steps across month ends and leap years, differences', async () => {
    await same([
      [f('year', col('d')), 'year(d)'],
      [f('month', col('d')), 'month(d)'],
      [f('day', col('d')), 'day(d)'],
      [f('date_add', col('d'), col('n'), v('month')), `(d + to_months(n))::DATE`],
      [f('date_add', col('d'), v(1), v('month')), `(d + INTERVAL 1 MONTH)::DATE`],
      [f('date_add', col('d'), col('n'), v('year')), `(d + to_years(n))::DATE`],
      [f('date_add', col('d'), col('n')), `d + n`],
      [f('date_diff', v('2000-01-01'), col('d')), `date_diff('day', DATE '2000-01-01', d)`],
    ]);
  });

  it('timestamps: parts, month steps keeping the time of day, comparisons with strings', async () => {
    await same([
      [f('year', col('ts')), 'year(ts)'],
      [f('day', col('ts')), 'day(ts)'],
      [{ cast: col('ts'), to: 'date' }, 'ts::DATE'],
      [
        { cast: f('date_add', col('ts'), col('n'), v('month')), to: 'utf8' },
        `strftime(ts + to_months(n), '%Y-%m-%d %H:%M:%S')`,
      ],
      [
        { case: [{ when: { column: 'ts', cmp: '<', value: '2023-06-01 12:00:00' }, then: v(1) }], else: v(0) },
        `CASE WHEN ts < TIMESTAMP '2023-06-01 12:00:00' THEN 1 ELSE 0 END`,
      ],
      [
        {
          case: [{ when: { left: col('ts'), cmp: '>=', right: { cast: col('d'), to: 'timestamp' } }, then: v('y') }],
          else: v('n'),
        },
        `CASE WHEN ts >= d::TIMESTAMP THEN 'y' ELSE 'n' END`,
      ],
    ]);
  });

  it('predicates over expressions: column to column, between, in, isNull, string literals read as dates', async () => {
    const where = {
      or: [
        { left: col('a'), cmp: '<', right: col('b') },
        {
          and: [
            { expr: f('year', col('d')), between: [2000, 2023] },
            { column: 'd', cmp: '<', value: '2023-06-01' },
          ],
        },
        { expr: f('+', col('p'), col('q')), in: [-0.5, 3.14] },
        { expr: f('concat', col('s'), col('t')), isNull: true },
      ],
    };
    const r = await runPlan(
      {
        version: 1,
        sources: { t: { parquet: 't.parquet' } },
        query: { op: 'project', columns: ['id'], input: { op: 'filter', input: { op: 'scan', source: 't' }, where } },
      },
      opts,
    );
    const ours = r.toRows().map((x) => String(x.id));
    const theirs = (
      await duckRows(
        `SELECT id FROM ${T} WHERE a < b OR (year(d) BETWEEN 2000 AND 2023 AND d < '2023-06-01') OR p + q IN (-0.5, 3.14) OR (s || t) IS NULL`,
      )
    ).map((x) => String(x[0]));
    expect(theirs.length).toBeGreaterThan(20);
    expect(ours.sort()).toEqual(theirs.sort());
  });

  it('casts: rounding half away from zero, floats to decimals, values as text', async () => {
    const cast = (e: object, to: string) => ({ cast: e, to });
    await same([
      [cast(col('p'), 'int64'), 'p::BIGINT'],
      [cast(col('q'), 'int32'), 'q::INTEGER'],
      [cast(col('x'), 'decimal(10,2)'), 'x::DECIMAL(10,2)'],
      [cast(col('q'), 'decimal(4,1)'), 'q::DECIMAL(4,1)'],
      [cast(col('a'), 'decimal(20,3)'), 'a::DECIMAL(20,3)'],
      [cast(col('q'), 'utf8'), 'q::VARCHAR'],
      [cast(col('d'), 'utf8'), 'd::VARCHAR'],
      [cast(v('12.25'), 'decimal(5,1)'), `'12.25'::DECIMAL(5,1)`],
      [cast(f('year', col('d')), 'utf8'), 'year(d)::VARCHAR'],
      [cast(cast(col('b'), 'utf8'), 'int64'), 'b::VARCHAR::BIGINT'],
    ]);
    await same(
      [
        [cast(col('p'), 'float64'), 'p::DOUBLE'],
        [cast(col('a'), 'float64'), 'a::DOUBLE'],
      ],
      [0, 1],
    );
  });

  it('case branches unify: integer < decimal < float64', async () => {
    const r = await runPlan(
      {
        version: 1,
        sources: { t: { parquet: 't.parquet' } },
        query: {
          op: 'project',
          input: { op: 'scan', source: 't' },
          columns: [
            {
              name: 'dec',
              expr: { case: [{ when: { column: 'a', cmp: '>', value: 0 }, then: col('a') }], else: col('q') },
            },
            {
              name: 'flt',
              expr: { case: [{ when: { column: 'a', cmp: '>', value: 0 }, then: col('p') }], else: col('x') },
            },
            {
              name: 'int',
              expr: {
                case: [
                  { when: { column: 'a', cmp: '>', value: 0 }, then: col('b') },
                  { when: { column: 'b', isNull: true }, then: v(7) },
                ],
              },
            },
          ],
        },
      },
      opts,
    );
    expect(r.schema.map((x) => x.type.id)).toEqual(['decimal', 'float64', 'int64']);
    expect(r.schema[0].type).toMatchObject({ scale: 3 });
    await same([
      [
        { case: [{ when: { column: 'a', cmp: '>', value: 0 }, then: col('a') }], else: col('q') },
        'CASE WHEN a > 0 THEN a ELSE q END',
      ],
    ]);
  });
});

describe('plan errors name the JSON path (exit 2, no output file)', () => {
  const project = (expr: object) => ({
    op: 'project',
    input: { op: 'scan', source: 't' },
    columns: ['id', { name: 'e', expr }],
  });
  it.each([
    [
      'unknown function',
      project(f('median', col('a'))),
      /query\.columns\[1\]\.expr\.fn: unknown function "median"; functions are: \+, -/,
    ],
    ['wrong argument count', project(f('-', col('a'))), /query\.columns\[1\]\.expr: "-" takes 2 arguments, got 1/],
    [
      'type mismatch',
      project(f('-', col('a'), col('s'))),
      /query\.columns\[1\]\.expr\.args\[1\]: "-" needs numbers, got utf8 column "s"/,
    ],
    [
      'case mixing strings and numbers',
      project({ case: [{ when: { column: 'a', isNull: true }, then: v('x') }], else: v(1) }),
      /query\.columns\[1\]\.expr: case branches do not share a type: utf8 value "x", int64 value 1/,
    ],
    [
      'a cross join of a type other than inner',
      { op: 'join', type: 'left', left: { op: 'scan', source: 't' }, right: { op: 'scan', source: 't' }, on: [] },
      /query\.on: an empty "on" \(a cross join\) needs type "inner", got "left"/,
    ],
    [
      'a parameter left unreplaced',
      project(f('+', col('a'), { param: 'N' })),
      /query\.columns\[1\]\.expr\.args\[1\]\.param: parameter "N" is not declared; the plan has no params/,
    ],
    [
      'a bad type name',
      project({ cast: col('a'), to: 'decimal(40,2)' }),
      /query\.columns\[1\]\.expr\.to: unknown type "decimal\(40,2\)"/,
    ],
  ])('%s', (_, query, msg) => {
    const out = path.join(dir, 'never.csv');
    const r = cli([
      writePlan(
        dir,
        { version: 1, sources: { t: { parquet: 't.parquet' } }, query, output: { path: out } },
        'bad.json',
      ),
    ]);
    expect(r.stderr).toMatch(msg);
    expect(r.code).toBe(2);
    expect(fs.existsSync(out)).toBe(false);
  });

  it('a value that does not convert is an input error (exit 3) naming the value', () => {
    const r = cli([
      writePlan(
        dir,
        { version: 1, sources: { t: { parquet: 't.parquet' } }, query: project({ cast: col('s'), to: 'date' }) },
        'cast.json',
      ),
    ]);
    expect(r.stderr).toMatch(/query\.columns\[1\]\.expr\.cast: value "[^"]*" cannot be cast to date/);
    expect(r.code).toBe(3);
  });
});

describe('TPC-H shaped data written by DuckDB (DECIMAL(15,2) money, DATE)', () => {
  const sources = { lineitem: { parquet: 'lineitem.parquet' }, orders: { parquet: 'orders.parquet' } };
  const L = `read_parquet('${path.join(dir, 'lineitem.parquet')}')`,
    O = `read_parquet('${path.join(dir, 'orders.parquet')}')`;
  beforeAll(async () => {
    await writeParquet(
      path.join(dir, 'orders.parquet'),
      `SELECT i AS o_orderkey, (i % 97) AS o_custkey,
        (DATE '1992-01-01' + ((i * 37) % 2400)::INTEGER) AS o_orderdate, (((i * 7919) % 50000000) / 100 + 1000)::DECIMAL(15,2) AS o_totalprice
      FROM range(1, 3001) t(i)`,
      700,
    );
    await writeParquet(
      path.join(dir, 'lineitem.parquet'),
      `SELECT (i % 3000) + 1 AS l_orderkey,
        (((i * 104729) % 10000000) / 100 + 900)::DECIMAL(15,2) AS l_extendedprice, ((i % 11) / 100)::DECIMAL(15,2) AS l_discount,
        ((i % 9) / 100)::DECIMAL(15,2) AS l_tax, ((i % 50) + 1)::DECIMAL(15,2) AS l_quantity,
        (DATE '1992-01-02' + ((i * 13) % 2500)::INTEGER) AS l_commitdate, (DATE '1992-01-02' + ((i * 17) % 2500)::INTEGER) AS l_receiptdate
      FROM range(0, 20000) t(i)`,
      3000,
    );
  });

  it('sum(l_extendedprice * (1 - l_discount)) by year(o_orderdate) equals DuckDB to the cent, as text', async () => {
    const query = {
      op: 'aggregate',
      groupBy: ['o_year'],
      aggregates: [{ fn: 'sum', expr: f('*', col('l_extendedprice'), f('-', v(1), col('l_discount'))), as: 'revenue' }],
      input: {
        op: 'project',
        columns: [{ name: 'o_year', expr: f('year', col('o_orderdate')) }, 'l_extendedprice', 'l_discount'],
        input: {
          op: 'join',
          type: 'inner',
          left: { op: 'scan', source: 'lineitem' },
          right: { op: 'scan', source: 'orders' },
          on: [['l_orderkey', 'o_orderkey']],
        },
      },
    };
    const want = await duckRows(
      `SELECT year(o_orderdate)::VARCHAR, sum(l_extendedprice * (1 - l_discount))::VARCHAR FROM ${L} JOIN ${O} ON l_orderkey = o_orderkey GROUP BY 1`,
    );
    expect(want.length).toBeGreaterThan(5);
    for (const extra of [{}, { combiners: false }, { skew: { thresholdBytes: 1, factor: 1 } }]) {
      const r = await runPlan({ version: 1, sources, query }, { ...opts, ...extra });
      expect(sorted(r.toRows().map((x) => [String(x.o_year), x.revenue]))).toEqual(sorted(want));
    }
  });

  it("with orders broadcast: the probing side's expressions (a filter, a computed column) run before the probe, in its map tasks", async () => {
    const line = {
      op: 'project',
      columns: [
        'l_orderkey',
        { name: 'disc_price', expr: f('*', col('l_extendedprice'), f('-', v(1), col('l_discount'))) },
      ],
      input: {
        op: 'filter',
        input: { op: 'scan', source: 'lineitem' },
        where: { left: col('l_commitdate'), cmp: '<', right: col('l_receiptdate') },
      },
    };
    const query = {
      op: 'aggregate',
      groupBy: ['o_year'],
      aggregates: [
        { fn: 'sum', column: 'disc_price', as: 'revenue' },
        { fn: 'count', as: 'n' },
      ],
      input: {
        op: 'project',
        columns: [{ name: 'o_year', expr: f('year', col('o_orderdate')) }, 'disc_price'],
        input: {
          op: 'join',
          type: 'inner',
          left: line,
          right: { op: 'scan', source: 'orders' },
          on: [['l_orderkey', 'o_orderkey']],
        },
      },
    };
    const want =
      await duckRows(`SELECT year(o_orderdate)::VARCHAR, sum(l_extendedprice * (1 - l_discount))::VARCHAR, count(*)::VARCHAR
      FROM ${L} JOIN ${O} ON l_orderkey = o_orderkey WHERE l_commitdate < l_receiptdate GROUP BY 1`);
    expect(want.length).toBeGreaterThan(5);
    for (const inThreadBytes of [undefined, 0]) {
      const r = await runPlan({ version: 1, sources, query }, { ...opts, broadcastBytes: '24MB', inThreadBytes });
      expect(r.stats.joins.map((j) => [j.strategy, j.broadcast?.side])).toEqual([['broadcast', 'right']]);
      expect(r.stats.shuffles.map((x) => x.id)).toEqual(['aggregate-1.input']); // nothing shuffled for the join
      expect(sorted(r.toRows().map((x) => [String(x.o_year), x.revenue, String(x.n)]))).toEqual(sorted(want));
    }
  });

  it('TPC-H Q1/Q4 shapes: charge with tax, a column-to-column date filter, a date literal plus an interval', async () => {
    const r = await runPlan(
      {
        version: 1,
        sources,
        query: {
          op: 'aggregate',
          groupBy: [],
          aggregates: [
            {
              fn: 'sum',
              expr: f('*', f('*', col('l_extendedprice'), f('-', v(1), col('l_discount'))), f('+', v(1), col('l_tax'))),
              as: 'charge',
            },
            { fn: 'avg', expr: col('l_quantity'), as: 'avg_qty' },
            { fn: 'count', as: 'n' },
          ],
          input: {
            op: 'filter',
            input: { op: 'scan', source: 'lineitem' },
            where: {
              and: [
                { left: col('l_commitdate'), cmp: '<', right: col('l_receiptdate') },
                { left: col('l_commitdate'), cmp: '<', right: f('date_add', v('1994-01-01'), v(1), v('year')) },
              ],
            },
          },
        },
      },
      opts,
    );
    const [[charge, avg, n]] =
      await duckRows(`SELECT sum(l_extendedprice * (1 - l_discount) * (1 + l_tax))::VARCHAR, avg(l_quantity), count(*)::VARCHAR FROM ${L}
      WHERE l_commitdate < l_receiptdate AND l_commitdate < DATE '1994-01-01' + INTERVAL 1 YEAR`);
    const [row] = r.toRows();
    expect(row.charge).toBe(charge);
    expect(Number(row.avg_qty).toPrecision(10)).toBe(Number(avg).toPrecision(10));
    expect(String(row.n)).toBe(n);
  });

  it('a cross join replicates the smaller side (a scalar subquery, TPC-H Q11 shape), either side', async () => {
    const perCust = {
      op: 'aggregate',
      input: { op: 'scan', source: 'orders' },
      groupBy: ['o_custkey'],
      aggregates: [{ fn: 'sum', column: 'o_totalprice', as: 'value' }],
    };
    const total = {
      op: 'aggregate',
      input: { op: 'scan', source: 'orders' },
      groupBy: [],
      aggregates: [{ fn: 'sum', column: 'o_totalprice', as: 'total' }],
    };
    const want = await duckRows(`SELECT o_custkey::VARCHAR, sum(o_totalprice)::VARCHAR FROM ${O} GROUP BY o_custkey
      HAVING sum(o_totalprice) > (SELECT sum(o_totalprice) * 0.0103 FROM ${O})`);
    expect(want.length).toBeGreaterThan(5);
    for (const [left, right] of [
      [perCust, total],
      [total, perCust],
    ]) {
      const r = await runPlan(
        {
          version: 1,
          sources,
          query: {
            op: 'project',
            columns: ['o_custkey', 'value'],
            input: {
              op: 'filter',
              where: { left: col('value'), cmp: '>', right: f('*', col('total'), v(0.0103)) },
              input: { op: 'join', type: 'inner', left, right, on: [] },
            },
          },
        },
        opts,
      );
      expect(sorted(r.toRows().map((x) => [String(x.o_custkey), x.value]))).toEqual(sorted(want));
      expect(
        r.stats.tasks.some((t: { split?: string }) => /cross join: (left|right) side replicated/.test(t.split ?? '')),
      ).toBe(true);
    }
    const n = await runPlan(
      {
        version: 1,
        sources,
        query: {
          op: 'join',
          type: 'inner',
          left: { op: 'scan', source: 'orders', columns: ['o_orderkey'] },
          right: { op: 'scan', source: 'orders', columns: ['o_custkey'] },
          on: [],
        },
      },
      opts,
    );
    expect(n.numRows).toBe(3000 * 3000);
  });

  it('--explain shows the description, computed columns and the cross join', () => {
    const plan = writePlan(
      dir,
      {
        description: 'TPC-H Q11 shape',
        version: 1,
        sources,
        query: {
          op: 'project',
          columns: [{ name: 'y', expr: f('year', col('o_orderdate')) }],
          input: {
            op: 'join',
            type: 'inner',
            left: { op: 'scan', source: 'orders' },
            right: { op: 'scan', source: 'lineitem', columns: ['l_tax'] },
            on: [],
          },
        },
      },
      'explain.json',
    );
    const r = cli(['--explain', plan]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^plan: TPC-H Q11 shape$/m);
    expect(r.stdout).toMatch(/join-1: cross join, the smaller side replicated/);
    expect(r.stdout).toMatch(/year\(o_orderdate\)/);
  });
});
