// The skew decision for one join: a pure function from the map-side shuffle
// statistics and the options to the list of reduce tasks. Nothing here runs
// anything, so it is tested on hand-written statistics.
//
// - A side's partition is skewed when its bytes exceed both factor x the
//   median partition of that side and thresholdBytes (as Spark's AQE).
// - "partition": split a skewed partition into contiguous row ranges of its
//   map outputs (skew/slices.ts: a range may be part of one map output), each
//   packed so that it and the whole matching partition of the other side hold
//   at most the target (inner: either side, both as a cross product, half the
//   target each; left, semi, anti: left only; right: right only; full: neither).
// - "key": each hot key of a skewed partition gets its own tasks, its rows on
//   each side cut into pieces, joined as a grid; the rest of the partition is
//   one ordinary task (the executor cuts both by the rows it finds: skew/cut.ts). Correct for every join type: a key
// present on both
//   sides has no unmatched rows, and a key on one side only has one piece on
//   the other. Semi and anti joins never split the right side of a key.
// - "auto": map ranges when the join type lets them cut every skewed side and
//   no key is hot on both sides (they cost no extra pass over the rows: being
//   row ranges, they balance whatever the map outputs); otherwise hot keys,
//   when the sketches found hot keys that carry most of the skewed partition.
// - Small partitions are packed together up to the target size (any
//   partitions: a join task over several partitions is still correct),
//   keeping about four tasks per worker.
// - Sizes are costs: bytes, the side a task builds its table on weighted
//   `buildWeight` times the side that probes it (1: plain bytes).
// - A key hot on both sides multiplies: its output (left rows x right rows)
//   counts toward the partition's size, and its grid is sized by output too.
import { median as ssMedian } from 'simple-statistics';
import type { JoinType } from '../plan/spec.js';
import { buildsLeft } from '../kernels/join.js';
import type { SkewSettings } from '../plan/load.js';
import { TASKS_PER_WORKER } from '../plan/defaults.js';
import { type RowSlice, packRowSlices, pieceCaps } from './slices.js';
import { hotKeySplits, outputBytes } from './hot-grid.js';
import type { HotKeySplit, SideStats } from './side-stats.js';

export type { SideStats };

/** A reduce task as planned; `bytes`: its input's cost (bytes, the built side's weighted by buildWeight). */
export type PlannedTask =
  /** one partition, or several small ones packed together */
  | { kind: 'partitions'; partitions: number[]; bytes: number }
  /** row ranges of one partition's map outputs (block index = map task); null: the whole side */
  | { kind: 'map-range'; partition: number; left: RowSlice[] | null; right: RowSlice[] | null; bytes: number }
  /**
   * hot keys cut out of a partition (the executor adds the rest task and the grids); `riders`: plain
   * partitions joined in the same task as each cell of the keys' grids, in order (skew/mix.ts)
   */
  | { kind: 'hot-keys'; partition: number; keys: HotKeySplit[]; bytes: number; riders?: number[][] };

export interface SideDecision {
  medianBytes: number;
  thresholdBytes: number;
  skewedPartitions: number[];
}

export interface SplitInfo {
  partition: number;
  method: 'map-range' | 'hot-key' | 'none';
  /** what was skewed: a side's input, or the output of keys hot on both sides */
  sides: ('left' | 'right' | 'output')[];
  tasks: number;
  keys?: { key: string[]; leftRows: number; rightRows: number; tasks: number }[];
  /** hot keys: split tasks that left the keys' rows in place (few runs of rows) and that cut them out (a copy) */
  cut?: { located: number; scattered: number };
  reason?: string;
}

/**
 * A built byte costs about twice a probing byte: what the executor weighs a
 * join task's input by when it sizes and packs tasks (the side a partition
 * builds is the one kernels/join.ts buildsLeft picks). Measured on the
 * benchmark's fact ⋈ dim at s = 1.5, one task at a time by CPU time: building
 * a dimension partition (table and groups) ~125 ns a row, probing 50-110 ns a
 * row (a hot key's range at the low end, many keys at the high end). Bytes
 * alone left tasks of mostly built rows 2-3x the median's time; a weight of 3
 * left the full outer join's tasks 1.8x apart by rows.
 */
export const BUILD_WEIGHT = 2;

export interface ReducePlan {
  tasks: PlannedTask[];
  targetBytes: number;
  left: SideDecision;
  right: SideDecision;
  splits: SplitInfo[];
}

/**
 * The median (simple-statistics: quickselect on a copy, the mean of the middle two for an even count); 0 for no values.
 */
export function median(xs: readonly number[]): number {
  return xs.length === 0 ? 0 : ssMedian(xs);
}

/** Whether a join partition can produce rows, given the rows of each side. */
export function reduceNeeded(type: JoinType, leftRows: number, rightRows: number): boolean {
  switch (type) {
    case 'inner':
    case 'semi':
      return leftRows > 0 && rightRows > 0;
    case 'left':
    case 'anti':
      return leftRows > 0;
    case 'right':
      return rightRows > 0;
    default:
      return leftRows > 0 || rightRows > 0;
  }
}

