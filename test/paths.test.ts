// The paths a test means to exercise, asserted from the statistics: which
// split `auto` chose and why, the in-place Parquet read taken by runPlan, the
// coalescing of small partitions, and the sampled heavy-hitter sketch of
// large map tasks measured against exact counts.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runPlan } from '../dist/index.js';
import { planReduceTasks, type SideStats } from '../dist/skew/decide.js';
import { partitionBatches } from '../dist/shuffle/partition.js';
import { buildKeys } from '../dist/kernels/keys.js';
import { rng } from '../dist/bench/zipf.js';
import { duckRows, expectSame, tmpDir, writeParquet } from './helpers.js';

// integers, doubles and strings through parquet-wasm from the first task (io/parquet-direct.ts rents the direct
// reader for them first): the in-place reads below are parquet-wasm's
process.env.SKEWJOIN_DIRECT_RENT = '0';

const dir = tmpDir('sj-paths-');
const f = (n: string) => path.join(dir, n);

beforeAll(async () => {
  // Key 3 carries 40% of the left rows, spread over 12 row groups (map tasks; DuckDB cuts row groups at
  // multiples of 2,048 rows); the right has every key once.
  const left = `SELECT i::BIGINT AS id, (CASE WHEN i % 5 < 2 THEN 3 ELSE 1 + (i * 7919) % 300 END)::BIGINT AS k FROM range(0, 24000) t(i)`;
  await writeParquet(f('spread.parquet'), left, 2048);
  // The same rows with every row of key 3 in the first row group: one map task holds the hot key.
  await writeParquet(f('sorted.parquet'), `SELECT * FROM (${left}) ORDER BY k <> 3, id`, 12288);
  await writeParquet(f('dim.parquet'), `SELECT i::BIGINT AS k, 'n' || i AS name FROM range(1, 301) t(i)`, 1000);
});

const joinPlan = (left: string) => ({
  version: 1,
  sources: { l: { parquet: f(left) }, r: { parquet: f('dim.parquet') } },
  query: {
    op: 'join',
    type: 'inner',
    on: [['k', 'k']],
    left: { op: 'scan', source: 'l' },
    right: { op: 'scan', source: 'r' },
  },
  execution: { broadcastBytes: 0, inThreadBytes: 0 }, // the shuffle path on the pool
});
const autoOpts = {
  workers: 2,
  partitions: 8,
  skew: { strategy: 'auto' as const, factor: 2, thresholdBytes: 1, advisoryPartitionBytes: 2048 },
};

describe('auto chooses the split', () => {
  it('map ranges for a key hot on one side whose rows are spread over map outputs', async () => {
    const r = await runPlan(joinPlan('spread.parquet'), { ...autoOpts, writeOutput: false });
    const splits = r.stats.joins[0].splits;
    expect(splits.length).toBeGreaterThan(0);
    expect(splits.map((s) => s.method)).toEqual(splits.map(() => 'map-range'));
    expect(r.stats.tasks.filter((t) => t.split?.startsWith('map-range')).length).toBeGreaterThan(1);
    await expectSame(
      joinPlan('spread.parquet'),
      `SELECT * FROM read_parquet('${f('spread.parquet')}') l JOIN read_parquet('${f('dim.parquet')}') r ON l.k = r.k`,
      autoOpts,
    );
  });
  it('row ranges inside the one map task that holds all rows of the hot key', async () => {
    const r = await runPlan(joinPlan('sorted.parquet'), { ...autoOpts, writeOutput: false });
    expect(r.stats.joins[0].splits.some((s) => s.method === 'map-range')).toBe(true);
    const pieces = r.stats.tasks.filter((t) => t.split?.startsWith('map-range'));
    expect(pieces.length).toBeGreaterThan(1);
    expect(Math.max(...pieces.map((t) => t.inputBytes!))).toBeLessThanOrEqual(1.25 * r.stats.joins[0].targetBytes);
    await expectSame(
      joinPlan('sorted.parquet'),
      `SELECT * FROM read_parquet('${f('sorted.parquet')}') l JOIN read_parquet('${f('dim.parquet')}') r ON l.k = r.k`,
      autoOpts,
    );
  });
});

