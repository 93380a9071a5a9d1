// The 22 TPC-H plans of plans/tpch against DuckDB running the official SQL
// (test/tpch/qNN.sql) with the same parameters on the bundled SF 0.01 files;
// the parameter and source-override paths of the command line and the library;
// and `skewjoin gen --tpch`.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InputError, PlanError, runPlan } from '../dist/index.js';
import type { Stats } from '../dist/index.js';
import { ROOT, arrowTyped, cli, duck, duckTable, expectTypedEqual, sql, tmpDir, writePlan } from './helpers.js';
import { type Params, VALIDATION, officialSql } from './tpch-queries.js';

const DATA = path.join(ROOT, 'datasets', 'tpch');
const TABLES = ['region', 'nation', 'supplier', 'customer', 'part', 'partsupp', 'orders', 'lineitem'];
const QUERIES = Array.from({ length: 22 }, (_, i) => `q${String(i + 1).padStart(2, '0')}`);
const planFile = (q: string) => path.join(ROOT, 'plans', 'tpch', `${q}.json`);
const readPlan = (q: string) => JSON.parse(fs.readFileSync(planFile(q), 'utf8'));

function defaults(q: string): Params {
  return Object.fromEntries(Object.entries(readPlan(q).params ?? {}).map(([k, v]: [string, any]) => [k, v.default]));
}

// Values in an exact text form: decimals, dates and 64-bit integers as DuckDB prints them, doubles to 10 digits.
function canon(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : v.toPrecision(10);
  if (typeof v === 'object') return String(v);
  return v;
}
async function rowsOf(query: string): Promise<{ columns: string[]; rows: unknown[][] }> {
  const r = await (await duck()).runAndReadAll(query);
  return { columns: r.columnNames(), rows: r.getRows().map((row) => row.map(canon)) };
}

/** The ORDER BY of a plan: its top sort node (under a limit or a project). */
function orderOf(plan: any): { column: string; desc: boolean }[] {
  for (let n = plan.query; n; n = n.input)
    if (n.op === 'sort') return n.by.map((b: any) => ({ column: b.column, desc: !!b.desc }));
  return [];
}
function compareValues(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null) return 1; // nulls last
  if (b === null) return -1;
  const x = Number(a),
    y = Number(b);
  if (
    typeof a === 'string' &&
    typeof b === 'string' &&
    !(Number.isFinite(x) && Number.isFinite(y) && a.trim() !== '' && b.trim() !== '')
  ) {
    return a < b ? -1 : 1;
  }
  return x - y;
}
const byText = (rows: unknown[][]) => [...rows].map((r) => JSON.stringify(r)).sort();

/** Run a plan and DuckDB's SQL; the same columns, the same rows, ours in the ORDER BY order (ties in any order). */
async function expectTpch(
  q: string,
  params: Params,
  opts: Record<string, unknown> = {},
  seen?: (stats: Stats) => void,
) {
  const dir = tmpDir('sj-tpch-');
  const out = path.join(dir, 'out.parquet');
  const plan = readPlan(q);
  const r = await runPlan(
    { ...plan, output: { path: out } },
    { baseDir: path.dirname(planFile(q)), workers: 2, ...opts },
  );
  const ours = await rowsOf(`SELECT * FROM read_parquet('${out}')`);
  const theirs = await rowsOf(officialSql(q, params));
  fs.rmSync(dir, { recursive: true, force: true });
  expect(ours.columns).toEqual(theirs.columns);
  expect(byText(ours.rows)).toEqual(byText(theirs.rows));
  const order = orderOf(plan).map((o) => ({ i: ours.columns.indexOf(o.column), desc: o.desc }));
  for (let k = 1; k < ours.rows.length; k++) {
    let c = 0;
    for (const { i, desc } of order)
      if ((c = compareValues(ours.rows[k - 1][i], ours.rows[k][i]) * (desc ? -1 : 1)) !== 0) break;
    expect(c, `${q}: rows ${k - 1} and ${k} out of order`).toBeLessThanOrEqual(0);
  }
  expect(r.numRows).toBe(theirs.rows.length);
  // and the project's typed comparison: column types as DuckDB's, values exact (floats within 1e-9)
  expectTypedEqual(arrowTyped(r.toArrow()), await duckTable(officialSql(q, params)));
  seen?.(r.stats);
  return theirs.rows.length;
}

