// `skewjoin gen --tpch --skew`: JCC-H's skew (dbgen -k) in the TPC-H tables. The five hot customers, parts (their
// suppliers) and order dates hold the shares bench/tpch.ts HOT_SHARES gives them, measured by DuckDB over the files;
// the keys still join (every line item's part and supplier in partsupp), and the uniform tables do not change.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { HOT_SHARES, hotKeys, tpchCounts } from '../dist/bench/tpch.js';
import { cli, duckRows, tmpDir } from './helpers.js';

const SCALE = 0.01;
const dir = tmpDir('sj-gen-jcch-');
const t = (name: string) => `read_parquet('${path.join(dir, `${name}.parquet`)}')`;

/** The hottest `n` values of a column and their shares of the table's rows, hottest first. */
async function hottest(table: string, col: string, n: number): Promise<[string, number][]> {
  const rows = await duckRows(
    `SELECT ${col}::VARCHAR, count(*) / (SELECT count(*) FROM ${t(table)}) AS sh FROM ${t(table)}
     GROUP BY ${col} ORDER BY sh DESC, ${col} LIMIT ${n}`,
  );
  return rows.map((r) => [String(r[0]), Number(r[1])]);
}

describe('skewjoin gen --tpch --skew', () => {
  beforeAll(() => {
    const r = cli(['gen', '--tpch', '--skew', '--scale', String(SCALE), '--out', dir]);
    expect(r.code, r.stderr).toBe(0);
  });

  const hot = hotKeys(tpchCounts(SCALE));
  const near = (got: [string, number][], keys: (number | string)[], slack: number) => {
    // the k-th hottest is the k-th hot key, within `slack` of its share (the uniform rows add a little)
    expect(got.slice(0, keys.length).map((x) => x[0])).toEqual(keys.map(String));
    got.slice(0, keys.length).forEach(([, share], k) => expect(Math.abs(share - HOT_SHARES[k])).toBeLessThan(slack));
    // the next value is a uniform one, far below the coldest hot key
    expect(got[keys.length][1]).toBeLessThan(HOT_SHARES.at(-1)! / 4);
  };

  it('gives the hot customers, parts and dates their shares; the rest stays uniform', async () => {
    expect(HOT_SHARES.reduce((a, b) => a + b, 0)).toBeCloseTo(0.2, 10);
    near(await hottest('orders', 'o_custkey', 6), hot.customers, 0.01);
    near(await hottest('lineitem', 'l_partkey', 6), hot.parts, 0.01);
    const day = (d: number) => new Date(d * 86_400_000).toISOString().slice(0, 10);
    near(await hottest('orders', 'o_orderdate', 6), hot.dates.map(day), 0.01);
  });

  it("puts a hot part's line items on one supplier each: five hot suppliers, and every key still joins", async () => {
    const [[dangling, badCustomers, lines]] = await duckRows(
      `SELECT
        (SELECT count(*) FROM ${t('lineitem')} l ANTI JOIN ${t('partsupp')} ON l_partkey = ps_partkey AND l_suppkey = ps_suppkey),
        (SELECT count(*) FROM ${t('orders')} WHERE o_custkey % 3 = 0),
        (SELECT count(*) FROM ${t('lineitem')})`,
    );
    expect([dangling, badCustomers]).toEqual(['0', '0']);
    // each hot part's hot line items on one supplier: the five largest (part, supplier) pairs, five distinct suppliers
    const pairs = await duckRows(
      `SELECT l_partkey, l_suppkey FROM ${t('lineitem')} WHERE l_partkey IN (${hot.parts.join(',')})
       GROUP BY ALL ORDER BY count(*) DESC LIMIT 5`,
    );
    const hotSuppliers = pairs.map((r) => String(r[1]));
    expect(new Set(hotSuppliers).size).toBe(5);
    expect(pairs.map((r) => Number(r[0]))).toEqual(hot.parts);
    // they are the hottest suppliers, holding at least their parts' shares (and their share of the uniform line items)
    const top = await hottest('lineitem', 'l_suppkey', 5);
    expect(top.map((x) => x[0])).toEqual(hotSuppliers);
    top.forEach(([, share], k) => expect(share).toBeGreaterThanOrEqual(HOT_SHARES[k] - 0.01));
    expect(Number(lines)).toBeGreaterThan(50_000);
  });

  it('refuses --skew without --tpch (exit 2)', () => {
    const r = cli(['gen', '--skew', '--out', tmpDir('sj-gen-jcch-bad-')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--skew');
    expect(r.stderr).toContain('--tpch');
  });
});
