// CSV sources, --data folders and DESCRIBE: every CSV read is compared with DuckDB's read_csv on the same file
// (types, then values); quoting edge cases; a bad row's error naming file, line and column (exit 3); files cut
// into several map tasks (SKEWJOIN_CSV_CHUNK_BYTES) with quoted line breaks near the cuts.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { InputError, PlanError, describeFile, runPlan, runSql } from '../dist/index.js';
import { arrowTyped, cli, duckTable, expectTypedEqual, sql, tmpDir, writeParquet, writePlan } from './helpers.js';

const dir = tmpDir('sj-csv-');
const file = (name: string, text: string) => {
  const f = path.join(dir, name);
  fs.writeFileSync(f, text);
  return f;
};
const duckCsv = (f: string, opts = '') =>
  `read_csv('${f}', header = true, delim = ',', quote = '"', escape = '"'${opts})`;

/** Every column of a CSV source, ours (through a plan) against DuckDB's read_csv, in file order. */
async function sameScan(f: string, source: object = {}, duckOpts = '', options = {}) {
  const plan = { version: 1, sources: { t: { csv: f, ...source } }, query: { op: 'scan', source: 't' } };
  const r = await runPlan(plan as never, { workers: 2, ...options });
  const theirs = await duckTable(`SELECT * FROM ${duckCsv(f, duckOpts)}`);
  expectTypedEqual(arrowTyped(r.toArrow()), theirs, true);
  return r;
}

afterEach(() => {
  delete process.env.SKEWJOIN_CSV_CHUNK_BYTES;
});

