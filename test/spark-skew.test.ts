// Salting on Spark (src/spark/salt.ts) and the Spark engine's errors, on the shared
// local server of test/spark-setup.ts: a full outer join with hot keys (one of them
// missing from the other side) gives DuckDB's rows and its SQL carries the salt;
// unreachable remote (exit 1), analysis error (exit 2), bad cast (exit 3), Ctrl-C (exit 130).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ExecutionError, InputError, PlanError, runPlan } from '../dist/index.js';
import { SparkConnectClient } from '../dist/spark/client.js';
import { mapSparkError } from '../dist/spark/engine.js';
import { BIN, cli, expectSame, tmpDir, writeParquet, writePlan } from './helpers.js';
import { NO_SPARK, REMOTE, SPARK_UI, requireSpark } from './spark-helpers.js';

const dir = tmpDir('sj-spark-skew-');
const F = path.join(dir, 'fact.parquet'),
  D = path.join(dir, 'dim.parquet');
const skewed = { partitions: 4, broadcastBytes: 0, skew: { factor: 1, thresholdBytes: 1 } };
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
}, 120_000);

describe.skipIf(NO_SPARK)('salting the hot keys Spark cannot split', () => {
  it.each(['full', 'left', 'right'])(
    "a %s outer join with hot keys gives DuckDB's rows, and its SQL carries the salt",
    async (type) => {
      const kw = { full: 'FULL', left: 'LEFT', right: 'RIGHT' }[type];
      await expectSame(
        joinPlan(type),
        `SELECT f.k, f.v, d.dk, d.name FROM '${F}' f ${kw} JOIN '${D}' d ON f.k = d.dk`,
        spark(),
      );
      const r = await runPlan(joinPlan(type), { ...spark(), baseDir: dir });
      const salted = r.stats.spark.salted;
      if (type === 'left') {
        // the hot keys are on the preserved (left) side, which AQE splits, but their rows sit in one file: salted too
        expect(salted.map((s: { join: string }) => s.join)).toEqual(['join-1']);
      } else {
        expect(salted).toEqual([{ join: 'join-1', keys: [['1'], ['7']], buckets: 2 }]);
      }
      expect(r.stats.spark.sql).toMatch(/pmod\(hash\(.*\), 2\) ELSE 0 END AS __salt/);
      expect(r.stats.spark.sql).toMatch(/explode\(CASE WHEN .* THEN sequence\(0, 1\) ELSE array\(0\) END\) AS __salt/);
    },
  );

  it('--explain --engine spark shows the hot keys and the rewrite; skew off salts nothing', async () => {
    const file = writePlan(dir, joinPlan('full'));
    const r = cli([file, '--engine', 'spark', '--remote', REMOTE, '--explain']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('salted join join-1: hot keys 1; 7 over 2 salts');
    expect(r.stdout).toContain('spark.sql.adaptive.skewJoin.skewedPartitionFactor=1');
    expect(r.stdout).toContain('__salt');
    const off = cli([file, '--engine', 'spark', '--remote', REMOTE, '--explain', '--no-skew']);
    expect(off.stdout).toContain('salted joins: none');
    expect(off.stdout).toContain('spark.sql.adaptive.skewJoin.enabled=false');
  });
});

describe.skipIf(NO_SPARK)('Spark engine errors', () => {
  it('an unreachable remote: exit 1, naming the address', () => {
    const file = writePlan(dir, joinPlan('inner'), 'inner.json');
    const r = cli([file, '--engine', 'spark', '--remote', 'sc://127.0.0.1:1']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cannot reach the Spark Connect server at 127\.0\.0\.1:1/);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('Spark analysis error: plan error (exit 2); bad cast: input error (exit 3); overflow: exit 1', async () => {
    const client = new SparkConnectClient(REMOTE);
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
    expect(bad.message).toMatch(/CAST_INVALID_INPUT.*'d0'/);
    const big = { fn: '*', args: [{ column: 'v' }, { value: 2 ** 62 }] };
    const over = {
      ...joinPlan('inner'),
      query: { op: 'project', input: { op: 'scan', source: 'fact' }, columns: [{ name: 'x', expr: big }] },
    };
    const ov = await runPlan(over, { ...spark(), baseDir: dir }).catch((e) => e);
    expect(ov).toBeInstanceOf(ExecutionError);
    expect(ov.message).toMatch(/ARITHMETIC_OVERFLOW/);
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
    const jobs = async (status: string) =>
      ((await (await fetch(`${SPARK_UI}/api/v1/applications/${app}/jobs?status=${status}`)).json()) as unknown[])
        .length;
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
    let seen = 0;
    while ((seen = await running()) === 0 && Date.now() - t0 < 60_000) await new Promise((r) => setTimeout(r, 200));
    expect(seen, stderr).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 500));
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
