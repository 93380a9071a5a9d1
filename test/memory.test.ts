// One memory budget per process (spill/spiller.ts): queries running at once in a library process share the data
// budget, as DuckDB's memory_limit is one per database. Two spillers' blocks count against one budget; three
// concurrent queries never hold more than it, give DuckDB's answers, and hand every byte back when they end.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runPlan } from '../dist/index.js';
import { processMemory, Spiller } from '../dist/spill/spiller.js';
import { blockBytes } from '../dist/spill/block.js';
import { expectFileMatchesQuery, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-memory-');
const file = (n: string) => path.join(dir, n);
const spillDir = file('spill');
const block = (n: number) => ({
  length: n,
  columns: [{ type: { id: 'int64' }, length: n, values: new BigInt64Array(n), valid: null }],
});

beforeAll(async () => {
  await writeParquet(
    file('fact.parquet'),
    `SELECT i::BIGINT AS id, (CASE WHEN i % 3 = 0 THEN 7 ELSE i % 997 END)::BIGINT AS k,
      (i % 100)::BIGINT AS amount FROM range(0, 60000) t(i)`,
    5000,
  );
  await writeParquet(
    file('dim.parquet'),
    `SELECT i::BIGINT AS k, 'r' || (i % 5) AS region FROM range(0, 997) t(i)`,
    500,
  );
});

describe('one memory budget per process', () => {
  it('a second query spills what the first one holds beyond the shared budget, and both hand it back', async () => {
    const bytes = blockBytes(block(100));
    const before = processMemory();
    const a = new Spiller(before.held + 3 * bytes, spillDir),
      b = new Spiller(before.held + 3 * bytes, spillDir);
    expect(a.admit([block(100)]).spilled).toBe(0);
    expect(b.admit([block(100)]).spilled).toBe(0);
    expect(a.free()).toBe(bytes);
    // each alone would have room for a second block; together only one more fits
    expect(a.admit([block(100)]).spilled).toBe(0);
    expect(b.admit([block(100)]).spilled).toBeGreaterThan(0);
    expect(processMemory().held).toBe(before.held + 3 * bytes);
    a.release(bytes);
    expect(b.free()).toBe(bytes);
    await a.close();
    await b.close();
    expect(processMemory()).toEqual(before);
  });

  it("three concurrent queries stay within one budget, give DuckDB's answer and return every byte", async () => {
    const plan = (out: string) => ({
      version: 1,
      sources: { f: { parquet: file('fact.parquet') }, d: { parquet: file('dim.parquet') } },
      query: {
        op: 'aggregate',
        groupBy: ['region'],
        aggregates: [
          { fn: 'count', as: 'n' },
          { fn: 'sum', column: 'amount', as: 's' },
        ],
        input: {
          op: 'join',
          type: 'inner',
          on: [['k', 'k']],
          left: { op: 'scan', source: 'f' },
          right: { op: 'scan', source: 'd' },
        },
      },
      output: { path: out },
    });
    const opts = {
      workers: 2,
      partitions: 8,
      broadcastBytes: 0,
      inThreadBytes: 0,
      combiners: false,
      spillDir,
      memoryLimit: 600_000,
    };
    let most = 0,
      queries = 0,
      over = 0;
    const watch = setInterval(() => {
      const m = processMemory();
      most = Math.max(most, m.held);
      queries = Math.max(queries, m.queries);
      if (m.held > m.limit) over = Math.max(over, m.held - m.limit);
    }, 1);
    const outs = [0, 1, 2].map((i) => file(`out-${i}.parquet`));
    const runs = await Promise.all(outs.map((o) => runPlan(plan(o), opts))).finally(() => clearInterval(watch));
    expect(queries).toBeGreaterThanOrEqual(2);
    expect(over).toBe(0);
    expect(most).toBeGreaterThan(0);
    const sql = `SELECT region, count(*) AS n, sum(amount) AS s FROM read_parquet('${file('fact.parquet')}') f
      JOIN read_parquet('${file('dim.parquet')}') d USING (k) GROUP BY region`;
    for (const o of outs) expect(await expectFileMatchesQuery(o, sql)).toBe(5);
    // the shuffles of three queries (about 1 MB each as shuffled) outgrow a budget of 300 KB between them
    expect(runs.reduce((a, r) => a + r.stats.spilledBytes, 0)).toBeGreaterThan(0);
    expect(processMemory()).toEqual({ held: 0, limit: 0, queries: 0 });
  });
});
