// What `--explain --analyze` and `--stats` say of a window's tasks, as of a join's and an aggregate's: per stage the
// input rows a task (median, slowest, their ratio; a split partition's second pass left out), and the window's
// target task size beside the partitions it split. A hot key holding half the rows: split, the slowest window task
// holds about what the median one does; not split (--no-skew), the hot partition's task holds many times more.
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { cli, tmpDir, writeParquet, writePlan } from './helpers.js';

const dir = tmpDir('sj-window-stats-');
const T = path.join(dir, 't.parquet');

beforeAll(async () => {
  await writeParquet(
    T,
    `SELECT i::BIGINT AS id, CASE WHEN i % 2 = 0 THEN 0 ELSE i % 400 END::INTEGER AS k, (i % 97)::INTEGER AS x
     FROM range(0, 20000) t(i)`,
    2000,
  );
});

const plan = {
  version: 1,
  sources: { t: { parquet: T } },
  query: {
    op: 'window',
    input: { op: 'scan', source: 't' },
    partitionBy: ['k'],
    orderBy: [{ column: 'id' }],
    functions: [{ fn: 'sum', column: 'x', as: 'running' }],
  },
  execution: { partitions: 16, inThreadBytes: 0, skew: { thresholdBytes: 1, advisoryPartitionBytes: '16KB' } },
};

/** The window stage's reduce tasks' median and slowest input rows, as --explain --analyze prints them. */
function windowRows(text: string): { median: number; slowest: number; ratio: number } {
  const m = /stage window-1 reduce: \d+ task\(s\), .*; rows a task: median (\d+), slowest (\d+) \(([\d.]+)x\)/.exec(
    text,
  );
  expect(m, text).not.toBeNull();
  return { median: Number(m![1]), slowest: Number(m![2]), ratio: Number(m![3]) };
}

describe('window tasks in --explain --analyze and --stats', () => {
  it('rows a task per stage, the target and the split partitions; split against not split', () => {
    const file = writePlan(dir, plan);
    const stats = path.join(dir, 'stats.json');
    const on = cli([file, '--explain', '--analyze', '--workers', '2', '--stats', stats]);
    expect(on.code, on.stderr).toBe(0);
    expect(on.stdout).toContain('window-1: skewed partitions of its shuffle, target 16KB');
    // the hot key's partition (its 10,000 rows and a few others'), cut into pieces
    const hot = /partition \d+ \((\d+) rows, .*\): split by ranges of its keys into (\d+) piece\(s\)/.exec(on.stdout);
    expect(hot, on.stdout).not.toBeNull();
    expect(Number(hot![1])).toBeGreaterThanOrEqual(10000);
    expect(Number(hot![2])).toBeGreaterThan(1);
    const split = windowRows(on.stdout);
    expect(split.ratio).toBeLessThanOrEqual(1.5);
    expect(split.ratio).toBeCloseTo(split.slowest / split.median, 1);
    const s = JSON.parse(fs.readFileSync(stats, 'utf8'));
    expect(s.windows[0]).toMatchObject({ id: 'window-1', targetBytes: 16384 });
    expect(s.windows[0].splits.some((x: { method: string }) => x.method === 'ranges')).toBe(true);

    const off = cli([file, '--explain', '--analyze', '--workers', '2', '--no-skew']);
    expect(off.code, off.stderr).toBe(0);
    expect(off.stdout).not.toContain('skewed partitions of its shuffle');
    const whole = windowRows(off.stdout);
    expect(whole.slowest).toBeGreaterThanOrEqual(10000);
    expect(whole.ratio).toBeGreaterThan(5);
  });
});