describe('CSV read against DuckDB', () => {
  it('infers what read_csv infers: BIGINT, DOUBLE, BOOLEAN, DATE, TIMESTAMP, VARCHAR; empty is null', async () => {
    const f = file(
      'types.csv',
      'i,f,b,d,ts,s,z,big,lead,e,far\n' +
        '1,1.5,true,2020-01-02,2020-01-02 03:04:05,plain,,9223372036854775807,007,1e5,2300-01-01 00:00:00.000001\n' +
        '-2,,F,1999-12-31,2021-06-30T23:59:59.123456,"with, comma",,-9223372036854775808,010,2.5E-3,1500-06-01 12:00:00\n' +
        ',3,yes,,2020-01-02 00:00:00,"say ""hi""",,12,1,-0.5,\n' +
        '40,0.1,no,2024-02-29,,x,,0,2,123456789012345678,9999-12-31 23:59:59.999999\n',
    );
    const r = await sameScan(f);
    expect(r.schema.map((c) => c.type.id)).toEqual([
      'int64',
      'float64',
      'bool',
      'date32',
      'timestamp',
      'utf8',
      'utf8',
      'int64',
      'utf8',
      'float64',
      'timestamp',
    ]);
  });

  it('quoting: delimiters, doubled quotes and line breaks inside quotes, CRLF, no final line break', async () => {
    const f = file(
      'quotes.csv',
      'id,text,n\r\n1,"a,b",10\r\n2,"he said ""yes""",20\r\n3,"two\r\nlines",\r\n4,"",40\r\n5,plain,50',
    );
    const r = await sameScan(f);
    expect(r.toRows()[2].text).toBe('two\r\nlines');
  });

  it('a byte order mark, a repeated header name (x, x_1 as DuckDB), a header-only file', async () => {
    const r = await sameScan(file('bom.csv', '\ufeffx,x,y\n1,2,a\n'));
    expect(r.schema.map((c) => c.name)).toEqual(['x', 'x_1', 'y']);
    const e = await sameScan(file('empty.csv', 'a,b\n'));
    expect(e.numRows).toBe(0);
  });

  it('a delimiter other than the comma, no header (column0, column1, ...), types given for some columns', async () => {
    const f = file('semi.csv', '1;x;2.50\n2;"y;z";3.25\n3;;\n');
    const r = await runPlan(
      {
        version: 1,
        sources: {
          t: { csv: f, header: false, delimiter: ';', columns: { a: 'int32', b: 'utf8', c: 'decimal(10,2)' } },
        },
        query: { op: 'scan', source: 't' },
      },
      { workers: 1 },
    );
    const theirs = await duckTable(
      `SELECT * FROM read_csv('${f}', header = false, delim = ';', columns = {'a': 'INTEGER', 'b': 'VARCHAR', 'c': 'DECIMAL(10,2)'})`,
    );
    expectTypedEqual(arrowTyped(r.toArrow()), theirs, true);
    const d = file('semi2.csv', '1;x;2.5\n2;"y;z";3.25\n');
    await sameScan(d, { header: false, delimiter: ';' }, ", header = false, delim = ';'");
  });

  it('a file cut into many map tasks: quoted line breaks near every cut, the same rows and sums as DuckDB', async () => {
    const f = path.join(dir, 'big.csv');
    await sql(`COPY (SELECT i AS id, i % 97 AS k, CASE WHEN i % 3 = 0 THEN 'line' || chr(10) || 'break, "q" ' || i
      ELSE 'v' || i END AS s, i * 0.25 AS x, DATE '2000-01-01' + (i % 1000)::INTEGER AS d
      FROM range(0, 30000) t(i)) TO '${f}' (FORMAT csv, HEADER true)`);
    process.env.SKEWJOIN_CSV_CHUNK_BYTES = '20000';
    const q = (src: string) =>
      `SELECT k, count(*) AS n, sum(id) AS ids, sum(x) AS xs, max(s) AS ms, min(d) AS md FROM ${src} GROUP BY k`;
    const r = await runSql(q(`'${f}'`), { workers: 2, inThreadBytes: 0 });
    expectTypedEqual(arrowTyped(r.toArrow()), await duckTable(q(duckCsv(f))));
    const maps = r.stats.tasks.filter((t) => t.kind === 'map');
    expect(maps.length).toBeGreaterThan(20);
    expect(maps.reduce((s, t) => s + t.rows, 0)).toBe(30000);
  });

  it('a value that does not parse is a data error naming file, line and column (lines counted across cuts)', async () => {
    // quoted line breaks before the bad row: its line is not its record number
    const rows = Array.from({ length: 3000 }, (_, i) => `${i},"a\nb",${i % 7}`);
    rows[2500] = '2500,"a\nb",oops';
    const f = file('bad.csv', `id,s,n\n${rows.join('\n')}\n`);
    const line = 2 + 2500 * 2;
    const plan = {
      version: 1,
      sources: { t: { csv: f, columns: { n: 'int64' } } },
      query: {
        op: 'aggregate',
        input: { op: 'scan', source: 't' },
        groupBy: [],
        aggregates: [{ fn: 'sum', column: 'n', as: 's' }],
      },
    };
    for (const chunk of ['3000', '']) {
      if (chunk) process.env.SKEWJOIN_CSV_CHUNK_BYTES = chunk;
      const e = await runPlan(plan as never, { workers: 2 }).catch((x) => x);
      expect(e).toBeInstanceOf(InputError);
      expect(e.message).toBe(`${f}: line ${line}, column "n": "oops" does not parse as int64`);
    }
    const p = writePlan(dir, plan, 'bad-plan.json');
    const c = cli([p]);
    expect(c.code).toBe(3);
    expect(c.stderr).toContain(`line ${line}, column "n": "oops" does not parse as int64`);
    expect(c.stderr).not.toMatch(/\n\s+at /);
  });

  it('a record with too many or too few fields, or an unclosed quote, is a data error at its line', async () => {
    const scan = (f: string) =>
      runPlan({ version: 1, sources: { t: { csv: f } }, query: { op: 'scan', source: 't' } } as never);
    await expect(scan(file('wide.csv', 'a,b\n1,2\n3,4,5\n'))).rejects.toThrow(
      /wide\.csv: line 3: expected 2 fields, found 3/,
    );
    await expect(scan(file('open.csv', 'a,b\n1,2\n3,"x\n'))).rejects.toThrow(
      /open\.csv: line 3: a quoted field is not closed before the end of the file/,
    );
  });

  it('a CSV source given wrong is a plan error naming its field (exit 2)', async () => {
    const f = file('opts.csv', 'a,b\n1,2\n');
    const err = (src: object) =>
      runPlan({ version: 1, sources: { t: { csv: f, ...src } }, query: { op: 'scan', source: 't' } } as never).catch(
        (e) => `${e.constructor.name} ${e.message}`,
      );
    expect(await err({ header: 'yes' })).toBe('PlanError sources.t.header: expected a boolean, got "yes"');
    expect(await err({ delimiter: '::' })).toBe(
      'PlanError sources.t.delimiter: must be one ASCII character other than a quote or a line break, got "::"',
    );
    expect(await err({ columns: { c: 'int64' } })).toBe(
      `PlanError sources.t.columns.c: ${f} has no column "c"; its columns are: a, b`,
    );
    expect(await err({ columns: { a: 'int' } })).toMatch(
      /^PlanError sources\.t\.columns\.a: expected a type name: bool/,
    );
  });

  it('SQL: FROM a .csv path, read_csv with options, --source NAME=file.csv; joined with Parquet', async () => {
    const f = file('fruit.csv', 'id,name,price\n1,apple,1.5\n2,pear,\n3,"fig, dried",4.25\n');
    const g = file('fruit.txt', 'id|name\n1|red\n3|brown\n');
    const pq = await writeParquet(
      path.join(dir, 'stock.parquet'),
      'SELECT i AS id, i * 10 AS qty FROM range(0, 5) t(i)',
    );
    const q = (a: string, b: string) =>
      `SELECT f.name, f.price, s.qty, c.name AS color FROM ${a} f JOIN stock s ON f.id = s.id LEFT JOIN ${b} c ON c.id = f.id ORDER BY f.id`;
    const r = await runSql(q(`'${f}'`, `read_csv('${g}', delim = '|', header = true)`), { sources: { stock: pq } });
    const theirs = await duckTable(
      q(duckCsv(f), `read_csv('${g}', delim = '|', header = true)`).replace('JOIN stock', `JOIN '${pq}'`),
    );
    expectTypedEqual(arrowTyped(r.toArrow()), theirs, true);
    const c = cli(['sql', 'SELECT count(*) AS n, sum(price) AS p FROM fruit', '--source', `fruit=${f}`, '--json']);
    expect(c.stderr).toBe('');
    expect(c.stdout.trim()).toBe('{"n":3,"p":5.75}');
    // a plan's Parquet source given a .csv file on the command line
    const plan = {
      version: 1,
      sources: { fruit: { parquet: 'fruit.parquet' } },
      query: {
        op: 'aggregate',
        input: { op: 'scan', source: 'fruit' },
        groupBy: [],
        aggregates: [{ fn: 'max', column: 'name', as: 'm' }],
      },
    };
    const p = cli([writePlan(dir, plan, 'fruit-plan.json'), '--source', `fruit=${f}`, '--json']);
    expect(p.stdout.trim()).toBe('{"m":"pear"}');
    const d = await runSql('DESCRIBE fruit', { sources: { fruit: f } });
    expect(d.toRows()).toEqual([
      { column_name: 'id', column_type: 'int64' },
      { column_name: 'name', column_type: 'utf8' },
      { column_name: 'price', column_type: 'float64' },
    ]);
  });
});

