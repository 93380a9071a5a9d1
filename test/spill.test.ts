// Out of core on small data: a 1-byte memory budget forces every shuffle
// block to a spill file (the knob DuckDB's tests get from
// debug_force_external). Every join type, with and without skew splits, and
// aggregations with many groups spill, read back and give DuckDB's answer;
// the spill folder is gone after success, failure and SIGINT; a spill folder
// that cannot be written is a plan error, a full disk an exit 1.
import fs from 'node:fs';
import path from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { type RunOptions, type RunResult, runPlan } from '../dist/index.js';
import { BIN, ROOT, duckRows, expectFileMatchesQuery, tmpDir, writeParquet, writePlan } from './helpers.js';

const dir = tmpDir('sj-spill-');
const file = (n: string) => path.join(dir, n);
const spillDir = file('spill');
/** the shuffle path on the pool: a small side would otherwise be broadcast (nothing shuffled, nothing to spill) and a small input run in the thread */
const SHUFFLE = { broadcastBytes: 0, inThreadBytes: 0 } as const;

beforeAll(async () => {
  // Left: key 7 carries 40% of the rows, 10% null keys, the rest over 0..299.
  await writeParquet(
    file('left.parquet'),
    `SELECT i::BIGINT AS id,
      CASE WHEN i % 10 = 3 THEN NULL WHEN i % 5 < 2 THEN 7 ELSE hash(i) % 300 END::BIGINT AS k,
      'l' || (i % 13) AS s FROM range(0, 4000) t(i)`,
    500,
  );
  // Right: key 7 hot too, keys 400.. found only here.
  await writeParquet(
    file('right.parquet'),
    `SELECT CASE WHEN i % 12 = 5 THEN NULL WHEN i % 8 = 0 THEN 7 WHEN i % 10 = 1 THEN 400 + i % 21
      ELSE hash(i * 7) % 250 END::BIGINT AS k, (i * 3)::BIGINT AS w FROM range(0, 1200) t(i)`,
    300,
  );
});

/** The folders left in the spill folder's parent: none once a query is over. */
const leftovers = () => (fs.existsSync(spillDir) ? fs.readdirSync(spillDir) : []);

/** Run with a 1-byte budget, compare with DuckDB inside DuckDB (EXCEPT ALL both ways), return the run. */
async function spillingRun(plan: object, query: string, opts: RunOptions = {}): Promise<RunResult> {
  const out = file(`out-${Math.random().toString(36).slice(2)}.parquet`);
  const r = await runPlan(
    { ...plan, output: { path: out } },
    { workers: 2, partitions: 8, memoryLimit: 1, spillDir, ...SHUFFLE, ...opts },
  );
  // every join shuffled (spilling is what is tested)
  expect(r.stats.joins.map((j) => j.strategy)).toEqual(r.stats.joins.map(() => 'shuffle'));
  expect(await expectFileMatchesQuery(out, query)).toBeGreaterThan(0);
  fs.rmSync(out);
  expect(leftovers()).toEqual([]);
  return r;
}

function expectSpilled(r: RunResult) {
  expect(r.stats.spilledBytes).toBeGreaterThan(0);
  expect(r.stats.spillReadBytes).toBeGreaterThan(0);
  // the totals are the tasks' sums
  expect(r.stats.tasks.reduce((a, t) => a + t.spilledBytes, 0)).toBe(r.stats.spilledBytes);
  expect(r.stats.tasks.reduce((a, t) => a + t.spillReadBytes, 0)).toBe(r.stats.spillReadBytes);
}

const L = `read_parquet('${file('left.parquet')}')`,
  R = `read_parquet('${file('right.parquet')}')`;
const scans = { left: { op: 'scan', source: 'l' }, right: { op: 'scan', source: 'r' } };
const sources = { l: { parquet: file('left.parquet') }, r: { parquet: file('right.parquet') } };

function joinPlan(type: string) {
  return { version: 1, sources, query: { op: 'join', type, on: [['k', 'k']], ...scans } };
}
function joinSql(type: string) {
  if (type === 'semi') return `SELECT * FROM ${L} l WHERE EXISTS (SELECT 1 FROM ${R} r WHERE l.k = r.k)`;
  if (type === 'anti') return `SELECT * FROM ${L} l WHERE NOT EXISTS (SELECT 1 FROM ${R} r WHERE l.k = r.k)`;
  return `SELECT l.*, r.* FROM ${L} l ${{ inner: 'INNER', left: 'LEFT', right: 'RIGHT', full: 'FULL OUTER' }[type]} JOIN ${R} r ON l.k = r.k`;
}
const skewOff = { skew: { enabled: false } };
const skewBy = (strategy: 'key' | 'partition') => ({
  skew: { enabled: true, strategy, factor: 2, thresholdBytes: 1, advisoryPartitionBytes: 2048 },
});

