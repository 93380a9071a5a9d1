// Runtime join filters (kernels/runtime-filter.ts, physical/join/filters.ts): a side built once sends a filter of
// its keys into the other side's scan (read there as a mask of the key column, physical/scan/masks.ts), and a shuffle
// join's side partitioned first sends one to the other side's map tasks. Against DuckDB: each kind forced (bitmap,
// bloom, minmax) and chosen (auto), inner, left (no filter into the preserved side), semi, anti (none), two-column
// and string keys (Bloom), null keys on both sides, a hot key split while a filter applies, a tiny memory budget, on
// the pool and on the calling thread; the statistics name each filter with its rows tested and kept; --explain
// names them; the setting turns them off.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type RunOptions, runPlan } from '../dist/index.js';
import { buildFilter, filterBytes, testBatch } from '../dist/kernels/runtime-filter.js';
import { buildKeys } from '../dist/kernels/keys.js';
import type { Column } from '../dist/kernels/column.js';
import { processMemory } from '../dist/spill/spiller.js';
import { cli, expectSame, tmpDir, writeParquet, writePlan } from './helpers.js';

const dir = tmpDir('sj-rtfilter-');
const F = path.join(dir, 'f.parquet'),
  D = path.join(dir, 'd.parquet'),
  W = path.join(dir, 'w.parquet');
const F_ROWS = 20_000,
  D_ROWS = 4_000;

beforeAll(async () => {
  // the fact: dense keys k (0..2999, some null), sparse keys ks, a second key k2, string keys s, a hot key (k = 40 on
  // a third of the rows); row groups of 2000 rows
  await writeParquet(
    F,
    `SELECT CASE WHEN i % 97 = 0 THEN NULL WHEN i % 3 = 0 THEN 40 ELSE (i * 7919 % 3000)::BIGINT END AS k,
       (i * 7919 % 3000 * 1000003)::BIGINT AS ks, (i % 5)::INTEGER AS k2, 'key-' || (i * 7919 % 3000) AS s,
       i::BIGINT AS v, (i % 100)::DOUBLE AS x FROM range(0, ${F_ROWS}) t(i)`,
    2000,
  );
  // the dimension: keys 0..3999 (some null), of which the filter keeps the multiples of 40 (100 keys, the hot key 40 among them)
  await writeParquet(
    D,
    `SELECT CASE WHEN i % 41 = 1 THEN NULL ELSE i::BIGINT END AS dk, (i * 1000003)::BIGINT AS dks,
       (i % 5)::INTEGER AS dk2, 'key-' || i AS ds, (i % 40)::INTEGER AS g FROM range(0, ${D_ROWS}) t(i)`,
    1000,
  );
  // a wide dimension: keys 0..2999 over 40,000 rows with a 32-character string; `pad LIKE '00%'` keeps 1/256
  await writeParquet(W, `SELECT (i % 3000)::BIGINT AS wk, md5(i::VARCHAR) AS pad FROM range(0, 40000) t(i)`, 10000);
});

const dim = { op: 'filter', where: { column: 'g', cmp: '=', value: 0 }, input: { op: 'scan', source: 'd' } };
const fact = { op: 'scan', source: 'f' };
const plan = (query: object) => ({ version: 1, sources: { f: { parquet: F }, d: { parquet: D } }, query });
const join = (type: string, on: [string, string][], left: object = fact, right: object = dim) => ({
  op: 'join',
  type,
  on,
  left,
  right,
});
const DIM = `(SELECT * FROM read_parquet('${D}') WHERE g = 0)`,
  FACT = `read_parquet('${F}')`;
const cond = (on: [string, string][]) => on.map(([a, b]) => `f.${a} = d.${b}`).join(' AND ');
const sqlJoin = (type: string, on: [string, string][]) =>
  type === 'semi' || type === 'anti'
    ? `SELECT * FROM ${FACT} f WHERE ${type === 'anti' ? 'NOT ' : ''}EXISTS (SELECT 1 FROM ${DIM} d WHERE ${cond(on)})`
    : `SELECT * FROM ${FACT} f ${type.toUpperCase()} JOIN ${DIM} d ON ${cond(on)}`;
