// One memory budget per process (spill/spiller.ts): queries running at once in a library process share the data
// budget, as DuckDB's memory_limit is one per database. Two spillers' blocks count against one budget; three
// concurrent queries never hold more than it (the join sides they read to measure them too), give DuckDB's answers,
// and hand every byte back when they end; shared memory let go of is collected without waiting for V8's own reasons.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runPlan } from '../dist/index.js';
import { processMemory, Spiller } from '../dist/spill/spiller.js';
import { blockBytes } from '../dist/spill/block.js';
import { arrowTyped, duckTable, expectFileMatchesQuery, expectTypedEqual, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-memory-');
const file = (n: string) => path.join(dir, n);
const spillDir = file('spill');
const block = (n: number) => ({
  length: n,
  columns: [{ type: { id: 'int64' }, length: n, values: new BigInt64Array(n), valid: null }],
});

/**
 * The process budget sampled every millisecond while queries run: the most held, the most queries at once, and how
 * far held data went past the limit; `stop` ends the sampling.
 */
function watchMemory() {
  const seen = { most: 0, queries: 0, over: 0, stop: () => clearInterval(timer) };
  const timer = setInterval(() => {
    const m = processMemory();
    seen.most = Math.max(seen.most, m.held);
    seen.queries = Math.max(seen.queries, m.queries);
    if (m.held > m.limit) seen.over = Math.max(seen.over, m.held - m.limit);
  }, 1);
  return seen;
}

beforeAll(async () => {
  await writeParquet(
    file('fact.parquet'),
    `SELECT i::BIGINT AS id, (CASE WHEN i % 3 = 0 THEN 7 ELSE i % 997 END)::BIGINT AS k,
      (i % 100)::BIGINT AS amount FROM range(0, 60000) t(i)`,
    5000,
  );
  await writeParquet(
    file('other.parquet'),
    `SELECT i::BIGINT AS k2, (i % 997)::BIGINT AS k, (i % 7)::BIGINT AS w FROM range(0, 60000) t(i)`,
    1000,
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
    const seen = watchMemory();
    const outs = [0, 1, 2].map((i) => file(`out-${i}.parquet`));
    const runs = await Promise.all(outs.map((o) => runPlan(plan(o), opts))).finally(seen.stop);
    expect(seen.queries).toBeGreaterThanOrEqual(2);
    expect(seen.over).toBe(0);
    expect(seen.most).toBeGreaterThan(0);
    const sql = `SELECT region, count(*) AS n, sum(amount) AS s FROM read_parquet('${file('fact.parquet')}') f
      JOIN read_parquet('${file('dim.parquet')}') d USING (k) GROUP BY region`;
    for (const o of outs) expect(await expectFileMatchesQuery(o, sql)).toBe(5);
    // the shuffles of three queries (about 1 MB each as shuffled) outgrow a budget of 300 KB between them
    expect(runs.reduce((a, r) => a + r.stats.spilledBytes, 0)).toBeGreaterThan(0);
    expect(processMemory()).toEqual({ held: 0, limit: 0, queries: 0 });
  });

  it('join sides read to measure them for a broadcast are held within the budget, not reserved past it', async () => {
    // two sides of about 1.4 MB, each under broadcastBytes, against a budget of 300 KB between three queries: a
    // side is read no further than the budget has room (and its last read tasks' rows), the rest shuffled
    const plan = {
      version: 1,
      sources: { f: { parquet: file('fact.parquet') }, o: { parquet: file('other.parquet') } },
      query: {
        op: 'aggregate',
        groupBy: ['w'],
        aggregates: [
          { fn: 'count', as: 'n' },
          { fn: 'sum', column: 'amount', as: 's' },
        ],
        input: {
          op: 'join',
          type: 'inner',
          on: [['id', 'k2']],
          left: { op: 'scan', source: 'f', columns: ['id', 'amount'] },
          right: { op: 'scan', source: 'o', columns: ['k2', 'w'] },
        },
      },
    };
    const opts = { workers: 2, partitions: 8, inThreadBytes: 0, spillDir, memoryLimit: 600_000 };
    const seen = watchMemory();
    const runs = await Promise.all([0, 1, 2].map(() => runPlan(plan, opts))).finally(seen.stop);
    // at most the rows of the read tasks in flight when a read passed its cap (three tasks of one or two 5,000-row
    // groups, 80 KB each): before, each query reserved both sides whole (960 KB each) after reading them, past the
    // budget by 1.6 MB with one query and 5.4 MB with three
    expect(seen.over).toBeLessThan(600_000);
    const theirs =
      await duckTable(`SELECT w, count(*) AS n, sum(amount) AS s FROM read_parquet('${file('fact.parquet')}')
      f JOIN read_parquet('${file('other.parquet')}') o ON f.id = o.k2 GROUP BY w`);
    for (const r of runs) expectTypedEqual(arrowTyped(r.toArrow()), theirs);
    expect(processMemory()).toEqual({ held: 0, limit: 0, queries: 0 });
  });

  it('shared memory the coordinator lets go of is collected once a quarter of the budget was let go of', async () => {
    // shuffle blocks are SharedArrayBuffers V8 does not count on the main thread; nothing else here allocates, so
    // without the collection the spiller asks for none would come
    const s = new Spiller(16 << 20, spillDir);
    const refs: WeakRef<SharedArrayBuffer>[] = [];
    (() => {
      const blocks = Array.from({ length: 4 }, () => {
        const values = new BigInt64Array(new SharedArrayBuffer(300_000 * 8));
        refs.push(new WeakRef(values.buffer as SharedArrayBuffer));
        return { length: 300_000, columns: [{ type: { id: 'int64' }, length: 300_000, values, valid: null }] };
      });
      expect(s.admit(blocks).spilled).toBe(0);
      s.done([blocks]);
    })();
    for (let i = 0; i < 100 && refs.some((r) => r.deref()); i++) await new Promise((r) => setTimeout(r, 20));
    expect(refs.filter((r) => r.deref()).length).toBe(0);
    await s.close();
  });
});
