// The library as a user outside the clone gets it: `npm pack`, the tarball installed in a new
// project (its dependencies from npm's cache, which `npm ci` filled), then a TypeScript file
// there type-checked with the repo's compiler and run. The package holds what a user needs and
// not the benchmark's charting stack; a misspelled operator is a compile error; dates read as dates.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT, tmpDir, writeParquet } from './helpers.js';

const home = tmpDir('sj-install-');
const project = path.join(home, 'etl');
const installed = path.join(project, 'node_modules', 'skewjoin');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
let packed: string[] = [];

const GOOD = `import { type Plan, definePlan, loadPlan, runPlan } from 'skewjoin';
const plan = definePlan({
  version: 1,
  sources: { sales: { parquet: 'sales.parquet' } },
  query: { op: 'aggregate', input: { op: 'scan', source: 'sales' }, groupBy: ['day'], aggregates: [{ fn: 'sum', column: 'amount', as: 'total' }] },
});
const typed: Plan = plan;
const r = await runPlan(typed, { baseDir: process.argv[2], workers: 1 });
const lp = await loadPlan(plan, { baseDir: process.argv[2] });
const rows = r.toRows({ dates: 'date' });
const day: unknown = rows[0].day;
console.log(JSON.stringify({ iso: r.toRows()[0].day, isDate: day instanceof Date, when: (day as Date).toISOString(), total: String(rows[0].total), root: lp.root.kind }));
`;

// each line a mistake the compiler must catch (the line numbers are asserted below)
const BAD = `import { definePlan, runPlan } from 'skewjoin';
await runPlan({ version: 1, sources: {}, query: { op: 'agregate', input: { op: 'scan', source: 's' }, groupBy: [], aggregates: [] } });
definePlan({ version: 1, sources: {}, query: { op: 'scan', source: 's', colums: ['a'] } });
await runPlan('plan.json', { wrokers: 2 });
`;

beforeAll(() => {
  // dist/ is built by \`npm test\`; --ignore-scripts: no second build here
  const out = execFileSync(npm, ['pack', '--ignore-scripts', '--json', '--pack-destination', home], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  const info = JSON.parse(out)[0];
  packed = info.files.map((f: { path: string }) => f.path);
  fs.mkdirSync(project);
  fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'etl', private: true, type: 'module' }));
  const r = spawnSync(
    npm,
    ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', path.join(home, info.filename)],
    { cwd: project, encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`npm install of the tarball failed: ${r.stderr}`);
  // skipLibCheck, as `tsc --init` sets it: the script is checked against our types, but the .d.ts files of
  // Arrow JS and zod are not checked again (36 s of the compile on a loaded machine, 7 s without)
  fs.writeFileSync(
    path.join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        skipLibCheck: true,
        outDir: 'out',
        types: [],
      },
      files: ['good.ts', 'bad.ts'],
    }),
  );
  fs.writeFileSync(path.join(project, 'good.ts'), GOOD);
  fs.writeFileSync(path.join(project, 'bad.ts'), BAD);
}, 180_000);

describe('the package', () => {
  it('holds the built library, its command and the examples; no sources, source maps, tests or build scripts', () => {
    expect(packed).toContain('dist/index.js');
    expect(packed).toContain('dist/index.d.ts');
    expect(packed).toContain('bin/skewjoin.js');
    expect(packed).toContain('plans/plan.schema.json');
    expect(packed).toContain('docs/library.md');
    const stray = packed.filter(
      (f) => /^(src|test|scripts|bench|\.ci)\//.test(f) || f.endsWith('.map') || f.includes('emit-schema'),
    );
    expect(stray).toEqual([]);
  });

  it('installs without the charting stack (vega, vega-lite) or DuckDB', () => {
    expect(fs.existsSync(path.join(installed, 'dist', 'index.js'))).toBe(true);
    for (const p of ['vega', 'vega-lite', '@duckdb/node-api'])
      expect(fs.existsSync(path.join(project, 'node_modules', p)), p).toBe(false);
  });
});

describe('a TypeScript script against the installed library', () => {
  let tsc: { status: number | null; stdout: string };
  beforeAll(() => {
    tsc = spawnSync(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'], {
      cwd: project,
      encoding: 'utf8',
    });
  }, 120_000);

  it('type-checks the correct script and flags each mistake: a misspelled operator, field and option', () => {
    const errors = tsc.stdout.split('\n').filter((l) => /error TS\d+/.test(l));
    expect(
      errors.filter((l) => l.startsWith('good.ts')),
      tsc.stdout,
    ).toEqual([]);
    const lines = errors.map((l) => Number(l.match(/^bad\.ts\((\d+),/)?.[1]));
    expect(new Set(lines), tsc.stdout).toEqual(new Set([2, 3, 4]));
    expect(tsc.stdout).toContain('"agregate"');
    expect(tsc.stdout).toContain('colums');
    expect(tsc.stdout).toContain('wrokers');
  });

  it('skewjoin bench there names the packages it needs and how to install them, before doing anything', () => {
    const out = path.join(home, 'bench-out');
    const r = spawnSync(process.execPath, [path.join(installed, 'bin', 'skewjoin.js'), 'bench', '--out', out], {
      cwd: project,
      encoding: 'utf8',
    });
    expect(r.status).toBe(1);
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).devDependencies;
    expect(r.stderr).toBe(
      'skewjoin: error: skewjoin bench compares with DuckDB and draws its report with vega-lite; it needs ' +
        `@duckdb/node-api, vega and vega-lite, which a library install leaves out: npm i -E @duckdb/node-api@${pkg['@duckdb/node-api']} ` +
        `vega@${pkg.vega} vega-lite@${pkg['vega-lite']}\n`,
    );
    expect(fs.existsSync(out)).toBe(false);
  });

  it('runs, reading dates as ISO text by default and as Date on request', async () => {
    await writeParquet(
      path.join(project, 'sales.parquet'),
      `SELECT DATE '1996-09-24' AS day, 5 AS amount UNION ALL SELECT DATE '1996-09-24', 7`,
    );
    const r = spawnSync(process.execPath, [path.join(project, 'out', 'good.js'), project], {
      cwd: project,
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      iso: '1996-09-24',
      isDate: true,
      when: '1996-09-24T00:00:00.000Z',
      total: '12',
      root: 'aggregate',
    });
  });
});
