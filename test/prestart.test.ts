// Starting the pool ahead (cli/prestart.ts) guesses the run's input from the
// plan's files, and from the command line's --source paths where it names
// them: a plan whose own files are small (the TPC-H plans name the bundled
// SF 0.01 tables) run over large ones through --source starts the pool at
// once, as the same plan naming the large files does. A folder counts as
// large. Each test loads the modules afresh: the guess is made once a process.
// Closing a pool whose threads are still warming up waits for them (a thread
// terminated while it loads its modules aborts Node 20).
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ROOT, tmpDir, writeParquet, writePlan } from './helpers.js';

const dir = tmpDir('sj-prestart-');
const f = (n: string) => path.join(dir, n);
let pool: typeof import('../dist/runtime/pool.js') | undefined;

beforeAll(async () => {
  await writeParquet(f('small.parquet'), 'SELECT 1::BIGINT AS k');
  await writeParquet(f('big.parquet'), 'SELECT i::BIGINT AS k, md5(i::VARCHAR) AS s FROM range(0, 4000) t(i)');
  fs.mkdirSync(f('folder'));
  fs.copyFileSync(f('big.parquet'), f('folder/part-0.parquet'));
});

afterEach(async () => {
  await pool?.closePool();
});

/** Fresh modules, the plan over small.parquet (the run stays in the thread below 64 KB: half of it is the guess's bound), and whether the guess started a pool. */
async function started(args: string[]): Promise<boolean> {
  vi.resetModules();
  const { prestartFromArgs } = await import('../dist/cli/prestart.js');
  const ps = (pool = await import('../dist/runtime/pool.js'));
  const p = writePlan(
    dir,
    {
      version: 1,
      sources: { t: { parquet: f('small.parquet') } },
      query: { op: 'scan', source: 't' },
      execution: { inThreadBytes: '64KB' },
    },
    'small.json',
  );
  expect(fs.statSync(f('big.parquet')).size).toBeGreaterThan(32 * 1024);
  prestartFromArgs([p, '--workers', '1', ...args]);
  // a pool is made once piscina has loaded, and ready once its thread has warmed up on a file
  try {
    await vi.waitFor(() => expect(ps.poolReady()).toBe(true), { timeout: 1500, interval: 20 });
    return true;
  } catch {
    return ps.whenPoolReady(1).length > 0;
  }
}

describe('starting the pool ahead with --source', () => {
  it("the plan's own small file: no pool", async () => {
    expect(await started([])).toBe(false);
  });
  it('--source naming a large file (relative to the current folder, either spelling): the pool starts and warms up', async () => {
    expect(await started(['--source', `t=${path.relative(process.cwd(), f('big.parquet'))}`])).toBe(true);
    expect(await started([`--source=t=${f('big.parquet')}`])).toBe(true);
  });
  it('--source naming a folder counts as large; a --source for another name, or a small file, changes nothing', async () => {
    expect(await started(['--source', `t=${f('folder')}`])).toBe(true);
    expect(await started(['--source', `u=${f('big.parquet')}`])).toBe(false);
    expect(await started(['--source', `t=${f('small.parquet')}`])).toBe(false);
  });
});

describe('closing a pool that is warming up', () => {
  it('waits for the warm-ups first (Node 20 aborts the process when a thread is terminated while it loads its modules)', () => {
    // a process of its own: the pool made, then closed at once while its threads start; each thread traces its warm-up's end
    const script = `const ps = await import(${JSON.stringify(pathToFileURL(path.join(ROOT, 'dist/runtime/pool.js')).href)});
      ps.warmPool(2, ${JSON.stringify(f('big.parquet'))});
      await ps.getPool(2);
      await ps.closePool();`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      env: { ...process.env, SKEWJOIN_TRACE: '1' },
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr.match(/worker: warm\n/g) ?? []).toHaveLength(2);
  });
});

// SQL names its tables by word: with --data, a table of the folder that the text names is an input of the guess
// (a folder of files counts as large; small.parquet stays under the bound), and so is a quoted path.
describe('starting the pool ahead for SQL', () => {
  async function sqlStarted(args: string[]): Promise<boolean> {
    vi.resetModules();
    const { prestartFromArgs } = await import('../dist/cli/prestart.js');
    const ps = (pool = await import('../dist/runtime/pool.js'));
    prestartFromArgs([...args, '--workers', '1']);
    try {
      await vi.waitFor(() => expect(ps.poolReady()).toBe(true), { timeout: 1500, interval: 20 });
      return true;
    } catch {
      return ps.whenPoolReady(1).length > 0;
    }
  }
  const sqlFile = (name: string, text: string) => {
    fs.writeFileSync(f(name), text);
    return f(name);
  };
  it('a .sql file naming a large table of --data starts the pool; one naming a small table does not', async () => {
    expect(await sqlStarted([sqlFile('large.sql', 'SELECT count(*) AS n FROM Folder'), '--data', dir])).toBe(true);
    expect(await sqlStarted([sqlFile('small.sql', 'SELECT count(*) AS n FROM small'), `--data=${dir}`])).toBe(false);
  });
  it('`sql "..."` with the text on the command line; a quoted path of a folder\'s file', async () => {
    expect(await sqlStarted(['sql', 'SELECT k FROM folder', '--data', dir])).toBe(true);
    expect(await sqlStarted(['sql', `SELECT k FROM '${f('small.parquet')}'`])).toBe(false);
  });
  it('nothing when nothing runs here: --explain without --analyze, --print-plan, --engine spark, no --data', async () => {
    const q = sqlFile('q.sql', 'SELECT count(*) AS n FROM folder');
    expect(await sqlStarted([q, '--data', dir, '--explain'])).toBe(false);
    expect(await sqlStarted([q, '--data', dir, '--print-plan'])).toBe(false);
    expect(await sqlStarted([q, '--data', dir, '--engine', 'spark'])).toBe(false);
    expect(await sqlStarted([q])).toBe(false);
  });
});