describe('--data DIR', () => {
  const data = path.join(dir, 'tables');
  beforeAll(async () => {
    fs.mkdirSync(path.join(data, 'orders'), { recursive: true });
    await writeParquet(
      path.join(data, 'nation.parquet'),
      "SELECT i AS n_id, 'nation' || i AS n_name FROM range(0, 5) t(i)",
    );
    await writeParquet(
      path.join(data, 'orders', 'a.parquet'),
      'SELECT i AS o_id, i % 5 AS o_nation FROM range(0, 50) t(i)',
    );
    await writeParquet(
      path.join(data, 'orders', 'b.parquet'),
      'SELECT i AS o_id, i % 3 AS o_nation FROM range(50, 80) t(i)',
    );
    fs.writeFileSync(path.join(data, 'region.csv'), 'n_id,r_name\n0,north\n1,south\n2,"east, far"\n');
  });
  const q = `SELECT n_name, r_name, count(*) AS n FROM orders JOIN nation ON o_nation = nation.n_id
    LEFT JOIN region ON region.n_id = nation.n_id GROUP BY n_name, r_name`;
  const duckQ = () =>
    q
      .replace('FROM orders', `FROM '${data}/orders/*.parquet' orders`)
      .replace('JOIN nation', `JOIN '${data}/nation.parquet' nation`)
      .replace('JOIN region', `JOIN ${duckCsv(path.join(data, 'region.csv'))} region`);

  it('binds name.parquet, name/ and name.csv for SQL, from the library and the command line', async () => {
    const theirs = await duckTable(duckQ());
    const r = await runSql(q, { data: 'tables', baseDir: dir });
    expectTypedEqual(arrowTyped(r.toArrow()), theirs);
    const c = cli(['sql', q, '--data', 'tables', '--json'], dir);
    expect(c.stderr).toBe('');
    expect(c.stdout.trim().split('\n').length).toBe(theirs.rows.length);
  });

  it('--source wins over --data; a table found nowhere says how to bind it and what was tried', async () => {
    const other = await writeParquet(path.join(dir, 'nation2.parquet'), "SELECT 1 AS n_id, 'other' AS n_name");
    const r = await runSql('SELECT n_name FROM nation', { data: data, sources: { nation: other } });
    expect(r.toRows()).toEqual([{ n_name: 'other' }]);
    const e = await runSql('SELECT *\nFROM nowhere', { data }).catch((x) => x);
    expect(e).toBeInstanceOf(PlanError);
    expect(e.message).toBe(
      `line 2, column 6: table "nowhere" does not exist; bind it with options.sources or options.data; options.data ` +
        `${data} has none of ${data}/nowhere.parquet, ${data}/nowhere/, ${data}/nowhere.csv`,
    );
    const c = cli(['sql', 'SELECT * FROM nation']);
    expect(c.code).toBe(2);
    expect(c.stderr).toContain('table "nation" does not exist; bind it with --source nation=PATH or --data DIR');
  });

  it('plans: a scanned source the plan does not declare comes from DIR; a declared one found there too', async () => {
    const plan = {
      version: 1,
      sources: { nation: { parquet: 'missing.parquet' } },
      query: {
        op: 'aggregate',
        input: {
          op: 'join',
          type: 'inner',
          left: { op: 'scan', source: 'orders' },
          right: { op: 'scan', source: 'region' },
          on: [['o_nation', 'n_id']],
        },
        groupBy: ['r_name'],
        aggregates: [{ fn: 'count', as: 'n' }],
      },
    };
    const r = await runPlan(plan as never, { data });
    const theirs = await duckTable(
      `SELECT r_name, count(*) AS n FROM '${data}/orders/*.parquet' JOIN ${duckCsv(path.join(data, 'region.csv'))}
       ON o_nation = n_id GROUP BY r_name`,
    );
    expectTypedEqual(arrowTyped(r.toArrow()), theirs);
    const p = writePlan(dir, { ...plan, query: { op: 'scan', source: 'lineitem' } }, 'data-plan.json');
    const c = cli([p, '--data', data]);
    expect(c.code).toBe(2);
    expect(c.stderr).toContain(
      `query.source: unknown source "lineitem"; sources are: nation; --data ${data} has none of ${data}/lineitem.parquet`,
    );
  });
});

