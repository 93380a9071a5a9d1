// The smaller things a user meets on day two (issue 43, item 6): rows that
// JSON.stringify takes, messages in the command line's words, a CSV given as
// Parquet, an output folder that cannot be made, --explain in sizes people read.
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runPlan } from '../dist/index.js';
import { spawnSync } from 'node:child_process';
import { BIN, cli, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-day2-');
const at = (n: string) => path.join(dir, n);

beforeAll(async () => {
  await writeParquet(
    at('t.parquet'),
    `SELECT (i % 3)::BIGINT AS g, i::BIGINT AS id, (9007199254740000 + i)::BIGINT AS big FROM range(0, 2000) t(i)`,
  );
  fs.writeFileSync(at('fake.parquet'), 'id,name\n1,one\n2,two\n');
});

describe("toRows({ integers: 'number' })", () => {
  const plan = (columns: object[]) => ({
    version: 1 as const,
    sources: { t: { parquet: at('t.parquet') } },
    query: {
      op: 'aggregate' as const,
      input: { op: 'scan' as const, source: 't' },
      groupBy: ['g'],
      aggregates: columns,
    },
  });

  it('counts and sums as numbers: JSON.stringify takes the rows', async () => {
    const r = await runPlan(
      plan([
        { fn: 'count', as: 'n' },
        { fn: 'sum', column: 'id', as: 's' },
      ]) as any,
    );
    expect(() => JSON.stringify(r.toRows())).toThrow(/BigInt/);
    const rows = r.toRows({ integers: 'number' }).sort((a: any, b: any) => a.g - b.g);
    expect(JSON.parse(JSON.stringify(rows))).toEqual([
      { g: 0, n: 667, s: 666333 },
      { g: 1, n: 667, s: 667000 },
      { g: 2, n: 666, s: 665667 },
    ]);
  });

  it('a value beyond 2^53 - 1 is an error naming the column, never a rounded number', async () => {
    const r = await runPlan(plan([{ fn: 'max', column: 'big', as: 'top' }]) as any);
    expect(() => r.toRows({ integers: 'number' })).toThrow(
      /toRows: column "top" holds 900719925474\d+, beyond 2\^53 - 1: not exact as a number/,
    );
    expect(typeof r.toRows()[0].top).toBe('bigint');
    expect(() => r.toRows({ integers: 'int' as 'number' })).toThrow(
      'toRows: integers must be "bigint" or "number", got "int"',
    );
  });
});

describe('the command line says what to do in its own words', () => {
  const q = `SELECT g FROM '${at('t.parquet')}'`;

  it('--output x.xlsx: give --format (not the plan field)', () => {
    const r = cli(['sql', q, '--output', at('x.xlsx')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--output: cannot tell the format from extension "\.xlsx"; give --format one of parquet/);
    expect(r.stderr).not.toMatch(/output\.format/);
  });

  it('a CSV file given as Parquet: not a Parquet file, exit 3', () => {
    const r = cli(['sql', `SELECT * FROM '${at('fake.parquet')}'`]);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/fake\.parquet: not a Parquet file .*begins with "id,name\\n1,one/);
    expect(r.stderr).not.toMatch(/Corrupt footer/);
  });

  it('an output folder that cannot be created (/proc/nope): a clear error at once, no spinning', () => {
    // killed after 20 s: a recursive mkdir under /proc spun at full CPU and ignored SIGTERM
    const r = spawnSync(process.execPath, [BIN, 'sql', q, '--output', '/proc/nope/x.parquet'], {
      encoding: 'utf8',
      timeout: 20_000,
      killSignal: 'SIGKILL',
    });
    expect(r.signal).toBe(null);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/folder \/proc\/nope cannot be created \(writing \/proc\/nope\/x\.parquet\)/);
  });
});

describe('--explain', () => {
  it('sizes as people read them, the run-time rule said once for all joins', () => {
    const r = cli(['plans/tpch/q09.json', '--explain']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/broadcast up to 24 MB\n/);
    // (q09's joins as ordered by cost: supplier ⋈ nation built, 15.5 KB; written, the nations alone were, 2.1 KB)
    expect(r.stdout).toMatch(/right side estimated at [\d.]+ KB from its files <= broadcastBytes 24 MB; see note 1\n/);
    expect(r.stdout).not.toMatch(/\d{5,} bytes|broadcastBytes \d+[;,)\n]/);
    // q09's five joins (in the order chosen by cost) share fewer rules than joins, each said once
    const rules = (r.stdout.match(/^ {3}\d+\. at run time .*$/gm) ?? []).map((x) => x.replace(/^ {3}\d+\. /, ''));
    expect(rules.length).toBeGreaterThan(0);
    expect(rules.length).toBeLessThan(5);
    expect(new Set(rules).size).toBe(rules.length);
    expect(r.stdout).toMatch(/\nnotes:\n {3}1\. at run time the right and left sides are read after their filters/);
    const strategies = r.stdout.split('\n').filter((l) => l.includes('expected strategy'));
    expect(strategies.length).toBe(5);
    for (const l of strategies) expect(l.trim().length).toBeLessThan(200);
  });

  it('--analyze: rows in and out, tasks and time per operator, inside the tree', () => {
    const r = cli(['plans/quickstart.json', '--explain', '--analyze', '--no-broadcast', '--workers', '2']);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    const under = (id: string) => lines[lines.findIndex((l) => l.trim().startsWith(`${id}:`)) + 1].trim();
    // the quick start's 100,000 orders and 10,000 customers, joined (110,000 rows into the join's reduce tasks)
    expect(under('scan-1')).toMatch(/^ran: map \d+ task\(s\), 100,000 → 100,000 rows, [\d.]+ ms$/);
    expect(under('scan-2')).toMatch(/^ran: map \d+ task\(s\), 10,000 → 10,000 rows, [\d.]+ ms$/);
    expect(under('join-1')).toMatch(/^ran: reduce \d+ task\(s\), 110,000 → [\d,]+ rows, [\d.]+ ms$/);
    expect(under('aggregate-1')).toMatch(/^ran: reduce \d+ task\(s\), [\d,]+ → 8 rows, [\d.]+ ms$/);
    expect(r.stdout).toMatch(/broadcast turned off \(broadcastBytes 0\)/);
  });
});
