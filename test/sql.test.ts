// SQL in, feature by feature on small tables: each query runs through runSql
// and through DuckDB on the same files; then each kind of error, with its
// line and column, exit code, and no output file left behind.
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PlanError, runSql } from '../dist/index.js';
import { arrowTyped, cli, duckTable, expectTypedEqual, sql, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-sql-');
const S: Record<string, string> = {};

beforeAll(async () => {
  // a: ids 1..20, groups, decimals, dates, an integer with nulls;
  // b: rows pointing at a (some at nothing), y with a null
  S.a = await writeParquet(
    path.join(dir, 'a.parquet'),
    `SELECT i AS id, ['x','y','z'][1 + i % 3] AS grp,
    CAST(i * 1.25 AS DECIMAL(10,2)) AS v, CAST(DATE '1995-01-01' + INTERVAL (i * 40) DAY AS DATE) AS d,
    CASE WHEN i % 5 = 0 THEN NULL ELSE i % 7 END AS x, 'item-' || i AS name FROM range(1, 21) t(i)`,
    8,
  );
  S.b = await writeParquet(
    path.join(dir, 'b.parquet'),
    `SELECT k AS bid, CASE WHEN k > 30 THEN 99 ELSE k % 12 END AS a_id,
    k * 3 AS w, CASE WHEN k = 7 THEN NULL ELSE k % 4 END AS y FROM range(1, 36) t(k)`,
    8,
  );
  S.c = await writeParquet(path.join(dir, 'c.parquet'), 'SELECT k AS y2 FROM range(0, 3) t(k)');
  fs.mkdirSync(path.join(dir, 'parts'));
  await writeParquet(path.join(dir, 'parts', 'p1.parquet'), 'SELECT i AS id, i * 2 AS two FROM range(0, 10) t(i)');
  await writeParquet(path.join(dir, 'parts', 'p2.parquet'), 'SELECT i AS id, i * 2 AS two FROM range(10, 15) t(i)');
  for (const t of ['a', 'b', 'c']) await sql(`CREATE OR REPLACE VIEW ${t} AS SELECT * FROM read_parquet('${S[t]}')`);
});

/** Our answer and DuckDB's to the same text: types and rows (in order when the query fixes it). */
async function same(text: string, ordered = false, params?: Record<string, string>, duckText = text) {
  const r = await runSql(text, { sources: S, workers: 2, params });
  const theirs = await duckTable(duckText);
  expectTypedEqual(arrowTyped(r.toArrow()), theirs, ordered);
  return theirs.rows;
}

describe('the language against DuckDB', () => {
  it('outer joins: LEFT, RIGHT, FULL with ON (a condition on the dropped side too) and USING', async () => {
    expect((await same('SELECT id, bid, w FROM a LEFT JOIN b ON id = a_id AND w > 20')).length).toBeGreaterThan(20);
    await same('SELECT id, bid FROM a RIGHT OUTER JOIN b ON a.id = b.a_id');
    await same('SELECT id, bid FROM a FULL JOIN b ON a.id = b.a_id');
    await same(
      "SELECT a.id, count(two) AS n FROM a LEFT JOIN read_parquet('" +
        path.join(dir, 'parts', '*.parquet') +
        "') p USING (id) GROUP BY a.id",
      false,
      undefined,
      `SELECT a.id, count(two) AS n FROM a LEFT JOIN read_parquet('${path.join(dir, 'parts', '*.parquet')}') p
        USING (id) GROUP BY a.id`,
    );
  });
  it('NOT IN with SQL nulls: a null in the subquery keeps no row; a null probe is not true', async () => {
    expect(await same('SELECT id FROM a WHERE id NOT IN (SELECT y FROM b)')).toEqual([]);
    const rows = await same('SELECT id, x FROM a WHERE x NOT IN (SELECT y2 FROM c)');
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r[1] !== null)).toBe(true);
    await same('SELECT id FROM a WHERE x NOT IN (1, 2) AND x IN (SELECT y FROM b WHERE y IS NOT NULL)');
    await same('SELECT id FROM a WHERE x NOT IN (SELECT y FROM b WHERE b.a_id = a.id)');
    await same('SELECT id FROM a WHERE x IN (SELECT y FROM b WHERE b.a_id = a.id)');
  });
  it('EXISTS, NOT EXISTS and IN, correlated or not; a correlated non-equality', async () => {
    await same('SELECT id FROM a WHERE EXISTS (SELECT * FROM b WHERE a_id = id AND w > 30)');
    await same('SELECT id FROM a WHERE NOT EXISTS (SELECT * FROM b WHERE b.a_id = a.id)');
    await same('SELECT id FROM a WHERE EXISTS (SELECT * FROM c) AND NOT EXISTS (SELECT * FROM c WHERE y2 > 5)');
    await same('SELECT bid FROM b b1 WHERE EXISTS (SELECT * FROM b b2 WHERE b2.a_id = b1.a_id AND b2.w <> b1.w)');
    await same('SELECT bid FROM b b1 WHERE NOT EXISTS (SELECT * FROM b b2 WHERE b2.a_id = b1.a_id AND b2.w > b1.w)');
  });
  it("scalar subqueries: correlated (an aggregate per key), a missing key's count 0, uncorrelated", async () => {
    await same('SELECT id, v FROM a WHERE v * 10 > (SELECT avg(w) FROM b WHERE b.a_id = a.id)');
    const zero = await same('SELECT id FROM a WHERE (SELECT count(*) FROM b WHERE a_id = id) = 0');
    expect(zero.length).toBeGreaterThan(0);
    await same('SELECT id FROM a WHERE v > (SELECT avg(v) FROM a) ORDER BY id', true);
    await same('SELECT grp, sum(v) AS s FROM a GROUP BY grp HAVING sum(v) > (SELECT sum(v) / 4 FROM a)');
    // in the select list: every row kept, a missing key's count 0, others null
    await same(
      `SELECT id, (SELECT count(*) FROM b WHERE a_id = id) AS n, (SELECT max(w) FROM b WHERE b.a_id = a.id) AS top,
      (SELECT min(v) FROM a) AS least FROM a ORDER BY id`,
      true,
    );
  });
  it('a CTE used twice, and a subquery in FROM with column names', async () => {
    await same(
      `WITH g (grp, total) AS (SELECT grp, sum(v) FROM a GROUP BY grp)
      SELECT x.grp, x.total, y.total AS other FROM g x, g y WHERE x.total < y.total ORDER BY 1, 3`,
      true,
    );
    await same(
      'SELECT k, n FROM (SELECT a_id, count(*) FROM b GROUP BY a_id) AS t (k, n) WHERE n > 2 ORDER BY n DESC, k',
      true,
    );
  });
  it('GROUP BY and ORDER BY by position and by alias; NULLS FIRST; DISTINCT; LIMIT and OFFSET', async () => {
    await same('SELECT x % 3 AS m, count(*) AS n FROM a GROUP BY 1 ORDER BY 1 NULLS FIRST', true);
    await same('SELECT x AS m, count(DISTINCT grp) AS g FROM a GROUP BY m ORDER BY m DESC NULLS LAST', true);
    await same('SELECT DISTINCT grp FROM a ORDER BY grp DESC', true);
    await same('SELECT id, name FROM a ORDER BY v DESC LIMIT 5 OFFSET 3', true);
    await same('SELECT grp, max(d) AS last FROM a GROUP BY grp ORDER BY count(*) DESC, grp', true);
  });
  it('expressions: CASE, CAST, LIKE, BETWEEN, IS NULL, IN, EXTRACT, SUBSTRING, intervals, ||', async () => {
    // PLAN-SPEC's typing where DuckDB's differs: an integer literal is int64 (DuckDB: INTEGER), a date plus an
    // interval a date (DuckDB: TIMESTAMP); DuckDB's text says so with casts
    const text = (int: string, date: (x: string) => string) => `SELECT id,
      CASE WHEN x IS NULL THEN 'none' WHEN x BETWEEN 2 AND 4 THEN 'mid' ELSE 'other' END AS k,
      CASE grp WHEN 'x' THEN ${int('1')} ELSE 0 END AS isx, CAST(v AS DOUBLE) / 2 AS half, extract(year FROM d) AS yr,
      substring(name FROM 1 FOR 6) || '!' AS s, ${date("d + INTERVAL '1' MONTH")} AS next_month,
      ${date("d - INTERVAL '2' YEAR")} AS before
      FROM a WHERE name LIKE 'item-1%' AND name NOT LIKE '%9' AND x IS NOT NULL AND grp IN ('x', 'y')
        AND d < DATE '1997-01-01'`;
    const rows = await same(
      text(
        (x) => x,
        (x) => x,
      ),
      false,
      undefined,
      text(
        (x) => `CAST(${x} AS BIGINT)`,
        (x) => `CAST(${x} AS DATE)`,
      ),
    );
    expect(rows.length).toBeGreaterThan(3);
    await same(`SELECT count(*) AS n, sum(CASE WHEN v > 10 THEN v ELSE 0 END) AS big, coalesce(max(x), 0) AS mx,
      abs(min(v) - 100.00) AS dist
      FROM a CROSS JOIN c WHERE d >= DATE '1995-03-01' + INTERVAL '30' DAY`);
  });
  it("FROM 'glob' and read_parquet('...') read files directly", async () => {
    const glob = path.join(dir, 'parts', '*.parquet');
    await same(
      `SELECT count(*) AS n, sum(two) AS s FROM '${glob}'`,
      false,
      undefined,
      `SELECT count(*) AS n, sum(two) AS s FROM read_parquet('${glob}')`,
    );
  });
  it('$name parameters: typed from the column they meet, given with params', async () => {
    const r = await runSql('SELECT id FROM a WHERE d >= $start AND grp = $g ORDER BY id', {
      sources: S,
      params: { start: '1996-01-01', g: 'y' },
    });
    const theirs = await duckTable("SELECT id FROM a WHERE d >= DATE '1996-01-01' AND grp = 'y' ORDER BY id");
    expectTypedEqual(arrowTyped(r.toArrow()), theirs, true);
    const e = await runSql('SELECT id FROM a WHERE d >= $start', { sources: S }).catch((x) => x);
    expect(e).toBeInstanceOf(PlanError);
    expect(e.message).toMatch(/parameter "start" \(date\) has no value and no default/);
  });
});

