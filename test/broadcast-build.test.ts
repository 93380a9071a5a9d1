// Building a broadcast table from the read tasks' work: each task groups its
// own rows for the aggregate fused with the probe and the coordinator merges
// those groups (physical/join/table-groups.ts), equal to grouping the whole table; the
// side read by the pool's threads when a pool is up (started ahead by the
// command line, cli/prestart.ts), over several row groups with nulls and
// repeated keys, against DuckDB for every join type that may broadcast; a
// corrupt dimension still exits 3 naming the file, with nothing left behind.
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { runPlan } from '../dist/index.js';
import { groupsOf } from '../dist/agg/aggregate.js';
import { type Batch, concatBatches } from '../dist/kernels/column.js';
import { mergeChunkGroups } from '../dist/physical/join/table-groups.js';
import { prestartFromArgs } from '../dist/cli/prestart.js';
import { closePool, poolReady, warmPool } from '../dist/runtime/pool.js';
import { stealTasks } from '../dist/scheduler/steal.js';
import { cli, duckRows, expectSame, tmpDir, writeParquet, writePlan } from './helpers.js';

const dir = tmpDir('sj-bbuild-');
const f = (n: string) => path.join(dir, n);
const FACT = `read_parquet('${f('fact.parquet')}')`,
  DIM = `read_parquet('${f('dim.parquet')}')`,
  DUP = `read_parquet('${f('dup.parquet')}')`;

beforeAll(async () => {
  // fact: 20,000 rows over keys 0..10,999 (some null); dim: keys 0..9,999 in 5 row groups, region null for some;
  // dup: keys 0..2,999 twice each, 3 row groups (no direct unique table: the probe follows chains)
  await writeParquet(
    f('fact.parquet'),
    `SELECT CASE WHEN i % 41 = 0 THEN NULL ELSE (i * 13) % 11000 END::BIGINT AS k,
    (i % 7)::INTEGER AS c, (i * 0.5)::DOUBLE AS amount FROM range(0, 20000) t(i)`,
    4096,
  );
  await writeParquet(
    f('dim.parquet'),
    `SELECT i::BIGINT AS k, CASE WHEN i % 17 = 0 THEN NULL ELSE 'r' || (i % 5) END AS region,
    (i % 3)::INTEGER AS tier FROM range(0, 10000) t(i)`,
    2048,
  );
  await writeParquet(
    f('dup.parquet'),
    `SELECT (i % 3000)::BIGINT AS k, 'd' || (i % 4) AS region, 1::INTEGER AS tier FROM range(0, 6000) t(i)`,
    2048,
  );
  for (const n of ['dim', 'dup'])
    expect(
      (await duckRows(`SELECT DISTINCT row_group_id FROM parquet_metadata('${f(`${n}.parquet`)}')`)).length,
    ).toBeGreaterThan(2);
  // the dimension again with bytes flipped in its second row group's first column chunk (footer intact)
  const [[offset, size]] = await duckRows(
    `SELECT data_page_offset, total_compressed_size FROM parquet_metadata('${f('dim.parquet')}') WHERE row_group_id = 1 AND column_id = 0`,
  );
  const bytes = fs.readFileSync(f('dim.parquet'));
  const mid = Number(offset) + Math.floor(Number(size) / 2);
  for (let i = mid; i < Math.min(mid + 64, Number(offset) + Number(size)); i++) bytes[i] ^= 0xff;
  fs.writeFileSync(f('corrupt.parquet'), bytes);
});

