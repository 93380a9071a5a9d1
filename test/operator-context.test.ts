// The join operator's coordinator side tested alone (physical/join/stage.ts, physical/join/tasks.ts) against a fake
// ExecContext (physical/operator.ts): no pool, no scans, no budget; batches handed in, every task run on this thread and
// recorded. What the coordinator plans (which tasks, labelled how, reported how) is checked apart from running it.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runJoin } from '../dist/physical/join/stage.js';
import { graceJoin } from '../dist/physical/join/tasks.js';
import { loadPlan } from '../dist/index.js';
import { type Batch, rowCount } from '../dist/kernels/column.js';
import { FakeContext } from './fake-context.js';
import { tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-opctx-');
const file = (n: string) => path.join(dir, n);

const int64 = (values: number[]): Batch => ({
  length: values.length,
  columns: [{ type: { id: 'int64' }, length: values.length, values: BigInt64Array.from(values, BigInt), valid: null }],
});

beforeAll(async () => {
  await writeParquet(file('a.parquet'), 'SELECT i::BIGINT AS x FROM range(0, 3) t(i)');
  await writeParquet(file('b.parquet'), 'SELECT i::BIGINT AS y FROM range(0, 3) t(i)');
});

async function bound(on: string[][], type = 'inner', execution: object = {}) {
  const plan = {
    version: 1,
    sources: { a: { parquet: file('a.parquet') }, b: { parquet: file('b.parquet') } },
    query: { op: 'join', type, on, left: { op: 'scan', source: 'a' }, right: { op: 'scan', source: 'b' } },
    execution,
  };
  return loadPlan(plan);
}

describe('the join operator against a fake context', () => {
  it('a cross join replicates the smaller side to tasks of the larger whose pairs fit the target, and says so', async () => {
    // pairs of 16 bytes, 256 KB of them a task (the least a task makes): 8192 rows of the larger side against 2
    const lp = await bound([], 'inner', { skew: { advisoryPartitionBytes: 32 } });
    const rows = (from: number) => int64(Array.from({ length: 8192 }, (_, i) => from + i));
    const big = [rows(0), rows(8192), rows(16384)],
      small = [int64([100, 200])];
    const ctx = new FakeContext(
      lp.settings,
      new Map<unknown, Batch[]>([
        [lp.root.left, big],
        [lp.root.right, small],
      ]),
    );
    const results = await runJoin(ctx as any, lp.root as any, [], { stage: 'output', sink: { kind: 'collect' } });
    expect(ctx.tasks.filter((t) => t.stage === lp.root.id)).toEqual(
      big.map((_, i) => ({
        stage: lp.root.id,
        kind: 'reduce',
        partition: i,
        split: 'cross join: right side replicated',
      })),
    );
    expect(rowCount(results.flatMap((r: any) => r.batches))).toBe(3 * 8192 * 2);
    expect(ctx.stats.joins).toEqual([
      expect.objectContaining({
        strategy: 'cross',
        broadcast: { side: 'right', rows: 2, bytes: 16 },
        tasks: 3,
        reason: 'cross join: the smaller side (right) replicated to every task of the larger',
      }),
    ]);
    await ctx.close();
  });

  it('a build side over the task share is cut into grace pieces by key hash: every match found once', async () => {
    const lp = await bound([['x', 'y']], 'inner', { skew: { advisoryPartitionBytes: 64 } });
    const node = lp.root as any;
    const keys = (n: number, m: number) => Array.from({ length: n }, (_, i) => (i * 7) % m);
    const left = [int64(keys(40, 13)), int64(keys(30, 11))],
      right = [int64(keys(50, 17)), int64(keys(20, 5))];
    // a share of 100 bytes against a 560-byte build side: 6 pieces
    const ctx = new FakeContext(lp.settings, new Map(), { share: 100 });
    const shape = {
      leftSchema: node.left.schema,
      rightSchema: node.right.schema,
      leftKeys: node.leftKeys,
      rightKeys: node.rightKeys,
    };
    const jc = { node, shape, ops: [], sink: { kind: 'collect' }, l: null, r: null, targetBytes: 0, partitions: 1 };
    const results = await graceJoin(ctx as any, jc as any, left, right, { kind: 'reduce', partition: 0 });
    expect(results).not.toBeNull();
    const count = (bs: Batch[]) => {
      const m = new Map<bigint, number>();
      for (const b of bs) for (const v of b.columns[0].values as BigInt64Array) m.set(v, (m.get(v) ?? 0) + 1);
      return m;
    };
    const l = count(left),
      r = count(right);
    let expected = 0;
    for (const [k, n] of l) expected += n * (r.get(k) ?? 0);
    expect(rowCount(results!.flatMap((x: any) => x.batches))).toBe(expected);
    const cuts = ctx.tasks.filter((t) => t.kind === 'split'),
      pieces = ctx.tasks.filter((t) => t.kind === 'reduce');
    expect(cuts.map((t) => t.split!.replace(/ chunk.*/, ''))).toEqual(
      expect.arrayContaining(['grace left', 'grace right']),
    );
    expect(pieces.length).toBeGreaterThan(1);
    for (const t of pieces) expect(t.split).toMatch(/^grace piece \d+\/6$/);
    // what the cut held goes back to the budget once the pieces are joined
    expect(ctx.released).toBeGreaterThan(0);
    await ctx.close();
  });
});
