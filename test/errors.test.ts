// Every error of the spec through the command line: the message names the
// field, file or column; the exit code is the documented one; no output file
// and no temporary file is left behind.
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { InputError, PlanError, runPlan } from '../dist/index.js';
import { cli, tmpDir, writeParquet, writePlan } from './helpers.js';

const dir = tmpDir('sj-err-');

beforeAll(async () => {
  fs.mkdirSync(path.join(dir, 'out'));
  await writeParquet(
    path.join(dir, 'a.parquet'),
    `SELECT i::BIGINT AS id, 'r' || (i % 3) AS region, (i * 1.5)::DECIMAL(10, 2) AS price, [i]::BIGINT[] AS tags FROM range(0, 100) t(i)`,
  );
  await writeParquet(path.join(dir, 'b.parquet'), `SELECT i::INTEGER AS id, 'x' AS name FROM range(0, 10) t(i)`);
  await writeParquet(
    path.join(dir, 'c.parquet'),
    `SELECT i::VARCHAR AS id, 'r' AS region, 1.5::DECIMAL(10,2) AS price, [i]::BIGINT[] AS tags FROM range(0, 10) t(i)`,
  );
  fs.writeFileSync(
    path.join(dir, 'corrupt.parquet'),
    Buffer.concat([Buffer.from('PAR1'), Buffer.alloc(200, 7), Buffer.from('PAR1')]),
  );
});

function plan(query: object, extra: object = {}) {
  return {
    version: 1,
    sources: { a: { parquet: 'a.parquet' }, b: { parquet: 'b.parquet' } },
    query,
    output: { path: 'out/result.parquet' },
    ...extra,
  };
}
const scanA = { op: 'scan', source: 'a', columns: ['id', 'region'] };

function run(p: object, ...flags: string[]) {
  const r = cli([writePlan(dir, p), ...flags]);
  // Nothing may be left in the output folder: no result, no temporary file.
  expect(fs.readdirSync(path.join(dir, 'out'))).toEqual([]);
  expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  return r;
}