beforeAll(async () => {
  for (const t of TABLES)
    await sql(`CREATE OR REPLACE VIEW ${t} AS SELECT * FROM read_parquet('${path.join(DATA, `${t}.parquet`)}')`);
});

describe('TPC-H plans against the official SQL (SF 0.01, validation parameters)', () => {
  for (const q of QUERIES) {
    it(q, async () => {
      expect(defaults(q)).toEqual(VALIDATION[q]);
      const n = await expectTpch(q, VALIDATION[q]);
      expect(n).toBeGreaterThan(0); // every query has rows on the bundled data
    });
  }
});

// A second parameter set, each value within the specification's range, chosen so that every query still has rows.
const SECOND: Record<string, Params> = {
  q01: { DELTA: 60 },
  q03: { SEGMENT: 'MACHINERY', DATE: '1995-03-28' },
  q05: { REGION: 'EUROPE', DATE: '1995-01-01' },
  q06: { DATE: '1995-01-01', DISCOUNT: '0.03', QUANTITY: 25 },
  q09: { COLOR: 'blue' },
  q12: { SHIPMODE1: 'AIR', SHIPMODE2: 'TRUCK', DATE: '1996-01-01' },
  q13: { WORD1: 'pending', WORD2: 'deposits' },
  q18: { QUANTITY: 312 },
  q22: { I1: '10', I2: '11', I3: '12', I4: '14', I5: '15', I6: '16', I7: '19' },
};

