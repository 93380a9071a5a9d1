// Salting on Spark (src/spark/salt.ts) and the Spark engine's errors, on the shared
// local server of test/spark-setup.ts: a full outer join with hot keys (one of them
// missing from the other side) gives DuckDB's rows and its SQL carries the salt;
// unreachable remote (exit 1), analysis error (exit 2), bad cast (exit 3), Ctrl-C (exit 130).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ExecutionError, InputError, type Plan, PlanError, type RunResult, runPlan } from '../dist/index.js';
import type { SparkStats } from '../dist/spark/engine.js';
import { SAMPLE_ROWS, sampleRanges } from '../dist/spark/hot.js';
import { SparkConnectClient } from '../dist/spark/client.js';
import { parseRemote } from '../dist/spark/remote.js';
import { mapSparkError } from '../dist/spark/engine.js';
import { tableFromIPC } from 'apache-arrow';
import { loadPlan } from '../dist/plan/load.js';
import { lowerPlan } from '../dist/spark/lower.js';
import {
  BIN,
  arrowTyped,
  cli,
  duckRows,
  duckTable,
  expectTypedEqual,
  tmpDir,
  writeParquet,
  writePlan,
} from './helpers.js';
import { NO_SPARK, REMOTE, SPARK_UI, requireSpark } from './spark-helpers.js';

const dir = tmpDir('sj-spark-skew-');
const F = path.join(dir, 'fact.parquet'),
  D = path.join(dir, 'dim.parquet'),
  F2 = path.join(dir, 'fact2.parquet'),
  D2 = path.join(dir, 'dim2.parquet'),
  many = path.join(dir, 'many');
// skew.strategy key: salting forced (auto leaves a join this small on 2 cores to AQE alone, decide.ts)
const skewed = { partitions: 4, broadcastBytes: 0, skew: { factor: 1, thresholdBytes: 1, strategy: 'key' } };
const joinPlan = (type: string) => ({
  version: 1,
  sources: { fact: { parquet: F }, dim: { parquet: D } },
  execution: skewed,
  query: {
    op: 'join',
    type,
    left: { op: 'scan', source: 'fact' },
    right: { op: 'scan', source: 'dim' },
    on: [['k', 'dk']],
  },
});
const spark = () => ({ engine: 'spark' as const, remote: REMOTE });

beforeAll(async () => {
  if (NO_SPARK) return;
  requireSpark();
  // key 1: half the fact rows, key 7: 30% and absent from dim; some null keys; dim keys the fact lacks
  await writeParquet(
    F,
    `SELECT CASE WHEN i % 10 < 5 THEN 1 WHEN i % 10 < 8 THEN 7 WHEN i % 10 = 8 THEN NULL ELSE i END::BIGINT AS k,
    i::BIGINT AS v FROM range(4000) t(i)`,
  );
  await writeParquet(
    D,
    `SELECT (CASE WHEN i < 3 THEN 1 ELSE i * 10 + 9 END)::BIGINT AS dk, 'd' || i AS name
    FROM range(300) t(i) UNION ALL SELECT NULL, 'nullkey'`,
  );
  // two-column keys (k, g): (1, 'a') half the rows; a double key x: 1.5 half the rows, -0.0 and 0.0 on both sides
  await writeParquet(
    F2,
    `SELECT (CASE WHEN i % 2 = 0 THEN 1 ELSE i % 50 END)::BIGINT AS k, CASE WHEN i % 2 = 0 THEN 'a' ELSE 'b' END AS g,
    i::BIGINT AS v, 'v' || i AS w, CASE WHEN i % 2 = 0 THEN 1.5 WHEN i % 7 = 1 THEN -0.0 ELSE i % 40 END::DOUBLE AS x
    FROM range(4000) t(i)`,
  );
  await writeParquet(
    D2,
    `SELECT (i % 60)::BIGINT AS dk, CASE WHEN i < 60 THEN 'a' ELSE 'b' END AS dg,
    CASE WHEN i = 3 THEN 0.0 ELSE i / 2 END::DOUBLE AS dx FROM range(120) t(i)`,
  );
  // three files of 30000 rows in row groups of 3000: key 1 is 60% of the second file only, key 2 30% of
  // the first and of the third (AQE splits it over their map tasks), the rest keys 3..299 (in the dim)
  fs.mkdirSync(many, { recursive: true });
  for (const [f, key] of [
    ['a', 'CASE WHEN i % 10 < 3 THEN 2 ELSE 3 + i % 297 END'],
    ['b', 'CASE WHEN i % 10 < 6 THEN 1 ELSE 3 + i % 297 END'],
    ['c', 'CASE WHEN i % 10 < 3 THEN 2 ELSE 3 + i % 297 END'],
  ])
    await writeParquet(
      path.join(many, `${f}.parquet`),
      `SELECT (${key})::BIGINT AS k, i::BIGINT AS v FROM range(30000) t(i)`,
      3000,
    );
}, 120_000);