describe('plan errors exit 2 and name the JSON path', () => {
  it.each<[string, object, RegExp]>([
    ['missing version', { ...plan(scanA), version: undefined }, /version: /],
    ['unknown operator', plan({ op: 'scn', source: 'a' }), /query\.op: /],
    ['unknown field', plan({ ...scanA, colums: ['id'] }), /query: unknown field\(s\): colums/],
    [
      'bad join type',
      plan({ op: 'join', type: 'outer', on: [['id', 'id']], left: scanA, right: { op: 'scan', source: 'b' } }),
      /query\.type: /,
    ],
    [
      'bad predicate',
      plan({ op: 'filter', input: scanA, where: { column: 'id', cmp: '~', value: 1 } }),
      /query\.where\.cmp: /,
    ],
    ['unknown source', plan({ op: 'scan', source: 'zz' }), /query\.source: unknown source "zz"; sources are: a, b/],
    [
      'unknown scan column',
      plan({ op: 'scan', source: 'a', columns: ['id', 'nope'] }),
      /query\.columns\[1\]: column "nope" not found in source "a"; columns are: id, region, price, tags/,
    ],
    [
      'unknown join column',
      plan({ op: 'join', type: 'inner', on: [['id', 'cust_id']], left: scanA, right: { op: 'scan', source: 'b' } }),
      /query\.on\[0\]\[1\]: column "cust_id" not found in right input; columns are: id, name/,
    ],
    [
      'incompatible key types',
      plan({ op: 'join', type: 'inner', on: [['region', 'id']], left: scanA, right: { op: 'scan', source: 'b' } }),
      /query\.on\[0\]: cannot join left column "region" \(utf8\) with right column "id" \(int32\)/,
    ],
    [
      'unknown aggregate column',
      plan({ op: 'aggregate', input: scanA, groupBy: ['region'], aggregates: [{ fn: 'sum', column: 'amt', as: 's' }] }),
      /query\.aggregates\[0\]\.column: column "amt" not found/,
    ],
    [
      'sum of a string',
      plan({ op: 'aggregate', input: scanA, groupBy: [], aggregates: [{ fn: 'sum', column: 'region', as: 's' }] }),
      /query\.aggregates\[0\]\.column: sum needs a numeric column; "region" is utf8/,
    ],
    [
      'literal of the wrong type',
      plan({ op: 'filter', input: scanA, where: { column: 'id', cmp: '=', value: 'abc' } }),
      /query\.where\.value: "=" cannot compare int64 column "id" with utf8 value "abc"/,
    ],
    [
      'unknown aggregate function',
      plan({ op: 'aggregate', input: scanA, groupBy: [], aggregates: [{ fn: 'median_of_medians', as: 'm' }] }),
      /query\.aggregates\[0\]\.fn: "median_of_medians" is not one of count, sum, min, max, avg, count_distinct, median, quantile_cont, quantile_disc/,
    ],
    [
      'unknown operator names it',
      plan({ op: 'scn', source: 'a' }),
      /query\.op: "scn" is not one of scan, filter, project, join, aggregate, sort, limit/,
    ],
    [
      'unknown skew strategy',
      { ...plan(scanA), execution: { skew: { strategy: 'magic' } } },
      /execution\.skew\.strategy: "magic" is not one of auto, partition, key/,
    ],
    ['wrong version', { ...plan(scanA), version: 2 }, /version: expected 1, got 2/],
    [
      'output folder in the way of a file',
      { ...plan(scanA), output: { path: 'a.parquet/x.csv' } },
      /output\.path: cannot create the output folder: .*a\.parquet is a file/,
    ],
    [
      'bad size',
      { ...plan(scanA), execution: { skew: { thresholdBytes: 'lots' } } },
      /execution\.skew\.thresholdBytes: /,
    ],
  ])('%s', (_name, p, message) => {
    const r = run(p);
    expect(r.stderr).toMatch(message);
    expect(r.code).toBe(2);
  });
  it('a plan file that is not JSON: the line and column, the line itself and a caret under the place', () => {
    const f = path.join(dir, 'bad.json');
    fs.writeFileSync(
      f,
      '{\n  "version": 1,\n  "sources": { "a": { "parquet": "a.parquet" } },\n  "query": { "op": "scan", "source": "a", }\n}\n',
    );
    const r = cli([f]);
    expect(r.stderr).toBe(
      `skewjoin: plan error: plan file ${f}:4:43: not valid JSON: Expected double-quoted property name\n` +
        '    "query": { "op": "scan", "source": "a", }\n' +
        `  ${' '.repeat(42)}^\n`,
    );
    expect(r.code).toBe(2);
    // a text that ends early: the place is its end
    fs.writeFileSync(f, '{ "version": 1,\n  "sources": {');
    expect(cli([f]).stderr).toBe(
      `skewjoin: plan error: plan file ${f}:2:15: not valid JSON: Expected property name or '}'\n    "sources": {\n${' '.repeat(16)}^\n`,
    );
  });
  it.each<[string, object, string]>([
    [
      'a sort key given as a name',
      { op: 'sort', by: ['region'], input: scanA },
      'query.by[0]: expected a sort key such as { "column": "region", "desc": true }, got "region"',
    ],
    [
      'an aggregate given as a name',
      { op: 'aggregate', input: scanA, groupBy: [], aggregates: ['id'] },
      'query.aggregates[0]: expected an aggregate such as { "fn": "sum", "column": "id", "as": "total" } or { "fn": "count", "as": "n" }, got "id"',
    ],
    [
      'groupBy given as a name',
      { op: 'aggregate', input: scanA, groupBy: 'region', aggregates: [] },
      'query.groupBy: expected a list of column names such as ["region"] ([] for one group), got "region"',
    ],
    [
      'a join key pair not in a list',
      { op: 'join', type: 'inner', on: ['id', 'id'], left: scanA, right: { op: 'scan', source: 'b' } },
      'query.on[0]: expected a pair [leftColumn, rightColumn]: "on": [["id","id"]] joins on id = id, got "id"',
    ],
    [
      'a predicate written as SQL',
      { op: 'filter', input: scanA, where: 'id > 3' },
      'query.where: expected a predicate such as { "column": "amount", "cmp": ">", "value": 100 } (a plan is JSON, not SQL text), got "id > 3"',
    ],
    [
      'an input given as a source name',
      { op: 'limit', count: 3, input: 'a' },
      'query.input: expected an operator such as { "op": "scan", "source": "a" }, got "a"',
    ],
    [
      'a missing input',
      { op: 'limit', count: 3 },
      'query.input: missing: expected an operator such as { "op": "scan", "source": "orders" }',
    ],
    [
      'a count in words',
      { op: 'limit', count: 'ten', input: scanA },
      'query.count: expected a whole number such as 10, got "ten"',
    ],
  ])("the validator's form errors say what was expected, with an example: %s", (_name, query, message) => {
    const r = run(plan(query));
    expect(r.stderr).toBe(`skewjoin: plan error: ${message}\n`);
    expect(r.code).toBe(2);
  });
  it('a source given as a path: the form of a source, with that path', () => {
    const r = run({ ...plan(scanA), sources: { a: 'a.parquet', b: { parquet: 'b.parquet' } } });
    expect(r.stderr).toBe(
      'skewjoin: plan error: sources.a: expected an input such as { "parquet": "a.parquet" } or { "csv": "data/orders.csv" } (a file, a glob or a list of them), got "a.parquet"\n',
    );
    expect(r.code).toBe(2);
  });
  it('an unknown flag: the hint alone, no help text scrolling it away', () => {
    const r = cli([writePlan(dir, plan(scanA)), '--wokers', '2']);
    expect(r.stderr).toBe("error: unknown option '--wokers'\n(Did you mean --workers?)\n");
    expect(r.stdout).toBe('');
    expect(r.code).toBe(2);
    // a subcommand's too, with the same exit code
    const g = cli(['gen', '--rws', '5']);
    expect(g.stderr).toBe("error: unknown option '--rws'\n(Did you mean --rows?)\n");
    expect(g.code).toBe(2);
  });
  it('a bad flag value', () => {
    const r = cli([writePlan(dir, plan(scanA)), '--workers', 'two']);
    expect(r.stderr).toMatch(/--workers must be an integer/);
    expect(r.code).toBe(2);
  });
});