describe.each(['inner', 'left', 'right', 'full', 'semi', 'anti'])('%s join under a 1-byte budget', (type) => {
  it("spills every shuffle block and gives DuckDB's answer (no skew handling)", async () => {
    const r = await spillingRun(joinPlan(type), joinSql(type), skewOff);
    expectSpilled(r);
    // no build side fits a 1-byte budget: every reduce task is cut into grace pieces
    expect(r.stats.tasks.filter((t) => t.kind === 'reduce').every((t) => t.split?.includes('grace piece'))).toBe(true);
    expect(r.stats.tasks.some((t) => t.kind === 'split' && t.split?.startsWith('grace left'))).toBe(true);
    // every map task's output went to disk
    expect(r.stats.tasks.filter((t) => t.kind === 'map').every((t) => t.spilledBytes > 0)).toBe(true);
  });
  it('with hot keys split: the split tasks read the spilled partition back', async () => {
    const r = await spillingRun(joinPlan(type), joinSql(type), skewBy('key'));
    expectSpilled(r);
    expect(r.stats.joins[0].splits.some((s) => s.method === 'hot-key')).toBe(true);
    expect(r.stats.tasks.filter((t) => t.kind === 'split').some((t) => t.spillReadBytes > 0)).toBe(true);
    // the rest of the partition is cut into grace pieces, a hot key's pieces never
    const reduce = r.stats.tasks.filter((t) => t.kind === 'reduce');
    expect(reduce.some((t) => t.split?.startsWith('hot-key 7 piece'))).toBe(true);
    expect(reduce.filter((t) => t.split?.startsWith('hot-key 7 piece')).every((t) => !t.split!.includes('grace'))).toBe(
      true,
    );
    // (the rest may first be cut into row ranges: "hot-key rest piece 0,1, grace piece 2/4")
    expect(reduce.some((t) => t.split?.startsWith('hot-key rest') && t.split.includes(', grace piece'))).toBe(true);
  });
  it('with map-range splits', async () => {
    const r = await spillingRun(joinPlan(type), joinSql(type), skewBy('partition'));
    expectSpilled(r);
    if (type !== 'right' && type !== 'full')
      expect(r.stats.joins[0].splits.some((s) => s.method === 'map-range')).toBe(true);
  });
});

describe('aggregation with many groups under a 1-byte budget', () => {
  const aggs = [
    { fn: 'count', as: 'n' },
    { fn: 'sum', column: 'id', as: 'total' },
    { fn: 'min', column: 's', as: 'lo' },
    { fn: 'count_distinct', column: 'k', as: 'keys' },
  ];
  const plan = {
    version: 1,
    sources,
    query: {
      op: 'aggregate',
      input: { op: 'project', input: scans.left, columns: ['id', 'k', 's', { name: 'g', column: 'id' }] },
      groupBy: ['g'],
      aggregates: aggs,
    },
  };
  const query = `SELECT id AS g, count(*) AS n, sum(id) AS total, min(s) AS lo, count(DISTINCT k) AS keys FROM ${L} GROUP BY id`;
  it.each([true, false])(
    'combiners %s: every partition cut into pieces by further hash bits, each aggregated on its own',
    async (combiners) => {
      const r = await spillingRun(plan, query, { combiners });
      expectSpilled(r);
      const reduce = r.stats.tasks.filter((t) => t.stage === 'aggregate-1' && t.kind === 'reduce');
      expect(reduce.length).toBeGreaterThan(8);
      expect(reduce.every((t) => t.split?.startsWith('grace piece'))).toBe(true);
      // every group in exactly one piece: the pieces' output rows add up to the groups
      expect(reduce.reduce((a, t) => a + t.outputRows, 0)).toBe(4000);
    },
  );
  it('a global aggregate (no groups) is never cut', async () => {
    const r = await spillingRun(
      { version: 1, sources, query: { op: 'aggregate', input: scans.left, groupBy: [], aggregates: aggs } },
      `SELECT count(*) AS n, sum(id) AS total, min(s) AS lo, count(DISTINCT k) AS keys FROM ${L}`,
    );
    expect(r.stats.tasks.filter((t) => t.stage === 'aggregate-1' && t.kind === 'reduce').map((t) => t.split)).toEqual([
      undefined,
    ]);
  });
  it('above a join, eager aggregation off and on', async () => {
    const p = {
      version: 1,
      sources,
      query: {
        op: 'aggregate',
        input: { op: 'join', type: 'inner', on: [['k', 'k']], ...scans },
        groupBy: ['s'],
        aggregates: [
          { fn: 'count', as: 'n' },
          { fn: 'sum', column: 'w', as: 'w' },
        ],
      },
    };
    const q = `SELECT l.s, count(*) AS n, sum(r.w) AS w FROM ${L} l JOIN ${R} r ON l.k = r.k GROUP BY l.s`;
    for (const eagerAggregation of [false, true]) expectSpilled(await spillingRun(p, q, { eagerAggregation }));
  });
});

