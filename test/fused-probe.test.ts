// The fused join aggregate over decimals: exact sums and averages of 64- and
// 128-bit decimals read through the join's row indices (agg/decimal-words.ts),
// on the broadcast probe and on the shuffle join's reduce tasks; two
// probes in a row merged into one table (physical/join/merge.ts). Against DuckDB,
// against bigint sums, and the overflow error of the general path.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type RunOptions, runPlan } from '../dist/index.js';
import { DecimalWords } from '../dist/agg/decimal-words.js';
import { expectSame, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-jadec-');
const F = path.join(dir, 'fact.parquet'),
  D = path.join(dir, 'dim.parquet'),
  B = path.join(dir, 'big.parquet');
const N = path.join(dir, 'nation.parquet'),
  M = path.join(dir, 'many.parquet');
const FACT = `read_parquet('${F}')`,
  DIM = `read_parquet('${D}')`,
  NATION = `read_parquet('${N}')`,
  MANY = `read_parquet('${M}')`;

beforeAll(async () => {
  // 4,000 facts over keys 0..249 (some null, some without a dimension row); p and q nullable, negative; w past 64 bits in some rows
  await writeParquet(
    F,
    `SELECT i::BIGINT AS id, CASE WHEN i % 53 = 0 THEN NULL ELSE ((i * 7) % 250)::INTEGER END AS k, (i % 3)::INTEGER AS c,
      CASE WHEN i % 6 = 0 THEN NULL ELSE (((i * 7919) % 200003 - 100000) / 100)::DECIMAL(15,2) END AS p,
      CASE WHEN i % 4 = 0 THEN NULL ELSE (((i * 31) % 101) / 1000)::DECIMAL(5,3) END AS q,
      CASE WHEN i % 8 = 0 THEN NULL WHEN i % 100 = 7 THEN (i - 2000) * 12345678901234567890123.4567
        ELSE ((i * 104729) % 1000003 - 500000) / 10000 END::DECIMAL(30,4) AS w,
      CASE WHEN (i * 7) % 250 >= 200 THEN 4611686018427387904 ELSE i END::BIGINT AS a
    FROM range(0, 4000) t(i)`,
    500,
  );
  await writeParquet(
    D,
    `SELECT i::INTEGER AS k, 'r' || (i % 6) AS region, (i / 8)::DECIMAL(12,3) AS e,
      (i % 8)::BIGINT AS nk FROM range(0, 200) t(i)`,
    100,
  );
  // a third table keyed by the dimension's nk: each key once, and one with each key twice
  await writeParquet(N, `SELECT i::BIGINT AS nk, 'n' || (i % 3) AS nname FROM range(0, 8) t(i)`, 100);
  await writeParquet(M, `SELECT (i % 9)::BIGINT AS nk, 'm' || i AS label FROM range(0, 18) t(i)`, 100);
  // two rows of one group whose sum is beyond 38 digits
  await writeParquet(
    B,
    `SELECT (i % 2)::INTEGER AS k, 60000000000000000000000000000000000000::DECIMAL(38,0) AS x FROM range(0, 4) t(i)`,
    10,
  );
});

const plan = (query: object) => ({
  version: 1,
  sources: { f: { parquet: F }, d: { parquet: D }, b: { parquet: B }, n: { parquet: N }, m: { parquet: M } },
  query,
});
const scan = (source: string) => ({ op: 'scan', source });
const join = (type: string, left: object, right: object) => ({ op: 'join', type, on: [['k', 'k']], left, right });
const col = (column: string) => ({ column });
const f = (fn: string, ...args: object[]) => ({ fn, args });
const SHUFFLE: RunOptions = { workers: 2, partitions: 3, broadcastBytes: 0, eagerAggregation: false };
const BROADCAST: RunOptions = { workers: 2 };

async function paths(p: object, o: RunOptions) {
  const r = await runPlan(p, { ...o, writeOutput: false });
  return r.stats.tasks.filter((t) => t.join).map((t) => t.join!);
}

describe('DecimalWords (pure)', () => {
  it('sums 64- and 128-bit values through row indices exactly, over enough rows to carry every word', () => {
    // group 0 takes about 4.5M values of about 2^63: its low words alone sum past 2^54 unless carried
    for (const [precision, lanes] of [
      [18, 1],
      [38, 2],
    ] as const) {
      const n = 1 << 16,
        chunks = 80,
        G = 2;
      const type = { id: 'decimal', precision, scale: 2 } as const;
      const values = new BigInt64Array(n * lanes),
        valid = new Uint8Array(n).fill(1);
      const vals: bigint[] = [];
      for (let j = 0; j < n; j++) {
        // near the top of 64 bits, both signs; past 64 bits in the 128-bit case
        let x = (j % 5 === 0 ? -1n : 1n) * (9223372036854775000n - BigInt(j));
        if (lanes === 2 && j % 3 === 0) x *= 1000000007n;
        vals.push(x);
        if (j % 11 === 0) valid[j] = 0;
        if (lanes === 1) values[j] = x;
        else {
          values[2 * j] = BigInt.asIntN(64, x);
          values[2 * j + 1] = x >> 64n;
        }
      }
      const c = { type, length: n, values, valid };
      const acc = new DecimalWords(G),
        cnt = new Float64Array(G);
      const times = Array.from({ length: G }, () => new Float64Array(n)),
        wantCnt = new Array(G).fill(0);
      const gids = new Int32Array(n),
        idx = new Int32Array(n);
      for (let k = 0; k < chunks; k++) {
        for (let i = 0; i < n; i++) {
          const j = (i * 7 + k) % n;
          idx[i] = i % 97 === 0 ? -1 : j;
          gids[i] = (i + k) % 8 === 0 ? 1 : 0;
          if (idx[i] >= 0 && valid[j]) {
            times[gids[i]][j]++;
            wantCnt[gids[i]]++;
          }
        }
        acc.add(c as never, gids, idx, n, cnt);
      }
      for (let g = 0; g < G; g++) {
        let want = 0n;
        for (let j = 0; j < n; j++) if (times[g][j]) want += BigInt(times[g][j]) * vals[j];
        expect(acc.sum(g)).toBe(want);
        expect(cnt[g]).toBe(wantCnt[g]);
      }
    }
  });
});

describe('fused join aggregate over decimals, against DuckDB', () => {
  const aggs = [
    { fn: 'sum', column: 'p', as: 'sp' },
    { fn: 'avg', column: 'p', as: 'ap' },
    { fn: 'sum', column: 'w', as: 'sw' },
    { fn: 'avg', column: 'w', as: 'aw' },
    { fn: 'sum', column: 'q', as: 'sq' },
    { fn: 'count', as: 'n' },
  ];
  const sel = 'sum(p), avg(p), sum(w), avg(w), sum(q), count(*)';

  it('grouped by the table, the probing side or nothing; broadcast and shuffle; the fused path taken', async () => {
    const cases: [object, string, string[]][] = [
      [
        { groupBy: ['region'], input: join('inner', scan('f'), scan('d')) },
        `SELECT region, ${sel} FROM ${FACT} l JOIN ${DIM} r ON l.k = r.k GROUP BY region`,
        ['region'],
      ],
      [
        { groupBy: ['region'], input: join('inner', scan('d'), scan('f')) },
        `SELECT region, ${sel} FROM ${DIM} l JOIN ${FACT} r ON l.k = r.k GROUP BY region`,
        ['region'],
      ],
      [
        { groupBy: ['c'], input: join('left', scan('f'), scan('d')) },
        `SELECT c, ${sel} FROM ${FACT} l LEFT JOIN ${DIM} r ON l.k = r.k GROUP BY c`,
        ['c'],
      ],
      [
        { groupBy: [], input: join('inner', scan('f'), scan('d')) },
        `SELECT ${sel} FROM ${FACT} l JOIN ${DIM} r ON l.k = r.k`,
        [],
      ],
      // decimals of the table's side summed, grouped by the probing side's column
      [
        {
          groupBy: ['c'],
          input: join('inner', scan('f'), scan('d')),
          aggregates: [
            { fn: 'sum', column: 'e', as: 'se' },
            { fn: 'avg', column: 'e', as: 'ae' },
          ],
        },
        `SELECT c, sum(e), avg(e) FROM ${FACT} l JOIN ${DIM} r ON l.k = r.k GROUP BY c`,
        ['c'],
      ],
    ];
    for (const [q, sql] of cases) {
      const p = plan({ op: 'aggregate', aggregates: aggs, ...q });
      for (const o of [BROADCAST, SHUFFLE]) {
        await expectSame(p, sql, o);
        const js = await paths(p, o);
        expect(js.length, sql).toBeGreaterThan(0);
        for (const j of js) expect(j.path, sql).toBe('fused-aggregate');
      }
    }
  });

  it("a sum beyond 38 digits is the general path's error", async () => {
    const p = plan({
      op: 'aggregate',
      groupBy: ['region'],
      aggregates: [{ fn: 'sum', column: 'x', as: 'sx' }],
      input: join('inner', scan('b'), scan('d')),
    });
    const message = async (o: RunOptions) => {
      try {
        await runPlan(p, { ...o, writeOutput: false });
      } catch (e) {
        return { name: (e as Error).name, message: (e as Error).message };
      }
      return null;
    };
    const general = await message({ workers: 2, combiners: false });
    expect(general?.message).toMatch(/sum of "sx".*beyond 38 digits/);
    for (const o of [BROADCAST, SHUFFLE]) {
      const got = await message(o);
      expect(got).toMatchObject({ name: general!.name });
      expect(got!.message).toMatch(
        /sum of "sx": decimal result 120000000000000000000000000000000000000 is beyond 38 digits/,
      );
    }
    // the general path's combiner names the same partial sum
    expect(
      (await message({ ...BROADCAST, broadcastBytes: 0, eagerAggregation: false, partitions: 1 }))!.message,
    ).toMatch(/beyond 38 digits/);
  });
});

describe("two probes in a row, the second keyed by the first table's columns", () => {
  // the order as written (the join order by cost may put the small tables together first: plan/join-order.ts)
  const snow = (type: string, third: string | object) => ({
    op: 'join',
    type,
    reorder: false,
    on: [['nk', 'nk']],
    left: join('inner', scan('f'), scan('d')),
    right: typeof third === 'string' ? scan(third) : third,
  });
  const revenue = f('*', col('p'), f('-', { value: 1 }, col('q')));

  it("are one table: grouped by both tables' columns, the aggregate fuses with the probe (q10's shape)", async () => {
    const p = plan({
      op: 'aggregate',
      groupBy: ['region', 'nname'],
      input: snow('inner', 'n'),
      aggregates: [
        { fn: 'sum', column: 'p', as: 'sp' },
        { fn: 'count', as: 'cnt' },
        { fn: 'max', column: 'e', as: 'me' },
      ],
    });
    const sql = `SELECT region, nname, sum(p), count(*), max(e) FROM ${FACT} l JOIN ${DIM} d ON l.k = d.k JOIN ${NATION} n ON d.nk = n.nk GROUP BY region, nname`;
    await expectSame(p, sql, BROADCAST);
    // the fused probe path itself (eager aggregation would sum the fact rows per k before the joins: plan/eager-push.ts)
    const js = await paths(p, { ...BROADCAST, eagerAggregation: false });
    expect(js.length).toBeGreaterThan(0);
    for (const j of js) expect(j).toMatchObject({ path: 'fused-aggregate', groups: 'thread' });
    // the joined rows themselves, no aggregate: the same rows
    await expectSame(
      plan(snow('inner', 'n')),
      `SELECT l.*, d.*, n.* FROM ${FACT} l JOIN ${DIM} d ON l.k = d.k JOIN ${NATION} n ON d.nk = n.nk`,
      BROADCAST,
    );
  });

  it('are left apart where a row of the first table matches none or two, or the second is not an inner join', async () => {
    const some = { op: 'filter', where: { column: 'nk', cmp: '<', value: 7 }, input: scan('n') };
    for (const [type, third, T, kw] of [
      ['inner', 'm', MANY, 'JOIN'],
      ['left', 'n', NATION, 'LEFT JOIN'],
      ['inner', some, `(SELECT * FROM ${NATION} WHERE nk < 7)`, 'JOIN'],
    ] as const) {
      const label = third === 'm' ? 'label' : 'nname';
      const p = plan({
        op: 'aggregate',
        groupBy: ['region', label],
        input: snow(type, third),
        aggregates: [
          { fn: 'sum', expr: revenue, as: 'rev' },
          { fn: 'count', as: 'cnt' },
        ],
      });
      await expectSame(
        p,
        `SELECT region, ${label}, sum(p * (1 - q)), count(*) FROM ${FACT} l JOIN ${DIM} d ON l.k = d.k ${kw} ${T} n ON d.nk = n.nk GROUP BY region, ${label}`,
        BROADCAST,
      );
      expect((await paths(p, BROADCAST)).filter((j) => j.path === 'fused-aggregate')).toEqual([]);
    }
  });

  it('a table of unique keys grouped by its key: each row its own group, the same results', async () => {
    const p = plan({
      op: 'aggregate',
      groupBy: ['k', 'region'],
      input: join('inner', scan('f'), scan('d')),
      aggregates: [
        { fn: 'sum', column: 'p', as: 'sp' },
        { fn: 'count', as: 'cnt' },
      ],
    });
    await expectSame(
      p,
      `SELECT d.k, region, sum(p), count(*) FROM ${FACT} l JOIN ${DIM} d ON l.k = d.k GROUP BY d.k, region`,
      BROADCAST,
    );
    for (const j of await paths(p, BROADCAST)) expect(j).toMatchObject({ path: 'fused-aggregate', groups: 'table' });
  });
});