describe('input data errors exit 3 and name the file', () => {
  it('a glob that matches no file', () => {
    const r = run({ ...plan(scanA), sources: { a: { parquet: 'nothing/*.parquet' } } });
    expect(r.stderr).toMatch(/sources\.a\.parquet: glob "nothing\/\*\.parquet" matches no file/);
    expect(r.code).toBe(3);
  });
  it('missing file: the source it belongs to and its path', () => {
    const r = run({ ...plan(scanA), sources: { a: { parquet: ['a.parquet', 'missing.parquet'] } } });
    expect(r.stderr).toBe(`skewjoin: error: source "a": ${path.join(dir, 'missing.parquet')}: file not found\n`);
    expect(r.code).toBe(3);
  });
  it('corrupt Parquet', () => {
    const r = run({ ...plan(scanA), sources: { a: { parquet: 'corrupt.parquet' } } });
    expect(r.stderr).toMatch(/corrupt\.parquet: not a readable Parquet file/);
    expect(r.code).toBe(3);
  });
  it('schema conflict between the files of one source', () => {
    const r = run({ ...plan(scanA), sources: { a: { parquet: ['a.parquet', 'c.parquet'] } } });
    expect(r.stderr).toMatch(/source "a": column "id" is int64 in .*a\.parquet but utf8 in .*c\.parquet/);
    expect(r.code).toBe(3);
  });
  it('a column type the engine cannot read, only when that column is read', async () => {
    const r = run(plan({ op: 'scan', source: 'a' }));
    expect(r.stderr).toMatch(/a\.parquet: column "tags" has type List.*which skewjoin cannot read/);
    expect(r.code).toBe(3);
    // Not read: projected away before the scan.
    const ok = await runPlan(
      { ...plan({ op: 'project', input: { op: 'scan', source: 'a' }, columns: ['id'] }), output: undefined },
      { baseDir: dir, workers: 1 },
    );
    expect(ok.numRows).toBe(100);
  });
});