describe("merging the read tasks' groups", () => {
  const chunk = (n: number, seed: number): Batch => {
    const s = new Uint8Array(n * 2),
      offs = new Int32Array(n + 1),
      valid = new Uint8Array(n),
      ints = new Int32Array(n);
    let b = 0;
    for (let i = 0; i < n; i++) {
      const x = (i * 31 + seed * 7) % 9;
      valid[i] = x === 4 ? 0 : 1;
      if (valid[i]) {
        s[b++] = 97 + (x % 5);
        if (x > 5) s[b++] = 98;
      }
      offs[i + 1] = b;
      ints[i] = (i + seed) % 3;
    }
    return {
      length: n,
      columns: [
        { type: { id: 'utf8' }, length: n, values: s.subarray(0, b), offsets: offs, valid },
        { type: { id: 'int32' }, length: n, values: ints, valid: null },
      ],
    };
  };
  const schema = [
    { name: 's', type: { id: 'utf8' } },
    { name: 'i', type: { id: 'int32' } },
  ] as const;

  it('gives the ids and first rows of grouping the whole table, by one column or two, nulls a group of their own', () => {
    const chunks = [chunk(120, 1), chunk(77, 2), chunk(200, 3), chunk(1, 4)];
    const table = concatBatches(schema as any, chunks, true);
    for (const cols of [[0], [0, 1], [1]]) {
      const merged = mergeChunkGroups(
        table,
        chunks.map((c) => ({ rows: c.length, groups: groupsOf(c, cols) })),
        cols,
      )!;
      const whole = groupsOf(table, cols);
      expect(merged, String(cols)).not.toBeNull();
      expect(merged.nGroups).toBe(whole.nGroups);
      expect([...merged.gid]).toEqual([...whole.gid]);
      expect([...merged.first]).toEqual([...whole.first.subarray(0, whole.nGroups)]);
      expect(merged.gid.buffer).toBeInstanceOf(SharedArrayBuffer);
    }
  });
  it('declines groups too many to save work, and chunks that do not add up to the table', () => {
    const ids = (n: number): Batch => ({
      length: n,
      columns: [{ type: { id: 'int32' }, length: n, values: Int32Array.from({ length: n }, (_, i) => i), valid: null }],
    });
    const cs = [ids(40), ids(40)];
    const t = concatBatches([{ name: 'i', type: { id: 'int32' } }] as any, cs);
    expect(
      mergeChunkGroups(
        t,
        cs.map((c) => ({ rows: c.length, groups: groupsOf(c, [0]) })),
        [0],
      ),
    ).toBeNull();
    const few = [chunk(50, 1), chunk(50, 2)],
      ft = concatBatches(schema as any, few);
    expect(mergeChunkGroups(ft, [{ rows: 50, groups: groupsOf(few[0], [1]) }], [1])).toBeNull();
  });
});

describe('broadcast tables built from row groups read in parallel, against DuckDB', () => {
  const plan = (query: object, d = 'dim.parquet') => ({
    version: 1,
    sources: { f: { parquet: f('fact.parquet') }, d: { parquet: f(d) } },
    query,
  });
  const scanF = { op: 'scan', source: 'f' },
    scanD = { op: 'scan', source: 'd' };
  const join = (type: string, left: object = scanF, right: object = scanD) => ({
    op: 'join',
    type,
    on: [['k', 'k']],
    left,
    right,
  });
  const aggs = [
    { fn: 'count', as: 'n' },
    { fn: 'sum', column: 'amount', as: 's' },
  ];

  const cases = (D: string): [object, string, boolean][] => [
    [
      { op: 'aggregate', groupBy: ['region'], aggregates: aggs, input: join('inner') },
      `SELECT region, count(*), sum(amount) FROM ${FACT} l JOIN ${D} r ON l.k = r.k GROUP BY region`,
      true,
    ],
    [
      { op: 'aggregate', groupBy: ['region', 'tier'], aggregates: aggs, input: join('inner', scanD, scanF) },
      `SELECT region, tier, count(*), sum(amount) FROM ${D} l JOIN ${FACT} r ON l.k = r.k GROUP BY region, tier`,
      true,
    ],
    [
      { op: 'aggregate', groupBy: ['region'], aggregates: aggs, input: join('right', scanD, scanF) },
      `SELECT region, count(*), sum(amount) FROM ${D} l RIGHT JOIN ${FACT} r ON l.k = r.k GROUP BY region`,
      true,
    ],
    [
      { op: 'aggregate', groupBy: ['c'], aggregates: aggs, input: join('left') },
      `SELECT c, count(*), sum(amount) FROM ${FACT} l LEFT JOIN ${D} r ON l.k = r.k GROUP BY c`,
      false,
    ],
    [join('inner'), `SELECT l.*, r.* FROM ${FACT} l JOIN ${D} r ON l.k = r.k`, false],
    [join('left'), `SELECT l.*, r.* FROM ${FACT} l LEFT JOIN ${D} r ON l.k = r.k`, false],
    [join('semi'), `SELECT * FROM ${FACT} l WHERE EXISTS (SELECT 1 FROM ${D} r WHERE l.k = r.k)`, false],
    [join('anti'), `SELECT * FROM ${FACT} l WHERE NOT EXISTS (SELECT 1 FROM ${D} r WHERE l.k = r.k)`, false],
  ];
  // the side (about 0.15 MB from the footers) under inThreadBytes, the fact table (0.4 MB) over: a run on the pool
  const o = { workers: 2, inThreadBytes: '256KB' };
  async function check(file: string, q: object, sql: string, tableGroups: boolean, pool: boolean) {
    const r = await runPlan(plan(q, file), { ...o, writeOutput: false });
    expect(r.stats.inThread).toBe(false);
    expect(r.stats.joins[0].strategy, sql).toBe('broadcast');
    const side = r.stats.tasks.filter((t) => t.stage === r.stats.joins[0].id && t.kind === 'map' && !t.join);
    expect(side.length, sql).toBeGreaterThan(1);
    expect(
      side.every((t) => (t.thread ?? 0) > 0),
      sql,
    ).toBe(pool);
    if (tableGroups) {
      for (const t of r.stats.tasks.filter((x) => x.kind === 'map' && x.join))
        expect(t.join, sql).toMatchObject({ path: 'fused-aggregate', groups: 'table' });
    }
    await expectSame(plan(q, file), sql, o);
  }

  for (const [file, D] of [
    ['dim.parquet', DIM],
    ['dup.parquet', DUP],
  ] as const) {
    it(`${file}: every join type that may broadcast, the side read by the pool's threads (a pool is up)`, async () => {
      await runPlan(plan(scanD, file), { workers: 2, inThreadBytes: 0, writeOutput: false });
      for (const [q, sql, tableGroups] of cases(D)) {
        expect(poolReady()).toBe(true);
        await check(file, q, sql, tableGroups, true);
      }
    }, 120_000);
    it(`${file}: grouped by the table's columns, the side read on this thread (no pool up yet)`, async () => {
      for (const [q, sql, tableGroups] of cases(D).filter((c) => c[2])) {
        await closePool();
        await check(file, q, sql, tableGroups, false);
      }
    }, 120_000);
  }
});