describe('runPlan reads plain columns in place', () => {
  it('map tasks feeding a shuffle read in place; a bool column or a collected scan goes through IPC', async () => {
    await writeParquet(
      f('plain.parquet'),
      `SELECT i::BIGINT AS k, (i * 0.5)::DOUBLE AS v, 'x' || i AS s, (i % 2 = 0) AS b FROM range(0, 3000) t(i)`,
      1000,
    );
    const agg = (columns: string[]) => ({
      version: 1,
      sources: { t: { parquet: f('plain.parquet') } },
      query: {
        op: 'aggregate',
        groupBy: columns,
        aggregates: [{ fn: 'count', as: 'n' }],
        input: { op: 'scan', source: 't', columns },
      },
    });
    const reads = async (p: object) =>
      (await runPlan(p, { workers: 2, inThreadBytes: 0, writeOutput: false })).stats.tasks
        .filter((t) => t.kind === 'map' && t.stage !== 'output')
        .map((t) => t.read);
    const inPlace = await reads(agg(['k', 'v', 's'])),
      viaIpc = await reads(agg(['k', 'b']));
    expect(inPlace.length).toBe(2); // row groups of 2,048 and 952 rows
    expect(new Set(inPlace)).toEqual(new Set(['in-place']));
    expect(viaIpc.length).toBe(2);
    expect(new Set(viaIpc)).toEqual(new Set(['ipc']));
    const scan = await runPlan(
      { version: 1, sources: { t: { parquet: f('plain.parquet') } }, query: { op: 'scan', source: 't' } },
      { workers: 2, inThreadBytes: 0, writeOutput: false },
    );
    // a bool column is read through IPC whatever the sink (collect reads in place too, copying what it keeps)
    expect(new Set(scan.stats.tasks.map((t) => t.read))).toEqual(new Set(['ipc']));
  });
});

describe('coalescing small partitions', () => {
  const MB = 1024 * 1024;
  const side = (P: number, bytes: number): SideStats => ({
    partitionBytes: new Array(P).fill(bytes),
    partitionRows: new Array(P).fill(bytes / 16),
    mapBytes: [new Array(P).fill(bytes)],
    hotKeys: [],
  });
  const settings = {
    enabled: true,
    factor: 5,
    thresholdBytes: 256 * MB,
    advisoryPartitionBytes: 64 * MB,
    strategy: 'auto' as const,
  };
  it.each([1, 2, 4])('packs 64 partitions of 1 MB into four tasks per worker (%i workers)', (workers) => {
    const plan = planReduceTasks(side(64, MB / 2), side(64, MB / 2), 'inner', settings, workers);
    // without coalescing: 64 tasks; coalescing to the target alone (64 MB): 1 task
    expect(plan.tasks.length).toBe(4 * workers);
    expect(plan.tasks.flatMap((t) => (t.kind === 'partitions' ? t.partitions : [])).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 64 }, (_, i) => i),
    );
  });
  it('never merges past the target task size, nor small data below 1 MB per task', () => {
    expect(
      planReduceTasks(side(64, MB / 2), side(64, MB / 2), 'inner', { ...settings, advisoryPartitionBytes: 2 * MB }, 1)
        .tasks.length,
    ).toBe(32);
    expect(planReduceTasks(side(64, 1024), side(64, 1024), 'inner', settings, 4).tasks.length).toBe(1);
  });
  it('runPlan runs the coalesced tasks: fewer reduce tasks than partitions, each listing its partitions', async () => {
    const r = await runPlan(joinPlan('spread.parquet'), {
      workers: 2,
      partitions: 16,
      skew: { enabled: true, thresholdBytes: 1 << 30 },
      writeOutput: false,
    });
    const reduce = r.stats.tasks.filter((t) => t.stage === 'join-1' && t.kind === 'reduce');
    expect(reduce.length).toBeLessThan(16);
    expect(reduce.flatMap((t) => t.partitions ?? [t.partition]).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 16 }, (_, i) => i),
    );
  });
});

