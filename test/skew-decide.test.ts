// The skew decision on hand-written statistics, and the Space-Saving sketch.
import { describe, expect, it } from 'vitest';
import { type SideStats, detectSkew, planReduceTasks } from '../dist/skew/decide.js';
import { packRowSlices } from '../dist/skew/slices.js';
import { SpaceSaving, mergeSketches } from '../dist/skew/sketch.js';
import { zipfKeys } from '../dist/bench/zipf.js';

const KB = 1024;
const opts = {
  enabled: true,
  factor: 5,
  thresholdBytes: 10 * KB,
  advisoryPartitionBytes: 4 * KB,
  strategy: 'partition' as const,
};

/** A side from per-map-task partition sizes in KB. */
function side(mapKb: number[][], hotKeys: SideStats['hotKeys'] = []): SideStats {
  const P = mapKb[0].length;
  const partitionBytes = Array.from({ length: P }, (_, p) => mapKb.reduce((s, m) => s + m[p] * KB, 0));
  const mapBytes = mapKb.map((m) => m.map((x) => x * KB));
  return {
    partitionBytes,
    partitionRows: partitionBytes.map((b) => b / 16),
    mapBytes,
    mapRows: mapBytes.map((m) => m.map((b) => b / 16)),
    hotKeys,
  };
}

// 4 map tasks x 6 partitions; partition 2 of the left is skewed (40 KB against a median of 4 KB).
const left = side([
  [1, 1, 10, 1, 1, 1],
  [1, 1, 10, 1, 1, 1],
  [1, 1, 10, 1, 1, 1],
  [1, 1, 10, 1, 1, 1],
]);
const right = side([
  [1, 1, 1, 1, 1, 1],
  [1, 1, 1, 1, 1, 1],
  [1, 1, 1, 1, 1, 1],
  [1, 1, 1, 1, 1, 1],
]);

describe('detectSkew', () => {
  it('needs both factor x median and the threshold', () => {
    expect(detectSkew(left, opts)).toEqual({ medianBytes: 4 * KB, thresholdBytes: 20 * KB, skewedPartitions: [2] });
    expect(detectSkew(left, { ...opts, thresholdBytes: 64 * KB }).skewedPartitions).toEqual([]);
    expect(detectSkew(left, { ...opts, factor: 20 }).skewedPartitions).toEqual([]);
  });
});

describe('packRowSlices', () => {
  it('cuts the rows of blocks into ceil(total / cap) pieces of nearly equal bytes, across and within blocks', () => {
    // 4 blocks of 3 rows, 1 byte a row, cap 6: two pieces of whole blocks
    expect(packRowSlices([3, 3, 3, 3], [3, 3, 3, 3], 6)).toEqual([
      [
        [0, 0, 3],
        [1, 0, 3],
      ],
      [
        [2, 0, 3],
        [3, 0, 3],
      ],
    ]);
    // one block of 40 rows (one map output), cap 6: 7 pieces of 5 or 6 rows
    const one = packRowSlices([40], [40], 6);
    expect(one.length).toBe(7);
    expect(
      one
        .flat()
        .map(([, from, to]) => to - from)
        .every((n) => n >= 5 && n <= 6),
    ).toBe(true);
    expect(one.flat().map(([, from]) => from)).toEqual([0, 6, 12, 18, 23, 29, 35]);
    // blocks of different row widths and empty ones: every row exactly once, in order, each piece within one row of the mean
    const rows = [10, 0, 100, 7, 1],
      bytes = [400, 0, 200, 70, 5];
    const pieces = packRowSlices(rows, bytes, 100);
    expect(pieces.length).toBe(Math.ceil(675 / 100));
    const flat = pieces.flat();
    for (let b = 0; b < rows.length; b++) {
      const parts = flat.filter(([i]) => i === b);
      expect(parts.reduce((a, [, f, t]) => a + t - f, 0)).toBe(rows[b]);
      parts.forEach(([, f], k) => expect(f).toBe(k === 0 ? 0 : parts[k - 1][2]));
    }
    for (const piece of pieces) {
      const got = piece.reduce((a, [i, f, t]) => a + (bytes[i] / rows[i]) * (t - f), 0);
      expect(got).toBeLessThanOrEqual(675 / pieces.length + 40);
    }
  });
});