describe('tasks shared between this thread and the pool as it becomes ready', () => {
  const tick = () => new Promise((r) => setTimeout(r, 5));
  it("this thread takes them one at a time; the pool's runners join once it is ready; results in task order", async () => {
    let open!: () => void;
    const ready = new Promise<void>((r) => {
      open = r;
    });
    const who: string[] = [];
    let running = 0,
      most = 0;
    const out = await stealTasks(
      12,
      async (i, here) => {
        if (i === 2) open();
        who[i] = here ? 'here' : 'pool';
        running++;
        most = Math.max(most, running);
        await tick();
        running--;
        return i * 10;
      },
      [ready, ready],
    );
    expect(out).toEqual(Array.from({ length: 12 }, (_, i) => i * 10));
    expect(who.slice(0, 3)).toEqual(['here', 'here', 'here']);
    expect(who.filter((w) => w === 'pool').length).toBeGreaterThan(0);
    expect(who.filter((w) => w === 'here').length).toBeGreaterThan(3);
    expect(most).toBe(3);
    // one thread ready, the other never: one runner joins this thread
    running = 0;
    most = 0;
    const again = await stealTasks(
      6,
      async (_i, h) => {
        running++;
        most = Math.max(most, running);
        await tick();
        running--;
        return h;
      },
      [Promise.resolve(), new Promise<void>(() => {})],
    );
    expect(most).toBe(2);
    expect(again.filter((h) => !h).length).toBeGreaterThan(0);
  });
  it('a pool task still running when this thread runs out of tasks is waited for: every result, none lost', async () => {
    // the reference workload lost whole dimension row groups this way (a thread's read outlasting this one's)
    for (const slow of [30, 80]) {
      const done: number[] = [];
      const out = await stealTasks(
        5,
        async (i, here) => {
          await new Promise((r) => setTimeout(r, here ? 2 : slow));
          done.push(i);
          return `${i}${here ? 'h' : 'p'}`;
        },
        [Promise.resolve(), new Promise<void>(() => {})],
      );
      expect(done.length).toBe(5);
      expect(Object.keys(out).length).toBe(5);
      expect(out.map((x) => parseInt(x, 10))).toEqual([0, 1, 2, 3, 4]);
      expect(out.filter((x) => x.endsWith('p')).length).toBeGreaterThan(0);
    }
  });
  it('no pool coming, or ready after the last task: all here; a failure starts no further task', async () => {
    const here: boolean[] = [];
    expect(
      await stealTasks(
        3,
        async (i, h) => {
          here.push(h);
          await tick();
          return i;
        },
        [],
      ),
    ).toEqual([0, 1, 2]);
    let late!: () => void;
    expect(
      await stealTasks(
        2,
        async (i, h) => {
          here.push(h);
          await tick();
          return i;
        },
        [
          new Promise<void>((r) => {
            late = r;
          }),
        ],
      ),
    ).toEqual([0, 1]);
    late();
    await tick();
    expect(here.every((h) => h)).toBe(true);
    const started: number[] = [];
    const e = await stealTasks(
      8,
      async (i) => {
        started.push(i);
        await tick();
        if (i === 1) throw new Error('task 1 failed');
        return i;
      },
      [Promise.resolve(), Promise.resolve()],
    ).catch((x) => x);
    expect(String(e)).toMatch(/task 1 failed/);
    await new Promise((r) => setTimeout(r, 50));
    expect(started.length).toBeLessThan(8);
  });
  it("a run while the pool warms up reads the side here and on the threads as they become ready: DuckDB's answer", async () => {
    await closePool();
    warmPool(2, f('fact.parquet'));
    const q = {
      op: 'aggregate',
      groupBy: ['region'],
      aggregates: [{ fn: 'count', as: 'n' }],
      input: {
        op: 'join',
        type: 'inner',
        on: [['k', 'k']],
        left: { op: 'scan', source: 'f' },
        right: { op: 'scan', source: 'd' },
      },
    };
    const p = {
      version: 1,
      sources: { f: { parquet: f('fact.parquet') }, d: { parquet: f('dim.parquet') } },
      query: q,
    };
    const r = await runPlan(p, { workers: 2, inThreadBytes: '256KB', writeOutput: false });
    expect(r.stats.joins[0].strategy).toBe('broadcast');
    const side = r.stats.tasks
      .filter((t) => t.stage === r.stats.joins[0].id && t.kind === 'map' && !t.join)
      .sort((a, b) => a.partition - b.partition);
    expect(side.length).toBeGreaterThan(1);
    expect(side[0].thread).toBe(0); // this thread takes the first task at once
    await expectSame(p, `SELECT region, count(*) FROM ${FACT} l JOIN ${DIM} r ON l.k = r.k GROUP BY region`, {
      workers: 2,
      inThreadBytes: '256KB',
    });
  });
});