describe('DESCRIBE and skewjoin describe', () => {
  it('prints the columns and types of a CSV and a Parquet file, as DuckDB types them', async () => {
    const f = file('desc.csv', 'id,when,amount,ok,name\n1,2020-01-01,2.5,true,x\n2,2020-01-02,3,false,\n');
    const pq = await writeParquet(path.join(dir, 'desc.parquet'), 'SELECT 1::INTEGER AS a, 2.5::DECIMAL(9,2) AS b');
    expect(await describeFile(f)).toEqual([
      { name: 'id', type: 'int64' },
      { name: 'when', type: 'date' },
      { name: 'amount', type: 'float64' },
      { name: 'ok', type: 'bool' },
      { name: 'name', type: 'utf8' },
    ]);
    const duck = await duckTable(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM ${duckCsv(f)})`);
    expect(duck.rows.map((r) => r[1])).toEqual(['BIGINT', 'DATE', 'DOUBLE', 'BOOLEAN', 'VARCHAR']);
    const c = cli(['describe', f]);
    expect(c.code).toBe(0);
    expect(c.stdout).toBe(
      'column_name | column_type\n------------+------------\nid          | int64      \nwhen        | date       \n' +
        'amount      | float64    \nok          | bool       \nname        | utf8       \n(5 rows)\n',
    );
    const s = cli(['sql', `DESCRIBE '${pq}'`, '--json']);
    expect(s.stdout).toBe(
      '{"column_name":"a","column_type":"int32"}\n{"column_name":"b","column_type":"decimal(9,2)"}\n',
    );
    const r = await runSql(`describe read_csv('${f}', header = false)`);
    expect(r.toRows().map((x) => x.column_type)).toEqual(['utf8', 'utf8', 'utf8', 'utf8', 'utf8']);
    expect(cli(['describe', path.join(dir, 'nope.csv')]).code).toBe(3);
  });
});

describe('--engine spark', () => {
  it('refuses a CSV source at lowering, by name (exit 2)', () => {
    const f = file('s.csv', 'a\n1\n');
    const p = writePlan(
      dir,
      { version: 1, sources: { t: { csv: f } }, query: { op: 'scan', source: 't' } },
      'spark.json',
    );
    const c = cli(['lower', p]);
    expect(c.code).toBe(2);
    expect(c.stderr).toContain('query.source: source "t" is read as CSV, which --engine spark does not lower yet');
  });
});