describe('sort: ranges by sampled boundaries, each sorted in its own task', () => {
  /** Our rows in file order against DuckDB's ORDER BY, compared position by position on `cols`. */
  async function expectOrdered(query: object, orderBy: string, cols: string[], opts: RunOptions) {
    const out = file(`sorted-${Math.random().toString(36).slice(2)}.parquet`);
    const r = await runPlan(
      { version: 1, sources, query, output: { path: out } },
      { workers: 2, spillDir, ...SHUFFLE, ...opts },
    );
    const on = cols.map((c) => `a.${c} IS DISTINCT FROM b.${c}`).join(' OR ');
    const [[diff, n]] = await duckRows(`SELECT count(*) FILTER (WHERE ${on}), count(*) FROM
      (SELECT row_number() OVER () AS n, * FROM read_parquet('${out}')) a FULL JOIN (SELECT row_number() OVER (ORDER BY ${orderBy}) AS n, * FROM ${L}) b ON a.n = b.n`);
    expect([Number(diff), Number(n)]).toEqual([0, 4000]);
    expect(leftovers()).toEqual([]);
    return r;
  }
  it('several keys, desc and nulls first, spilling under a 1-byte budget', async () => {
    const r = await expectOrdered(
      { op: 'sort', input: scans.left, by: [{ column: 'k', desc: true, nulls: 'first' }, { column: 'id' }] },
      'k DESC NULLS FIRST, id',
      ['id', 'k', 's'],
      { memoryLimit: 1 },
    );
    expectSpilled(r);
    expect(r.stats.shuffles.find((x) => x.id === 'sort-1.range')!.partitions).toBeGreaterThan(2);
    expect(
      r.stats.tasks.filter((t) => t.stage === 'sort-1' && t.kind === 'reduce').some((t) => t.spillReadBytes > 0),
    ).toBe(true);
  });
  it('a hot sort value is dealt over several ranges: no range holds it whole', async () => {
    const hot = Number((await duckRows(`SELECT count(*) FROM ${L} WHERE k = 7`))[0][0]);
    const r = await expectOrdered({ op: 'sort', input: scans.left, by: [{ column: 'k' }] }, 'k NULLS LAST', ['k'], {
      memoryLimit: 1,
    });
    expectSpilled(r);
    const range = r.stats.shuffles.find((x) => x.id === 'sort-1.range')!;
    expect(range.partitionRows.reduce((a, b) => a + b, 0)).toBe(4000);
    expect(Math.max(...range.partitionRows)).toBeLessThan(hot / 2);
  });
  it('without a tiny budget: no spill, the same order; a limit over a sort keeps its top-k (no range shuffle)', async () => {
    const r = await expectOrdered(
      {
        op: 'sort',
        input: scans.left,
        by: [
          { column: 's', desc: true },
          { column: 'id', desc: true },
        ],
      },
      's DESC, id DESC',
      ['id'],
      {},
    );
    expect(r.stats.spilledBytes).toBe(0);
    const top = await runPlan(
      {
        version: 1,
        sources,
        query: { op: 'limit', count: 5, input: { op: 'sort', input: scans.left, by: [{ column: 'id', desc: true }] } },
      },
      { workers: 2, spillDir, memoryLimit: 1, ...SHUFFLE },
    );
    expect(top.toRows().map((x) => x.id)).toEqual([3999n, 3998n, 3997n, 3996n, 3995n]);
    expect(top.stats.shuffles.some((x) => x.id.endsWith('.range'))).toBe(false);
  });
});

