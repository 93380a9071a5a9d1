// Aggregation before joins (plan/eager-push.ts) against DuckDB: a fact's decimal, integer and float sums, counts,
// minima and maxima summed per foreign key below the joins that bring in a dimension's key and its columns (TPC-H
// q10's shape), with negative values, nulls, several scales, a hot key split in two levels, a dimension whose key
// repeats (the grouping on the key alone falls back to every column), and a sum that overflows as it did before.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { explainPlan, loadPlan, runPlan } from '../dist/index.js';
import { groupsOf } from '../dist/agg/aggregate.js';
import type { Column } from '../dist/kernels/column.js';
import { ROOT, expectSame, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-eager-push-');
const F = path.join(dir, 'f.parquet'),
  C = path.join(dir, 'c.parquet'),
  C2 = path.join(dir, 'c2.parquet'),
  N = path.join(dir, 'n.parquet'),
  BIG = path.join(dir, 'big.parquet'),
  HOT = path.join(dir, 'hot.parquet');

beforeAll(async () => {
  // line items: customer key 1 holds a third of the rows (a hot key); some keys have no customer
  await writeParquet(
    F,
    `SELECT CASE WHEN i % 3 = 0 THEN 1 ELSE i % 997 END::BIGINT AS fk,
       CASE WHEN i % 11 = 0 THEN NULL ELSE ((i * 7919) % 200001 - 100000) / 100 END::DECIMAL(12,2) AS price,
       ((i % 10) / 100)::DECIMAL(4,2) AS disc,
       CASE WHEN i % 7 = 0 THEN NULL ELSE ((i * 31) % 20001 - 10000) / 10000 END::DECIMAL(18,4) AS d4,
       (i * 1000000007 % 99991 - 50000)::DECIMAL(30,3) AS wide,
       CASE WHEN i % 13 = 0 THEN NULL ELSE (i % 17) - 8 END::INTEGER AS q,
       (i % 9) * 0.5::DOUBLE AS f
     FROM range(0, 30000) t(i)`,
    4096,
  );
  const cust = (from: number, to: number) =>
    `SELECT i::BIGINT AS ck, 'Customer#' || lpad(i::VARCHAR, 9, '0') AS name,
       'address of customer ' || i || ' somewhere long enough to matter' AS addr, (i % 25)::INTEGER AS nk,
       ((i * 13) % 100000 - 5000) / 100::DECIMAL(12,2) AS bal FROM range(${from}, ${to}) t(i)`;
  await writeParquet(C, cust(0, 30000), 4096);
  // a key per row but for the hot key 1 (a third of the rows): combiners pass the rows through, key 1's partition
  // is skewed
  await writeParquet(
    HOT,
    `SELECT CASE WHEN i % 3 = 0 THEN 1 ELSE i END::BIGINT AS fk, (i % 1000 - 500)::DECIMAL(12,2) AS price,
       ((i % 10) / 100)::DECIMAL(4,2) AS disc, NULL::DECIMAL(18,4) AS d4, i::DECIMAL(30,3) AS wide,
       (i % 5)::INTEGER AS q, 1.5::DOUBLE AS f
     FROM range(0, 30000) t(i)`,
    4096,
  );
  // customer keys 5 and 6 twice: 5 with the same columns (one group, its sums doubled), 6 with another name (two groups)
  await writeParquet(
    C2,
    `${cust(0, 900)} UNION ALL SELECT ck, name, addr, nk, bal FROM (${cust(5, 6)}) UNION ALL
     SELECT ck, name || ' the second', addr, nk, bal FROM (${cust(6, 7)})`,
    256,
  );
  await writeParquet(N, `SELECT i::INTEGER AS nk, 'NATION ' || i AS nname FROM range(0, 25) t(i)`, 256);
  // sums past 38 digits on key 1 only
  await writeParquet(
    BIG,
    `SELECT (i % 3)::BIGINT AS fk, CASE WHEN i % 3 = 1 THEN 60000000000000000000000000000000000000 ELSE 1 END::DECIMAL(38,0) AS price,
       0::DECIMAL(4,2) AS disc, 0::DECIMAL(18,4) AS d4, 0::DECIMAL(30,3) AS wide, 0::INTEGER AS q, 0::DOUBLE AS f
     FROM range(0, 30) t(i)`,
  );
});

const scan = (source: string, columns: string[]) => ({ op: 'scan', source, columns });
const F_COLS = ['fk', 'price', 'disc', 'd4', 'wide', 'q', 'f'];
const C_COLS = ['ck', 'name', 'addr', 'nk', 'bal'];

/** The q10 shape: aggregate by the customer's key and columns over (fact ⋈ customer) ⋈ nation. */
function plan(cust: string, fact = F, aggregates: object[] = AGGS) {
  return {
    version: 1,
    sources: { f: { parquet: fact }, c: { parquet: cust }, n: { parquet: N } },
    query: {
      op: 'aggregate',
      groupBy: ['ck', 'name', 'bal', 'nname', 'addr'],
      aggregates,
      input: {
        op: 'join',
        type: 'inner',
        on: [['nk', 'nk']],
        left: {
          op: 'join',
          type: 'inner',
          on: [['fk', 'ck']],
          left: scan('f', F_COLS),
          right: scan('c', C_COLS),
        },
        right: scan('n', ['nk', 'nname']),
      },
    },
  };
}
const revenue = {
  fn: '*',
  args: [{ column: 'price' }, { fn: '-', args: [{ value: 1 }, { column: 'disc' }] }],
};
const AGGS = [
  { fn: 'sum', expr: revenue, as: 'revenue' },
  { fn: 'sum', column: 'price', as: 'sp' },
  { fn: 'sum', column: 'd4', as: 's4' },
  { fn: 'sum', column: 'wide', as: 'sw' },
  { fn: 'sum', column: 'q', as: 'sq' },
  { fn: 'sum', column: 'f', as: 'sf' },
  { fn: 'count', as: 'n' },
  { fn: 'count', column: 'price', as: 'np' },
  { fn: 'min', column: 'd4', as: 'min4' },
  { fn: 'max', column: 'price', as: 'maxp' },
];
const sqlOf = (cust: string, fact = F) =>
  `SELECT ck, name, bal, nname, addr, sum(price * (1 - disc)), sum(price), sum(d4), sum(wide), sum(q), sum(f),
     count(*), count(price), min(d4), max(price)
   FROM read_parquet('${fact}') f JOIN read_parquet('${cust}') c ON fk = ck
     JOIN read_parquet('${N}') n ON c.nk = n.nk
   GROUP BY ck, name, bal, nname, addr`;

const stages = (r: Awaited<ReturnType<typeof runPlan>>) => new Set(r.stats.tasks.map((t) => t.stage));

describe('aggregation before joins', () => {
  it('sums decimals (negative, null, three scales, a product), integers and floats per key first', async () => {
    for (const broadcastBytes of [undefined, 0]) {
      const opts = { workers: 2, partitions: 5, ...(broadcastBytes === 0 ? { broadcastBytes } : {}) };
      await expectSame(plan(C), sqlOf(C), opts);
      const r = await runPlan(plan(C), { ...opts, writeOutput: false });
      // the fact's rows were aggregated by fk below the joins: 997 keys, not 30,000 rows, meet the customers
      expect(stages(r).has('aggregate-1.eager')).toBe(true);
      const into = r.stats.shuffles.find((s) => s.id === 'aggregate-1.input');
      if (into) expect(into.partitionRows.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(997);
      expect(r.stats.tasks.filter((t) => t.stage === 'aggregate-1.eager').length).toBeGreaterThan(0);
    }
  });

  it('is the same answer with eager aggregation off, and off it is not rewritten', async () => {
    const opts = { workers: 2, partitions: 4, eagerAggregation: false };
    await expectSame(plan(C), sqlOf(C), opts);
    const r = await runPlan(plan(C), { ...opts, writeOutput: false });
    expect(stages(r).has('aggregate-1.eager')).toBe(false);
  });

  it('splits the hot key (a third of the rows) in two levels and keeps the answer', async () => {
    const opts = {
      workers: 2,
      partitions: 4,
      skew: { strategy: 'key' as const, thresholdBytes: 1, factor: 1.5, advisoryPartitionBytes: 64 },
      combiners: true,
    };
    await expectSame(plan(C, HOT), sqlOf(C, HOT), opts);
    const r = await runPlan(plan(C, HOT), { ...opts, writeOutput: false });
    const eager = r.stats.aggregates.find((a) => a.id === 'aggregate-1.eager');
    expect(eager?.splits.some((x) => x.method === 'two-level')).toBe(true);
  });

  it('groups by every column where the key repeats in the dimension (same and different columns)', async () => {
    for (const partitions of [1, 3]) {
      await expectSame(plan(C2), sqlOf(C2), { workers: 2, partitions });
      await expectSame(plan(C2), sqlOf(C2), { workers: 2, partitions, broadcastBytes: 0 });
    }
  });

  it('spills under a tiny budget with the same answer', async () => {
    const opts = { workers: 2, partitions: 4, memoryLimit: 64 * 1024, broadcastBytes: 0 };
    await expectSame(plan(C), sqlOf(C), opts);
    const r = await runPlan(plan(C), { ...opts, writeOutput: false });
    expect(stages(r).has('aggregate-1.eager')).toBe(true);
    expect(r.stats.spilledBytes).toBeGreaterThan(0);
  });

  it('fails on a sum past 38 digits as it does without the rewrite', async () => {
    const big = plan(C, BIG, [{ fn: 'sum', column: 'price', as: 'sp' }]);
    const on = runPlan(big, { workers: 2, partitions: 2, writeOutput: false });
    await expect(on).rejects.toThrow(/beyond 38 digits/);
    const off = runPlan(big, { workers: 2, partitions: 2, writeOutput: false, eagerAggregation: false });
    await expect(off).rejects.toThrow(/beyond 38 digits/);
  });

  it('is not applied to avg, count_distinct, a left join or a group-by without the dimension key', async () => {
    const noKey = plan(C);
    (noKey.query as { groupBy: string[] }).groupBy = ['name', 'nname'];
    const avg = plan(C, F, [{ fn: 'avg', column: 'price', as: 'a' }]);
    const distinct = plan(C, F, [{ fn: 'count', column: 'price', distinct: true, as: 'a' }]);
    const left = plan(C);
    (left.query.input.left as { type: string }).type = 'left';
    for (const q of [noKey, avg, distinct, left]) {
      const r = await runPlan(q, { workers: 2, partitions: 3, writeOutput: false });
      expect(stages(r).has('aggregate-1.eager')).toBe(false);
    }
  });
});

describe('where the dimension side holds a semi join', () => {
  // TPC-H q18: the orders of more than 300 units (a semi join) meet the line items; pre-aggregating every line item
  // by order would group the rows the join drops (all but 399 of 6M at SF 1). q10's customers are a plain scan.
  const eagerStages = async (q: string) => {
    const lp = await loadPlan(path.join(ROOT, 'plans', 'tpch', `${q}.json`), { workers: 2 });
    return explainPlan(lp)
      .split('\n')
      .filter((l) => /\.eager: aggregate/.test(l)).length;
  };
  it('is not applied (TPC-H q18), and still is to q10', async () => {
    expect(await eagerStages('q18')).toBe(0);
    expect(await eagerStages('q10')).toBe(1);
  });
});

describe('groups found by a lead column, the others checked (agg/group-ids.ts)', () => {
  const ints = (xs: number[]): Column => ({
    type: { id: 'int64' },
    length: xs.length,
    values: BigInt64Array.from(xs, BigInt),
    valid: null,
  });
  const strs = (xs: (string | null)[]): Column => {
    const bytes = xs.map((x) => new TextEncoder().encode(x ?? ''));
    const offsets = new Int32Array(xs.length + 1);
    bytes.forEach((b, i) => {
      offsets[i + 1] = offsets[i] + b.length;
    });
    const values = new Uint8Array(offsets[xs.length]);
    bytes.forEach((b, i) => values.set(b, offsets[i]));
    const valid = xs.includes(null) ? Uint8Array.from(xs, (x) => (x === null ? 0 : 1)) : null;
    return { type: { id: 'utf8' }, length: xs.length, values, offsets, valid };
  };
  const wide = (xs: bigint[]): Column => {
    const v = new BigInt64Array(2 * xs.length);
    xs.forEach((x, i) => {
      v[2 * i] = BigInt.asIntN(64, x);
      v[2 * i + 1] = x >> 64n;
    });
    return { type: { id: 'decimal', precision: 30, scale: 2 }, length: xs.length, values: v, valid: null };
  };
  const count = (cols: Column[], lead: number) =>
    groupsOf(
      { length: cols[0].length, columns: cols },
      cols.map((_, i) => i),
      undefined,
      false,
      lead,
    ).nGroups;

  it('keeps the key groups where the other columns agree, and groups by all where they do not', () => {
    const key = ints([1, 2, 1, 3, 2, 1]);
    const same = strs(['a', 'b', 'a', null, 'b', 'a']);
    expect(count([key, same], 1)).toBe(3);
    // key 1 with "a" and "ab" (same first byte), key 3 twice with null and "": four groups, as without the lead
    for (const other of [
      strs(['a', 'b', 'ab', 'c', 'b', 'a']),
      strs(['a', 'b', 'a', null, 'b', '']),
      strs(['a', 'b', 'a', 'c', 'b', 'a']),
    ]) {
      const k2 = ints([1, 2, 1, 3, 3, 1]);
      expect(count([k2, other], 1)).toBe(count([k2, other], 0));
    }
    // 128-bit decimals differing in the upper word only
    const dec = wide([5n, 7n, 5n + (1n << 64n), 9n, 7n, 5n]);
    expect(count([key, dec], 1)).toBe(4);
    expect(count([key, dec], 1)).toBe(count([key, dec], 0));
    expect(count([key, wide([5n, 7n, 5n, 9n, 7n, 5n])], 1)).toBe(3);
  });
});