export function detectSkew(s: SideStats, o: SkewSettings): SideDecision {
  const med = median(s.partitionBytes);
  const thresholdBytes = Math.max(o.thresholdBytes, o.factor * med);
  const skewedPartitions: number[] = [];
  s.partitionBytes.forEach((b, p) => {
    if (b > o.factor * med && b > o.thresholdBytes) skewedPartitions.push(p);
  });
  return { medianBytes: med, thresholdBytes, skewedPartitions };
}

/** Rows of each map output of partition p (exact when the stats carry them). */
function mapRowsOf(s: SideStats, p: number): number[] {
  if (s.mapRows) return s.mapRows.map((m) => m[p] ?? 0);
  const per = s.partitionRows[p] > 0 ? s.partitionBytes[p] / s.partitionRows[p] : 1;
  return s.mapBytes.map((m) => Math.round((m[p] ?? 0) / per));
}

const MIN_COALESCED = 1024 * 1024;

/**
 * What small partitions are packed up to: the target, but keeping about TASKS_PER_WORKER tasks per worker, never below
 * 1 MB.
 */
export function coalesceCap(total: number, target: number, parallelism: number): number {
  return Math.min(target, Math.max(MIN_COALESCED, total / (TASKS_PER_WORKER * parallelism)));
}

/** First-fit decreasing: partitions into tasks of at most `cap` bytes (a larger partition alone). */
export function packPartitions(
  parts: number[],
  size: (p: number) => number,
  cap: number,
): Extract<PlannedTask, { kind: 'partitions' }>[] {
  const bins: { partitions: number[]; bytes: number }[] = [];
  for (const p of [...parts].sort((a, b) => size(b) - size(a) || a - b)) {
    const bin = bins.find((b) => b.bytes + size(p) <= cap);
    if (bin) {
      bin.partitions.push(p);
      bin.bytes += size(p);
    } else bins.push({ partitions: [p], bytes: size(p) });
  }
  return bins.map((b) => ({
    kind: 'partitions' as const,
    partitions: b.partitions.sort((x, y) => x - y),
    bytes: b.bytes,
  }));
}

export const canSplitLeft = (t: JoinType) => t === 'inner' || t === 'left' || t === 'semi' || t === 'anti';
export const canSplitRight = (t: JoinType) => t === 'inner' || t === 'right';

/** What planning one join's reduce tasks needs for each partition. */
interface JoinPlanning {
  left: SideStats;
  right: SideStats;
  type: JoinType;
  o: SkewSettings;
  /** the target task size in bytes */
  target: number;
  /** the weights of partition p's sides: the side its task builds costs buildWeight a byte */
  weights(p: number): [number, number];
  /** partition p's weighted bytes */
  size(p: number): number;
}

/**
 * @param parallelism worker threads: coalescing keeps at least about four tasks
 *   per worker (Spark's parallelism-first coalescing), never merging past 1 MB
 *   when the data is small.
 */
export function planReduceTasks(
  left: SideStats,
  right: SideStats,
  type: JoinType,
  o: SkewSettings,
  parallelism = 1,
  buildWeight = 1,
): ReducePlan {
  const P = left.partitionBytes.length;
  const needed = (p: number) => reduceNeeded(type, left.partitionRows[p], right.partitionRows[p]);
  const weights = (p: number): [number, number] =>
    buildsLeft(type, left.partitionRows[p], right.partitionRows[p]) ? [buildWeight, 1] : [1, buildWeight];
  const size = (p: number) => {
    const [wl, wr] = weights(p);
    return wl * left.partitionBytes[p] + wr * right.partitionBytes[p];
  };
  const dl = detectSkew(left, o),
    dr = detectSkew(right, o);
  if (!o.enabled) {
    const tasks: PlannedTask[] = [];
    for (let p = 0; p < P; p++) if (needed(p)) tasks.push({ kind: 'partitions', partitions: [p], bytes: size(p) });
    tasks.sort((a, b) => b.bytes - a.bytes);
    const none = { skewedPartitions: [] };
    return { tasks, targetBytes: 0, left: { ...dl, ...none }, right: { ...dr, ...none }, splits: [] };
  }
  const skewL = new Set(dl.skewedPartitions),
    skewR = new Set(dr.skewedPartitions);
  const skewOut = outputSkew(left, right, o);
  const nonSkewed: number[] = [];
  for (let p = 0; p < P; p++) if (!skewL.has(p) && !skewR.has(p) && !skewOut.has(p)) nonSkewed.push(size(p));
  const avg = nonSkewed.length ? nonSkewed.reduce((a, b) => a + b, 0) / nonSkewed.length : 0;
  const target = Math.max(o.advisoryPartitionBytes, avg, 1);
  const plan: JoinPlanning = { left, right, type, o, target, weights, size };

  let total = 0;
  for (let p = 0; p < P; p++) total += size(p);
  const tasks: PlannedTask[] = [];
  const splits: SplitInfo[] = [];
  const small: number[] = [];
  for (let p = 0; p < P; p++) {
    const sides: ('left' | 'right' | 'output')[] = [];
    if (skewL.has(p)) sides.push('left');
    if (skewR.has(p)) sides.push('right');
    if (skewOut.has(p)) sides.push('output');
    if (sides.length === 0 || !needed(p)) {
      if (needed(p)) small.push(p);
      continue;
    }
    const split = splitPartition(plan, p, sides);
    tasks.push(...split.tasks);
    splits.push(split.info);
  }
  tasks.push(...packPartitions(small, size, coalesceCap(total, target, parallelism)));
  tasks.sort((a, b) => b.bytes - a.bytes); // largest first
  return { tasks, targetBytes: target, left: dl, right: dr, splits };
}