describe('grace hash join', () => {
  it("a budget that holds the shuffle but not a build side: only the oversized tasks are cut, DuckDB's answer", async () => {
    // a task's share between the smallest and the largest right partition: the largest are cut, the rest not
    // (under a limit this small the data budget is half of it, and a task's share a quarter of that with 2 workers: spill/budget.ts)
    const all = await runPlan(joinPlan('full'), {
      workers: 2,
      partitions: 4,
      spillDir,
      writeOutput: false,
      ...SHUFFLE,
      ...skewOff,
    });
    const right = all.stats.shuffles.find((x) => x.id === 'join-1.right')!.partitionBytes;
    const budget = 8 * Math.floor((Math.min(...right) + Math.max(...right)) / 2);
    const r = await spillingRun(joinPlan('full'), joinSql('full'), { memoryLimit: budget, partitions: 4, ...skewOff });
    const reduce = r.stats.tasks.filter((t) => t.kind === 'reduce');
    expect(reduce.some((t) => t.split?.includes('grace piece'))).toBe(true);
    expect(reduce.some((t) => t.split === undefined)).toBe(true);
  });
});

describe('the budget', () => {
  it('spills nothing when the shuffle fits', async () => {
    const r = await runPlan(joinPlan('inner'), { workers: 2, partitions: 8, spillDir, writeOutput: false, ...SHUFFLE });
    expect(r.stats.joins[0].strategy).toBe('shuffle');
    expect(r.stats.spilledBytes).toBe(0);
    expect(r.stats.spillReadBytes).toBe(0);
    expect(leftovers()).toEqual([]);
  });
  it('keeps what fits and spills the rest', async () => {
    const all = await runPlan(joinPlan('inner'), {
      workers: 2,
      partitions: 8,
      spillDir,
      writeOutput: false,
      ...SHUFFLE,
      ...skewOff,
    });
    const shuffled = all.stats.shuffles.reduce((a, s) => a + s.partitionBytes.reduce((x, y) => x + y, 0), 0);
    const r = await spillingRun(joinPlan('inner'), joinSql('inner'), {
      memoryLimit: Math.floor(shuffled / 2),
      ...skewOff,
    });
    const maps = r.stats.tasks.filter((t) => t.kind === 'map');
    expect(maps.some((t) => t.spilledBytes === 0)).toBe(true);
    expect(maps.some((t) => t.spilledBytes > 0)).toBe(true);
    expect(r.stats.spilledBytes).toBeLessThan(shuffled);
  });
  it("a shuffle's spill files are unlinked once its stage is done, before the query ends; the folder goes at the end", async () => {
    const { Spiller } = await import('../dist/spill/spiller.js');
    const s = new Spiller(1, spillDir);
    const block = (n: number) => ({
      length: n,
      columns: [{ type: { id: 'int64' }, length: n, values: new BigInt64Array(n).fill(7n), valid: null }],
    });
    const a = s.admit([block(100), null, block(5)]),
      b = s.admit([block(30)]);
    const files = () => fs.readdirSync(s.folder.dir).sort();
    expect(a.spilled).toBeGreaterThan(0);
    expect(files()).toHaveLength(2);
    s.discard([a.blocks]);
    // the unlink runs in the background: the file of b stays
    for (let i = 0; i < 50 && files().length > 1; i++) await new Promise((r) => setTimeout(r, 10));
    expect(files()).toEqual([path.basename((b.blocks[0] as { spill: { file: string } }).spill.file)]);
    await s.close();
    expect(fs.existsSync(s.folder.dir)).toBe(false);
    expect(leftovers()).toEqual([]);
  });
  it('the spill folder is removed when the query fails', async () => {
    await writeParquet(
      file('big.parquet'),
      `SELECT (i % 2)::BIGINT AS g, 9223372036854775000::BIGINT AS v FROM range(0, 6) t(i)`,
    );
    const p = {
      version: 1,
      sources: { a: { parquet: file('big.parquet') } },
      query: {
        op: 'aggregate',
        input: { op: 'scan', source: 'a' },
        groupBy: ['g'],
        aggregates: [{ fn: 'sum', column: 'v', as: 'total' }],
      },
    };
    const e = await runPlan(p, { workers: 2, memoryLimit: 1, spillDir, writeOutput: false, ...SHUFFLE }).catch(
      (x) => x,
    );
    expect(String(e.message)).toMatch(/overflows a 64-bit integer/);
    expect(leftovers()).toEqual([]);
  });
});

