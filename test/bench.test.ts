// `skewjoin bench --suite quick` on tiny data, end to end: every workload and
// mode agrees with DuckDB, and report.html renders in headless Chromium with
// its charts.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { cli, tmpDir } from './helpers.js';
import { makespan, hottestOverMean, hottestWithKeysSplit } from '../dist/bench/simulate.js';

describe('simulation', () => {
  it('schedules the largest task first', () => {
    expect(makespan([5, 4, 3, 3, 3], 2)).toBe(10); // LPT: 5+3 | 4+3+3 (the optimum, 9, is not its aim)
    expect(makespan([4, 3, 3, 2], 2)).toBe(6);
    expect(makespan([10, 1, 1], 256)).toBe(10);
    expect(makespan([], 4)).toBe(0);
  });
  it('splitting a hot key brings the hottest task down to the mean', () => {
    expect(hottestOverMean([10, 10, 100, 0])).toBeCloseTo(100 / 30);
    expect(hottestWithKeysSplit([10, 10, 100, 0], [{ partition: 2, rows: 90 }])).toBeCloseTo(30 / 30);
  });
});

describe('skewjoin bench --suite quick', () => {
  // Both tests read the output of one bench run: whichever runs first (alone or not) makes it.
  let out: string | null = null;
  function benchOutput(): string {
    if (out) return out;
    const dir = tmpDir('sj-bench-');
    const r = cli(['bench', '--suite', 'quick', '--rows', '20000', '--keys', '2000', '--repeat', '1', '--workers', '2', '--out', dir]);
    expect(r.code, r.stderr).toBe(0);
    return (out = dir);
  }

  it('runs every workload in every mode and writes results.json, results.csv and report.html', () => {
    const out = benchOutput();
    const res = JSON.parse(fs.readFileSync(path.join(out, 'results.json'), 'utf8'));
    const workloads = new Set(res.runs.map((x: any) => x.workload));
    expect([...workloads].sort()).toEqual(['aggregate by key', 'fact⋈dim', 'full outer', 'hot key, one mapper', 'many-to-many']);
    expect(new Set(res.runs.map((x: any) => x.s))).toEqual(new Set([0, 0.8, 1, 1.2, 1.5]));
    expect(new Set(res.runs.map((x: any) => x.mode))).toEqual(new Set(['off', 'partition', 'key', 'auto', 'no-combiners', 'duckdb']));
    for (const x of res.runs.filter((y: any) => y.mode !== 'duckdb')) {
      expect(x.sameAnswer, `${x.workload} s=${x.s} ${x.mode}`).toBe(true);
      expect(x.simulated.map((y: any) => y.workers)).toEqual([16, 64, 256]);
    }
    expect(res.imbalance.map((x: any) => x.partitions)).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]);
    expect(res.imbalance.at(-1).whole).toBeGreaterThan(res.imbalance.at(-1).split);
    expect(res.detail.tasks.some((t: any) => t.kind === 'split')).toBe(true);
    expect(fs.readFileSync(path.join(out, 'results.csv'), 'utf8').split('\n')[0]).toMatch(/^workload,s,mode,wall_ms,/);
  }, 180_000);

  it('each mode does what its name says', () => {
    const res = JSON.parse(fs.readFileSync(path.join(benchOutput(), 'results.json'), 'utf8'));
    const runs = (mode: string) => res.runs.filter((x: any) => x.mode === mode);
    const methods = (mode: string) => new Set(runs(mode).flatMap((x: any) => Object.keys(x.splits)));
    // off: nothing split; partition: map ranges only (a side the join type cannot split stays whole);
    // key: hot keys only; both split something somewhere
    expect(methods('off')).toEqual(new Set());
    expect(methods('partition')).toEqual(new Set(['map-range', 'none']));
    expect(methods('key')).toEqual(new Set(['hot-key']));
    expect(runs('partition').filter((x: any) => x.workload === 'full outer').every((x: any) => !x.splits['map-range'])).toBe(true);
    // no-combiners ships every fact row through the aggregation shuffle; auto combines them first
    for (const x of runs('no-combiners')) {
      expect(x.rowsBeforeCombining).toBeUndefined();
      expect(x.shuffledRows).toBe(20000);
    }
    for (const x of runs('auto').filter((y: any) => y.workload === 'aggregate by key')) {
      expect(x.rowsBeforeCombining).toBe(20000);
      expect(x.shuffledRows).toBeLessThan(20000);
    }
    // eager aggregation is on only in auto
    expect(res.runs.filter((x: any) => x.eager).every((x: any) => x.mode === 'auto')).toBe(true);
  }, 180_000);

  it('report.html renders in headless Chromium with every chart', () => {
    const html = path.join(benchOutput(), 'report.html');
    expect(fs.existsSync(html)).toBe(true);
    const r = spawnSync('chromium', [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', `--user-data-dir=${tmpDir('sj-chrome-')}`, '--dump-dom', `file://${html}`,
    ], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    const dom = r.stdout;
    for (const id of ['speedup', 'duckdb', 'simulation', 'imbalance', 'detail', 'runs']) expect(dom).toContain(`id="${id}"`);
    const charts = dom.match(/<svg class="chart"[\s\S]*?<\/svg>/g) ?? [];
    expect(charts.length).toBeGreaterThanOrEqual(12);
    for (const c of charts) expect(c).toMatch(/<(path|rect) /); // every chart draws something
    expect(dom).toContain('tasks per worker thread');
  }, 240_000);
});