describe('the sampled sketch of large map tasks', () => {
  // A map task over more than 32,768 rows sketches every 4th row and scales the counts by 4. For a key with
  // c rows in random order the sampled count is about c/4, standard deviation sqrt(3c/16); scaled by 4,
  // sqrt(3c). The stated bound: |estimate - true| <= 4 sqrt(3c) (four standard deviations) plus the
  // entry's Space-Saving error (already scaled). Unlike the unsampled sketch, the estimate may be below the truth.
  const N = 60000;
  const shares: Record<number, number> = { 11: 0.2, 22: 0.08, 33: 0.03, 44: 0.012 };
  function batch() {
    const next = rng(5);
    const keys = new BigInt64Array(N);
    for (let i = 0; i < N; i++) {
      let u = next(),
        k = -1;
      for (const [key, s] of Object.entries(shares)) {
        if (u < s) {
          k = Number(key);
          break;
        }
        u -= s;
      }
      keys[i] = BigInt(k >= 0 ? k : 1000 + Math.floor(next() * 50000));
    }
    return { length: N, columns: [{ type: { id: 'int64' as const }, length: N, values: keys, valid: null }] };
  }
  it('estimates each heavy hitter within the stated bound, with counts scaled back', () => {
    const b = batch();
    const truth = new Map<bigint, number>();
    for (const k of b.columns[0].values) truth.set(k, (truth.get(k) ?? 0) + 1);
    const spec = {
      keys: [0],
      norms: [{ kind: 'int' as const }],
      partitions: 4,
      spreadNulls: true,
      nullSeed: 0,
      sketch: 1000,
    };
    const { sketch } = partitionBatches([b], spec as any);
    expect(sketch!.n).toBe(N); // every 4th row counted, scaled by 4
    const hash = buildKeys(b, [0], [{ kind: 'int' }]).hash;
    const hashOf = (k: number) => hash[b.columns[0].values.indexOf(BigInt(k))];
    for (const key of Object.keys(shares).map(Number)) {
      const c = truth.get(BigInt(key))!;
      const e = sketch!.entries.find((x) => x.hash === hashOf(key));
      expect(e, `key ${key} (${c} rows) found`).toBeDefined();
      expect(e!.count % 4).toBe(0); // a sampled count, scaled
      expect(Math.abs(e!.count - c), `key ${key}: ${e!.count} against ${c}`).toBeLessThanOrEqual(
        4 * Math.sqrt(3 * c) + e!.error,
      );
      expect(e!.display).toEqual([String(key)]);
    }
  });
  it('runPlan finds the hot key of a 60,000-row map task, its rows within the bound', async () => {
    const file = f('big-task.parquet');
    await writeParquet(
      file,
      `SELECT (CASE WHEN hash(i) % 100 < 20 THEN 11 ELSE 1000 + hash(i) % 50000 END)::BIGINT AS k FROM range(0, ${N}) t(i)`,
      N,
    );
    const [[c]] = await duckRows(`SELECT count(*) FROM read_parquet('${file}') WHERE k = 11`);
    const r = await runPlan(
      {
        version: 1,
        sources: { l: { parquet: file }, r: { parquet: f('dim.parquet') } },
        query: {
          op: 'join',
          type: 'inner',
          on: [['k', 'k']],
          left: { op: 'scan', source: 'l' },
          right: { op: 'scan', source: 'r' },
        },
      },
      {
        workers: 2,
        partitions: 8,
        broadcastBytes: 0,
        inThreadBytes: 0,
        runtimeFilters: 'off',
        skew: { strategy: 'key', factor: 2, thresholdBytes: 1, advisoryPartitionBytes: 4096 },
        writeOutput: false,
      },
    );
    expect(r.stats.tasks.filter((t) => t.stage === 'join-1' && t.kind === 'map' && t.rows > 32768).length).toBe(1); // the sampled path
    const hot = r.stats.shuffles.find((s) => s.id === 'join-1.left')!.hotKeys.find((h) => h.key[0] === '11');
    expect(hot).toBeDefined();
    expect(hot!.rows % 4).toBe(0);
    expect(Math.abs(hot!.rows - Number(c))).toBeLessThanOrEqual(4 * Math.sqrt(3 * Number(c)) + (N / 1000) * 4);
  });
});
