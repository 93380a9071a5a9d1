// Types compared as SQL compares them, against DuckDB on one small table: a number next to a date or a
// timestamp is refused naming both types (DuckDB refuses it too), a date next to a timestamp is its
// midnight, NaN sorts above every number; CASE, coalesce, AND and OR compute a branch only over the rows
// that take it; `||` gives null for a null operand where concat() skips it; a scalar subquery compared
// with `=` across numeric kinds.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PlanError, runPlan, runSql } from '../dist/index.js';
import { arrowTyped, cli, duckTable, expectTypedEqual, sql, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-types-');
const S: Record<string, string> = {};

beforeAll(async () => {
  // id 1..7; s: two words, a number, nulls; f: a NaN in row 2; dd decimal; d date; ts timestamp;
  // b bool; lbl and e strings with nulls
  S.t = await writeParquet(
    path.join(dir, 't.parquet'),
    `SELECT i AS id, CASE WHEN i = 1 THEN 'hello' WHEN i = 2 THEN 'world' WHEN i = 3 THEN '12' END AS s,
      CASE WHEN i = 2 THEN 'nan'::DOUBLE ELSE i * 1.5 END AS f, CAST(i * 2.5 AS DECIMAL(10,2)) AS dd,
      DATE '1995-01-01' + i::INTEGER AS d, TIMESTAMP '1995-01-01 10:00:00' + i * INTERVAL 1 HOUR AS ts,
      i % 2 = 0 AS b, CASE WHEN i % 3 = 0 THEN NULL ELSE 'L' || i END AS lbl,
      CASE WHEN i % 4 = 0 THEN NULL ELSE 'x' END AS e FROM range(1, 8) r(i)`,
    4,
  );
  await sql(`CREATE OR REPLACE VIEW t AS SELECT * FROM read_parquet('${S.t}')`);
});

/** Our answer and DuckDB's to the same text: types and rows. */
async function same(text: string, duckText = text) {
  const r = await runSql(text, { sources: S, workers: 1 });
  const theirs = await duckTable(duckText);
  expectTypedEqual(arrowTyped(r.toArrow()), theirs);
  return theirs.rows;
}

/** The error our engine raises for the text (a PlanError), and whether DuckDB refuses it too. */
async function refused(text: string): Promise<{ ours: PlanError; duckRefuses: boolean }> {
  const ours = await runSql(text, { sources: S, workers: 1 }).then(
    () => null,
    (e) => e,
  );
  expect(ours, text).toBeInstanceOf(PlanError);
  const duckRefuses = await duckTable(text).then(
    () => false,
    () => true,
  );
  return { ours, duckRefuses };
}

const plan = (where: object) => ({
  version: 1,
  sources: { t: { parquet: S.t } },
  query: { op: 'filter', input: { op: 'scan', source: 't' }, where },
});

describe('casts to text', () => {
  it('a timestamp with a time zone as text ends in +00, as DuckDB writes it in UTC', async () => {
    const file = await writeParquet(
      path.join(dir, 'tz.parquet'),
      `SELECT TIMESTAMPTZ '2024-01-05 10:00:00+00' + i * INTERVAL 90 MINUTE AS tz FROM range(3) r(i)`,
      3,
    );
    const text = `SELECT CAST(tz AS VARCHAR) AS t FROM read_parquet('${file}') ORDER BY t`;
    const r = await runSql(text.replace(`read_parquet('${file}')`, `'${file}'`), { workers: 1 });
    const theirs = await duckTable(text);
    expectTypedEqual(arrowTyped(r.toArrow()), theirs);
    expect(theirs.rows[0][0]).toMatch(/\+00$/);
  });
});

describe('comparisons across types', () => {
  it('a date or a timestamp against a number is a plan error naming both types, as DuckDB refuses it', async () => {
    for (const [text, a, b] of [
      ['SELECT count(*) FROM t WHERE d > 19950101', 'date', 'int64'],
      ['SELECT count(*) FROM t WHERE d BETWEEN 9000 AND 9200', 'date', 'int64'],
      ['SELECT count(*) FROM t WHERE d IN (9132, 9133)', 'date', 'int64'],
      ['SELECT count(*) FROM t WHERE ts > 5', 'timestamp', 'int64'],
      ['SELECT count(*) FROM t WHERE d + 0 > 1', 'date', 'int64'],
      ['SELECT count(*) FROM t WHERE s > id', 'utf8', 'int64'],
    ]) {
      const { ours, duckRefuses } = await refused(text);
      expect(duckRefuses, text).toBe(true);
      expect(ours.message, text).toContain(a);
      expect(ours.message, text).toContain(b);
    }
    // the same in plans: a column against a JSON number, an expression against one
    for (const where of [
      { column: 'd', cmp: '>', value: 19950101 },
      { column: 'ts', in: [5, 6] },
      { left: { column: 'd' }, cmp: '<', right: { value: 9000 } },
    ]) {
      const e = await runPlan(plan(where)).catch((x) => x);
      expect(e).toBeInstanceOf(PlanError);
      expect(e.message).toMatch(/(date|timestamp) column "(d|ts)" with int64 value/);
    }
  });

  it('refused where DuckDB answers: a bool against a number, a string column against a number', async () => {
    for (const text of ['SELECT id FROM t WHERE b = 1', 'SELECT id FROM t WHERE s = 12']) {
      const { ours } = await refused(text);
      expect(ours.message).toMatch(/cannot compare (bool|utf8) column "(b|s)" with int64 value 1/);
    }
  });

  it('a date next to a timestamp is its midnight; string literals read as the type they meet', async () => {
    expect((await same("SELECT id FROM t WHERE ts > DATE '1995-01-01'")).length).toBe(7);
    expect(await same("SELECT id FROM t WHERE ts >= DATE '1995-01-02'")).toEqual([]);
    await same('SELECT id FROM t WHERE ts < d');
    await same("SELECT id FROM t WHERE d IN (DATE '1995-01-03', DATE '1995-01-05')");
    await same('SELECT id, CASE WHEN id > 3 THEN d ELSE ts END AS x FROM t');
    await same('SELECT id, coalesce(CASE WHEN id > 3 THEN d END, ts) AS x FROM t');
    await same("SELECT id FROM t WHERE d = '1995-01-03' OR id = '6'");
    await same("SELECT id FROM t WHERE ts BETWEEN '1995-01-01 11:30:00' AND '1995-01-01 14:00:00'");
  });

  it('a date plus or minus days is a date, a date minus a date the days between (DuckDB)', async () => {
    await same("SELECT id, d + 1 AS a, 2 + d AS b, d - CAST(id AS INTEGER) AS c, d - DATE '1995-01-01' AS e FROM t");
    await same("SELECT id FROM t WHERE d - 3 > DATE '1995-01-01'");
  });

  it('decimals against floats in IN lists and BETWEEN compare as float64; NaN is above every number', async () => {
    await same('SELECT id FROM t WHERE dd IN (2.5, 5e0, f)');
    await same('SELECT id FROM t WHERE dd BETWEEN 2.5 AND f');
    await same('SELECT id FROM t WHERE f BETWEEN 1.5 AND 4');
    await same('SELECT id FROM t WHERE f IN (1.5, 4.5) OR dd IN (7.5, 10)');
    expect(await same('SELECT id FROM t WHERE f > 100')).toEqual([['2']]);
    await same('SELECT id FROM t WHERE f >= 10.5');
    await same('SELECT id FROM t WHERE f < 100');
    await same('SELECT id FROM t WHERE f > id * 1000');
  });
});

describe('a branch computed over the rows that take it', () => {
  it('CASE: an ELSE no row takes raises nothing; a cast guarded from a NaN row', async () => {
    // (an integer literal is int64 here, DuckDB's adapts to INTEGER: the oracle casts to BIGINT)
    await same(
      "SELECT id, CASE WHEN s <> 'hello' THEN 0 ELSE CAST(s AS INTEGER) END AS x FROM t WHERE id > 1",
      "SELECT id, CASE WHEN s <> 'hello' THEN 0 ELSE CAST(s AS BIGINT) END AS x FROM t WHERE id > 1",
    );
    await same('SELECT id, CASE WHEN f < 100 THEN CAST(f AS BIGINT) END AS x FROM t');
    await same("SELECT id FROM t WHERE CASE WHEN s = '12' THEN CAST(s AS INTEGER) ELSE 0 END = 12");
    await same(
      "SELECT id, CASE WHEN id % 2 = 0 THEN lbl WHEN id = 3 THEN 'three' ELSE s END AS x, " +
        'CASE WHEN id > 2 THEN dd WHEN id = 1 THEN CAST(7 AS DECIMAL(10,2)) END AS y, CASE WHEN id > 0 THEN f END AS z FROM t',
    );
    // a WHEN runs only over the rows earlier WHENs left
    const q = "SELECT id, CASE WHEN s IS NULL OR s <> '12' THEN -1 WHEN CAST(s AS INTEGER) > 3 THEN 1 END AS x FROM t";
    await same(q, q.replace('THEN -1', 'THEN -1::BIGINT'));
  });

  it('coalesce computes an argument only where the earlier ones are null', async () => {
    await same('SELECT id, coalesce(lbl, CAST(CAST(lbl AS INTEGER) AS VARCHAR)) AS x FROM t');
    await same(
      "SELECT id, coalesce(CASE WHEN s = '12' THEN 1 END, CAST(lbl AS INTEGER), 5) AS x FROM t WHERE id % 3 = 0",
      "SELECT id, coalesce(CASE WHEN s = '12' THEN 1 END, CAST(lbl AS BIGINT), 5) AS x FROM t WHERE id % 3 = 0",
    );
    await same(
      'SELECT id, coalesce(lbl, e, s) AS x, coalesce(CASE WHEN id > 2 THEN dd END, CAST(1 AS DECIMAL(10,2))) AS y FROM t',
    );
  });

  it('AND and OR compute a later argument only where the earlier ones leave the answer open', async () => {
    const r = await runSql(
      "SELECT id, (s = '12' AND CAST(s AS INTEGER) > 3) AS x, (s IS NULL OR s <> '12' OR CAST(s AS INTEGER) > 30) AS y FROM t",
      { sources: S, workers: 1 },
    );
    // DuckDB casts every row here and fails; SQL's answer, row by row:
    expect(r.toRows().map((x) => [x.id, x.x, x.y])).toEqual([
      [1n, false, true],
      [2n, false, true],
      [3n, true, false],
      [4n, null, true],
      [5n, null, true],
      [6n, null, true],
      [7n, null, true],
    ]);
  });
});

describe('|| and concat()', () => {
  it('a null operand of || gives null; concat() skips nulls as DuckDB does', async () => {
    expect(await same("SELECT id, lbl || '-' AS x FROM t WHERE lbl IS NULL")).toEqual([
      ['3', null],
      ['6', null],
    ]);
    expect(await same("SELECT count(*) AS n FROM t WHERE (lbl || e) LIKE 'L%'")).toEqual([['4']]);
    await same("SELECT id, concat(lbl, e) AS x, concat(NULL, NULL) AS y, concat(id, '-', d) AS z FROM t");
    await same('SELECT id, lbl || id || e AS x FROM t');
  });
});

describe('a scalar subquery compared with = across numeric kinds', () => {
  it('float64 against int64, decimal against double, as SQL compares numbers', async () => {
    expect(await same('SELECT id FROM t WHERE f = (SELECT count(*) FROM t WHERE id <= 6)')).toEqual([['4']]);
    expect(await same('SELECT id FROM t WHERE f = (SELECT max(dd) - 16.0 FROM t)')).toEqual([['1']]);
    expect(await same('SELECT id FROM t WHERE dd = (SELECT min(f) + 1 FROM t)')).toEqual([['1']]);
    await same('SELECT id FROM t WHERE id = (SELECT max(dd) - 14.5 FROM t)');
  });
});

describe('SQL type errors at the line and column of the text', () => {
  /** The error of a query that must not run: its message, which must not name a JSON path. */
  async function located(text: string): Promise<string> {
    const e = await runSql(text, { sources: S, workers: 1 }).then(
      () => null,
      (x) => x,
    );
    expect(e, text).toBeInstanceOf(PlanError);
    expect(e.message, text).not.toMatch(/query\.|\$expr|\[\d+\]/);
    return e.message;
  }

  it('each kind of type mistake: line, column, the line and a caret, values as written', async () => {
    const cases: [string, RegExp][] = [
      // a string compared with a number or a date
      [
        "SELECT id\nFROM t\nWHERE s > DATE '1995-01-01'",
        /^line 3, column 11: .*utf8 column "s" with DATE '1995-01-01'/,
      ],
      [
        'SELECT id FROM t WHERE s = 1.5',
        /^line 1, column 28: "=" cannot compare utf8 column "s" with decimal value 1\.5/,
      ],
      ['SELECT id FROM t WHERE s > id', /^line 1, column 28: .*utf8 column "s" with int64 column "id"/],
      // NOT of an integer
      ['SELECT id FROM t\nWHERE NOT id', /^line 2, column 11: a condition must be a bool, got int64 column "id"/],
      // CASE branches of two types
      [
        'SELECT CASE WHEN id > 1 THEN s ELSE 1.5 END AS x FROM t',
        /^line 1, column 8: case branches do not share a type: utf8 column "s", decimal\(2,1\) value 1\.5/,
      ],
      // function argument types
      ['SELECT upper(id) AS x FROM t', /^line 1, column 14: "upper" needs a string, got int64 column "id"/],
      ['SELECT date_diff(d, ts) AS x FROM t', /^line 1, column 21: "date_diff" needs a date, got timestamp column/],
      [
        'SELECT d + 1.5 AS x FROM t',
        /^line 1, column 8: "\+" needs numbers, got date column "d" \(with decimal\(2,1\) value 1\.5\)/,
      ],
      ['SELECT sum(s) AS x FROM t', /^line 1, column 12: sum needs a numeric column; "s" is utf8/],
      // join keys of two types: a condition, compared as SQL compares
      ['SELECT t1.id FROM t t1 JOIN t t2 ON t1.s = t2.id', /^line 1, column 44: .*utf8 column "s" with int64 column/],
      // keys of two kinds that cannot be compared as one
      [
        'SELECT id FROM t t1 WHERE EXISTS (SELECT * FROM t t2 WHERE t2.d = t1.ts)',
        /^line 1, column 65: "=" compares date with timestamp\[microsecond\]: they do not join as keys/,
      ],
      // a date against a number
      ['SELECT id FROM t WHERE d BETWEEN 9000 AND 9200', /^line 1, column 34: .*date column "d" with int64 value 9000/],
    ];
    for (const [text, re] of cases) {
      const m = await located(text);
      expect(m, text).toMatch(re);
      // the line of the text and a caret under the column the message names
      const [, line, col] = /^line (\d+), column (\d+)/.exec(m)!.map(Number);
      const shown = m.split('\n');
      expect(shown[1], text).toBe(`  ${text.split('\n')[line - 1]}`);
      expect(shown[2], text).toBe(`  ${' '.repeat(col - 1)}^`);
    }
  });

  it('a join on keys of two numeric kinds is answered as SQL compares numbers', async () => {
    expect(await same('SELECT t1.id FROM t t1 JOIN t t2 ON t1.f = t2.id')).toEqual([['4']]);
    expect(await same('SELECT t1.id FROM t t1, t t2 WHERE t1.f = t2.dd')).toEqual([['5']]);
    // where the keys must be join keys (an outer join, a correlation): the exact side cast to the float type
    await same('SELECT t1.id, t2.id AS i2 FROM t t1 LEFT JOIN t t2 ON t1.f = t2.id');
    await same('SELECT id FROM t t1 WHERE EXISTS (SELECT * FROM t t2 WHERE t2.f = t1.id)');
    await same('SELECT id FROM t t1 WHERE NOT EXISTS (SELECT * FROM t t2 WHERE t2.dd = t1.f)');
  });

  it('the command line says the same, exit 2; --explain shows dates and timestamps as written', () => {
    const bad = cli(['sql', "SELECT id FROM t\nWHERE s > DATE '1995-01-01'", '--source', `t=${S.t}`]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(`line 2, column 11: ">" cannot compare utf8 column "s" with DATE '1995-01-01'`);
    expect(bad.stderr).toContain("\n  WHERE s > DATE '1995-01-01'\n            ^");
    const ex = cli([
      'sql',
      "SELECT count(*) FROM t WHERE d > DATE '1995-01-03' AND ts < '1995-01-01 15:30:00'",
      '--source',
      `t=${S.t}`,
      '--explain',
    ]);
    expect(ex.code).toBe(0);
    expect(ex.stdout).toContain("d > date '1995-01-03'");
    expect(ex.stdout).toContain("ts < timestamp '1995-01-01 15:30:00'");
  });
});
