// Small inputs run on the calling thread (exec/local.ts): the same answers as
// on the pool, a small side to broadcast is read there too, SKEWJOIN_FAULTS
// forces the pool, and a WebAssembly panic on the calling thread sends every
// later run to the pool.
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runPlan } from '../dist/index.js';
import { isWasmPanic, runInThread, runsInThread } from '../dist/exec/local.js';
import { ROOT } from './helpers.js';

const QUICK = path.join(ROOT, 'plans', 'quickstart.json');

describe('small inputs on the calling thread', () => {
  afterEach(() => { delete process.env.SKEWJOIN_FAULTS; });

  it('the quick start runs without workers and gives the pool\'s answer', async () => {
    const here = await runPlan(QUICK, { workers: 2 });
    expect(here.stats.inThread).toBe(true);
    expect(here.stats.tasks.length).toBeGreaterThan(1);
    expect(here.stats.tasks.every((t) => t.thread === 0)).toBe(true);
    const pool = await runPlan(QUICK, { workers: 2, inThreadBytes: 0 });
    expect(pool.stats.inThread).toBe(false);
    expect(pool.stats.tasks.some((t) => (t.thread ?? 0) > 0)).toBe(true);
    expect(here.toRows()).toEqual(pool.toRows());
  });
  it('the shuffle path too (broadcast off, a skewed partition split by hot keys)', async () => {
    const o = { workers: 2, broadcastBytes: 0, partitions: 4, skew: { strategy: 'key' as const, factor: 1.1, thresholdBytes: 1, advisoryPartitionBytes: 4096 } };
    const here = await runPlan(QUICK, o);
    expect(here.stats.inThread).toBe(true);
    expect(here.stats.tasks.some((t) => t.kind === 'split')).toBe(true);
    expect(here.toRows()).toEqual((await runPlan(QUICK, { ...o, inThreadBytes: 0 })).toRows());
  });
  it('a run on the pool reads a side small enough for the thread here, and broadcasts it', async () => {
    // the quick start's customers (about 0.3 MB from the footers) under 1 MB, its orders (2 MB) over
    const mixed = await runPlan(QUICK, { workers: 2, inThreadBytes: '1MB' });
    expect(mixed.stats.inThread).toBe(false);
    expect(mixed.stats.joins[0].strategy).toBe('broadcast');
    const side = mixed.stats.tasks.filter((t) => t.stage === 'join-1' && t.kind === 'map');
    expect(side.length).toBeGreaterThan(0);
    expect(side.every((t) => t.thread === 0)).toBe(true);
    expect(mixed.stats.tasks.filter((t) => t.stage === 'aggregate-1' && t.kind === 'map').every((t) => (t.thread ?? 0) > 0)).toBe(true);
    const pool = await runPlan(QUICK, { workers: 2, inThreadBytes: 0 });
    expect(pool.stats.tasks.filter((t) => t.stage === 'join-1' && t.kind === 'map').every((t) => (t.thread ?? 0) > 0)).toBe(true);
    expect(mixed.toRows()).toEqual(pool.toRows());
  });
  it('the threshold and SKEWJOIN_FAULTS decide', () => {
    expect(runsInThread(1000, 1000)).toBe(true);
    expect(runsInThread(1001, 1000)).toBe(false);
    process.env.SKEWJOIN_FAULTS = 'x';
    expect(runsInThread(0, 1000)).toBe(false);
  });
  it('after a WebAssembly panic on the calling thread, runs take the pool', async () => {
    expect(isWasmPanic(new WebAssembly.RuntimeError('unreachable'))).toBe(true);
    expect(isWasmPanic(new Error('a.parquet: error reading Parquet data (RuntimeError: unreachable)'))).toBe(true);
    expect(isWasmPanic(new Error('a.parquet: file not found'))).toBe(false);
    // a task failing with an ordinary error does not move later runs
    await expect(runInThread({} as any, async () => { throw new Error('bad data'); })).rejects.toThrow('bad data');
    expect(runsInThread(0, 1000)).toBe(true);
    await expect(runInThread({} as any, async () => { throw new WebAssembly.RuntimeError('unreachable'); })).rejects.toThrow('unreachable');
    expect(runsInThread(0, 1000)).toBe(false);
    const r = await runPlan(QUICK, { workers: 2 });
    expect(r.stats.inThread).toBe(false);
    expect(r.numRows).toBe(8);
  });
});
