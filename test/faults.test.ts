// Faults: a corrupt column chunk is an input error naming the file and row
// group (and poisons no later query), WebAssembly memory exhaustion is told
// apart from it, and a worker that dies mid-task (SKEWJOIN_FAULTS) is retried
// on a fresh one up to three attempts, then fails cleanly.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { beforeAll, describe, expect, it } from 'vitest';
import { ExecutionError, InputError, runPlan } from '../dist/index.js';
import { parseFaults } from '../dist/runtime/faults.js';
import { inputsIntact } from '../dist/runtime/retry.js';
import { BIN, duckRows, expectSame, sorted, tmpDir, writeParquet, writePlan } from './helpers.js';

const dir = tmpDir('sj-faults-');
const f = (n: string) => path.join(dir, n);
const outDir = f('out');

beforeAll(async () => {
  fs.mkdirSync(outDir);
  // 20,000 rows in row groups of 5,000 (uncompressed, so flipped bytes reach the decoder as they are).
  const q = `SELECT i::BIGINT AS id, (i * 7 % 1000)::BIGINT AS k, 'name' || (i % 97) AS s FROM range(0, 20000) t(i)`;
  await writeParquet(f('good.parquet'), q, 5000);
  await writeParquet(f('small.parquet'), `SELECT (i % 50)::BIGINT AS k, i::BIGINT AS w FROM range(0, 600) t(i)`, 100);
  // The same file with 200 bytes flipped in the middle of the first column chunk of row group 1; the footer is intact.
  const [[offset, size]] = await duckRows(
    `SELECT data_page_offset, total_compressed_size FROM parquet_metadata('${f('good.parquet')}') WHERE row_group_id = 1 AND column_id = 0`,
  );
  const bytes = fs.readFileSync(f('good.parquet'));
  const mid = Number(offset) + Math.floor(Number(size) / 2);
  for (let i = mid; i < mid + 200; i++) bytes[i] ^= 0xff;
  fs.writeFileSync(f('corrupt.parquet'), bytes);
});

const sources = {
  good: { parquet: 'good.parquet' },
  bad: { parquet: 'corrupt.parquet' },
  small: { parquet: 'small.parquet' },
};
const countBy = (source: string) => ({
  op: 'aggregate',
  groupBy: ['k'],
  aggregates: [
    { fn: 'count', as: 'n' },
    { fn: 'sum', column: 'id', as: 'total' },
  ],
  input: { op: 'scan', source },
});
const plan = (query: object, output = 'out/result.parquet') => ({
  version: 1,
  sources,
  query,
  ...(output ? { output: { path: output } } : {}),
});

function cli(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    encoding: 'utf8',
    env: { ...process.env, SKEWJOIN_DEBUG: '', SKEWJOIN_FAULTS: '', ...env },
  });
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}
const leftovers = () => fs.readdirSync(outDir);

/** Run with SKEWJOIN_FAULTS set for this process. */
async function withFaults<T>(rules: string, run: () => Promise<T>): Promise<T> {
  process.env.SKEWJOIN_FAULTS = rules;
  try {
    return await run();
  } finally {
    delete process.env.SKEWJOIN_FAULTS;
  }
}

describe('a corrupt column chunk', () => {
  it('exits 3 through the CLI naming the file and row group, with no output and no stack trace', () => {
    const r = cli([writePlan(dir, plan(countBy('bad'))), '--workers', '2']);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toMatch(
      /corrupt\.parquet: corrupt Parquet data in row group 1, columns id, k \(the decoder failed: unreachable\)/,
    );
    expect(r.stderr).not.toMatch(/internal error|\n\s+at /);
    expect(leftovers()).toEqual([]);
  });

  it('is an InputError in the library, and the thread it poisoned is replaced: the next queries succeed', async () => {
    // on the pool (inThreadBytes 0): the poisoned worker is what is tested
    const pool = { baseDir: dir, workers: 1, inThreadBytes: 0 };
    const ok = await runPlan(plan(countBy('good'), ''), pool);
    const before = new Set(ok.stats.tasks.map((t) => t.thread));
    const e = await runPlan(plan(countBy('bad'), ''), pool).catch((x) => x);
    expect(e).toBeInstanceOf(InputError);
    expect(e.exitCode).toBe(3);
    expect(e.file).toBe(f('corrupt.parquet'));
    for (let i = 0; i < 2; i++) {
      const again = await runPlan(plan(countBy('good'), ''), pool);
      expect(again.numRows).toBe(1000);
      // One worker: the thread that read the corrupt chunk was the one thread, and it is gone.
      for (const t of again.stats.tasks) expect(before.has(t.thread)).toBe(false);
    }
  });
});