// filters chosen by the rule unless a test says (the default is off: plan/load.ts)
const opts = (o: RunOptions = {}): RunOptions => ({ workers: 2, inThreadBytes: 0, runtimeFilters: 'auto', ...o });
const stats = async (p: object, o: RunOptions = {}) => (await runPlan(p, { ...opts(o), writeOutput: false })).stats;

const ONE: [string, string][] = [['k', 'dk']],
  SPARSE: [string, string][] = [['ks', 'dks']],
  TWO: [string, string][] = [
    ['k', 'dk'],
    ['k2', 'dk2'],
  ],
  STR: [string, string][] = [['s', 'ds']];

describe('a broadcast join sends a filter of its built keys into the probing scan', () => {
  for (const [mode, on, kind] of [
    ['auto', ONE, 'bitmap+minmax'],
    ['auto', SPARSE, 'bloom+minmax'],
    ['bitmap', ONE, 'bitmap+minmax'],
    ['bloom', ONE, 'bloom+minmax'],
    ['minmax', ONE, 'minmax'],
    ['auto', TWO, 'bloom'],
    ['bloom', STR, 'bloom'],
  ] as const) {
    it(`inner join on ${on.map((x) => x[0]).join(', ')}, ${mode}: ${kind}`, async () => {
      const p = plan(join('inner', on));
      for (const inThreadBytes of [0, '1GB'])
        await expectSame(p, sqlJoin('inner', on), opts({ runtimeFilters: mode, inThreadBytes }));
      const s = await stats(p, { runtimeFilters: mode });
      expect(s.joins[0]).toMatchObject({ strategy: 'broadcast', broadcast: { side: 'right' } });
      expect(s.runtimeFilters).toHaveLength(1);
      const f = s.runtimeFilters![0];
      expect(f).toMatchObject({ id: 'join-1.right', join: 'join-1', into: 'scan-1', kind });
      expect(f.columns).toEqual(on.map((x) => x[0]));
      // every fact row tested: the rows read to measure the sides are none (the dimension fits first)
      expect(f.rowsIn).toBe(F_ROWS);
      expect((await stats(p, { runtimeFilters: 'off' })).runtimeFilters).toBeUndefined();
      // the hot key's third and the other matches, and false positives (min/max: the keys within 0..3960)
      expect(f.rowsKept).toBeLessThan(mode === 'minmax' ? F_ROWS : 0.4 * F_ROWS);
      const probeRows = s.tasks.filter((t) => t.source === 'scan-1').reduce((a, t) => a + t.outputRows, 0);
      expect(probeRows).toBeLessThanOrEqual(f.rowsKept);
      // per task, too
      const per = s.tasks.flatMap((t) => t.filters ?? []);
      expect(per.reduce((a, c) => a + c.rowsIn, 0)).toBe(F_ROWS);
      // one integer key: read as a mask of its column in the scan
      if (on.length === 1 && mode !== 'auto') expect(s.tasks.some((t) => (t.masks ?? 0) > 0)).toBe(true);
    }, 180_000);
  }

  it('a filter keeping few rows reads the other columns at the kept rows only', async () => {
    // the sparse keys: no hot key, about 3% of the rows kept
    const s = await stats(plan(join('inner', SPARSE)), { runtimeFilters: 'bloom' });
    expect(s.runtimeFilters![0].rowsKept).toBeLessThan(0.1 * F_ROWS);
    const scan = s.tasks.filter((t) => t.source === 'scan-1');
    expect(scan.length).toBeGreaterThan(0);
    for (const t of scan) expect(t.read).toBe('direct');
  });

  it('semi join: the filter applies; anti join and the preserved side of a left join: none', async () => {
    for (const type of ['semi', 'anti', 'left']) {
      const p = plan(join(type, ONE));
      await expectSame(p, sqlJoin(type, ONE), opts({ runtimeFilters: 'bitmap' }));
      const s = await stats(p, { runtimeFilters: 'bitmap' });
      expect(s.joins[0].strategy).toBe('broadcast');
      if (type === 'semi') expect(s.runtimeFilters?.[0]).toMatchObject({ into: 'scan-1', kind: 'bitmap+minmax' });
      else expect(s.runtimeFilters).toBeUndefined();
    }
  }, 300_000);

  it('a right join built on its left side filters nothing of its preserved right side', async () => {
    const p = plan(join('right', [['dk', 'k']], dim, fact));
    await expectSame(
      p,
      `SELECT * FROM ${DIM} d RIGHT JOIN ${FACT} f ON d.dk = f.k`,
      opts({ runtimeFilters: 'bitmap' }),
    );
    expect((await stats(p, { runtimeFilters: 'bitmap' })).runtimeFilters).toBeUndefined();
  });

  it('off: no filter, the same rows', async () => {
    const p = plan(join('inner', ONE));
    await expectSame(p, sqlJoin('inner', ONE), opts({ runtimeFilters: 'off' }));
    expect((await stats(p, { runtimeFilters: 'off' })).runtimeFilters).toBeUndefined();
  });

  it('a filter from a join above reaches the scan below the join it probes through', async () => {
    // (f ⋈ d on k) ⋈ d2 on k2: the upper join's filter on k2 goes through the lower probe into the fact's scan
    const d2 = { op: 'filter', where: { column: 'dk', cmp: '=', value: 3 }, input: { op: 'scan', source: 'd' } };
    const lower = join('inner', ONE);
    const upper = {
      op: 'join',
      type: 'inner',
      on: [['k2', 'dk2']],
      left: lower,
      right: { op: 'project', columns: ['dk2'], input: d2 },
    };
    const p = plan(upper);
    await expectSame(
      p,
      `SELECT * FROM ${FACT} f JOIN ${DIM} d ON f.k = d.dk
         JOIN (SELECT dk2 FROM read_parquet('${D}') WHERE dk = 3) d2 ON f.k2 = d2.dk2`,
      opts({ runtimeFilters: 'bitmap' }),
    );
    const s = await stats(p, { runtimeFilters: 'bitmap' });
    expect(s.joins.map((j) => j.strategy)).toEqual(['broadcast', 'broadcast']);
    const up = s.runtimeFilters!.find((f) => f.columns[0] === 'k2');
    expect(up).toMatchObject({ id: 'join-1.right', into: 'scan-1', rowsIn: F_ROWS });
    expect(up!.rowsKept).toBeLessThan(F_ROWS / 4);
  });

  it("a filter from a join above reaches the rest of a probing side read to measure it, on the side's own columns", async () => {
    // (w ⋈ f on wk = k) ⋈ d2 on k2: the lower join's probing side (the fact, the smaller file) is read first to
    // measure it and stops at broadcastBytes; the wide dimension, filtered to a few rows, is built; the fact's other
    // row groups are read by map tasks, where the upper filter's key (k2) is the fact's column 1, not the lower join's
    // output column 3 (it crashed there: q10's shape reordered, with the customers probing)
    const d2 = { op: 'filter', where: { column: 'dk', cmp: '=', value: 3 }, input: { op: 'scan', source: 'd' } };
    const wide = {
      op: 'project',
      columns: ['wk', 'pad'],
      input: { op: 'filter', where: { column: 'pad', like: '00%' }, input: { op: 'scan', source: 'w' } },
    };
    const facts = { op: 'scan', source: 'f', columns: ['k', 'k2', 'v'] };
    const lower = { ...join('inner', [['wk', 'k']], wide, facts), reorder: false };
    const upper = {
      op: 'join',
      type: 'inner',
      reorder: false,
      on: [['k2', 'dk2']],
      left: lower,
      right: { op: 'project', columns: ['dk2'], input: d2 },
    };
    const p = { ...plan(upper), sources: { f: { parquet: F }, d: { parquet: D }, w: { parquet: W } } };
    const sql = `SELECT wk, pad, k, k2, v, dk2 FROM read_parquet('${W}') w JOIN ${FACT} f ON w.wk = f.k
       JOIN (SELECT dk2 FROM read_parquet('${D}') WHERE dk = 3) d2 ON f.k2 = d2.dk2 WHERE pad LIKE '00%'`;
    const o = { runtimeFilters: 'bitmap', broadcastBytes: '100KB' } as const;
    for (const inThreadBytes of [0, '1GB']) await expectSame(p, sql, opts({ ...o, inThreadBytes }));
    const s = await stats(p, o);
    expect(s.joins.map((j) => [j.strategy, j.broadcast?.side])).toEqual([
      ['broadcast', 'right'],
      ['broadcast', 'left'],
    ]);
    const up = s.runtimeFilters!.find((f) => f.columns[0] === 'k2');
    expect(up).toMatchObject({ id: 'join-1.right', into: 'scan-2' });
    // the fact's rows but those read to measure it (probed as they are)
    expect(up!.rowsIn).toBeGreaterThan(0);
    expect(up!.rowsIn).toBeLessThan(F_ROWS);
    expect(up!.rowsKept).toBeLessThan(up!.rowsIn / 4);
  });
});