describe('planReduceTasks', () => {
  it('partition strategy, inner join: the skewed left partition becomes row ranges, each with the whole right partition', () => {
    const plan = planReduceTasks(left, right, 'inner', opts, 2);
    const split = plan.tasks.filter((t) => t.kind === 'map-range');
    // target 8 KB; the right partition (4 KB) joins every piece, so the left is cut into pieces of 4 KB: 10 of them
    expect(plan.targetBytes).toBe(8 * KB);
    expect(split.length).toBe(10);
    expect(split.every((t) => t.partition === 2 && t.right === null && t.bytes <= 8 * KB + 16)).toBe(true);
    // pieces cut inside map outputs: the first holds 256 of the 640 rows of map output 0
    expect(split.map((t: any) => t.left).sort()[0]).toEqual([[0, 0, 256]]);
    expect(plan.splits).toEqual([{ partition: 2, method: 'map-range', sides: ['left'], tasks: 10 }]);
    // every other partition is read exactly once
    const plain = plan.tasks.flatMap((t) => (t.kind === 'partitions' ? t.partitions : []));
    expect(plain.sort()).toEqual([0, 1, 3, 4, 5]);
    // largest first
    expect(plan.tasks.map((t) => t.bytes)).toEqual([...plan.tasks.map((t) => t.bytes)].sort((a, b) => b - a));
  });
  it('join types limit which side may split', () => {
    expect(planReduceTasks(left, right, 'left', opts).tasks.some((t) => t.kind === 'map-range')).toBe(true);
    expect(planReduceTasks(left, right, 'semi', opts).tasks.some((t) => t.kind === 'map-range')).toBe(true);
    const r = planReduceTasks(left, right, 'right', opts);
    expect(r.tasks.some((t) => t.kind === 'map-range')).toBe(false);
    expect(r.splits[0]).toMatchObject({
      partition: 2,
      method: 'none',
      reason: 'a right join cannot split that side by map ranges',
    });
    const f = planReduceTasks(left, right, 'full', opts);
    expect(f.splits[0]).toMatchObject({ method: 'none', reason: 'a full join splits no side by map ranges' });
    // the mirror image: a skewed right side splits for right joins only
    expect(planReduceTasks(right, left, 'right', opts).tasks.filter((t) => t.kind === 'map-range').length).toBe(10);
    expect(planReduceTasks(right, left, 'left', opts).tasks.some((t) => t.kind === 'map-range')).toBe(false);
  });
  it('both sides skewed in an inner join: the cross product of ranges, half the target each', () => {
    const plan = planReduceTasks(left, left, 'inner', opts);
    const split = plan.tasks.filter((t) => t.kind === 'map-range');
    expect(split.length).toBe(100); // 40 KB a side in pieces of 4 KB
    expect(Math.max(...split.map((t) => t.bytes))).toBeLessThanOrEqual(plan.targetBytes + 32);
  });
  it('key strategy: hot keys get a grid, the rest of the partition one task; semi never splits the right side', () => {
    const hotL = [{ hash: 11, match: '7:0', display: ['7'], rows: 2000, partition: 2 }];
    const hotR = [{ hash: 11, match: '7:0', display: ['7'], rows: 1200, partition: 2 }];
    const l = side(
      [
        [1, 1, 10, 1, 1, 1],
        [1, 1, 10, 1, 1, 1],
        [1, 1, 10, 1, 1, 1],
        [1, 1, 10, 1, 1, 1],
      ],
      hotL,
    );
    const r = side(
      [
        [1, 1, 5, 1, 1, 1],
        [1, 1, 5, 1, 1, 1],
        [1, 1, 5, 1, 1, 1],
        [1, 1, 5, 1, 1, 1],
      ],
      hotR,
    );
    // target = mean of the non-skewed partitions (8 KB); key 7: 32 KB on the left, 19.2 KB on the right
    const plan = planReduceTasks(l, r, 'full', { ...opts, strategy: 'key' });
    expect(plan.targetBytes).toBe(8 * KB);
    const hk = plan.tasks.find((t) => t.kind === 'hot-keys')!;
    expect(hk).toMatchObject({ partition: 2, keys: [{ match: '7:0', leftRows: 2000, rightRows: 1200 }] });
    // input alone would need 4 x 3 pieces; the 2.4M output pairs grow the grid to its cap, both ways
    const k = (hk as any).keys[0];
    expect(k.leftPieces).toBeGreaterThan(4);
    expect(k.rightPieces).toBeGreaterThan(3);
    expect(k.leftPieces * k.rightPieces).toBeGreaterThanOrEqual(256);
    expect(k.leftPieces * k.rightPieces).toBeLessThan(256 + 21);
    expect(plan.splits[0]).toMatchObject({
      partition: 2,
      method: 'hot-key',
      tasks: k.leftPieces * k.rightPieces + 1,
      keys: [{ key: ['7'] }],
    });
    const semi = planReduceTasks(l, r, 'semi', { ...opts, strategy: 'key' }).tasks.find((t) => t.kind === 'hot-keys');
    expect(semi).toMatchObject({ keys: [{ leftPieces: 4, rightPieces: 1 }] });
  });
  it('auto: map ranges where they balance the partition, hot keys where they cannot and the keys carry most of it', () => {
    const auto = { ...opts, strategy: 'auto' as const };
    const hot = (rows: number) => [{ hash: 5, match: '1:0', display: ['1'], rows, partition: 2 }];
    // the hot key's rows come from four map outputs of 10 KB (target 8 KB): ranges of one output each balance it
    const spreadOut = side(
      [
        [1, 1, 10, 1, 1, 1],
        [1, 1, 10, 1, 1, 1],
        [1, 1, 10, 1, 1, 1],
        [1, 1, 10, 1, 1, 1],
      ],
      hot(2400),
    );
    expect(planReduceTasks(spreadOut, right, 'inner', auto).splits[0].method).toBe('map-range');
    // ... from one map output of 37 KB: row ranges cut inside it (no pass to cut the key out)
    const oneMapper = side(
      [
        [1, 1, 37, 1, 1, 1],
        [1, 1, 1, 1, 1, 1],
        [1, 1, 1, 1, 1, 1],
        [1, 1, 1, 1, 1, 1],
      ],
      hot(2300),
    );
    const ranged = planReduceTasks(oneMapper, right, 'inner', auto);
    expect(ranged.splits[0].method).toBe('map-range');
    expect(Math.max(...ranged.tasks.filter((t) => t.kind === 'map-range').map((t) => t.bytes))).toBeLessThanOrEqual(
      1.25 * ranged.targetBytes,
    );
    // a side the join type cannot cut: the key is cut out
    expect(planReduceTasks(right, oneMapper, 'left', auto).splits[0].method).toBe('hot-key');
    // a full join splits no side by map ranges
    expect(planReduceTasks(spreadOut, right, 'full', auto).splits[0].method).toBe('hot-key');
    // hot keys that carry little of the partition: map ranges, or nothing
    const fewHot = side(
      [
        [1, 1, 37, 1, 1, 1],
        [1, 1, 1, 1, 1, 1],
        [1, 1, 1, 1, 1, 1],
        [1, 1, 1, 1, 1, 1],
      ],
      hot(400),
    );
    expect(planReduceTasks(fewHot, right, 'inner', auto).splits[0].method).not.toBe('hot-key');
    // a key hot on both sides multiplies: only its grid splits the output
    const hotL = [{ hash: 11, match: '7:0', display: ['7'], rows: 2000, partition: 2 }];
    const hotR = [{ hash: 11, match: '7:0', display: ['7'], rows: 1200, partition: 2 }];
    const l = side(
      [
        [1, 1, 10, 1, 1, 1],
        [1, 1, 10, 1, 1, 1],
        [1, 1, 10, 1, 1, 1],
        [1, 1, 10, 1, 1, 1],
      ],
      hotL,
    );
    const r = side(
      [
        [1, 1, 5, 1, 1, 1],
        [1, 1, 5, 1, 1, 1],
        [1, 1, 5, 1, 1, 1],
        [1, 1, 5, 1, 1, 1],
      ],
      hotR,
    );
    expect(planReduceTasks(l, r, 'inner', auto).splits[0]).toMatchObject({
      method: 'hot-key',
      sides: expect.arrayContaining(['output']),
    });
  });
  it('coalesces runs of small partitions into one task when the data is small (below 1 MB per task)', () => {
    const small = side([[1, 1, 1, 1, 1, 1, 1, 1]]);
    const plan = planReduceTasks(small, small, 'inner', { ...opts, advisoryPartitionBytes: 64 * KB }, 2);
    expect(plan.tasks.map((t) => (t.kind === 'partitions' ? t.partitions : []))).toEqual([[0, 1, 2, 3, 4, 5, 6, 7]]);
    // (four tasks per worker on larger data: test/paths.test.ts)
  });
  it('disabled: one task per partition that can produce rows, nothing skewed', () => {
    const plan = planReduceTasks(left, side([[0, 1, 1, 1, 1, 1]]), 'inner', { ...opts, enabled: false });
    expect(plan.tasks.length).toBe(5); // partition 0 has no right rows
    expect(plan.left.skewedPartitions).toEqual([]);
  });
});

