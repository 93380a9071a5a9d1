// Skew handling end to end on small data, forced with a 1-byte threshold and
// a low factor: every join type gives DuckDB's answer with skew handling off,
// by map ranges and by hot keys, and the statistics show the splits.
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runPlan, type RunResult } from '../dist/index.js';
import { writeParquetBytes } from '../dist/io/parquet-write.js';
import { rng } from '../dist/bench/zipf.js';
import { duckRows, expectSameInDuck, tmpDir } from './helpers.js';

const dir = tmpDir('sj-skew-');
const file = (n: string) => path.join(dir, n);

type Cell = number | string | null;
/** Write columns (int64 or utf8, nullable) with our own writer, in row groups of a given size. */
function write(name: string, cols: Record<string, Cell[]>, rowGroupSize: number) {
  const names = Object.keys(cols);
  const n = cols[names[0]].length;
  const enc = new TextEncoder();
  const columns = names.map((c) => {
    const vals = cols[c];
    const valid = Uint8Array.from(vals, (v) => (v === null ? 0 : 1));
    if (vals.some((v) => typeof v === 'string')) {
      const parts = vals.map((v) => enc.encode(v === null ? '' : String(v)));
      const offsets = new Int32Array(n + 1);
      parts.forEach((p, i) => {
        offsets[i + 1] = offsets[i] + p.length;
      });
      const values = new Uint8Array(offsets[n]);
      parts.forEach((p, i) => values.set(p, offsets[i]));
      return { type: { id: 'utf8' }, length: n, values, offsets, valid };
    }
    return { type: { id: 'int64' }, length: n, values: BigInt64Array.from(vals, (v) => BigInt(v ?? 0)), valid };
  });
  const fields = names.map((c, i) => ({ name: c, type: columns[i].type }));
  fs.writeFileSync(file(name), writeParquetBytes(fields as any, [{ length: n, columns } as any], rowGroupSize));
}

/** Keys: `hot` maps a key to its share of rows; the rest uniform over [lo, hi], some null. */
function keys(
  n: number,
  seed: number,
  hot: Record<number, number>,
  nulls: number,
  lo: number,
  hi: number,
): (number | null)[] {
  const next = rng(seed);
  return Array.from({ length: n }, () => {
    let u = next();
    if (u < nulls) return null;
    u = next();
    for (const [k, share] of Object.entries(hot)) {
      if (u < share) return Number(k);
      u -= share;
    }
    return lo + Math.floor(next() * (hi - lo + 1));
  });
}

beforeAll(() => {
  // Left: key 7 hot (40%), key 5 hot on the left only (10%), 10% nulls, the rest over 1..300.
  const lk = keys(4000, 1, { 7: 0.4, 5: 0.1 }, 0.1, 1, 300);
  write('left.parquet', { id: lk.map((_, i) => i), k: lk, s: lk.map((_, i) => `l${i % 13}`) }, 500);
  // The same rows ordered so that every row of key 7 sits in the first row group (one map task).
  const order = lk
    .map((k, i) => [k === 7 ? 0 : 1, i] as const)
    .sort((a, b) => a[0] - b[0] || a[1] - b[1])
    .map(([, i]) => i);
  write('left-sorted.parquet', { id: order, k: order.map((i) => lk[i]), s: order.map((i) => `l${i % 13}`) }, 2000);
  // Right: key 7 hot too (12%), 8% nulls, the rest over 1..250 and keys 400..420 found only here.
  const rk = keys(1200, 2, { 7: 0.12 }, 0.08, 1, 250).map((k, i) =>
    k !== null && k !== 7 && i % 10 === 0 ? 400 + (i % 21) : k,
  );
  write('right.parquet', { k: rk, w: rk.map((_, i) => i * 3) }, 300);
  // Mostly null keys on both sides.
  const nl = keys(3000, 3, { 2: 0.2 }, 0.5, 1, 40),
    nr = keys(900, 4, { 2: 0.2 }, 0.5, 1, 60);
  write('null-left.parquet', { k: nl, id: nl.map((_, i) => i) }, 400);
  write('null-right.parquet', { k: nr, w: nr.map((_, i) => i) }, 200);
});