/** Runs a plan on Spark once: its rows must be DuckDB's; gives the run (its stats). */
async function sameAsDuck(plan: object, query: string): Promise<RunResult> {
  const r = await runPlan(plan as Plan, { ...spark(), baseDir: dir, writeOutput: false });
  expectTypedEqual(arrowTyped(r.toArrow()), await duckTable(query));
  return r;
}

describe.skipIf(NO_SPARK)('salting the hot keys Spark cannot split', () => {
  it.each(['full', 'left', 'right'])(
    "a %s outer join with hot keys gives DuckDB's rows, and its SQL carries the salt",
    async (type) => {
      const kw = { full: 'FULL', left: 'LEFT', right: 'RIGHT' }[type];
      const r = await sameAsDuck(
        joinPlan(type),
        `SELECT f.k, f.v, d.dk, d.name FROM '${F}' f ${kw} JOIN '${D}' d ON f.k = d.dk`,
      );
      const s = r.stats as SparkStats;
      // the hot keys are on the fact side; on a left join it is the preserved side, which AQE splits, but their
      // rows sit in one file: salted too
      expect(s.spark.salted).toEqual([{ join: 'join-1', side: 'left', keys: [['1'], ['7']], buckets: 2 }]);
      // sampled here (the file is local): all of its 4000 rows, fewer than a sample's
      expect(s.spark.sampling).toContainEqual(
        expect.objectContaining({ join: 'join-1', side: 'left', method: 'local', rowsRead: 4000, hotKeys: 2 }),
      );
      // one integer key: the key and the salt as one BIGINT join key, the keys tested beside it
      expect(s.spark.sql).toContain(
        'THEN CAST(__sj0 AS BIGINT) ^ shiftleft(CAST(pmod(hash(__sj1), 2) + 1 AS BIGINT), 56) ELSE CAST(__sj0 AS BIGINT) END AS __j',
      );
      expect(s.spark.sql).toMatch(/explode\(CASE WHEN .* THEN sequence\(0, 1\) ELSE array\(0\) END\) AS __salt/);
      expect(s.spark.sql).toContain('ON l.__j = r.__j AND coalesce(l.__sj0 = r.__sj0, FALSE)');
    },
  );

  it('a hot key the split side lacks in this run keeps one copy of each preserved row (full, right join)', async () => {
    // the sample said 1 and 500 are hot on the left; what Spark reads has no 500 on the left
    const A = await writeParquet(
      path.join(dir, 'absent-a.parquet'),
      'SELECT (CASE WHEN i % 2 = 0 THEN 1 ELSE i END)::BIGINT AS k, i::BIGINT AS v FROM range(200) t(i)',
    );
    const B = await writeParquet(
      path.join(dir, 'absent-b.parquet'),
      "SELECT k::BIGINT AS k, 'b' || i AS name FROM (VALUES (0, 1), (1, 1), (2, 3), (3, 500), (4, 500), (5, 501)) t(i, k)",
    );
    const hot = [500, 1].map((k) => ({ text: [String(k)], sql: [String(k)], rows: 100 }));
    const text = (v: unknown) => (v === null ? null : String(v));
    const client = new SparkConnectClient(parseRemote(REMOTE));
    try {
      for (const type of ['full', 'right']) {
        const plan = {
          version: 1,
          sources: { a: { parquet: A }, b: { parquet: B } },
          query: {
            op: 'join',
            type,
            left: { op: 'scan', source: 'a' },
            right: { op: 'scan', source: 'b' },
            on: [['k', 'k']],
          },
        };
        const lp = await loadPlan(plan, { baseDir: dir });
        const l = lowerPlan(lp, new Map([['join-1', { side: 'left' as const, keys: hot, buckets: 4 }]]));
        expect(l.salted).toHaveLength(1);
        await client.setConfig(l.settings);
        const rows: string[] = [];
        await client.execute(l.sql, (ev) => {
          if (ev.kind === 'arrow')
            for (const r of tableFromIPC(ev.data)) rows.push(JSON.stringify(Object.values(r!.toJSON()).map(text)));
        });
        const duck = await duckRows(
          `SELECT a.k, a.v, b.k, b.name FROM '${A}' a ${type.toUpperCase()} JOIN '${B}' b ON a.k = b.k`,
        );
        expect(rows.sort()).toEqual(duck.map((r) => JSON.stringify(r.map(text))).sort());
      }
    } finally {
      await client.close();
    }
  });

  it("multi-column keys and float keys are salted too, with DuckDB's rows", async () => {
    const multi = {
      ...joinPlan('full'),
      sources: { fact: { parquet: F2 }, dim: { parquet: D2 } },
      query: {
        ...joinPlan('full').query,
        on: [
          ['k', 'dk'],
          ['g', 'dg'],
        ],
      },
    };
    const m = await sameAsDuck(
      multi,
      `SELECT f.*, d.* FROM '${F2}' f FULL JOIN '${D2}' d ON f.k = d.dk AND f.g = d.dg`,
    );
    const ms = (m.stats as SparkStats).spark;
    expect(ms.salted).toEqual([{ join: 'join-1', side: 'left', keys: [['1', 'a']], buckets: 2 }]);
    expect(ms.sql).toMatch(/THEN xxhash64\(CAST\(__sj0 AS BIGINT\), __sj1, pmod\(hash\(__sj2, __sj3, __sj4\), 2\)\)/);
    expect(ms.sql).toContain('coalesce(l.__sj0 = r.__sj0 AND l.__sj1 = r.__sj1, FALSE)');
    // a double key compares -0.0 and 0.0 equal but hashes them apart: the key and a salt column
    const floats = {
      ...joinPlan('full'),
      sources: { fact: { parquet: F2 }, dim: { parquet: D2 } },
      query: { ...joinPlan('full').query, on: [['x', 'dx']] },
    };
    const f = await sameAsDuck(floats, `SELECT f.*, d.* FROM '${F2}' f FULL JOIN '${D2}' d ON f.x = d.dx`);
    const fs = (f.stats as SparkStats).spark;
    expect(fs.salted).toEqual([{ join: 'join-1', side: 'left', keys: [['1.5']], buckets: 2 }]);
    expect(fs.sql).toContain('ON l.__sj4 = r.__sj2 AND l.__salt = r.__salt');
  });

  it('an inner join: a hot key whose rows sit in one of three files is salted, one spread over two is not; the sample reads a subset', async () => {
    const q = `SELECT f.k, count(*) AS n, sum(f.v) AS sv, min(d.name) AS name FROM '${path.join(many, '*.parquet')}' f
      JOIN '${D}' d ON f.k = d.dk GROUP BY f.k`;
    const p = {
      version: 1,
      sources: { fact: { parquet: path.join(many, '*.parquet') }, dim: { parquet: D } },
      execution: { partitions: 16, broadcastBytes: 0, skew: { factor: 2, thresholdBytes: 1, strategy: 'key' } },
      query: {
        op: 'aggregate',
        groupBy: ['k'],
        aggregates: [
          { fn: 'count', as: 'n' },
          { fn: 'sum', column: 'v', as: 'sv' },
          { fn: 'min', column: 'name', as: 'name' },
        ],
        input: { ...joinPlan('inner').query, left: { op: 'scan', source: 'fact' } },
      },
    };
    const r = await sameAsDuck(p, q);
    const s = (r.stats as SparkStats).spark;
    expect(s.salted).toEqual([{ join: 'join-1', side: 'left', keys: [['1']], buckets: expect.any(Number) }]);
    const left = s.sampling?.find((x) => x.side === 'left');
    // 32 row ranges of 2048 rows over the three files' 30 row groups: about 70% of the 90000 rows
    expect(left).toMatchObject({ method: 'local', files: 3, hotKeys: 1 });
    // (ranges near a row group's end are moved back into it: two may meet, and a row is read once)
    expect(left!.rowsRead).toBeGreaterThan(60_000);
    expect(left!.rowsRead).toBeLessThanOrEqual(SAMPLE_ROWS);
    expect(left!.fraction).toBeCloseTo(left!.rowsRead / 90000, 9);
  });

  it('--explain --engine spark shows the sampling, the hot keys and the rewrite; skew off salts nothing', async () => {
    const file = writePlan(dir, joinPlan('full'));
    const r = cli([file, '--engine', 'spark', '--remote', REMOTE, '--explain']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /sampled join-1\.left here: 4000 of its 4000 rows, read from 1 file in \d+ ms; 2 hot keys/,
    );
    expect(r.stdout).toContain('salted join join-1: hot keys 1; 7 over 2 salts');
    expect(r.stdout).toMatch(/join-1: skew\.strategy "key" salts the hot keys \(hot key ~2000 of 4000 rows/);
    expect(r.stdout).toContain('spark.sql.adaptive.skewJoin.skewedPartitionFactor=1');
    expect(r.stdout).toContain('__salt');
    const off = cli([file, '--engine', 'spark', '--remote', REMOTE, '--explain', '--no-skew']);
    expect(off.stdout).toContain('salted joins: none');
    expect(off.stdout).toContain('spark.sql.adaptive.skewJoin.enabled=false');
  });
});

describe.skipIf(NO_SPARK)('skew.strategy auto: salting or AQE alone', () => {
  it('a small hot-key join on the 2-core local server is left to AQE alone, saying why; forced, it is salted', async () => {
    const auto = { ...joinPlan('full'), execution: { ...skewed, skew: { factor: 1, thresholdBytes: 1 } } };
    const q = `SELECT f.k, f.v, d.dk, d.name FROM '${F}' f FULL JOIN '${D}' d ON f.k = d.dk`;
    const a = (await sameAsDuck(auto, q)).stats as SparkStats;
    // sampled, hot keys found, then AQE alone: the server's spark.master is local[2]
    expect(a.spark.sampling).toContainEqual(expect.objectContaining({ side: 'left', method: 'local', hotKeys: 2 }));
    expect(a.spark.salted).toEqual([]);
    expect(a.spark.sql).not.toContain('__salt');
    expect(a.spark.decisions).toEqual([
      {
        join: 'join-1',
        salted: false,
        reason: expect.stringMatching(/^AQE alone: 2 cores \(spark\.master=local\[2\]\), below the 5/),
      },
    ]);
    // the cores given (SKEWJOIN_SPARK_CORES, options.cores): 64 cores, but 4000 rows do not repay the salting's cost
    process.env.SKEWJOIN_SPARK_CORES = '64';
    const many = await runPlan(auto as Plan, { ...spark(), baseDir: dir, writeOutput: false }).finally(() => {
      delete process.env.SKEWJOIN_SPARK_CORES;
    });
    expect((many.stats as SparkStats).spark.decisions?.[0].reason).toMatch(
      /^AQE alone: est\. .* rows per core against .* salted .*on 64 cores \(the given cores\)/,
    );
    const forced = (await sameAsDuck(joinPlan('full'), q)).stats as SparkStats;
    expect(forced.spark.salted).toHaveLength(1);
    expect(forced.spark.decisions?.[0]).toMatchObject({
      salted: true,
      reason: expect.stringMatching(/^skew\.strategy "key"/),
    });
    // no partitions in the plan: the server's spark.sql.shuffle.partitions (4, test/spark-setup.ts) stands and sizes
    // the salts (2 of them; Spark's default 200 would give 64)
    const own = {
      ...joinPlan('full'),
      execution: { broadcastBytes: 0, skew: { factor: 1, thresholdBytes: 1, strategy: 'key' } },
    };
    const o = (await sameAsDuck(own, q)).stats as SparkStats;
    expect(o.spark.settings['spark.sql.shuffle.partitions']).toBeUndefined();
    expect(o.spark.salted).toEqual([{ join: 'join-1', side: 'left', keys: [['1'], ['7']], buckets: 2 }]);
    // --explain says which and why
    const file = writePlan(dir, auto, 'auto.json');
    const r = cli([file, '--engine', 'spark', '--remote', REMOTE, '--explain']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/join-1: AQE alone: 2 cores \(spark\.master=local\[2\]\)/);
    expect(r.stdout).toContain('salted joins: none');
  });
});

// no server needed: where a local sample reads
describe('the local sample of a join side', () => {
  const splits = (file: string, groups: number, rows: number) =>
    Array.from({ length: groups }, (_, g) => ({ path: file, rowGroups: [g], rows, bytes: rows * 8 }));
  it('reads row ranges spread evenly over every file, inside their row groups, never a row twice', () => {
    // a big file, a small one (a sixteenth of the rows), a middle one
    const all = [
      ...splits('/a.parquet', 20, 100_000),
      ...splits('/b.parquet', 2, 80_000),
      ...splits('/c.parquet', 5, 120_000),
    ];
    const total = all.reduce((a, s) => a + s.rows, 0);
    const ranges = sampleRanges(all)!;
    expect(ranges.length).toBe(32);
    expect(ranges.reduce((a, s) => a + s.rows, 0)).toBe(SAMPLE_ROWS);
    expect(new Set(ranges.map((r) => r.path))).toEqual(new Set(['/a.parquet', '/b.parquet', '/c.parquet']));
    for (const r of ranges) {
      const g = all.find((s) => s.path === r.path && s.rowGroups[0] === r.rowGroups[0])!;
      expect(r.offset! + r.rows).toBeLessThanOrEqual(g.rows);
    }
    // about as many ranges per file as its share of the rows
    expect(ranges.filter((r) => r.path === '/a.parquet').length).toBe(Math.round((32 * 2_000_000) / total));
    // a side of fewer rows than a sample is read whole; unknown row counts (a URI) are not sampled here
    expect(sampleRanges(splits('/d.parquet', 3, 1000))).toEqual(splits('/d.parquet', 3, 1000));
    expect(sampleRanges([{ path: 's3a://b/x.parquet', rowGroups: [], rows: 0, bytes: 0, wholeFile: true }])).toBeNull();
  });
});

describe.skipIf(NO_SPARK)('Spark engine errors', () => {
  it('an unreachable remote: exit 1, naming the address', () => {
    const file = writePlan(dir, joinPlan('inner'), 'inner.json');
    process.env.SKEWJOIN_SPARK_RETRIES = '1';
    const r = cli([file, '--engine', 'spark', '--remote', 'sc://127.0.0.1:1']);
    delete process.env.SKEWJOIN_SPARK_RETRIES;
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cannot reach the Spark Connect server at 127\.0\.0\.1:1/);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('Spark analysis error: plan error (exit 2); bad cast and cast overflow: input error (exit 3); overflow: exit 1', async () => {
    const client = new SparkConnectClient(parseRemote(REMOTE));
    const err = await client
      .execute('SELECT nope FROM range(1)', () => undefined)
      .catch((e: unknown) => mapSparkError(e));
    await client.close();
    expect(err).toBeInstanceOf(PlanError);
    expect(err.exitCode).toBe(2);
    expect(err.message).toMatch(/UNRESOLVED_COLUMN.*nope/);
    const cast = {
      ...joinPlan('inner'),
      query: {
        op: 'project',
        input: { op: 'scan', source: 'dim' },
        columns: [{ name: 'x', expr: { cast: { column: 'name' }, to: 'int64' } }],
      },
    };
    const bad = await runPlan(cast, { ...spark(), baseDir: dir }).catch((e) => e);
    expect(bad).toBeInstanceOf(InputError);
    expect(bad.message).toMatch(/CAST_INVALID_INPUT.*'d0'|value "d0" cannot be cast to int64/);
    const big = { fn: '*', args: [{ column: 'v' }, { value: 2 ** 62 }] };
    const over = {
      ...joinPlan('inner'),
      query: { op: 'project', input: { op: 'scan', source: 'fact' }, columns: [{ name: 'x', expr: big }] },
    };
    const ov = await runPlan(over, { ...spark(), baseDir: dir }).catch((e) => e);
    expect(ov).toBeInstanceOf(ExecutionError);
    expect(ov.message).toMatch(/ARITHMETIC_OVERFLOW/);
    // a float too large for int64: a value that does not convert, exit 3 as the local engine says
    const huge = {
      fn: '*',
      args: [
        { cast: { column: 'v' }, to: 'float64' },
        { value: '1e30', type: 'float64' },
      ],
    };
    const castOver = {
      ...joinPlan('inner'),
      query: {
        op: 'project',
        input: { op: 'scan', source: 'fact' },
        columns: [{ name: 'x', expr: { cast: huge, to: 'int64' } }],
      },
    };
    const local = await runPlan(castOver, { baseDir: dir, workers: 1 }).catch((e) => e);
    expect(local).toBeInstanceOf(InputError);
    const co = await runPlan(castOver, { ...spark(), baseDir: dir }).catch((e) => e);
    expect(co).toBeInstanceOf(InputError);
    expect(co.exitCode).toBe(3);
  });

  it('Ctrl-C interrupts the Spark operation and exits 130', async () => {
    // a cross join of 4000 x 4000 x 4000 rows, counted: it would run for hours
    const slow = {
      version: 1,
      sources: { fact: { parquet: F }, dim: { parquet: D } },
      query: {
        op: 'aggregate',
        groupBy: [],
        aggregates: [{ fn: 'count', as: 'n' }],
        input: {
          op: 'join',
          type: 'inner',
          on: [],
          left: {
            op: 'join',
            type: 'inner',
            on: [],
            left: { op: 'scan', source: 'fact', columns: ['v'] },
            right: { op: 'scan', source: 'fact', columns: ['k'] },
          },
          right: { op: 'scan', source: 'fact', columns: ['k'] },
        },
      },
    };
    const file = writePlan(dir, slow, 'slow.json');
    const app = ((await (await fetch(`${SPARK_UI}/api/v1/applications`)).json()) as { id: string }[])[0].id;
    const jobIds = async (status: string) =>
      (
        (await (await fetch(`${SPARK_UI}/api/v1/applications/${app}/jobs?status=${status}`)).json()) as {
          jobId: number;
        }[]
      ).map((j) => j.jobId);
    const jobs = async (status: string) => (await jobIds(status)).length;
    const running = () => jobs('running');
    const failedBefore = await jobs('failed');
    const child = spawn(process.execPath, [BIN, file, '--engine', 'spark', '--remote', REMOTE], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (b) => {
      stderr += b;
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const t0 = Date.now();
    // the query's job: one still running a second after it was seen (the short jobs that read the
    // files' schemas before it run for milliseconds; interrupted then, no job would fail)
    const since = new Map<number, number>();
    let long = false;
    while (!long && Date.now() - t0 < 60_000) {
      const now = await jobIds('running');
      for (const id of now) if (!since.has(id)) since.set(id, Date.now());
      long = now.some((id) => Date.now() - since.get(id)! >= 1000);
      if (!long) await new Promise((r) => setTimeout(r, 200));
    }
    expect(long, stderr).toBe(true);
    child.kill('SIGINT');
    const t1 = Date.now();
    expect(await exited).toBe(130);
    expect(Date.now() - t1).toBeLessThan(5000);
    expect(stderr).toContain('interrupted (SIGINT)');
    // the server cancels the job: none keeps running
    const t2 = Date.now();
    // a task notices the kill at its next check: allow for a loaded machine
    while ((await running()) > 0 && Date.now() - t2 < 60_000) await new Promise((r) => setTimeout(r, 200));
    expect(await running()).toBe(0);
    expect(await jobs('failed')).toBeGreaterThan(failedBefore); // cancelled, not finished
  }, 180_000);
});