describe('a shuffle join sends the filter of the side partitioned first to the other side', () => {
  const shuffled = (o: RunOptions = {}) => opts({ broadcastBytes: 0, runtimeFilters: 'auto', ...o });
  const skew = { enabled: true, factor: 2, thresholdBytes: 1, strategy: 'key' as const, advisoryPartitionBytes: 256 };

  for (const [type, on] of [
    ['inner', ONE],
    ['inner', TWO],
    ['inner', STR],
    ['semi', ONE],
    ['left', ONE],
    ['anti', ONE],
  ] as const) {
    it(`${type} join on ${on.map((x) => x[0]).join(', ')}`, async () => {
      const p = plan(join(type, on));
      for (const inThreadBytes of [0, '1GB']) await expectSame(p, sqlJoin(type, on), shuffled({ inThreadBytes }));
      const s = await stats(p, { broadcastBytes: 0 });
      expect(s.joins[0].strategy).toBe('shuffle');
      // the dimension's files are smaller: partitioned first, its filter into the fact's map tasks, except where the
      // fact's unmatched rows are kept (an anti join's left, a left join's left): then none, or the other way
      const f = s.runtimeFilters?.[0];
      if (type === 'anti' || type === 'left') {
        if (f) expect(f).toMatchObject({ id: 'join-1.left', into: 'scan-2' });
      } else {
        expect(f).toMatchObject({ id: 'join-1.right', into: 'scan-1', rowsIn: F_ROWS });
        expect(f!.rowsKept).toBeLessThan(F_ROWS / 2);
        const shuffledRows = s.shuffles.find((x) => x.id === 'join-1.left')!.partitionRows.reduce((a, b) => a + b, 0);
        expect(shuffledRows).toBe(f!.rowsKept);
      }
    }, 300_000);
  }

  it('a hot key is split while the filter applies, as without it', async () => {
    // k = 40 is on a third of the fact's rows and among the dimension's kept keys
    const p = plan(join('inner', ONE));
    const splits: number[] = [];
    for (const runtimeFilters of ['auto', 'off'] as const) {
      const o = shuffled({ runtimeFilters, skew, partitions: 8 });
      await expectSame(p, sqlJoin('inner', ONE), o);
      const s = await stats(p, { broadcastBytes: 0, runtimeFilters, skew, partitions: 8 });
      const split = s.joins[0].splits.filter((x) => x.method !== 'none');
      expect(split.length).toBeGreaterThan(0);
      expect(s.shuffles.flatMap((x) => x.hotKeys).some((h) => h.key[0] === '40')).toBe(true);
      if (runtimeFilters === 'auto') expect(s.runtimeFilters?.[0].rowsKept).toBeLessThan(F_ROWS);
      splits.push(split.length);
    }
    expect(splits[0]).toBe(splits[1]);
  }, 300_000);

  it('under a tiny memory budget (the side partitioned first spilled: no filter) the rows are the same', async () => {
    const p = plan(join('inner', ONE));
    await expectSame(p, sqlJoin('inner', ONE), shuffled({ memoryLimit: '64KB' }));
    const s = await stats(p, { broadcastBytes: 0, memoryLimit: '64KB' });
    expect(s.spilledBytes).toBeGreaterThan(0);
  });
});