const TYPES = ['inner', 'left', 'right', 'full', 'semi', 'anti'] as const;
type Strategy = 'off' | 'partition' | 'key' | 'auto';

function plan(type: string, left = 'left.parquet', right = 'right.parquet') {
  return {
    version: 1,
    sources: { l: { parquet: file(left) }, r: { parquet: file(right) } },
    query: {
      op: 'join',
      type,
      on: [['k', 'k']],
      left: { op: 'scan', source: 'l' },
      right: { op: 'scan', source: 'r' },
    },
  };
}
function sql(type: string, left = 'left.parquet', right = 'right.parquet') {
  const L = `read_parquet('${file(left)}')`,
    R = `read_parquet('${file(right)}')`;
  if (type === 'semi') return `SELECT * FROM ${L} l WHERE EXISTS (SELECT 1 FROM ${R} r WHERE l.k = r.k)`;
  if (type === 'anti') return `SELECT * FROM ${L} l WHERE NOT EXISTS (SELECT 1 FROM ${R} r WHERE l.k = r.k)`;
  return `SELECT l.*, r.* FROM ${L} l ${{ inner: 'INNER', left: 'LEFT', right: 'RIGHT', full: 'FULL OUTER' }[type]} JOIN ${R} r ON l.k = r.k`;
}
function options(strategy: Strategy, partitions = 8) {
  return {
    workers: 2,
    partitions,
    broadcastBytes: 0, // the shuffle path, whose skew handling these tests are about
    skew:
      strategy === 'off'
        ? { enabled: false }
        : { enabled: true, strategy, factor: 2, thresholdBytes: 1, advisoryPartitionBytes: 2048 },
  };
}
async function run(p: object, strategy: Strategy, partitions = 8): Promise<RunResult> {
  return runPlan(p, { ...options(strategy, partitions), writeOutput: false });
}
const reduceTasks = (r: RunResult) => r.stats.tasks.filter((t) => t.kind === 'reduce');

const trueCount = async (k: number, f = 'left.parquet') =>
  Number((await duckRows(`SELECT count(*) FROM read_parquet('${file(f)}') WHERE k = ${k}`))[0][0]);

describe.each(TYPES)('%s join on skewed keys', (type) => {
  it.each<Strategy>(['off', 'partition', 'key', 'auto'])("skew handling %s gives DuckDB's answer", async (strategy) => {
    expect(await expectSameInDuck(plan(type), sql(type), options(strategy))).toBeGreaterThan(0);
  });

  it('statistics show the skewed partition and how it was split', async () => {
    const off = await run(plan(type), 'off');
    expect(off.stats.joins[0].strategy).toBe('shuffle');
    expect(off.stats.joins[0].splits).toEqual([]);
    expect(off.stats.shuffles.every((s) => s.skewedPartitions.length === 0)).toBe(true);

    const byKey = await run(plan(type), 'key');
    const left = byKey.stats.shuffles.find((s) => s.id === 'join-1.left')!;
    expect(left.skewedPartitions.length).toBeGreaterThan(0);
    expect(left.hotKeys[0]).toMatchObject({ key: ['7'] });
    expect(left.hotKeys[0].rows).toBeGreaterThanOrEqual(await trueCount(7)); // never below the true count
    expect(left.medianBytes).toBeGreaterThan(0);
    const splitKeys = byKey.stats.joins[0].splits
      .filter((s) => s.method === 'hot-key')
      .flatMap((s) => s.keys!.map((k) => k.key[0]));
    expect(splitKeys).toContain('7');
    // at least one split task per side of every partition split by hot keys
    expect(byKey.stats.tasks.filter((t) => t.kind === 'split').length).toBeGreaterThanOrEqual(
      2 * byKey.stats.joins[0].splits.filter((s) => s.method === 'hot-key').length,
    );
    expect(reduceTasks(byKey).filter((t) => t.split?.startsWith('hot-key 7 piece')).length).toBeGreaterThan(1);

    const byRange = await run(plan(type), 'partition');
    const methods = byRange.stats.joins[0].splits.map((s) => s.method);
    if (type === 'full') {
      expect(methods.length).toBeGreaterThan(0); // the left side is skewed ...
      expect(methods.every((m) => m === 'none')).toBe(true); // ... and may not be split
    } else if (type === 'right') {
      expect(methods.length).toBeGreaterThan(0);
      // the skewed left side may not be split: a range task (of the skewed right side) reads all of it
      const ranges = reduceTasks(byRange).filter((t) => t.split?.startsWith('map-range'));
      expect(ranges.length).toBeGreaterThan(0); // (every() of nothing is true)
      expect(ranges.every((t) => t.split!.includes('left all'))).toBe(true);
    } else {
      expect(methods).toContain('map-range');
      const pieces = reduceTasks(byRange).filter((t) => t.split?.startsWith('map-range'));
      expect(pieces.length).toBeGreaterThan(1);
      // left, semi, anti: only the left side splits; the matching right partition is replicated to every range task
      if (type !== 'inner') expect(pieces.every((t) => t.split!.includes('right all'))).toBe(true);
    }
  });
});