describe('run-time failures exit 1 and leave no output', () => {
  it('an integer sum overflowing 64 bits', async () => {
    await writeParquet(path.join(dir, 'big.parquet'), `SELECT 9223372036854775000::BIGINT AS v FROM range(0, 3)`);
    const r = run({
      ...plan({
        op: 'aggregate',
        input: { op: 'scan', source: 'a' },
        groupBy: [],
        aggregates: [{ fn: 'sum', column: 'v', as: 'total' }],
      }),
      sources: { a: { parquet: 'big.parquet' } },
    });
    expect(r.stderr).toMatch(/sum of "total" overflows a 64-bit integer/);
    expect(r.code).toBe(1);
  });
});

describe('the memory limit', () => {
  it('is a budget: a query whose shuffle data exceeds it spills and succeeds (test/spill.test.ts for every operator)', async () => {
    const spillDir = path.join(dir, 'spill');
    const r = await runPlan(
      {
        ...plan({ op: 'aggregate', input: scanA, groupBy: ['id'], aggregates: [{ fn: 'count', as: 'n' }] }),
        output: undefined,
      },
      { baseDir: dir, memoryLimit: '100B', combiners: false, spillDir, workers: 2 },
    );
    expect(r.numRows).toBe(100);
    expect(r.toRows().every((x) => x.n === 1n)).toBe(true);
    expect(r.stats.spilledBytes).toBeGreaterThan(0);
    expect(r.stats.spillReadBytes).toBeGreaterThan(0);
    expect(fs.readdirSync(spillDir)).toEqual([]);
  });
});

describe('the output folder', () => {
  it('is created when missing', () => {
    const p = { ...plan(scanA), output: { path: 'new/deeper/result.csv' } };
    const r = cli([writePlan(dir, p, 'newdir.json'), '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'new', 'deeper', 'result.csv'), 'utf8').split('\n')[0]).toBe('id,region');
  });
});

describe('an output that cannot be written', () => {
  // As root (CI) permissions do not stop a write: /sys refuses new files to everyone. Otherwise a folder without write permission.
  function lockedFolder(): string {
    if (process.getuid?.() === 0) return '/sys';
    const d = path.join(dir, 'locked');
    fs.mkdirSync(d, { recursive: true });
    fs.chmodSync(d, 0o555);
    return d;
  }
  it('says "permission denied" and names the folder, before any work (exit 2)', () => {
    const locked = lockedFolder();
    const target = path.join(locked, 'result.csv');
    const r = cli([writePlan(dir, { ...plan(scanA), output: { path: target } }, 'locked.json')]);
    expect(r.stderr).toBe(
      `skewjoin: plan error: output.path: permission denied: cannot create files in ${locked} (writing ${target})\n`,
    );
    expect(r.code).toBe(2);
    expect(fs.readdirSync(locked).filter((f) => f.includes('result.csv'))).toEqual([]);
    // --stats too
    const s = cli([writePlan(dir, plan(scanA), 'stats.json'), '--quiet', '--stats', path.join(locked, 'stats.json')]);
    expect(s.stderr).toBe(
      `skewjoin: plan error: --stats: cannot write ${path.join(locked, 'stats.json')}: permission denied: cannot create files in ${locked}\n`,
    );
    expect(s.code).toBe(2);
  });
});

describe('the library throws typed errors', () => {
  it('PlanError with the path, InputError with the file', async () => {
    const e1 = await runPlan(plan({ op: 'scan', source: 'a', columns: ['x'] }), { baseDir: dir }).catch((e) => e);
    expect(e1).toBeInstanceOf(PlanError);
    expect(e1.path).toBe('query.columns[0]');
    expect(e1.exitCode).toBe(2);
    const e2 = await runPlan(
      { ...plan(scanA), sources: { a: { parquet: 'missing.parquet' } } },
      { baseDir: dir },
    ).catch((e) => e);
    expect(e2).toBeInstanceOf(InputError);
    expect(e2.file).toBe(path.join(dir, 'missing.parquet'));
    expect(e2.exitCode).toBe(3);
  });
});
