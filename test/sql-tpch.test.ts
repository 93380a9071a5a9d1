// SQL in: the 22 official TPC-H texts (test/tpch/qNN.sql, parameters written
// in as qgen does) compiled by src/sql and run, against DuckDB running the
// same text on the same SF 0.01 files; a few of them through the command line.
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { compileSql, runSql, validatePlan } from '../dist/index.js';
import { ROOT, arrowTyped, cli, duck, duckTable, expectTypedEqual, sql, tmpDir } from './helpers.js';
import { VALIDATION, officialSql } from './tpch-queries.js';

const DATA = path.join(ROOT, 'datasets', 'tpch');
const TABLES = ['region', 'nation', 'supplier', 'customer', 'part', 'partsupp', 'orders', 'lineitem'];
const SOURCES = Object.fromEntries(TABLES.map((t) => [t, path.join(DATA, `${t}.parquet`)]));
const QUERIES = Object.keys(VALIDATION);

/** The ORDER BY of a compiled plan: its top sort's columns (under a limit or projection). */
function orderOf(plan: any): { column: string; desc: boolean }[] {
  for (let n = plan.query; n; n = n.input)
    if (n.op === 'sort') return n.by.map((b: any) => ({ column: b.column, desc: !!b.desc }));
  return [];
}

beforeAll(async () => {
  for (const t of TABLES) await sql(`CREATE OR REPLACE VIEW ${t} AS SELECT * FROM read_parquet('${SOURCES[t]}')`);
});

describe('the 22 TPC-H texts, compiled and run, against DuckDB (SF 0.01)', () => {
  for (const q of QUERIES) {
    it(q, async () => {
      const text = officialSql(q);
      const plan = await compileSql(text, { sources: SOURCES });
      validatePlan(plan); // the schema's own validator (plans/plan.schema.json is generated from it)
      const r = await runSql(text, { sources: SOURCES, workers: 2 });
      const ours = arrowTyped(r.toArrow()),
        theirs = await duckTable(text);
      expect(r.schema.map((f) => f.name)).toEqual((await (await duck()).runAndReadAll(text)).columnNames());
      expectTypedEqual(ours, theirs);
      expect(theirs.rows.length).toBeGreaterThan(0);
      // in ORDER BY order: the sequences of sort keys are the same (ties may come in any order)
      const keys = orderOf(plan).map((o) => r.schema.findIndex((f) => f.name === o.column));
      expect(keys.every((k) => k >= 0)).toBe(true);
      const ordered = (rows: unknown[][]) => rows.map((row) => JSON.stringify(keys.map((k) => row[k])));
      expect(ordered(ours.rows)).toEqual(ordered(theirs.rows));
    });
  }
});

describe('the command line: skewjoin qNN.sql --source ...', () => {
  const dir = tmpDir('sj-sql-cli-');
  const sourceArgs = TABLES.flatMap((t) => ['--source', `${t}=${path.relative(ROOT, SOURCES[t])}`]);
  for (const q of ['q02', 'q13', 'q15', 'q21']) {
    it(`${q} writes DuckDB's answer with --output`, async () => {
      const file = path.join(dir, `${q}.sql`);
      fs.writeFileSync(file, officialSql(q));
      const out = path.join(dir, `${q}.parquet`);
      const r = cli([file, ...sourceArgs, '--workers', '2', '--output', out]);
      expect(r.code, r.stderr).toBe(0);
      expectTypedEqual(await duckTable(`SELECT * FROM read_parquet('${out}')`), await duckTable(officialSql(q)));
    });
  }
  it('--print-plan prints a plan that validates and runs as a plan file, with the same answer', async () => {
    const file = path.join(dir, 'q05.sql');
    fs.writeFileSync(file, officialSql('q05'));
    const p = cli([file, ...sourceArgs, '--print-plan']);
    expect(p.code, p.stderr).toBe(0);
    const plan = JSON.parse(p.stdout);
    expect(() => validatePlan(plan)).not.toThrow();
    expect(Object.keys(plan.sources).sort()).toEqual([
      'customer',
      'lineitem',
      'nation',
      'orders',
      'region',
      'supplier',
    ]);
    fs.writeFileSync(path.join(dir, 'q05.json'), p.stdout);
    const r = cli([path.join(dir, 'q05.json'), '--json', '--workers', '2']);
    expect(r.code, r.stderr).toBe(0);
    const rows = r.stdout
      .trim()
      .split('\n')
      .map((l) => Object.values(JSON.parse(l)).map(String));
    expect(rows).toEqual((await duckTable(officialSql('q05'))).rows.map((x) => x.map(String)));
    // --explain shows the plan chosen, and runs nothing
    const e = cli([file, ...sourceArgs, '--explain']);
    expect(e.code, e.stderr).toBe(0);
    expect(e.stdout).toMatch(/join-1/);
  });
});

describe('the plans chosen (SF 0.01 footers)', () => {
  const plan = async (q: string) => (await compileSql(officialSql(q), { sources: SOURCES })).query as any;
  const nodes = (n: any, out: any[] = []): any[] => {
    out.push(n);
    for (const k of ['input', 'left', 'right']) if (n[k]) nodes(n[k], out);
    return out;
  };
  const scans = (n: any) =>
    nodes(n)
      .filter((x) => x.op === 'scan')
      .map((x) => x.source);
  it('q03: only the columns read are scanned; customers of one segment meet orders first', async () => {
    const p = await plan('q03');
    const lineitem = nodes(p).find((x) => x.op === 'scan' && x.source === 'lineitem');
    expect(lineitem.columns.sort()).toEqual(['l_discount', 'l_extendedprice', 'l_orderkey', 'l_shipdate']);
    const top = nodes(p).find((x) => x.op === 'join');
    expect(scans(top.left)).toEqual(['lineitem']); // the largest table is the probe side of the first join
    expect(scans(top.right).sort()).toEqual(['customer', 'orders']);
  });
  it('q17: the correlated average is over the qualifying parts only (a semi join below its aggregate)', async () => {
    const aggs = nodes(await plan('q17')).filter((x) => x.op === 'aggregate' && x.groupBy.length === 1);
    expect(aggs).toHaveLength(1);
    expect(aggs[0].input).toMatchObject({ op: 'join', type: 'semi' });
    expect(scans(aggs[0].input.right)).toEqual(['part']);
  });
  it('q16: NOT IN over columns without nulls (footers) is an anti join; q21 EXISTS with <> is min/max', async () => {
    const q16 = nodes(await plan('q16'));
    expect(q16.filter((x) => x.op === 'join' && x.type === 'anti')).toHaveLength(1);
    expect(q16.filter((x) => x.op === 'aggregate')).toHaveLength(1);
    const q21 = nodes(await plan('q21'));
    const minmax = q21.filter((x) => x.op === 'aggregate' && x.aggregates.some((a: any) => a.fn === 'min'));
    expect(minmax).toHaveLength(2);
  });
});