describe('a hot key whose rows all come from one map task', () => {
  it('is split by row ranges inside that map output, and by key', async () => {
    const hotRows = await trueCount(7, 'left-sorted.parquet');
    const p = plan('inner', 'left-sorted.parquet');

    const byRange = await run(p, 'partition');
    expect(reduceTasks(byRange).some((t) => /map-range left t0:\d+-\d+/.test(t.split ?? ''))).toBe(true); // a part of map output 0
    expect(Math.max(...reduceTasks(byRange).map((t) => t.rows))).toBeLessThan(hotRows / 2);
    await expectSameInDuck(p, sql('inner', 'left-sorted.parquet'), options('partition'));

    const byKey = await run(p, 'key');
    expect(byKey.stats.joins[0].splits.some((s) => s.method === 'hot-key')).toBe(true);
    expect(Math.max(...reduceTasks(byKey).map((t) => t.rows))).toBeLessThan(hotRows / 2);
    await expectSameInDuck(p, sql('inner', 'left-sorted.parquet'), options('key'));
  });
});

describe('a key hot on both sides', () => {
  it('is split as a grid of left and right pieces, with the same result', async () => {
    const r = await run(plan('inner'), 'key', 64);
    const pieces = reduceTasks(r)
      .filter((t) => t.split?.startsWith('hot-key 7 piece'))
      .map((t) => t.split!.split(' ').pop()!.split(',').map(Number));
    const rows = new Set(pieces.map(([i]) => i)),
      cols = new Set(pieces.map(([, j]) => j));
    expect(rows.size).toBeGreaterThan(1);
    expect(cols.size).toBeGreaterThan(1);
    expect(pieces.length).toBe(rows.size * cols.size);
    await expectSameInDuck(plan('inner'), sql('inner'), options('key', 64));
  });
  it('full outer joins: key 7 hot on both sides, key 5 hot on the left only, keys 400+ on the right only', async () => {
    const r = await run(plan('full'), 'key', 32);
    const keysSplit = r.stats.joins[0].splits.flatMap((s) => s.keys ?? []).map((k) => k.key[0]);
    expect(keysSplit).toEqual(expect.arrayContaining(['7', '5']));
    await expectSameInDuck(plan('full'), sql('full'), options('key', 32));
  });
});

describe('many null keys on both sides', () => {
  it.each(TYPES)('%s join', async (type) => {
    for (const s of ['off', 'key', 'partition'] as const) {
      const r = await run(plan(type, 'null-left.parquet', 'null-right.parquet'), s);
      // null keys are spread: no partition holds more than a third of the left rows
      const rows = r.stats.shuffles.find((x) => x.id === 'join-1.left')!.partitionRows;
      expect(Math.max(...rows)).toBeLessThan(1000);
      await expectSameInDuck(
        plan(type, 'null-left.parquet', 'null-right.parquet'),
        sql(type, 'null-left.parquet', 'null-right.parquet'),
        options(s),
      );
    }
  });
});