/** Output skew (keys hot on both sides, their product large): partitions only the key strategy can split. */
function outputSkew(left: SideStats, right: SideStats, o: SkewSettings): Set<number> {
  const skewOut = new Set<number>();
  if (o.strategy === 'partition') return skewOut;
  const P = left.partitionBytes.length;
  const med = median(Array.from({ length: P }, (_, p) => left.partitionBytes[p] + right.partitionBytes[p]));
  for (let p = 0; p < P; p++) {
    const out = outputBytes(p, left, right);
    if (out > o.factor * med && out > o.thresholdBytes) skewOut.add(p);
  }
  return skewOut;
}

/** The tasks of one skewed partition: hot keys, map ranges, or one task when it cannot be split. */
function splitPartition(
  plan: JoinPlanning,
  p: number,
  sides: ('left' | 'right' | 'output')[],
): { tasks: PlannedTask[]; info: SplitInfo } {
  const { left, right, type, o, target } = plan;
  const skewedL = sides.includes('left'),
    skewedR = sides.includes('right'),
    skewedOut = sides.includes('output');
  const skewedBytes =
    (skewedL ? left.partitionBytes[p] : 0) +
    (skewedR ? right.partitionBytes[p] : 0) +
    (skewedOut ? outputBytes(p, left, right) : 0);
  const cutL = skewedL && canSplitLeft(type),
    cutR = skewedR && canSplitRight(type);
  const [wl, wr] = plan.weights(p);
  const caps = pieceCaps(target, wl * left.partitionBytes[p], wr * right.partitionBytes[p], cutL, cutR);
  const slicesOf = (s: SideStats, cut: boolean, cap: number): (RowSlice[] | null)[] =>
    cut
      ? packRowSlices(
          mapRowsOf(s, p),
          s.mapBytes.map((m) => m[p] ?? 0),
          cap,
        )
      : [null];
  const lr = slicesOf(left, cutL, caps[0] / wl),
    rr = slicesOf(right, cutR, caps[1] / wr);
  const hot = o.strategy === 'partition' ? null : hotKeySplits(p, left, right, type, target);
  // Map ranges are the cheaper split (no extra pass to cut keys out): row ranges balance any
  // skewed side they may cut, so they serve unless a skewed side cannot be cut or a key is hot on both sides.
  const splitL = lr.length > 1,
    splitR = rr.length > 1;
  const rangesBalance = !skewedOut && (splitL || splitR) && (!skewedL || splitL) && (!skewedR || splitR);
  if (
    hot !== null &&
    hot.keys.length > 0 &&
    (o.strategy === 'key' || (hot.bytes >= 0.5 * skewedBytes && !rangesBalance))
  ) {
    const keys = hot.keys.map((k) => ({
      key: k.display,
      leftRows: k.leftRows,
      rightRows: k.rightRows,
      tasks: k.leftPieces * k.rightPieces,
    }));
    const n = hot.keys.reduce((s, k) => s + k.leftPieces * k.rightPieces, 0) + 1;
    return {
      tasks: [{ kind: 'hot-keys', partition: p, keys: hot.keys, bytes: plan.size(p) }],
      info: { partition: p, method: 'hot-key', sides, tasks: n, keys },
    };
  }
  if (!splitL && !splitR) {
    const reason =
      type === 'full'
        ? 'a full join splits no side by map ranges'
        : (skewedL && !canSplitLeft(type)) || (skewedR && !canSplitRight(type))
          ? `a ${type} join cannot split that side by map ranges`
          : `not larger than the target task size (${target} bytes)`;
    return {
      tasks: [{ kind: 'partitions', partitions: [p], bytes: plan.size(p) }],
      info: { partition: p, method: 'none', sides, tasks: 1, reason },
    };
  }
  const bytesOf = (s: SideStats, r: RowSlice[] | null) => {
    if (r === null) return s.partitionBytes[p];
    const rows = mapRowsOf(s, p);
    return r.reduce((a, [t, from, to]) => a + ((s.mapBytes[t][p] ?? 0) * (to - from)) / Math.max(1, rows[t]), 0);
  };
  const tasks: PlannedTask[] = [];
  for (const a of lr)
    for (const b of rr)
      tasks.push({
        kind: 'map-range',
        partition: p,
        left: a,
        right: b,
        bytes: wl * bytesOf(left, a) + wr * bytesOf(right, b),
      });
  return { tasks, info: { partition: p, method: 'map-range', sides, tasks: lr.length * rr.length } };
}