describe('a filter within the memory budget', () => {
  const column = (xs: bigint[]): Column => ({
    type: { id: 'int64' },
    length: xs.length,
    values: BigInt64Array.from(xs),
    valid: null,
  });
  const keysOf = (xs: bigint[]) =>
    buildKeys({ length: xs.length, columns: [column(xs)] }, [0], [{ kind: 'int' }], undefined, true);
  // 5,000 sparse keys (a Bloom filter of 16 KB unbounded) and 5,000 dense ones (a bitmap of 628 bytes)
  const sparse = Array.from({ length: 5000 }, (_, i) => BigInt(i) * 1000003n);
  const dense = Array.from({ length: 5000 }, (_, i) => BigInt(i) + 7n);

  it('is made smaller (a Bloom filter), gives way (a bitmap), or is its min/max alone, and drops no key it holds', () => {
    const free = buildFilter('f', [keysOf(sparse)], 'auto');
    expect(filterBytes(free!)).toBe(16384);
    for (const maxBytes of [16384, 4096, 1000, 256]) {
      const f = buildFilter('f', [keysOf(sparse)], 'auto', undefined, false, maxBytes)!;
      expect(f.kind).toBe('bloom');
      expect(filterBytes(f)).toBeLessThanOrEqual(maxBytes);
      expect(filterBytes(f)).toBeGreaterThan(maxBytes / 2 - 1);
      // every built key kept; a key outside kept no more often than a smaller filter's false positives allow
      expect(testBatch(f, { length: 5000, columns: [column(sparse)] }, [0], [{ kind: 'int' }]).kept).toBe(5000);
    }
    const none = buildFilter('f', [keysOf(sparse)], 'auto', undefined, false, 255)!;
    expect([none.kind, filterBytes(none), none.min, none.max]).toEqual(['minmax', 0, 0, 4999 * 1000003]);
    expect(buildFilter('f', [keysOf(dense)], 'auto', undefined, false, 628)!.kind).toBe('bitmap');
    const bloom = buildFilter('f', [keysOf(dense)], 'auto', undefined, false, 627)!;
    expect([bloom.kind, filterBytes(bloom)]).toEqual(['bloom', 512]);
    // two keys: no min/max to fall back on
    const two = buildKeys(
      { length: 5000, columns: [column(sparse), column(dense)] },
      [0, 1],
      [{ kind: 'int' }, { kind: 'int' }],
    );
    expect(buildFilter('f', [two], 'auto', undefined, false, 255)).toBeNull();
  });

  it('under a small budget: sized down to a quarter of what is free, counted while it lives, the same rows', async () => {
    // a shuffle join on sparse keys: the dimension partitioned first (held, not spilled), its filter of about 4,000
    // keys (8 KB unbounded) into the fact's map tasks
    const p = plan(join('inner', SPARSE, fact, { op: 'scan', source: 'd' }));
    const sql = `SELECT * FROM ${FACT} f JOIN read_parquet('${D}') d ON f.ks = d.dks`;
    const sizes: number[] = [];
    for (const memoryLimit of [288 * 1024, 320 * 1024, 1 << 30]) {
      const o = opts({ broadcastBytes: 0, memoryLimit, spillDir: dir });
      if (memoryLimit < 1 << 30) await expectSame(p, sql, o);
      const s = await stats(p, o);
      expect(processMemory().held).toBe(0);
      const f = s.runtimeFilters?.[0];
      if (f) expect(f.bytes).toBeLessThanOrEqual(memoryLimit / 4);
      sizes.push(f?.bytes ?? -1);
    }
    expect(sizes.at(-1)).toBe(8192);
    expect(sizes.some((b) => b >= 0 && b < 8192)).toBe(true);
  }, 180_000);
});

describe('--explain', () => {
  it('names each runtime filter, and --analyze its rows', () => {
    const d = tmpDir('sj-rtfilter-cli-');
    const file = writePlan(d, plan(join('inner', ONE)));
    const x = cli([file, '--explain', '--runtime-filters', 'auto']);
    expect(x.code).toBe(0);
    expect(x.stdout).toMatch(/runtime filter join-1\.right → scan-1 \[k\]: bitmap where the built keys are dense/);
    expect(cli([file, '--explain', '--runtime-filters', 'off']).stdout).not.toMatch(/runtime filter/);
    const a = cli([file, '--explain', '--analyze', '--runtime-filters', 'bloom']);
    expect(a.code).toBe(0);
    expect(a.stdout).toMatch(
      new RegExp(
        `runtime filter join-1\\.right → scan-1 \\[k\\]: bloom\\+minmax, \\d+ keys, .*; ${F_ROWS} rows in, \\d+ kept`,
      ),
    );
    const bad = cli([file, '--runtime-filters', 'sometimes']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--runtime-filters.*sometimes/);
  });
});
