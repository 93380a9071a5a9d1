// Small inputs run on the calling thread (runtime/local.ts): the same answers as
// on the pool, a small side to broadcast is read there too (unless a pool is up), SKEWJOIN_FAULTS
// forces the pool, and a WebAssembly panic on the calling thread sends every
// later run to the pool.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runPlan } from '../dist/index.js';
import { isWasmPanic, runInThread, runsInThread } from '../dist/runtime/local.js';
import { closePool } from '../dist/runtime/pool.js';
import { mergeFileSplits, mergeScans } from '../dist/plan/map-splits.js';
import { IN_THREAD_BYTES_POOL_STARTED, inThreadLimit } from '../dist/runtime/in-thread-bytes.js';
import { DEFAULT_IN_THREAD_BYTES } from '../dist/plan/defaults.js';
import { ROOT, arrowTyped, expectTypedEqual } from './helpers.js';

const QUICK = path.join(ROOT, 'plans', 'quickstart.json');

/** The same rows in the same order; float sums within the comparator's tolerance (tasks add in another order). */
const sameRows = (a: Awaited<ReturnType<typeof runPlan>>, b: Awaited<ReturnType<typeof runPlan>>) =>
  expectTypedEqual(arrowTyped(a.toArrow()), arrowTyped(b.toArrow()), true);