describe('the command line', () => {
  const plan = () =>
    writePlan(dir, { ...joinPlan('inner'), execution: SHUFFLE, output: { path: 'cli-out.parquet' } }, 'cli-plan.json');
  const run = (args: string[], env: Record<string, string> = {}) => {
    const r = spawnSync(process.execPath, [BIN, ...args], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, SKEWJOIN_DEBUG: '', ...env },
    });
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(fs.readdirSync(dir).filter((f) => f.startsWith('cli-out') || f.startsWith('.cli-out'))).toEqual([]);
    return r;
  };

  it('--explain --analyze names the stages that spilled', () => {
    const r = spawnSync(
      process.execPath,
      [
        BIN,
        plan(),
        '--explain',
        '--analyze',
        '--memory-limit',
        '1B',
        '--spill-dir',
        spillDir,
        '--workers',
        '2',
        '--no-skew',
      ],
      { cwd: ROOT, encoding: 'utf8' },
    );
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/spilled: [\d.]+K?B written to spill files, [\d.]+K?B read back \(memory limit 1B\)/);
    expect(r.stdout).toMatch(/stage join-1 map: \d+ task\(s\).*; spilled [\d.]+K?B from \d+ task\(s\)/);
    expect(r.stdout).toMatch(/stage join-1 reduce: .*read back [\d.]+K?B in \d+ task\(s\)/);
    fs.rmSync(file('cli-out.parquet'));
    expect(leftovers()).toEqual([]);
  });

  it('a spill folder that cannot be created is a plan error naming it (exit 2)', () => {
    fs.writeFileSync(file('a-file'), 'x');
    const bad = path.join(file('a-file'), 'spill');
    const r = run([plan(), '--spill-dir', bad]);
    expect(r.stderr).toContain(
      `plan error: execution.spillDir: spill folder ${bad} cannot be created or written (ENOTDIR)`,
    );
    expect(r.status).toBe(2);
  });

  it('a disk that fills while spilling ends the query with exit 1 naming the folder; nothing is left', () => {
    const r = run([plan(), '--memory-limit', '1B', '--spill-dir', spillDir, '--workers', '2'], {
      SKEWJOIN_DEBUG_SPILL_DISK_BYTES: '20000',
    });
    expect(r.stderr).toContain(`error: spill folder ${spillDir}: the disk is full (ENOSPC) while spilling`);
    expect(r.status).toBe(1);
    expect(leftovers()).toEqual([]);
  });

  it('SIGINT while spilling: the process ends as interrupted and the spill files are gone', async () => {
    await writeParquet(
      file('wide.parquet'),
      `SELECT i::BIGINT AS id, (i % 1000)::BIGINT AS k, repeat('x', 20) AS s FROM range(0, 400000) t(i)`,
      10000,
    );
    const p = writePlan(
      dir,
      {
        version: 1,
        sources: { l: { parquet: file('wide.parquet') }, r: { parquet: file('wide.parquet') } },
        query: { op: 'join', type: 'inner', on: [['id', 'id']], ...scans },
        execution: SHUFFLE,
        output: { path: 'cli-out.parquet' },
      },
      'sigint-plan.json',
    );
    const child = spawn(process.execPath, [BIN, p, '--memory-limit', '1B', '--spill-dir', spillDir, '--workers', '2'], {
      cwd: ROOT,
      stdio: 'ignore',
    });
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    // wait for the first spill file, then interrupt
    const spillFiles = () =>
      leftovers()
        .flatMap((d) => {
          try {
            return fs.readdirSync(path.join(spillDir, d));
          } catch {
            return [];
          }
        })
        .filter((f) => f.endsWith('.spill'));
    const deadline = Date.now() + 30_000;
    while (spillFiles().length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    expect(spillFiles().length).toBeGreaterThan(0);
    child.kill('SIGINT');
    const { code, signal } = await exited;
    expect({ code, signal }).toEqual({ code: 130, signal: null });
    expect(leftovers()).toEqual([]);
    expect(fs.readdirSync(dir).filter((f) => f.includes('cli-out'))).toEqual([]);
  });
});