describe('starting the pool ahead from the raw arguments', () => {
  it('starts it for a plan given first that will need it, not for --explain alone or a --workers it cannot read', async () => {
    await closePool();
    const p = writePlan(
      dir,
      {
        ...{ version: 1, sources: { d: { parquet: f('dim.parquet') } }, query: { op: 'scan', source: 'd' } },
        execution: { inThreadBytes: 0 },
      },
      'ahead.json',
    );
    prestartFromArgs([p, '--explain']);
    prestartFromArgs([p, '--workers', 'two']);
    prestartFromArgs(['gen', '--rows', '10']);
    prestartFromArgs(['--quiet', p]);
    expect(poolReady()).toBe(false);
    prestartFromArgs([p, '--workers=2', '--explain', '--analyze']);
    await vi.waitFor(() => expect(poolReady()).toBe(true), { timeout: 30_000 }); // once its threads have warmed up
    await closePool();
  });
});

describe('a corrupt dimension', () => {
  it('exits 3 through the CLI naming the file, with the pool started ahead, no output and no leftovers', () => {
    const out = f('out');
    fs.mkdirSync(out, { recursive: true });
    const p = writePlan(
      dir,
      {
        version: 1,
        sources: { f: { parquet: f('fact.parquet') }, d: { parquet: f('corrupt.parquet') } },
        query: {
          op: 'aggregate',
          groupBy: ['region'],
          aggregates: [{ fn: 'count', as: 'n' }],
          input: {
            op: 'join',
            type: 'inner',
            on: [['k', 'k']],
            left: { op: 'scan', source: 'f' },
            right: { op: 'scan', source: 'd' },
          },
        },
        execution: { inThreadBytes: 0, spillDir: out },
        output: { path: path.join(out, 'r.parquet') },
      },
      'corrupt.json',
    );
    const r = cli([p, '--workers', '2']);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toMatch(/corrupt\.parquet: corrupt Parquet data in row group 1/);
    expect(r.stderr).not.toMatch(/internal error|\n\s+at /);
    expect(fs.readdirSync(out)).toEqual([]);
  });
});
