// The aggregate, sort, limit and exchange operators' coordinator sides (physical/<family>/stage.ts) tested alone against a fake ExecContext
// (test/fake-context.ts): rows handed in per scan, every task run on this thread and recorded. Each test checks
// what the operator planned (its tasks, its statistics, what it asked of the pipeline below) and its rows.
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadPlan } from '../dist/index.js';
import { type Batch, rowCount } from '../dist/kernels/column.js';
import { runAggregate } from '../dist/physical/aggregate/stage.js';
import { runFromRead, shuffle } from '../dist/physical/shuffle.js';
import { takeRows } from '../dist/physical/limit/stage.js';
import { pipelineOf } from '../dist/physical/pipeline.js';
import { runSort } from '../dist/physical/sort/stage.js';
import { FakeContext } from './fake-context.js';
import { tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-operators-');
const file = (n: string) => path.join(dir, n);
const fakes: FakeContext[] = [];
afterEach(async () => {
  for (const f of fakes.splice(0)) await f.close();
});

const int64 = (...cols: number[][]): Batch => ({
  length: cols[0].length,
  columns: cols.map((values) => ({
    type: { id: 'int64' },
    length: values.length,
    values: BigInt64Array.from(values, BigInt),
    valid: null,
  })),
});
const rowsOf = (bs: Batch[]) => {
  const out: number[][] = [];
  for (const b of bs)
    for (let i = 0; i < b.length; i++) out.push(b.columns.map((c) => Number((c.values as BigInt64Array)[i])));
  return out;
};

beforeAll(async () => {
  await writeParquet(file('t.parquet'), 'SELECT i::BIGINT AS k, i::BIGINT AS v FROM range(0, 3) t(i)');
});

async function bound(query: object, execution: object = {}) {
  return loadPlan({ version: 1, sources: { t: { parquet: file('t.parquet') } }, query, execution });
}

function fake(lp: any, scan: any, rows: Batch[], o = {}) {
  const f = new FakeContext(lp.settings, new Map([[scan, rows]]), o);
  fakes.push(f);
  return f;
}

describe('the aggregate operator against a fake context', () => {
  // key 0 carries most rows: 8 map tasks of 200 rows (150 of key 0, 50 spread over keys 1-50)
  const batches = Array.from({ length: 8 }, (_, t) => {
    const k = Array.from({ length: 200 }, (_, i) => (i < 150 ? 0 : 1 + ((t * 50 + i) % 50)));
    return int64(
      k,
      k.map((_, i) => t * 1000 + i),
    );
  });
  const expected = new Map<number, number>();
  for (const r of rowsOf(batches)) expected.set(r[0], (expected.get(r[0]) ?? 0) + r[1]);

  it('a skewed partition is aggregated in two levels; every group once, with its sum', async () => {
    const lp: any = await bound(
      {
        op: 'aggregate',
        input: { op: 'scan', source: 't' },
        groupBy: ['k'],
        aggregates: [{ fn: 'sum', column: 'v', as: 's' }],
      },
      { combiners: false, partitions: 8, skew: { factor: 2, thresholdBytes: 1, advisoryPartitionBytes: 1024 } },
    );
    const ex = fake(lp, lp.root.input, batches);
    const results = await runAggregate(ex as any, lp.root, [], { stage: 'output', sink: { kind: 'collect' } });
    const got = rowsOf(results.flatMap((r: any) => r.batches));
    expect(new Map(got.map((r) => [r[0], r[1]]))).toEqual(expected);
    expect(got.length).toBe(expected.size);
    // the input was shuffled by the map tasks, the hot partition split in two levels
    expect(ex.requests[0]).toMatchObject({ stage: lp.root.id, sink: { kind: 'partition', partitions: 8 } });
    expect(ex.stats.shuffles[0].id).toBe(`${lp.root.id}.input`);
    expect(ex.stats.aggregates[0].splits).toEqual([expect.objectContaining({ method: 'two-level' })]);
    expect(ex.tasks.filter((t) => t.kind === 'map')).toHaveLength(8);
    // the shuffle's memory went back to the budget
    expect(ex.released).toBeGreaterThan(0);
  });

  it('with combiners the map tasks ship partial states, and the same groups come out', async () => {
    const lp: any = await bound(
      {
        op: 'aggregate',
        input: { op: 'scan', source: 't' },
        groupBy: ['k'],
        aggregates: [{ fn: 'sum', column: 'v', as: 's' }],
      },
      { partitions: 4 },
    );
    const ex = fake(lp, lp.root.input, batches);
    const results = await runAggregate(ex as any, lp.root, [], { stage: 'output', sink: { kind: 'collect' } });
    expect(new Map(rowsOf(results.flatMap((r: any) => r.batches)).map((r) => [r[0], r[1]]))).toEqual(expected);
    expect(ex.requests[0].combine).toMatchObject({ groupBy: [0], passRows: true });
    expect(ex.stats.shuffles[0].combine.rowsAfter).toBeLessThan(ex.stats.shuffles[0].combine.rowsBefore);
  });
});

describe('the sort operator against a fake context', () => {
  it('asks the pipeline below for its ranges, cuts the rows into ranges by sampled bounds and emits them in order', async () => {
    const lp: any = await bound({ op: 'sort', input: { op: 'scan', source: 't' }, by: [{ column: 'k', desc: true }] });
    const batches = Array.from({ length: 6 }, (_, t) => {
      const k = Array.from({ length: 500 }, (_, i) => (i * 7919 + t * 104729) % 3001);
      return int64(k, k);
    });
    // a small task share: many ranges, several range tasks
    const ex = fake(lp, lp.root.input, batches, { share: 64 * 1024 });
    const results = await runSort(ex as any, lp.root, [], { stage: 'output', sink: { kind: 'collect' } });
    const ks = rowsOf(results.flatMap((r: any) => r.batches)).map((r) => r[0]);
    expect(ks).toEqual(
      rowsOf(batches)
        .map((r) => r[0])
        .sort((a, b) => b - a),
    );
    // the request below carries the range request (a shuffle join there could cut its rows itself)
    expect(ex.requests[0]).toMatchObject({
      stage: lp.root.id,
      sink: { kind: 'collect' },
      range: { stage: lp.root.id },
    });
    const shuffle = ex.stats.shuffles.find((s: any) => s.id === `${lp.root.id}.range`);
    expect(shuffle.partitionedBy).toBe('tasks');
    expect(shuffle.partitions).toBeGreaterThan(1);
    expect(ex.tasks.filter((t) => t.kind === 'reduce').length).toBeGreaterThan(1);
  });
});

describe('the limit operator against a fake context', () => {
  it('keeps offset + count rows and stops its input once it has them', async () => {
    const lp: any = await bound({ op: 'limit', input: { op: 'scan', source: 't' }, count: 5, offset: 12 });
    const batches = Array.from({ length: 10 }, (_, t) =>
      int64(
        [0, 1, 2, 3, 4].map((i) => t * 5 + i),
        [0, 0, 0, 0, 0],
      ),
    );
    const ex = fake(lp, lp.root.input, batches);
    const b = await takeRows(ex as any, lp.root);
    expect(rowsOf([b]).map((r) => r[0])).toEqual([12, 13, 14, 15, 16]);
    // 17 rows are enough: the fourth batch ends it
    expect(ex.streamedBatches).toBe(4);
  });
});

describe('the exchange against a fake context', () => {
  it('hash-partitions a node by its key, every row once, with the shuffle statistics', async () => {
    const lp: any = await bound({ op: 'scan', source: 't' });
    const batches = Array.from({ length: 3 }, (_, t) =>
      int64(
        Array.from({ length: 100 }, (_, i) => t * 100 + i),
        new Array(100).fill(1),
      ),
    );
    const ex = fake(lp, lp.root, batches);
    const spec = {
      keys: [0],
      norms: [lp.root.schema[0].type.id === 'int64' ? 'int64' : 'int64'],
      partitions: 4,
      spreadNulls: false,
    };
    const s = await shuffle(ex as any, lp.root, spec as any, 'x.input', 'x');
    expect(s.stats.partitionRows.reduce((a: number, b: number) => a + b, 0)).toBe(300);
    expect(s.byTask).toHaveLength(3);
    const keysOf = (p: number) => rowsOf(s.byTask.flatMap((bs: any) => (bs[p] ? [bs[p]] : []))).map((r) => r[0]);
    const all = [0, 1, 2, 3].flatMap(keysOf).sort((a, b) => a - b);
    expect(all).toEqual(Array.from({ length: 300 }, (_, i) => i));
    // a key lies in one partition only
    for (let p = 0; p < 4; p++)
      for (const k of keysOf(p)) for (let q = p + 1; q < 4; q++) expect(keysOf(q)).not.toContain(k);
    expect(ex.stats.shuffles).toEqual([expect.objectContaining({ id: 'x.input', partitions: 4 })]);
  });

  it('rows read already go on in a few packed tasks, and the rest of the pipeline after them', async () => {
    const lp: any = await bound({ op: 'scan', source: 't' });
    const small = Array.from({ length: 40 }, (_, i) => int64([i], [i]));
    const rest = [int64([100, 101], [0, 0])];
    const ex = fake(lp, lp.root, rest);
    const p = pipelineOf(lp.root);
    const read = { batches: small, rest: p };
    const results = await runFromRead(ex as any, p, read as any, 0, lp.root.schema, {
      stage: 'join-1',
      sink: { kind: 'collect' },
    });
    expect(rowCount(results.flatMap((r: any) => r.batches))).toBe(42);
    // 40 one-row batches packed into one task (they are far under a task's bytes), the rest in its own
    expect(ex.tasks.filter((t) => t.stage === 'join-1')).toHaveLength(2);
    expect(ex.requests).toEqual([expect.objectContaining({ stage: 'join-1', placement: false })]);
  });
});