describe('WebAssembly memory exhaustion', () => {
  it('is told apart from corrupt data: exit 1 naming the limit, and the calling thread reads again afterwards', () => {
    // In a child process: the module's memory is grown to 256 KiB short of wasm32's 4 GiB, so decoding cannot allocate.
    const script = f('oom.mjs');
    const dist = (m: string) => JSON.stringify(path.join(path.dirname(BIN), '..', 'dist', m));
    fs.writeFileSync(
      script,
      `
      import { parquetWasm } from ${dist('io/wasm.js')};
      import { readRowGroups } from ${dist('io/parquet.js')};
      const fields = [{ name: 'id', type: { id: 'int64' } }, { name: 's', type: { id: 'utf8' } }];
      const mem = parquetWasm().wasmMemory();
      mem.grow(65536 - mem.buffer.byteLength / 65536 - 4);
      const out = [];
      for (let i = 0; i < 2; i++) {
        try { out.push({ rows: (await readRowGroups(${JSON.stringify(f('good.parquet'))}, [0], fields)).reduce((a, b) => a + b.length, 0) }); }
        catch (e) { out.push({ error: e.constructor.name, exitCode: e.exitCode, message: e.message }); }
      }
      console.log(JSON.stringify(out));`,
    );
    const r = spawnSync(process.execPath, [script], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const [first, second] = JSON.parse(r.stdout);
    expect(first.error).toBe('ExecutionError');
    expect(first.exitCode).toBe(1);
    expect(first.message).toMatch(
      /good\.parquet: out of memory decoding row group 0, columns id, s: parquet-wasm's WebAssembly memory is limited to 4096 MiB per thread/,
    );
    expect(second.rows).toBeGreaterThan(0); // a fresh module instance
  });
});

describe('SKEWJOIN_FAULTS', () => {
  const join = {
    op: 'aggregate',
    groupBy: ['k'],
    aggregates: [
      { fn: 'count', as: 'n' },
      { fn: 'sum', column: 'w', as: 'sw' },
    ],
    input: {
      op: 'join',
      type: 'inner',
      on: [['k', 'k']],
      left: { op: 'scan', source: 'good', columns: ['k'] },
      right: { op: 'scan', source: 'small' },
    },
  };
  const joinSql = `SELECT g.k, count(*) AS n, sum(w) AS sw FROM read_parquet('${f('good.parquet')}') g JOIN read_parquet('${f('small.parquet')}') s ON g.k = s.k GROUP BY g.k`;
  // the shuffle path (a small side would be broadcast: no join reduce tasks to crash)
  const opts = { workers: 2, partitions: 4, broadcastBytes: 0 };

  it('parses rules and rejects malformed ones', () => {
    expect(parseFaults('crash:join-1:reduce:0:once, crash:aggregate-1:map:12:always')).toEqual([
      { stage: 'join-1', kind: 'reduce', n: 0, mode: 'once' },
      { stage: 'aggregate-1', kind: 'map', n: 12, mode: 'always' },
    ]);
    for (const bad of [
      'crash:join-1:reduce:0',
      'crash:join-1:reduce:x:once',
      'boom:join-1:reduce:0:once',
      'crash:join-1:reduce:0:twice',
    ]) {
      expect(() => parseFaults(bad)).toThrow(
        /SKEWJOIN_FAULTS: .* is not a rule of the form crash:<stage>:<kind>:<n>:<once\|always>/,
      );
    }
  });

  it('crash once: the right answer, the failed attempt and attempt 2 in the stats', async () => {
    const rules = 'crash:join-1:reduce:0:once,crash:join-1:map:1:once,crash:aggregate-1:reduce:0:once';
    const r = await withFaults(rules, () => runPlan(plan(join, ''), { baseDir: dir, ...opts }));
    expect(sorted(r.toRows().map((x) => [String(x.k), String(x.n), String(x.sw)]))).toEqual(
      sorted(await duckRows(joinSql)),
    );
    for (const [stage, kind] of [
      ['join-1', 'reduce'],
      ['join-1', 'map'],
      ['aggregate-1', 'reduce'],
    ]) {
      const ts = r.stats.tasks.filter((t) => t.stage === stage && t.kind === kind);
      // one failed attempt: the task the dead thread held queued behind it (pool.ts) had not started and is no attempt
      const failed = ts.filter((t) => t.error !== undefined);
      expect(
        failed.map((t) => [t.attempt, t.error]),
        `${stage} ${kind}`,
      ).toEqual([[1, 'worker exited with code: 1']]);
      const retried = ts.filter((t) => t.attempt === 2);
      expect(retried.length).toBe(1);
      expect(retried[0].error).toBeUndefined();
      expect(retried[0].partition).toBe(failed[0].partition);
    }
    expect(r.stats.tasks.every((t) => t.attempt === 1 || t.attempt === 2)).toBe(true);
  });

  it('a rule that matches no task does nothing', async () => {
    const r = await withFaults('crash:join-9:reduce:0:always,crash:join-1:split:0:always', () =>
      runPlan(plan(join, ''), { baseDir: dir, ...opts }),
    );
    expect(r.stats.tasks.every((t) => t.attempt === 1 && t.error === undefined)).toBe(true);
  });

  it('retries tasks that read rows the coordinator holds (a sorted input) as well as shuffle blocks', async () => {
    const q = {
      op: 'join',
      type: 'left',
      on: [['k', 'k']],
      left: {
        op: 'limit',
        count: 300,
        input: { op: 'sort', by: [{ column: 'id' }], input: { op: 'scan', source: 'good', columns: ['id', 'k'] } },
      },
      right: { op: 'scan', source: 'small' },
    };
    const rules = Array.from({ length: 12 }, (_, i) => `crash:join-1:map:${i}:once,crash:join-1:reduce:${i}:once`).join(
      ',',
    );
    const rows = await withFaults(rules, () =>
      expectSame(
        plan(q, ''),
        `SELECT * FROM (SELECT id, k FROM read_parquet('${f('good.parquet')}') ORDER BY id LIMIT 300) g
      LEFT JOIN (SELECT k AS k_right, w FROM read_parquet('${f('small.parquet')}')) s ON g.k = s.k_right`,
        { baseDir: dir, ...opts },
      ),
    );
    expect(rows.length).toBeGreaterThan(300);
  });

  it('crash always: an ExecutionError naming stage and task, and the next query in the process succeeds', async () => {
    // reduce task 0: small aggregate partitions are packed into few tasks (one here)
    const e = await withFaults('crash:aggregate-1:reduce:0:always', () =>
      runPlan(plan(join), { baseDir: dir, ...opts }),
    ).catch((x) => x);
    expect(e).toBeInstanceOf(ExecutionError);
    expect(e.exitCode).toBe(1);
    expect(e.message).toMatch(
      /^aggregate-1 reduce task \(partition \d+\) failed: its worker died on each of 3 attempts \(last: worker exited with code: 1\)$/,
    );
    expect(leftovers()).toEqual([]);
    const r = await runPlan(plan(join, ''), { baseDir: dir, ...opts });
    expect(r.numRows).toBe(50);
  });

  it('through the CLI: crash once succeeds with attempt 2 in --stats; crash always exits 1 leaving nothing; malformed exits 2', () => {
    const p = writePlan(dir, plan(join), 'join.json');
    const stats = f('stats.json');
    const once = cli([p, '--workers', '2', '--partitions', '4', '--no-broadcast', '--quiet', '--stats', stats], {
      SKEWJOIN_FAULTS: 'crash:join-1:map:0:once',
    });
    expect(once.code, once.stderr).toBe(0);
    const tasks = JSON.parse(fs.readFileSync(stats, 'utf8')).tasks;
    expect(tasks.filter((t: any) => t.error).map((t: any) => [t.stage, t.kind, t.attempt])).toEqual([
      ['join-1', 'map', 1],
    ]);
    expect(tasks.filter((t: any) => t.attempt === 2).length).toBe(1);
    expect(leftovers()).toEqual(['result.parquet']);
    fs.rmSync(f('out/result.parquet'));

    const always = cli([p, '--workers', '2', '--partitions', '4', '--no-broadcast'], {
      SKEWJOIN_FAULTS: 'crash:join-1:reduce:0:always',
    });
    expect(always.code, `signal ${always.signal}: ${always.stderr}`).toBe(1);
    expect(always.stderr).toMatch(
      /skewjoin: error: join-1 reduce task \(partition 0.*\) failed: its worker died on each of 3 attempts/,
    );
    expect(always.stderr).not.toMatch(/\n\s+at /);
    expect(leftovers()).toEqual([]);

    const bad = cli([p], { SKEWJOIN_FAULTS: 'crash:join-1:reduce' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/SKEWJOIN_FAULTS: "crash:join-1:reduce" is not a rule/);
  });

  it('a task whose input was moved away (a transfer list) is not retried', () => {
    const values = new BigInt64Array([1n, 2n, 3n]);
    const task = {
      source: {
        kind: 'batches',
        schema: [],
        batches: [{ length: 3, columns: [{ type: { id: 'int64' }, length: 3, values, valid: null }] }],
      },
      ops: [],
      sink: { kind: 'collect' },
    };
    expect(inputsIntact(task as any)).toBe(true);
    structuredClone(values.buffer, { transfer: [values.buffer] });
    expect(inputsIntact(task as any)).toBe(false);
  });
});