describe('errors point at the text', () => {
  const err = (text: string) =>
    runSql(text, { sources: S }).then(
      () => null,
      (e) => e,
    );
  it('an unknown column, with the closest name', async () => {
    const e = await err('SELECT id,\n  grp\nFROM a\nWHERE   v > 1 AND nmae = 2');
    expect(e).toBeInstanceOf(PlanError);
    expect(e.exitCode).toBe(2);
    expect(e.message).toBe('line 4, column 19: column "nmae" does not exist; did you mean name?');
    expect((await err('SELECT a.vv FROM a')).message).toBe(
      'line 1, column 8: column "vv" does not exist in a; did you mean v?',
    );
  });
  it('an unknown table, an ambiguous column, a column outside GROUP BY', async () => {
    expect((await err('SELECT * FROM a, bb')).message).toBe(
      'line 1, column 18: table "bb" does not exist; did you mean b?',
    );
    expect((await err('SELECT id FROM a, parts')).message).toMatch(/table "parts" does not exist; tables are: a, b, c/);
    expect((await err('SELECT id FROM a x, a y')).message).toMatch(
      /^line 1, column 8: column reference "id" is ambiguous/,
    );
    expect((await err('SELECT grp, v FROM a GROUP BY grp')).message).toBe(
      'line 1, column 13: column "v" must appear in GROUP BY or be used in an aggregate',
    );
  });
  it('a syntax error at its token; unsupported constructs by name', async () => {
    expect((await err('SELECT id\nFROM a\nWHERE id = = 3')).message).toBe(
      'line 3, column 12: syntax error: expected an expression, got "="',
    );
    expect((await err("SELECT id FROM a WHERE name = 'x")).message).toBe('line 1, column 31: unterminated string');
    expect((await err('SELECT id FROM a NATURAL JOIN b')).message).toBe(
      'line 1, column 18: NATURAL JOIN is not supported',
    );
    expect((await err('SELECT id, count(*) OVER (ORDER BY id GROUPS 1 PRECEDING) FROM a')).message).toBe(
      'line 1, column 39: GROUPS frames are not supported; use ROWS or RANGE',
    );
    expect((await err('SELECT id FROM a WHERE id = ANY (SELECT a_id FROM b)')).message).toMatch(
      /^line 1, column 29: ANY \(a quantified comparison\) is not supported/,
    );
    expect((await err('SELECT stddev(v) FROM a')).message).toMatch(
      /^line 1, column 8: function stddev\(\) does not exist or is not supported/,
    );
    expect((await err('DELETE FROM a')).message).toBe('line 1, column 1: DELETE is not supported: only SELECT queries');
  });
  it('the command line: exit 2 with the position, no stack trace, no output file', () => {
    const out = path.join(dir, 'never.parquet');
    const cases: [string[], number, RegExp][] = [
      [
        ['sql', 'SELECT l_shipdat FROM a', '--source', `a=${S.a}`],
        2,
        /plan error: line 1, column 8: column "l_shipdat" does not exist/,
      ],
      [
        ['sql', 'SELECT id FROM a WHERE d > $when', '--source', `a=${S.a}`, '--param', 'when=1995-02-30'],
        2,
        /--param when: value "1995-02-30" of parameter "when" is not of type date/,
      ],
      [
        ['sql', 'SELECT id FROM a', '--source', `a=${path.join(dir, 'missing.parquet')}`],
        3,
        /--source a=.*missing\.parquet: no file or folder/,
      ],
      [
        ['sql', 'SELECT * FROM nowhere'],
        2,
        /line 1, column 15: table "nowhere" does not exist; bind it with --source nowhere=PATH or --data DIR/,
      ],
      // a missing SQL file is a missing input file, as a data file is (issue 43)
      [[path.join(dir, 'no-such.sql')], 3, /error: SQL file .*no-such\.sql: file not found/],
    ];
    for (const [args, code, msg] of cases) {
      const r = cli([...args, '--output', out]);
      expect(r.code, r.stderr).toBe(code);
      expect(r.stderr).toMatch(msg);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(fs.existsSync(out)).toBe(false);
    }
    expect(fs.readdirSync(dir).filter((f) => f.startsWith('never'))).toEqual([]);
  });
  it('--output with --format, for SQL and for a plan file; --format parquet without --output is exit 2', () => {
    const csv = path.join(dir, 'grp.data');
    const r = cli([
      'sql',
      'SELECT grp, count(*) AS n FROM a GROUP BY grp ORDER BY grp',
      '--source',
      `a=${S.a}`,
      '--output',
      csv,
      '--format',
      'csv',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(fs.readFileSync(csv, 'utf8').trim().split('\n')).toEqual(['grp,n', 'x,6', 'y,7', 'z,7']);
    const plan = path.join(dir, 'plan.json');
    fs.writeFileSync(
      plan,
      JSON.stringify({
        version: 1,
        sources: { a: { parquet: S.a } },
        query: {
          op: 'aggregate',
          input: { op: 'scan', source: 'a' },
          groupBy: [],
          aggregates: [{ fn: 'count', as: 'n' }],
        },
        output: { path: 'elsewhere.parquet' },
      }),
    );
    const jsonl = path.join(dir, 'count.jsonl');
    expect(cli([plan, '--output', jsonl]).code).toBe(0);
    expect(fs.readFileSync(jsonl, 'utf8').trim()).toBe('{"n":20}');
    expect(fs.existsSync(path.join(dir, 'elsewhere.parquet'))).toBe(false);
    const bad = cli([plan, '--format', 'parquet']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--format: parquet needs --output PATH \(standard output takes csv, jsonl, json\)/);
    // a text format without a path: standard output
    expect(cli([plan, '--format', 'csv'])).toEqual({ code: 0, stdout: 'n\n20\n', stderr: '' });
  });
});
