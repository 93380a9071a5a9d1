// Task statistics with the thread's CPU time (Settings.taskCpuTime, which the
// bench sets): a busy loop is measured at about its length, a sleep at none
// of it, and a run's tasks carry cpuMs only when asked. Linux only: elsewhere
// the clock is absent and the tests check that it says so (undefined).
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runPlan } from '../dist/index.js';
import { threadCpuMs } from '../dist/runtime/cpu-time.js';
import { tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-cpu-');
const F = path.join(dir, 'f.parquet');
const linux = process.platform === 'linux';

beforeAll(async () => {
  await writeParquet(F, 'SELECT (i % 50)::BIGINT AS k, i::BIGINT AS v FROM range(0, 4000) t(i)', 1000);
});

describe('thread CPU time', () => {
  it('counts a busy loop and not a sleep', () => {
    const c0 = threadCpuMs();
    if (!linux) {
      expect(c0).toBeUndefined();
      return;
    }
    const w0 = performance.now();
    let x = 0;
    while (performance.now() - w0 < 30) x++;
    const c1 = threadCpuMs()!;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 30);
    const c2 = threadCpuMs()!;
    expect(x).toBeGreaterThan(0);
    // busy: at most its wall time (plus the clock's own sleep); at least a part of it even on a loaded machine
    expect(c1 - c0!).toBeLessThanOrEqual(performance.now() - w0 + 1);
    expect(c1 - c0!).toBeGreaterThan(3);
    expect(c2 - c1).toBeLessThan(3);
  });

  it('task statistics carry cpuMs when taskCpuTime is set, and only then', async () => {
    const q = {
      version: 1,
      sources: { f: { parquet: F } },
      query: {
        op: 'aggregate',
        groupBy: ['k'],
        aggregates: [{ fn: 'sum', column: 'v', as: 's' }],
        input: { op: 'scan', source: 'f' },
      },
    };
    const base = { workers: 2, partitions: 4, writeOutput: false, combiners: false };
    const plain = await runPlan(q, base);
    expect(plain.stats.tasks.every((t) => t.cpuMs === undefined)).toBe(true);
    const timed = await runPlan(q, { ...base, taskCpuTime: true });
    expect(timed.numRows).toBe(50);
    for (const t of timed.stats.tasks) {
      if (!linux) {
        expect(t.cpuMs).toBeUndefined();
        continue;
      }
      expect(t.cpuMs, `${t.stage} ${t.kind}`).toBeGreaterThanOrEqual(0);
      expect(t.cpuMs!).toBeLessThanOrEqual(t.ms + 1);
    }
    if (linux) expect(timed.stats.tasks.some((t) => t.kind === 'map' && t.cpuMs! > 0)).toBe(true);
  });
});