describe('SpaceSaving', () => {
  it('reports every key above n/(m+1), never under the truth, at most n/(m+1) over', () => {
    for (const [s, m] of [
      [1.1, 50],
      [0.7, 200],
      [1.5, 20],
    ] as const) {
      const keys = zipfKeys(60000, 5000, s, 11);
      const truth = new Map<number, number>();
      for (const k of keys) truth.set(k, (truth.get(k) ?? 0) + 1);
      const ss = new SpaceSaving(m);
      const hash = Int32Array.from(keys, (k) => k * 7 + 1);
      ss.addAll(hash, null, 0);
      const sum = ss.summary();
      expect(sum.n).toBe(60000);
      const bound = sum.n / (m + 1);
      expect(sum.d).toBeLessThanOrEqual(bound);
      const got = new Map(sum.entries.map((e) => [(e.hash - 1) / 7, e]));
      for (const [k, c] of truth) if (c > bound) expect(got.has(k), `key ${k} with ${c} rows`).toBe(true);
      for (const [k, e] of got) {
        const t = truth.get(k) ?? 0;
        expect(e.count).toBeGreaterThanOrEqual(t);
        expect(e.count - t).toBeLessThanOrEqual(bound);
        expect(keys[e.row]).toBe(k); // the remembered row holds this key
      }
    }
  });
  it('merged summaries keep the guarantees over the union', () => {
    const parts = Array.from({ length: 6 }, (_, t) => {
      const keys = zipfKeys(10000, 3000, 1.2, 100 + t);
      if (t === 3) keys.fill(2999, 0, 4000); // a key hot in one map task only
      return keys;
    });
    const m = 64;
    const sketches = parts.map((keys) => {
      const ss = new SpaceSaving(m);
      ss.addAll(Int32Array.from(keys), null, 0);
      return ss.summary();
    });
    const merged = mergeSketches(sketches, m);
    const truth = new Map<number, number>();
    for (const keys of parts) for (const k of keys) truth.set(k, (truth.get(k) ?? 0) + 1);
    const bound = 60000 / (m + 1);
    for (const [k, c] of truth) if (c > bound) expect(merged.some((e) => e.hash === k)).toBe(true);
    for (const e of merged) {
      const t = truth.get(e.hash) ?? 0;
      expect(e.count).toBeGreaterThanOrEqual(t);
      expect(e.count - t).toBeLessThanOrEqual(bound);
    }
    expect(merged.find((e) => e.hash === 2999)!.count).toBeGreaterThanOrEqual(4000);
  });
});
