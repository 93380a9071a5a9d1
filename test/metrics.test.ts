// Metrics each operator owns (physical/operators.ts analyzeTask, analyzeRun): a task's metrics are each family's
// payload, folded into the documented task statistics by the family's own analyze; what an operator reports of the
// run lands in the statistics' arrays; and whether the coordinator holds a task's output is the sink's (or the
// source's) declaration (physical/kernels.ts outputHeld), not a switch in the scheduler.
import { describe, expect, it } from 'vitest';
import { outputHeld } from '../dist/physical/kernels.js';
import { analyzeRun, analyzeTask } from '../dist/physical/operators.js';
import { emptyStats } from '../dist/physical/stats.js';

const path = { path: 'fused-aggregate', build: 'right', matchChunks: 3, groups: 'table', lookup: 'pairs' } as const;

describe("a task's metrics, folded by their owners", () => {
  it('a scan that read masks and probed a broadcast table: join, read and masks, in the documented order', () => {
    const figures = analyzeTask({ scan: { read: 'direct', masks: 2 }, join: path });
    expect(figures).toEqual({ join: path, read: 'direct', masks: 2 });
    expect(Object.keys(figures)).toEqual(['join', 'read', 'masks']);
  });

  it('absent or empty metrics add no field (no masks: 0, no read: undefined)', () => {
    expect(analyzeTask(undefined)).toEqual({});
    expect(analyzeTask({ scan: { read: 'ipc', masks: 0 } })).toEqual({ read: 'ipc' });
    expect(Object.keys(analyzeTask({ scan: {} }))).toEqual([]);
  });
});

describe('what operators report of the run', () => {
  it('each owner writes its own array of the statistics', () => {
    const s = emptyStats();
    const shuffle = {
      id: 'join-1.left',
      partitions: 1,
      partitionRows: [4],
      partitionBytes: [32],
      medianBytes: 32,
      thresholdBytes: 64,
      skewedPartitions: [],
      hotKeys: [],
    };
    analyzeRun('exchange', shuffle, s);
    analyzeRun('sort', { ...shuffle, id: 'sort-1.range', partitionedBy: 'join' }, s);
    analyzeRun('aggregate', { eager: 'aggregate-1' }, s);
    analyzeRun('aggregate', { split: { id: 'aggregate-2', targetBytes: 8, splits: [] } }, s);
    analyzeRun('window', { id: 'window-1', splits: [] }, s);
    analyzeRun('repeat', { id: 'join-2', readers: 2, held: true, rows: 4, bytes: 32 }, s);
    expect(s.shuffles.map((x) => x.id)).toEqual(['join-1.left', 'sort-1.range']);
    expect(s.eager).toEqual(['aggregate-1']);
    expect(s.aggregates.map((x) => x.id)).toEqual(['aggregate-2']);
    expect(s.windows?.map((x) => x.id)).toEqual(['window-1']);
    expect(s.repeats?.map((x) => x.id)).toEqual(['join-2']);
    expect(s.joins).toEqual([]);
  });
});

describe('which outputs the coordinator holds: what the sink (or source) declares', () => {
  const scan = { kind: 'batches', schema: [], batches: [] } as const;
  const task = (sink: object, source: object = scan) => ({ source, ops: [], sink }) as never;
  it('shuffle and range blocks, and a sort input sampled for its boundaries, are held; collected rows are not', () => {
    expect(outputHeld(task({ kind: 'partition', keys: [0], norms: [], partitions: 2, nullSeed: 0 }))).toBe(true);
    expect(outputHeld(task({ kind: 'range', by: [], bounds: { length: 0, columns: [] }, nullSeed: 0 }))).toBe(true);
    expect(outputHeld(task({ kind: 'collect', sample: 100 }))).toBe(true);
    expect(outputHeld(task({ kind: 'collect' }))).toBe(false);
    expect(outputHeld(task({ kind: 'collect', share: true }))).toBe(false);
    expect(outputHeld(task({ kind: 'keyStats', keys: [0], norms: [] }))).toBe(false);
  });
  it("a hot-key split's pieces are held whatever its sink", () => {
    const split = { kind: 'split', schema: [], blocks: [], keys: [0], norms: [], hot: [] };
    expect(outputHeld(task({ kind: 'collect' }, split))).toBe(true);
  });
});
