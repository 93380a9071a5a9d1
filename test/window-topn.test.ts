// Top-N per window partition (plan/window-topn.ts, physical/window/topn.ts) against DuckDB: row_number, rank and
// dense_rank kept to `= 1`, `<= N`, `< N`, `N >= f`, in QUALIFY and in WHERE over a subquery, ASC/DESC and NULLS
// FIRST/LAST, ties, null partition keys, partitions smaller than N, string and float order keys, no partition keys;
// over three files of small row groups (several map tasks, several batches a task), on the pool and on the calling
// thread; a hot partition still split after pruning; and windows the rewrite must leave alone. The kernel itself
// against a brute-force rank on random rows.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { compileSql, explainPlan, loadPlan, runSql } from '../dist/index.js';
import type { Batch } from '../dist/kernels/column.js';
import { type TopN, topNBatches, topNRows } from '../dist/physical/window/topn.js';
import { arrowTyped, duckTable, expectTypedEqual, sql, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-window-topn-');
const FILES = path.join(dir, 't*.parquet');
const S = { t: FILES };

beforeAll(async () => {
  // g: a hot partition, a single-row one, nulls; k: a second key with nulls; o: ties and nulls; s: strings;
  // f: doubles; t: the hot partition all tied (rank 1 everywhere in it)
  for (let p = 0; p < 3; p++)
    await writeParquet(
      path.join(dir, `t${p}.parquet`),
      `SELECT i::BIGINT AS id,
        CASE WHEN i % 41 = 0 THEN NULL WHEN i = 7 THEN 'single' WHEN i % 3 = 0 THEN 'hot' ELSE 'g' || (i % 29) END AS g,
        CASE WHEN i % 53 = 0 THEN NULL ELSE i % 2 END::INTEGER AS k,
        CASE WHEN i % 17 = 0 THEN NULL ELSE (i * 13) % 20 END::INTEGER AS o,
        CASE WHEN i % 23 = 0 THEN NULL ELSE 'v' || ((i * 7) % 31) END AS s,
        CASE WHEN i % 19 = 0 THEN NULL ELSE ((i * 7) % 11) * 0.5 END::DOUBLE AS f,
        CASE WHEN i % 3 = 0 THEN 0 ELSE i % 5 END::INTEGER AS t,
        ((i * 7919) % 10007)::DECIMAL(10,2) AS x
      FROM range(${p * 800}, ${(p + 1) * 800}) r(i)`,
      100,
    );
  await sql(`CREATE OR REPLACE VIEW t AS SELECT * FROM read_parquet('${FILES}')`);
});

const POOL = { workers: 2, inThreadBytes: 0 };
const THREAD = { inThreadBytes: Number.MAX_SAFE_INTEGER };

/** Our answer and DuckDB's; the run's statistics. */
async function same(text: string, opts: object = POOL) {
  const r = await runSql(text, { sources: S, ...opts });
  expectTypedEqual(arrowTyped(r.toArrow()), await duckTable(text));
  return r.stats;
}

/** The window's top-N as the statistics report it, and the rows its shuffle carried. */
function topN(stats: Awaited<ReturnType<typeof same>>) {
  const w = stats.windows![0];
  const shuffled = stats.shuffles.find((s) => s.id === `${w.id}.input`)!;
  return { topN: w.topN, rows: shuffled.partitionRows.reduce((a, b) => a + b, 0), splits: w.splits };
}

const ORDERS = ['o DESC NULLS FIRST', 'o ASC NULLS LAST', 'o DESC NULLS LAST', 'o ASC NULLS FIRST'];
// QUALIFY or WHERE over a subquery, with the limit each way it is written
const FILTERS: { cmp: string; n: number; qualify: boolean }[] = [
  { cmp: 'r = 1', n: 1, qualify: true },
  { cmp: 'r <= 3', n: 3, qualify: false },
  { cmp: 'r < 3', n: 2, qualify: true },
  { cmp: '3 >= r', n: 3, qualify: false },
];

function query(fn: string, order: string, cmp: string, qualify: boolean, partition = 'PARTITION BY g') {
  // row_number's ties are any order: the order made unique by id
  const by = fn === 'row_number' ? `${order}, id DESC` : order;
  const over = `${fn}() OVER (${partition} ORDER BY ${by}) AS r`;
  return qualify
    ? `SELECT id, g, o, x, ${over} FROM t QUALIFY ${cmp}`
    : `SELECT * FROM (SELECT id, g, o, x, ${over} FROM t) q WHERE ${cmp}`;
}

describe('top-N per window partition', () => {
  for (const fn of ['row_number', 'rank', 'dense_rank'])
    it(`${fn}: = 1, <= N, < N, N >= f; QUALIFY and a subquery; asc/desc, nulls first/last; pool and thread`, async () => {
      for (const [i, f] of FILTERS.entries()) {
        const text = query(fn, ORDERS[i], f.cmp, f.qualify);
        const pool = topN(await same(text));
        expect(pool.topN).toEqual({ fn, n: f.n });
        // the map tasks kept far fewer than the 2,400 rows
        expect(pool.rows).toBeLessThan(1200);
        await same(text, THREAD);
      }
    });

  it('two partition keys with nulls, string and float order keys (compared as columns), partitions smaller than N', async () => {
    for (const fn of ['rank', 'dense_rank', 'row_number']) {
      const tie = fn === 'row_number' ? ', id' : '';
      const s =
        await same(`SELECT id, g, k, s, r FROM (SELECT *, ${fn}() OVER (PARTITION BY g, k ORDER BY s DESC NULLS FIRST${tie}) AS r FROM t) q
        WHERE r <= 4 AND id % 2 = 0`);
      expect(topN(s).topN).toEqual({ fn, n: 4 });
      await same(
        `SELECT id, g, f, ${fn}() OVER (PARTITION BY g ORDER BY f NULLS FIRST${tie}) AS r FROM t QUALIFY r <= 2`,
        THREAD,
      );
    }
    // most partitions hold fewer than 60 rows; only 20 distinct values of o: every row's dense_rank is at most 25
    await same(`SELECT id, g, rank() OVER (PARTITION BY g ORDER BY o) AS r FROM t QUALIFY r <= 60`);
    const all = topN(
      await same(`SELECT id, dense_rank() OVER (PARTITION BY g ORDER BY o) AS r FROM t QUALIFY r <= 25`),
    );
    expect(all.rows).toBe(2400);
  });

  it('without partition keys: one partition, its first N over every map task', async () => {
    const s = topN(
      await same(`SELECT id, o, row_number() OVER (ORDER BY o DESC NULLS LAST, id) AS r FROM t QUALIFY r <= 5`),
    );
    expect(s.topN).toEqual({ fn: 'row_number', n: 5 });
    // 5 rows a map task at most (one file of 800 rows a task, or fewer rows)
    expect(s.rows).toBeLessThanOrEqual(5 * 24);
    await same(`SELECT id, o, rank() OVER (ORDER BY o) AS r FROM t QUALIFY r <= 3`, THREAD);
  });

  it('a hot partition that pruning leaves large (its rows tied) is still split by ranges, exactly', async () => {
    const split = { ...POOL, partitions: 16, skew: { thresholdBytes: 1, advisoryPartitionBytes: 512 } };
    for (const [fn, n] of [
      ['rank', 1],
      ['dense_rank', 2],
      ['row_number', 3],
    ] as const) {
      const s = topN(
        await same(
          `SELECT id, g, t, ${fn}() OVER (PARTITION BY g ORDER BY t${fn === 'row_number' ? ', id' : ''}) AS r FROM t QUALIFY r <= ${n}`,
          split,
        ),
      );
      expect(s.topN).toEqual({ fn, n });
      if (fn !== 'row_number') expect(s.splits.some((x) => x.method === 'ranges')).toBe(true);
    }
  });

  it('left alone: another function over the window, rows past the first, percent_rank; rn = 2 is a top 2', async () => {
    const alone = [
      `SELECT id, g, rank() OVER w AS r, sum(x) OVER w AS sx FROM t WINDOW w AS (PARTITION BY g ORDER BY o, id) QUALIFY r <= 3`,
      `SELECT id, g, row_number() OVER (PARTITION BY g ORDER BY o, id) AS r FROM t QUALIFY r > 1`,
      `SELECT id, g, percent_rank() OVER (PARTITION BY g ORDER BY o) AS p, rank() OVER (PARTITION BY g ORDER BY o) AS r FROM t QUALIFY r <= 2`,
      `SELECT id, g, r FROM (SELECT *, rank() OVER (PARTITION BY g ORDER BY o) AS r FROM t) q WHERE r <= 2 OR id < 10`,
    ];
    for (const text of alone) {
      const s = topN(await same(text));
      expect(s.topN, text).toBeUndefined();
      expect(s.rows).toBe(2400);
    }
    const two = topN(
      await same(`SELECT id, g, row_number() OVER (PARTITION BY g ORDER BY o, id) AS r FROM t QUALIFY r = 2`),
    );
    expect(two.topN).toEqual({ fn: 'row_number', n: 2 });
  });

  it('under a 64 KB budget: shuffle blocks spilled and read back by the tasks that prune them', async () => {
    // 10 of about 25 rows a partition in each map task: the map tasks keep theirs (too many kept), the tasks prune
    const spill = { ...POOL, memoryLimit: '64KB', spillDir: path.join(dir, 'spill') };
    for (const fn of ['rank', 'row_number']) {
      const text = `SELECT id, g, o, ${fn}() OVER (PARTITION BY g ORDER BY o DESC, id) AS r FROM t QUALIFY r <= 10`;
      const r = await runSql(text, { sources: S, ...spill });
      expectTypedEqual(arrowTyped(r.toArrow()), await duckTable(text));
      expect(r.stats.spilledBytes).toBeGreaterThan(0);
      expect(topN(r.stats)).toMatchObject({ topN: { fn, n: 10 }, rows: 2400 });
    }
  });

  it('drawn at random: function, N, keys, directions, nulls, filter form, tasks on the pool or this thread', async () => {
    let seed = 11;
    const rnd = (m: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % m;
    };
    const pick = <T>(xs: T[]) => xs[rnd(xs.length)];
    for (let k = 0; k < 24; k++) {
      const fn = pick(['row_number', 'rank', 'dense_rank']);
      const n = pick([1, 2, 3, 7, 30]);
      const partition = pick(['PARTITION BY g', 'PARTITION BY g, k', 'PARTITION BY k', 'PARTITION BY s', '']);
      const keys = Array.from({ length: 1 + rnd(2) }, () => pick(['o', 't', 's', 'f', 'x']));
      const order = keys.map((c) => `${c} ${pick(['ASC', 'DESC'])} NULLS ${pick(['FIRST', 'LAST'])}`).join(', ');
      const by = fn === 'row_number' ? `${order}, id` : order;
      const cmp = pick([`r <= ${n}`, `r < ${n + 1}`, `${n} >= r`, ...(n === 1 ? ['r = 1'] : [])]);
      const text = pick([true, false])
        ? `SELECT id, g, ${fn}() OVER (${partition} ORDER BY ${by}) AS r FROM t QUALIFY ${cmp}`
        : `SELECT id, g, r FROM (SELECT *, ${fn}() OVER (${partition} ORDER BY ${by}) AS r FROM t) q WHERE ${cmp}`;
      const s = topN(await same(text, pick([POOL, THREAD])));
      expect(s.topN, text).toEqual({ fn, n });
    }
  });

  it('--explain names the top-N', async () => {
    const plan = await compileSql(query('rank', 'o DESC', 'r <= 3', true), { sources: S });
    const text = explainPlan(await loadPlan(plan));
    expect(text).toContain('top 3 per partition by rank (r <= 3 above)');
  });
});

describe('the top-N kernel', () => {
  /** Each row's rank, dense_rank and (by index among ties) row_number in its partition, by brute force. */
  function ranks(part: Int32Array, ord: Int32Array, fn: TopN['fn']): number[] {
    return Array.from(part, (p, i) => {
      let better = 0;
      const values = new Set<number>();
      for (let j = 0; j < part.length; j++) {
        if (part[j] !== p) continue;
        if (ord[j] < ord[i] || (fn === 'row_number' && ord[j] === ord[i] && j < i)) better++;
        if (ord[j] < ord[i]) values.add(ord[j]);
      }
      return 1 + (fn === 'dense_rank' ? values.size : better);
    });
  }
  const col = (values: Int32Array) => ({ type: { id: 'int32' as const }, length: values.length, values, valid: null });

  it('keeps exactly the rows ranked at most N (rank, dense_rank), N of the best rows (row_number); over batches too', () => {
    let seed = 7;
    const rnd = (m: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % m;
    };
    let pruned = 0;
    for (let round = 0; round < 30; round++) {
      const n = 1 + rnd(300),
        groups = 1 + rnd(round % 2 ? 20 : 4),
        distinct = 1 + rnd(30);
      const part = Int32Array.from({ length: n }, () => rnd(groups));
      const ord = Int32Array.from({ length: n }, () => rnd(distinct));
      const b = { length: n, columns: [col(part), col(ord)] } as unknown as Batch;
      for (const fn of ['rank', 'dense_rank', 'row_number'] as const) {
        const N = 1 + rnd(6);
        // null: every row kept
        const { idx, n: kept } = topNRows(b, [0], [{ col: 1, desc: false, nullsFirst: false }], { fn, n: N }) ?? {
          idx: Int32Array.from(part.keys()),
          n,
        };
        const got = new Set(idx.subarray(0, kept));
        const r = ranks(part, ord, fn);
        if (fn !== 'row_number') {
          expect([...got].sort((x, y) => x - y)).toEqual(r.flatMap((x, i) => (x <= N ? [i] : [])));
          continue;
        }
        // row_number: per partition min(N, size) rows, none worse than one left out
        for (let g = 0; g < groups; g++) {
          const rows = [...part.keys()].filter((i) => part[i] === g);
          const mine = rows.filter((i) => got.has(i));
          expect(mine.length).toBe(Math.min(N, rows.length));
          const worst = Math.max(...mine.map((i) => ord[i]));
          for (const i of rows) if (!got.has(i)) expect(ord[i]).toBeGreaterThanOrEqual(worst);
        }
      }
      // a map task's batches pruned as one: the rows of the two batches kept are those kept of them as one batch,
      // when few enough are kept to be worth it (about a quarter at most), else every row
      const op = { kind: 'topn' as const, partitionBy: [0], orderBy: [{ col: 1, desc: true, nullsFirst: false }] };
      const cut = Math.floor(n / 3);
      const slice = (from: number, to: number) =>
        ({ length: to - from, columns: [col(part.slice(from, to)), col(ord.slice(from, to))] }) as unknown as Batch;
      const ids = (bs: Batch[]) => bs.flatMap((x) => Array.from(x.columns[1].values as Int32Array));
      const parts = topNBatches([slice(0, cut), slice(cut, n)], { ...op, fn: 'rank', n: 2 });
      const whole = topNRows(b, [0], op.orderBy, { fn: 'rank', n: 2 });
      const kept = ids(parts);
      if (kept.length === n) continue;
      pruned++;
      expect(kept).toEqual(Array.from(whole!.idx.subarray(0, whole!.n), (i) => ord[i]));
    }
    expect(pruned).toBeGreaterThan(3);
  });

  it("a map task's first rows show too many partitions to prune: its rows left whole; few partitions still pruned", () => {
    // 20,000 rows: 15,000 partitions (the latest order per customer) are left as they are; 50 (the top line items
    // per supplier) pruned as before, to the rows the kernel keeps of them as one batch
    const op = (fn: TopN['fn'], n: number) => ({
      kind: 'topn' as const,
      fn,
      n,
      partitionBy: [0],
      orderBy: [{ col: 1, desc: false, nullsFirst: false }],
    });
    const rows = 20000;
    const batchOf = (groups: number) => {
      const part = Int32Array.from({ length: rows }, (_, i) => (i * 7919) % groups);
      const ord = Int32Array.from({ length: rows }, (_, i) => (i * 104729) % 1000);
      return { length: rows, columns: [col(part), col(ord)] } as unknown as Batch;
    };
    const many = batchOf(15000);
    expect(topNBatches([many], op('row_number', 1))[0]).toBe(many);
    const half = (b: Batch, from: number, to: number) =>
      ({
        length: to - from,
        columns: b.columns.map((c) => col((c.values as Int32Array).slice(from, to))),
      }) as unknown as Batch;
    expect(topNBatches([half(many, 0, 12000), half(many, 12000, rows)], op('rank', 1)).map((b) => b.length)).toEqual([
      12000, 8000,
    ]);
    const few = batchOf(50);
    const kept = topNBatches([few], op('rank', 3));
    const whole = topNRows(few, [0], op('rank', 3).orderBy, { fn: 'rank', n: 3 })!;
    expect(kept[0].length).toBe(whole.n);
    expect(kept[0].length).toBeLessThan(rows / 4);
  });
});