describe('small inputs on the calling thread', () => {
  afterEach(() => {
    delete process.env.SKEWJOIN_FAULTS;
  });

  it("the quick start runs without workers and gives the pool's answer", async () => {
    const here = await runPlan(QUICK, { workers: 2 });
    expect(here.stats.inThread).toBe(true);
    expect(here.stats.tasks.length).toBeGreaterThan(1);
    expect(here.stats.tasks.every((t) => t.thread === 0)).toBe(true);
    const pool = await runPlan(QUICK, { workers: 2, inThreadBytes: 0 });
    expect(pool.stats.inThread).toBe(false);
    expect(pool.stats.tasks.some((t) => (t.thread ?? 0) > 0)).toBe(true);
    sameRows(here, pool);
  });
  it("on the calling thread a file's row groups are read by one task (the pool reads one a task)", async () => {
    const here = await runPlan(QUICK, { workers: 2 });
    const pool = await runPlan(QUICK, { workers: 2, inThreadBytes: 0 });
    const scans = (r: typeof here) => r.stats.tasks.filter((t) => t.stage === 'aggregate-1' && t.kind === 'map').length;
    expect(scans(here)).toBe(1);
    expect(scans(pool)).toBeGreaterThan(1);
    sameRows(here, pool);
  });
  it("merging splits: consecutive row groups of one file up to the cap; row ranges, whole files and a limit's plan left alone", () => {
    const g = (path: string, rg: number, bytes = 10) => ({ path, rowGroups: [rg], rows: 5, bytes });
    const merged = mergeFileSplits(
      [g('a', 0), g('a', 1), g('a', 2), g('b', 0), g('a', 3, 25), { ...g('a', 4), offset: 2 }],
      25,
    );
    expect(merged.map((s) => [s.path, s.rowGroups, s.rows, s.bytes])).toEqual([
      ['a', [0, 1], 10, 20],
      ['a', [2], 5, 10],
      ['b', [0], 5, 10],
      ['a', [3], 5, 25],
      ['a', [4], 5, 10],
    ]);
    const scan = { kind: 'scan', id: 's', schema: [], source: 't', splits: [g('a', 0), g('a', 1)] } as any;
    expect(mergeScans(scan, 100).splits).toHaveLength(1);
    const limited = { kind: 'limit', id: 'l', schema: [], count: 1, offset: 0, input: scan } as any;
    expect(mergeScans(limited, 100)).toBe(limited);
  });
  it('the shuffle path too (broadcast off, a skewed partition split by hot keys)', async () => {
    const o = {
      workers: 2,
      broadcastBytes: 0,
      partitions: 4,
      skew: { strategy: 'key' as const, factor: 1.1, thresholdBytes: 1, advisoryPartitionBytes: 4096 },
    };
    const here = await runPlan(QUICK, o);
    expect(here.stats.inThread).toBe(true);
    expect(here.stats.tasks.some((t) => t.kind === 'split')).toBe(true);
    sameRows(here, await runPlan(QUICK, { ...o, inThreadBytes: 0 }));
  });
  it('a run on the pool reads a side small enough for the thread here while no pool is up, and broadcasts it', async () => {
    // the quick start's customers (about 0.3 MB from the footers) under 1 MB, its orders (2 MB) over
    await closePool();
    const mixed = await runPlan(QUICK, { workers: 2, inThreadBytes: '1MB' });
    expect(mixed.stats.inThread).toBe(false);
    expect(mixed.stats.joins[0].strategy).toBe('broadcast');
    const side = mixed.stats.tasks.filter((t) => t.stage === 'join-1' && t.kind === 'map');
    expect(side.length).toBeGreaterThan(0);
    expect(side.every((t) => t.thread === 0)).toBe(true);
    expect(
      mixed.stats.tasks.filter((t) => t.stage === 'aggregate-1' && t.kind === 'map').every((t) => (t.thread ?? 0) > 0),
    ).toBe(true);
    const pool = await runPlan(QUICK, { workers: 2, inThreadBytes: 0 });
    expect(
      pool.stats.tasks.filter((t) => t.stage === 'join-1' && t.kind === 'map').every((t) => (t.thread ?? 0) > 0),
    ).toBe(true);
    sameRows(mixed, pool);
    // with the pool up (started ahead by the command line, or by an earlier query), its warm threads read the side
    const warm = await runPlan(QUICK, { workers: 2, inThreadBytes: '1MB' });
    expect(warm.stats.joins[0].strategy).toBe('broadcast');
    expect(
      warm.stats.tasks.filter((t) => t.stage === 'join-1' && t.kind === 'map').every((t) => (t.thread ?? 0) > 0),
    ).toBe(true);
    sameRows(mixed, warm);
  });
  it('the threshold and SKEWJOIN_FAULTS decide', () => {
    expect(runsInThread(1000, 1000)).toBe(true);
    expect(runsInThread(1001, 1000)).toBe(false);
    process.env.SKEWJOIN_FAULTS = 'x';
    expect(runsInThread(0, 1000)).toBe(false);
  });
  it('with the pool started already, the default bound is lower; a bound set holds as set', () => {
    expect(inThreadLimit(DEFAULT_IN_THREAD_BYTES, false)).toBe(DEFAULT_IN_THREAD_BYTES);
    expect(inThreadLimit(DEFAULT_IN_THREAD_BYTES, true)).toBe(IN_THREAD_BYTES_POOL_STARTED);
    expect(IN_THREAD_BYTES_POOL_STARTED).toBeLessThan(DEFAULT_IN_THREAD_BYTES);
    expect(inThreadLimit(DEFAULT_IN_THREAD_BYTES + 1, true)).toBe(DEFAULT_IN_THREAD_BYTES + 1);
    expect(inThreadLimit(0, true)).toBe(0);
  });
  it("a run of the pool's size stays on the calling thread while no pool is up, and takes the started pool", async () => {
    // the quick start's input is about 2 MB: a bound just above it keeps it here with no pool; with the
    // pool started, the same bound set in the plan holds (only the default bound is lowered)
    await closePool();
    const here = await runPlan(QUICK, { inThreadBytes: 8 * 1024 * 1024 });
    expect(here.stats.inThread).toBe(true);
    const pooled = await runPlan(QUICK, { inThreadBytes: 0 });
    expect(pooled.stats.inThread).toBe(false);
    const again = await runPlan(QUICK, { inThreadBytes: 8 * 1024 * 1024 });
    expect(again.stats.inThread).toBe(true);
    sameRows(here, pooled);
  });
  it('after a WebAssembly panic on the calling thread, runs take the pool', async () => {
    expect(isWasmPanic(new WebAssembly.RuntimeError('unreachable'))).toBe(true);
    expect(isWasmPanic(new Error('a.parquet: error reading Parquet data (RuntimeError: unreachable)'))).toBe(true);
    expect(isWasmPanic(new Error('a.parquet: file not found'))).toBe(false);
    // a task failing with an ordinary error does not move later runs
    await expect(
      runInThread({} as any, async () => {
        throw new Error('bad data');
      }),
    ).rejects.toThrow('bad data');
    expect(runsInThread(0, 1000)).toBe(true);
    await expect(
      runInThread({} as any, async () => {
        throw new WebAssembly.RuntimeError('unreachable');
      }),
    ).rejects.toThrow('unreachable');
    expect(runsInThread(0, 1000)).toBe(false);
    const r = await runPlan(QUICK, { workers: 2 });
    expect(r.stats.inThread).toBe(false);
    expect(r.numRows).toBe(8);
  });
});
