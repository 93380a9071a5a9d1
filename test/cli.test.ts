// The command line: the quick start, --json, --explain, --stats, gen, and the
// plan schema shipped in plans/.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { planJsonSchema, validatePlan } from '../dist/index.js';
import { ROOT, cli, duckRows, tmpDir } from './helpers.js';
import { zipfCdf, zipfKeys } from '../dist/bench/zipf.js';

describe('skewjoin plan.json', () => {
  it('runs the quick start plan and prints a table with the row count', () => {
    const r = cli(['plans/quickstart.json']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^region\s+\|\s+orders/);
    expect(r.stdout).toMatch(/\(8 rows\)/);
  });
  it('--json prints JSON lines', () => {
    const r = cli(['plans/quickstart.json', '--json']);
    const rows = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rows.length).toBe(8);
    expect(Object.keys(rows[0])).toEqual(['region', 'orders', 'customers', 'revenue', 'avg_qty']);
    expect(rows[0].revenue).toBeGreaterThan(rows[7].revenue); // sorted by revenue, descending
  });
  it('--explain prints stages and shuffles without running', () => {
    const r = cli(['plans/quickstart.json', '--explain', '--partitions', '6', '--no-broadcast']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/join-1: inner hash join on key = key/);
    expect(r.stdout).toMatch(/shuffle join-1\.left: hash on \[key\], 6 partitions/);
    expect(r.stdout).toMatch(/scan-1: scan orders \[key, amount, qty\], 1 file\(s\), 100000 rows → 7 map task\(s\)/);
  });
  it('--stats writes the statistics of the spec', () => {
    const f = path.join(tmpDir(), 'stats.json');
    const r = cli([
      'plans/quickstart.json',
      '--quiet',
      '--stats',
      f,
      '--partitions',
      '8',
      '--workers',
      '2',
      '--no-broadcast',
      // every row shuffled (a runtime filter across the shuffle would drop the unmatched ones)
      '--runtime-filters',
      'off',
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    const s = JSON.parse(fs.readFileSync(f, 'utf8'));
    expect(s.wallMs).toBeGreaterThan(0);
    expect(s.shuffles.map((x: any) => x.id)).toEqual(
      expect.arrayContaining(['join-1.left', 'join-1.right', 'aggregate-1.input']),
    );
    const left = s.shuffles.find((x: any) => x.id === 'join-1.left');
    expect(left.partitions).toBe(8);
    expect(left.partitionRows.reduce((a: number, b: number) => a + b, 0)).toBe(100000);
    expect(left.partitionBytes.length).toBe(8);
    for (const k of ['medianBytes', 'thresholdBytes', 'skewedPartitions', 'hotKeys']) expect(left).toHaveProperty(k);
    const kinds = new Set(s.tasks.map((t: any) => `${t.stage}/${t.kind}`));
    // the sort: range tasks over the aggregate's output (map), then a task per run of consecutive ranges (reduce)
    expect(kinds).toEqual(
      new Set(['join-1/map', 'join-1/reduce', 'aggregate-1/reduce', 'sort-1/map', 'sort-1/reduce']),
    );
    expect(s.shuffles.map((x: any) => x.id)).toContain('sort-1.range');
    for (const t of s.tasks)
      for (const k of ['partition', 'rows', 'outputRows', 'ms']) expect(typeof t[k]).toBe('number');
  });
  it('--version prints the package version', () => {
    const version = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version;
    for (const flag of ['--version', '-V']) {
      const r = cli([flag]);
      expect(r.code).toBe(0);
      expect(r.stdout).toBe(`skewjoin ${version}\n`);
    }
  });
  it('a result longer than the table says how to see every row', () => {
    const dir = tmpDir();
    const plan = JSON.parse(fs.readFileSync(path.join(ROOT, 'plans', 'quickstart.json'), 'utf8'));
    const file = path.join(ROOT, 'datasets', 'sample', 'dim.parquet');
    fs.writeFileSync(
      path.join(dir, 'p.json'),
      JSON.stringify({
        version: 1,
        sources: { d: { parquet: file } },
        query: { op: 'limit', count: 25, input: { op: 'scan', source: 'd' } },
      }),
    );
    const r = cli([path.join(dir, 'p.json')]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.length).toBe(2 + 20 + 1);
    expect(lines.at(-1)).toBe(
      '(25 rows, showing the first 20; --json prints every row, --output FILE writes them to a file)',
    );
    // all of them fit: only the count
    expect(cli(['plans/quickstart.json']).stdout.trimEnd().split('\n').at(-1)).toBe('(8 rows)');
    expect(plan.version).toBe(1);
  });
  it('--help shows examples; no plan is a usage error', () => {
    const h = cli(['--help']);
    expect(h.code).toBe(0);
    expect(h.stdout).toMatch(/Examples:/);
    expect(cli([]).code).toBe(2);
  });
  it('writes the output file and reports it', () => {
    const dir = tmpDir();
    const plan = JSON.parse(fs.readFileSync(path.join(ROOT, 'plans', 'quickstart.json'), 'utf8'));
    plan.sources.orders.parquet = path.join(ROOT, 'datasets', 'sample', 'fact.parquet');
    plan.sources.customers.parquet = path.join(ROOT, 'datasets', 'sample', 'dim.parquet');
    plan.output = { path: 'result.csv' };
    fs.writeFileSync(path.join(dir, 'p.json'), JSON.stringify(plan));
    const r = cli([path.join(dir, 'p.json')]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/wrote 8 rows to/);
    expect(fs.readdirSync(dir).sort()).toEqual(['p.json', 'result.csv']);
  });
});

describe('plans/', () => {
  it('plan.schema.json is generated from the validator', () => {
    const shipped = JSON.parse(fs.readFileSync(path.join(ROOT, 'plans', 'plan.schema.json'), 'utf8'));
    expect(shipped).toEqual(JSON.parse(JSON.stringify(planJsonSchema())));
  });
  it('every shipped plan validates and runs', () => {
    for (const f of fs
      .readdirSync(path.join(ROOT, 'plans'))
      .filter((x) => x.endsWith('.json') && x !== 'plan.schema.json')) {
      validatePlan(JSON.parse(fs.readFileSync(path.join(ROOT, 'plans', f), 'utf8')));
      const r = cli([`plans/${f}`, '--quiet']);
      expect(r.code, `${f}: ${r.stderr}`).toBe(0);
    }
  });
  const sample = (t: string) => `read_parquet('${path.join(ROOT, 'datasets', 'sample', `${t}.parquet`)}')`;
  it("top-customers.json gives DuckDB's ten rows, in order", async () => {
    const r = cli(['plans/top-customers.json', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const ours = r.stdout
      .trim()
      .split('\n')
      .map((l) => Object.values(JSON.parse(l)));
    const theirs = await duckRows(`SELECT name AS customer, region, count(*) AS orders, sum(amount) AS spent
      FROM ${sample('fact')} f JOIN ${sample('dim')} d ON f.key = d.key WHERE qty >= 2 AND amount > 10
      GROUP BY name, region ORDER BY spent DESC, customer LIMIT 10`);
    expect(ours.length).toBe(10);
    ours.forEach((row, i) => {
      expect(row.slice(0, 3).map(String), `row ${i}`).toEqual(theirs[i].slice(0, 3));
      expect(Math.abs(Number(row[3]) - Number(theirs[i][3]))).toBeLessThan(1e-6 * Math.abs(Number(theirs[i][3])));
    });
  });
  it("orphans.json writes DuckDB's answer to its CSV output", async () => {
    // the shipped plan with its CSV output moved to a temporary folder
    const dir = tmpDir(),
      out = path.join(dir, 'orphans.csv');
    const plan = JSON.parse(fs.readFileSync(path.join(ROOT, 'plans', 'orphans.json'), 'utf8'));
    for (const src of Object.values(plan.sources) as { parquet: string }[])
      src.parquet = path.resolve(ROOT, 'plans', src.parquet);
    fs.writeFileSync(path.join(dir, 'orphans.json'), JSON.stringify({ ...plan, output: { path: out } }));
    const r = cli([path.join(dir, 'orphans.json'), '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    const ours = await duckRows(`SELECT * FROM read_csv('${out}', header = true, all_varchar = true)`);
    const theirs = await duckRows(`SELECT count(*)::VARCHAR, count(key)::VARCHAR, sum(amount) FROM ${sample('fact')} f
      WHERE NOT EXISTS (SELECT 1 FROM ${sample('m2m')} p WHERE p.key = f.key)`);
    expect(ours.length).toBe(1);
    expect(ours[0].slice(0, 2)).toEqual(theirs[0].slice(0, 2));
    expect(Number(ours[0][0])).toBeGreaterThan(0);
    expect(Math.abs(Number(ours[0][2]) - Number(theirs[0][2]))).toBeLessThan(1e-6 * Math.abs(Number(theirs[0][2])));
  });
});

describe('skewjoin gen', () => {
  it('writes reproducible Zipf data with the exact distribution', async () => {
    const dir = tmpDir();
    const args = [
      'gen',
      '--out',
      dir,
      '--rows',
      '20000',
      '--keys',
      '50',
      '--s',
      '1.2',
      '--seed',
      '7',
      '--row-group-size',
      '5000',
      '--m2m-rows',
      '300',
    ];
    expect(cli(args).code).toBe(0);
    expect(fs.readdirSync(dir).sort()).toEqual(['dim.parquet', 'fact.parquet', 'm2m.parquet']);
    const counts = await duckRows(
      `SELECT key, count(*) FROM read_parquet('${dir}/fact.parquet') GROUP BY key ORDER BY key`,
    );
    const cdf = zipfCdf(50, 1.2);
    // Each key's share is within 4 standard deviations of its Zipf probability.
    for (const [key, n] of counts) {
      const k = Number(key),
        p = cdf[k] - (k ? cdf[k - 1] : 0);
      expect(Math.abs(Number(n) / 20000 - p)).toBeLessThan(4 * Math.sqrt((p * (1 - p)) / 20000) + 1e-9);
    }
    expect(await duckRows(`SELECT count(*) FROM parquet_metadata('${dir}/fact.parquet') WHERE column_id = 0`)).toEqual([
      ['4'],
    ]);
    const again = tmpDir();
    cli(['gen', ...args.slice(1, 2), again, ...args.slice(3)]);
    expect(
      fs.readFileSync(path.join(again, 'fact.parquet')).equals(fs.readFileSync(path.join(dir, 'fact.parquet'))),
    ).toBe(true);
  });
  it('s = 0 is uniform; the sampler inverts the CDF exactly', () => {
    const cdf = zipfCdf(4, 0);
    expect([...cdf]).toEqual([0.25, 0.5, 0.75, 1]);
    const keys = zipfKeys(40000, 4, 0, 1);
    const c = [0, 0, 0, 0];
    for (const k of keys) c[k]++;
    for (const x of c) expect(Math.abs(x - 10000)).toBeLessThan(400);
  });
});