describe('TPC-H plans with a second parameter set', () => {
  for (const [q, params] of Object.entries(SECOND)) {
    it(`${q} ${JSON.stringify(params)}`, async () => {
      const all = { ...VALIDATION[q], ...params };
      expect(await expectTpch(q, all, { params })).toBeGreaterThan(0);
    });
  }
  it('the command line takes the same values: q05 --param REGION=EUROPE --param DATE=1995-01-01', async () => {
    const r = cli([
      'plans/tpch/q05.json',
      '--json',
      '--workers',
      '2',
      '--param',
      'REGION=EUROPE',
      '--param',
      'DATE=1995-01-01',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const ours = r.stdout
      .trim()
      .split('\n')
      .map((l) => Object.values(JSON.parse(l)).map(String));
    const theirs = (await rowsOf(officialSql('q05', { REGION: 'EUROPE', DATE: '1995-01-01' }))).rows;
    expect(ours).toEqual(theirs); // revenues all differ: the order is fixed
    expect(ours.map((x) => x[0])).toEqual(expect.arrayContaining(['FRANCE', 'GERMANY']));
  });
});

// The same plans on the worker pool with every join shuffled (their richest shapes, EXISTS as semi
// joins, NOT EXISTS as anti, Q11/Q22's cross joins, Q13's outer join, otherwise broadcast on the
// calling thread): once under a budget that spills (grace joins, spilled shuffles and sort runs),
// once with every skew test passing so that partitions split. The paths taken are counted over
// the 22 plans, so a change that routes around them fails here.
const spillDir = tmpDir('sj-tpch-spill-');
const POOL_RUNS: { name: string; opts: Record<string, unknown>; expectPaths: (s: Stats[]) => void }[] = [
  {
    // 128 KB: 19 of the 22 plans spill, 10 cut a reduce task into grace pieces (SF 0.01); runtime filters off: a
    // shuffle join's side partitioned first would filter the other's rows (test/runtime-filters.test.ts), and fewer
    // plans would spill (9 of 22 with them)
    name: 'on the pool, broadcasts off, a 128 KB budget that spills',
    opts: { inThreadBytes: 0, broadcastBytes: 0, memoryLimit: '128KB', spillDir, partitions: 4, runtimeFilters: 'off' },
    expectPaths: (all) => {
      expect(all.filter((s) => s.inThread).length).toBe(0);
      // every equi-join shuffled; a keyless join replicates its smaller side whatever broadcastBytes says: Q11's
      // cross join, Q22's range join (c_acctbal > the average: its one row sorted, physical/join/range.ts)
      const broadcast = all.flatMap((s) => s.joins.filter((j) => j.strategy !== 'shuffle').map((j) => j.reason));
      expect(broadcast.length).toBe(2);
      expect(broadcast.map((why) => why.split(' ')[0]).sort()).toEqual(['cross', 'range']);
      expect(all.filter((s) => s.spilledBytes > 0 && s.spillReadBytes > 0).length).toBeGreaterThanOrEqual(15);
      expect(all.filter((s) => s.tasks.some((t) => /grace piece/.test(t.split ?? ''))).length).toBeGreaterThanOrEqual(
        6,
      );
    },
  },
  {
    name: 'on the pool, broadcasts off, skew splits forced',
    opts: {
      inThreadBytes: 0,
      broadcastBytes: 0,
      partitions: 4,
      skew: { factor: 1, thresholdBytes: 1, advisoryPartitionBytes: 16384 },
    },
    expectPaths: (all) => {
      const splits = all.flatMap((s) => s.joins.flatMap((j) => j.splits.map((x) => x.method)));
      expect(splits.filter((m) => m === 'map-range').length).toBeGreaterThanOrEqual(20);
      expect(splits.filter((m) => m === 'hot-key').length).toBeGreaterThanOrEqual(3);
      const twoLevel = all.flatMap((s) =>
        s.aggregates.flatMap((a) => a.splits.filter((x) => x.method === 'two-level')),
      );
      expect(twoLevel.length).toBeGreaterThanOrEqual(4);
    },
  },
];

for (const run of POOL_RUNS) {
  describe(`TPC-H plans ${run.name}`, () => {
    const stats: Stats[] = [];
    for (const q of QUERIES) {
      it(q, async () => {
        expect(await expectTpch(q, VALIDATION[q], run.opts, (s) => stats.push(s))).toBeGreaterThan(0);
      });
    }
    it('took the paths it forces', () => {
      expect(stats.length).toBe(QUERIES.length);
      run.expectPaths(stats);
    });
  });
}

describe("--source and the library's sources", () => {
  let dir: string;
  beforeAll(async () => {
    // TPC-H files as DuckDB writes them, lineitem split over two files in nested folders
    dir = tmpDir('sj-tpch-src-');
    for (const t of TABLES.filter((x) => x !== 'lineitem'))
      await sql(`COPY ${t} TO '${path.join(dir, `${t}.parquet`)}' (FORMAT parquet)`);
    fs.mkdirSync(path.join(dir, 'lineitem', 'a', 'b'), { recursive: true });
    await sql(
      `COPY (SELECT * FROM lineitem WHERE l_orderkey % 2 = 0) TO '${path.join(dir, 'lineitem', 'part-0.parquet')}' (FORMAT parquet)`,
    );
    await sql(
      `COPY (SELECT * FROM lineitem WHERE l_orderkey % 2 = 1) TO '${path.join(dir, 'lineitem', 'a', 'b', 'part-1.parquet')}' (FORMAT parquet)`,
    );
    fs.writeFileSync(path.join(dir, 'lineitem', 'README.txt'), 'not parquet: a folder override reads *.parquet only');
    fs.mkdirSync(path.join(dir, 'empty'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('q05 on DuckDB-written files: --source for every table (a folder for lineitem) and --param', async () => {
    const sources = ['customer', 'orders', 'supplier', 'nation', 'region'].flatMap((t) => [
      '--source',
      `${t}=${path.relative(ROOT, path.join(dir, `${t}.parquet`))}`,
    ]);
    const r = cli([
      'plans/tpch/q05.json',
      '--json',
      '--workers',
      '2',
      '--source',
      `lineitem=${path.relative(ROOT, path.join(dir, 'lineitem'))}`,
      ...sources,
      '--param',
      'REGION=EUROPE',
    ]);
    expect(r.code, r.stderr).toBe(0);
    const ours = r.stdout
      .trim()
      .split('\n')
      .map((l) => Object.values(JSON.parse(l)).map(String));
    const theirs = (await rowsOf(officialSql('q05', { ...VALIDATION.q05, REGION: 'EUROPE' }))).rows;
    expect(ours.length).toBeGreaterThan(0);
    expect(ours).toEqual(theirs);
  });
  it("all 22 plans on the DuckDB-written files (the library's sources, absolute; lineitem a folder)", async () => {
    for (const q of QUERIES) {
      const declared = Object.keys(readPlan(q).sources);
      const sources = Object.fromEntries(
        declared.map((t) => [t, path.join(dir, t === 'lineitem' ? t : `${t}.parquet`)]),
      );
      expect(await expectTpch(q, VALIDATION[q], { sources }), q).toBeGreaterThan(0);
    }
  });
  it("a glob, and the library's sources relative to baseDir (a list)", async () => {
    const g = cli([
      'plans/tpch/q01.json',
      '--json',
      '--workers',
      '2',
      '--source',
      `lineitem=${path.join(dir, 'lineitem', '**', '*.parquet')}`,
    ]);
    expect(g.code, g.stderr).toBe(0);
    expect(g.stdout.trim().split('\n').length).toBe(4);
    const r = await runPlan(planFile('q01'), {
      baseDir: dir,
      workers: 2,
      sources: { lineitem: ['lineitem/part-0.parquet', 'lineitem/a/b/part-1.parquet'] },
    });
    const full = await runPlan(planFile('q01'), { workers: 2 });
    expect(r.toRows()).toEqual(full.toRows());
    const half = await runPlan(planFile('q01'), {
      baseDir: dir,
      workers: 2,
      sources: { lineitem: 'lineitem/part-0.parquet' },
    });
    const count = (x: typeof r) => x.toRows().reduce((s, row) => s + Number(row.count_order), 0);
    const [[expected]] = (
      await rowsOf(`SELECT count(*) FROM lineitem WHERE l_orderkey % 2 = 0 AND l_shipdate <= DATE '1998-09-02'`)
    ).rows;
    expect(count(half)).toBe(Number(expected));
  });
  it('errors: an undeclared source is exit 2; a path with no file exit 3; nothing is written', () => {
    const cases: [string[], number, RegExp][] = [
      [
        ['--source', 'lineitems=x.parquet'],
        2,
        /--source lineitems: the plan declares no source "lineitems"; its sources are: lineitem/,
      ],
      [
        ['--source', `lineitem=${path.join(dir, 'missing.parquet')}`],
        3,
        /--source lineitem=.*missing\.parquet: no file or folder/,
      ],
      [
        ['--source', `lineitem=${path.join(dir, 'nothing', '*.parquet')}`],
        3,
        /--source lineitem=.*: glob ".*nothing\/\*\.parquet" matches no file/,
      ],
      [
        ['--source', `lineitem=${path.join(dir, 'empty')}`],
        3,
        /--source lineitem=.*empty: folder .*empty holds no \*\.parquet file/,
      ],
      [['--source', 'lineitem'], 2, /--source must be NAME=PATH, got "lineitem"/],
    ];
    for (const [args, code, msg] of cases) {
      const r = cli(['plans/tpch/q01.json', ...args]);
      expect(r.code, r.stderr).toBe(code);
      expect(r.stderr).toMatch(msg);
      expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
      expect(r.stdout).toBe('');
    }
  });
  it('errors through the library: PlanError and InputError with exit codes', async () => {
    const e1 = await runPlan(planFile('q01'), { sources: { items: 'x.parquet' } }).catch((e) => e);
    expect(e1).toBeInstanceOf(PlanError);
    expect(e1.path).toBe('options.sources.items');
    expect(e1.exitCode).toBe(2);
    const e2 = await runPlan(planFile('q01'), { baseDir: dir, sources: { lineitem: 'empty' } }).catch((e) => e);
    expect(e2).toBeInstanceOf(InputError);
    expect(e2.exitCode).toBe(3);
    expect(e2.message).toMatch(/options\.sources\.lineitem=empty: folder .* holds no \*\.parquet file/);
  });
});

describe('parameter errors', () => {
  const tiny = (params: object, where: object) => ({
    version: 1,
    sources: { region: { parquet: path.join(DATA, 'region.parquet') } },
    params,
    query: { op: 'filter', input: { op: 'scan', source: 'region' }, where },
  });
  it('command line: each mistake is exit 2 naming the parameter and the value', () => {
    const dir = tmpDir();
    const noDefault = writePlan(
      dir,
      tiny({ NAME: { type: 'utf8' } }, { column: 'r_name', cmp: '=', value: { param: 'NAME' } }),
      'nodefault.json',
    );
    const undeclared = writePlan(
      dir,
      tiny({}, { and: [{ column: 'r_name', in: ['ASIA', { param: 'OTHER' }] }] }),
      'undeclared.json',
    );
    const badDefault = writePlan(
      dir,
      tiny({ D: { type: 'date', default: '1995-02-30' } }, { column: 'r_name', isNull: false }),
      'baddefault.json',
    );
    const badType = writePlan(
      dir,
      tiny({ D: { type: 'datetime' } }, { column: 'r_name', isNull: false }),
      'badtype.json',
    );
    const cases: [string[], RegExp][] = [
      [
        ['plans/tpch/q05.json', '--param', 'COUNTRY=FRANCE'],
        /plan error: --param COUNTRY: the plan declares no parameter "COUNTRY"; its parameters are: REGION, DATE/,
      ],
      [
        ['plans/tpch/q05.json', '--param', 'DATE=1994-13-01'],
        /--param DATE: value "1994-13-01" of parameter "DATE" is not of type date: expected a date YYYY-MM-DD/,
      ],
      [
        ['plans/tpch/q18.json', '--param', 'QUANTITY=lots'],
        /--param QUANTITY: value "lots" of parameter "QUANTITY" is not of type int64: expected an integer/,
      ],
      [
        ['plans/tpch/q06.json', '--param', 'DISCOUNT=0.065'],
        /--param DISCOUNT: value "0.065" of parameter "DISCOUNT" is not of type decimal\(15,2\): has more than 2 digits after the point/,
      ],
      [['plans/tpch/q05.json', '--param', 'REGION'], /--param must be NAME=VALUE, got "REGION"/],
      [[noDefault], /params\.NAME: parameter "NAME" \(utf8\) has no value and no default; give --param NAME=VALUE/],
      [
        [undeclared],
        /query\.where\.and\[0\]\.in\[1\]\.param: parameter "OTHER" is not declared; the plan has no params/,
      ],
      [[badDefault], /params\.D\.default: value "1995-02-30" of parameter "D" is not of type date/],
      [[badType], /params\.D\.type: expected a type name/],
    ];
    for (const [args, msg] of cases) {
      const r = cli(args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(msg);
      expect(r.stdout).toBe('');
    }
  });
  it('the library: PlanError with the path, and values of any JS type', async () => {
    const err = (p: Promise<unknown>) =>
      p.then(
        () => null,
        (e) => e,
      );
    const e1 = await err(runPlan(planFile('q05'), { params: { COUNTRY: 'FRANCE' } }));
    expect(e1).toBeInstanceOf(PlanError);
    expect([e1.path, e1.exitCode]).toEqual(['options.params.COUNTRY', 2]);
    const e2 = await err(runPlan(planFile('q18'), { params: { QUANTITY: 1.5 } }));
    expect(e2.message).toMatch(/options\.params\.QUANTITY: value 1\.5 of parameter "QUANTITY" is not of type int64/);
    const e3 = await err(
      runPlan(tiny({ NAME: { type: 'utf8' } }, { column: 'r_name', cmp: '=', value: { param: 'NAME' } })),
    );
    expect(e3.message).toMatch(/params\.NAME: .* no value and no default; give options\.params\.NAME/);
    const ok = await runPlan(
      tiny(
        { N: { type: 'utf8' }, K: { type: 'int32', default: 0 } },
        {
          and: [
            { column: 'r_name', like: { fn: 'concat', args: [{ param: 'N' }, { value: '%' }] } },
            { column: 'r_regionkey', cmp: '>', value: { param: 'K' } },
          ],
        },
      ),
      { params: { N: 'A', K: 1n } },
    );
    expect(ok.toRows().map((x) => x.r_name)).toEqual(['ASIA']); // AFRICA and AMERICA have keys 0 and 1
  });
  it('a plan object is not changed by the substitution', async () => {
    const plan = readPlan('q06');
    const before = JSON.stringify(plan);
    await runPlan(plan, { baseDir: path.dirname(planFile('q06')), params: { QUANTITY: 30 } });
    expect(JSON.stringify(plan)).toBe(before);
  });
});

describe('skewjoin gen --tpch', () => {
  it('writes the bundled files again (same seed), with the TPC-H types and relationships', async () => {
    const dir = tmpDir('sj-gen-tpch-');
    const r = cli(['gen', '--tpch', '--scale', '0.01', '--out', dir]);
    expect(r.code, r.stderr).toBe(0);
    for (const t of TABLES) {
      const [[diff]] = (
        await rowsOf(`SELECT count(*) FROM (
        (SELECT * FROM read_parquet('${path.join(dir, `${t}.parquet`)}') EXCEPT ALL SELECT * FROM ${t})
        UNION ALL (SELECT * FROM ${t} EXCEPT ALL SELECT * FROM read_parquet('${path.join(dir, `${t}.parquet`)}')))`)
      ).rows;
      expect(diff, t).toBe('0');
    }
    const types = (await rowsOf(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM lineitem)`)).rows;
    expect(Object.fromEntries(types)).toMatchObject({
      l_orderkey: 'INTEGER',
      l_quantity: 'DECIMAL(15,2)',
      l_extendedprice: 'DECIMAL(15,2)',
      l_discount: 'DECIMAL(15,2)',
      l_shipdate: 'DATE',
      l_returnflag: 'VARCHAR',
    });
    const [counts] = (
      await rowsOf(`SELECT (SELECT count(*) FROM supplier), (SELECT count(*) FROM part), (SELECT count(*) FROM partsupp),
      (SELECT count(*) FROM customer), (SELECT count(*) FROM orders), (SELECT count(*) FROM nation), (SELECT count(*) FROM region)`)
    ).rows;
    expect(counts).toEqual(['100', '2000', '8000', '1500', '15000', '25', '5']);
    const [checks] = (
      await rowsOf(`SELECT
      (SELECT count(*) FROM lineitem l ANTI JOIN partsupp ON l_partkey = ps_partkey AND l_suppkey = ps_suppkey),
      (SELECT count(*) FROM lineitem ANTI JOIN orders ON l_orderkey = o_orderkey),
      (SELECT count(*) FROM orders WHERE o_custkey % 3 = 0),
      (SELECT count(*) FROM (SELECT o_orderkey, o_orderstatus, o_totalprice,
          CASE WHEN bool_and(l_linestatus = 'F') THEN 'F' WHEN bool_and(l_linestatus = 'O') THEN 'O' ELSE 'P' END AS st,
          round(sum(l_extendedprice * (1 + l_tax) * (1 - l_discount)), 2) AS total
        FROM orders JOIN lineitem ON l_orderkey = o_orderkey GROUP BY ALL) WHERE st <> o_orderstatus OR total <> o_totalprice),
      (SELECT count(*) FROM lineitem) BETWEEN 50000 AND 70000,
      (SELECT count(*) FROM partsupp GROUP BY ps_partkey, ps_suppkey ORDER BY 1 DESC LIMIT 1)`)
    ).rows;
    expect(checks).toEqual(['0', '0', '0', '0', true, '1']);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
