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
//   one ordinary task (the executor cuts both by the rows it finds: skew/cut.ts). Correct for every join type: a key present on both
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

interface HotKeyStat {
  /** 32-bit key hash: the partition is derived from it */
  hash: number;
  /** normalized key identity, equal on both sides for equal keys */
  match: string;
  /** the key as strings, one per key column */
  display: string[];
  /** estimated rows (Space-Saving count: never below the truth) */
  rows: number;
  partition: number;
}

export interface SideStats {
  partitionRows: number[];
  partitionBytes: number[];
  /** mapBytes[t][p]: bytes map task t wrote to partition p */
  mapBytes: number[][];
  /** mapRows[t][p]: its rows (absent: estimated from the bytes at the partition's mean row size) */
  mapRows?: number[][];
  hotKeys: HotKeyStat[];
}

interface HotKeySplit {
  hash: number;
  match: string;
  display: string[];
  leftRows: number;
  rightRows: number;
  leftPieces: number;
  rightPieces: number;
}

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

/** The median (simple-statistics: quickselect on a copy, the mean of the middle two for an even count); 0 for no values. */
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

/** What small partitions are packed up to: the target, but keeping about TASKS_PER_WORKER tasks per worker, never below 1 MB. */
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

const MAX_GRID = 256;
/**
 * A joined pair costs less than an input row (no shuffle, no hashing):
 * measured here, 36 to 80 ns per pair in the fused join-aggregate against
 * about 250 ns per input row. Output is weighed at half the bytes of its row.
 */
const PAIR_WEIGHT = 1 / 2;

/** Estimated rows of each hot key of partition p on both sides, as bytes: input and output (left x right pairs). */
function hotKeysOf(p: number, left: SideStats, right: SideStats): { keys: HotKeySplit[]; lb: number; rb: number } {
  const rowBytes = (s: SideStats) => (s.partitionRows[p] > 0 ? s.partitionBytes[p] / s.partitionRows[p] : 0);
  const byMatch = new Map<string, HotKeySplit>();
  const entry = (h: HotKeyStat) => {
    let e = byMatch.get(h.match);
    if (!e) {
      e = {
        hash: h.hash,
        match: h.match,
        display: h.display,
        leftRows: 0,
        rightRows: 0,
        leftPieces: 1,
        rightPieces: 1,
      };
      byMatch.set(h.match, e);
    }
    return e;
  };
  for (const h of left.hotKeys) if (h.partition === p) entry(h).leftRows = Math.min(h.rows, left.partitionRows[p]);
  for (const h of right.hotKeys) if (h.partition === p) entry(h).rightRows = Math.min(h.rows, right.partitionRows[p]);
  return { keys: [...byMatch.values()], lb: rowBytes(left), rb: rowBytes(right) };
}

/** Bytes a key's rows and its joined rows (left x right pairs) stand for. */
const keyBytes = (k: HotKeySplit, lb: number, rb: number) =>
  k.leftRows * lb + k.rightRows * rb + k.leftRows * k.rightRows * (lb + rb) * PAIR_WEIGHT;

/** Estimated bytes of output of the keys hot on both sides of partition p. */
function outputBytes(p: number, left: SideStats, right: SideStats): number {
  const { keys, lb, rb } = hotKeysOf(p, left, right);
  return keys.reduce((s, k) => s + k.leftRows * k.rightRows * (lb + rb) * PAIR_WEIGHT, 0);
}

function hotKeySplits(
  p: number,
  left: SideStats,
  right: SideStats,
  type: JoinType,
  target: number,
): { keys: HotKeySplit[]; bytes: number } {
  const { keys: all, lb, rb } = hotKeysOf(p, left, right);
  // A key earns its own tasks when its rows (and output) would fill a good share of a task.
  const keys = all.filter((k) => keyBytes(k, lb, rb) >= target / 4);
  let bytes = 0;
  for (const k of keys) {
    let a = Math.max(1, Math.ceil((k.leftRows * lb) / target));
    let b = type === 'semi' || type === 'anti' ? 1 : Math.max(1, Math.ceil((k.rightRows * rb) / target));
    // Output skew: grow the grid until each cell's pairs fit the target, along the side with bigger
    // pieces. Semi and anti joins emit each left row at most once: no output to split.
    const pairs = type === 'semi' || type === 'anti' ? 0 : k.leftRows * k.rightRows;
    const cells = Math.min(MAX_GRID, Math.ceil((pairs * (lb + rb) * PAIR_WEIGHT) / target));
    while (a * b < cells) {
      const growLeft = k.leftRows / a >= k.rightRows / b;
      if (growLeft && a < k.leftRows) a++;
      else if (!growLeft && b < k.rightRows) b++;
      else break;
    }
    k.leftPieces = a;
    k.rightPieces = b;
    bytes += keyBytes(k, lb, rb);
  }
  keys.sort((x, y) => keyBytes(y, lb, rb) - keyBytes(x, lb, rb));
  return { keys, bytes };
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
  /** the weights of partition p's sides: the side its task builds costs buildWeight a byte */
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
    return {
      tasks,
      targetBytes: 0,
      left: { ...dl, skewedPartitions: [] },
      right: { ...dr, skewedPartitions: [] },
      splits: [],
    };
  }
  const skewL = new Set(dl.skewedPartitions),
    skewR = new Set(dr.skewedPartitions);
  // Output skew (keys hot on both sides) only the key strategy can split.
  const skewOut = new Set<number>();
  if (o.strategy !== 'partition') {
    const med = median(Array.from({ length: P }, (_, p) => left.partitionBytes[p] + right.partitionBytes[p]));
    for (let p = 0; p < P; p++) {
      const out = outputBytes(p, left, right);
      if (out > o.factor * med && out > o.thresholdBytes) skewOut.add(p);
    }
  }
  const nonSkewed: number[] = [];
  for (let p = 0; p < P; p++) if (!skewL.has(p) && !skewR.has(p) && !skewOut.has(p)) nonSkewed.push(size(p));
  const avg = nonSkewed.length ? nonSkewed.reduce((a, b) => a + b, 0) / nonSkewed.length : 0;
  const target = Math.max(o.advisoryPartitionBytes, avg, 1);

  let total = 0;
  for (let p = 0; p < P; p++) total += size(p);
  const coalesceTo = coalesceCap(total, target, parallelism);
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
    const skewedBytes =
      (skewL.has(p) ? left.partitionBytes[p] : 0) +
      (skewR.has(p) ? right.partitionBytes[p] : 0) +
      (skewOut.has(p) ? outputBytes(p, left, right) : 0);
    const cutL = skewL.has(p) && canSplitLeft(type),
      cutR = skewR.has(p) && canSplitRight(type);
    const [wl, wr] = weights(p);
    const caps = pieceCaps(target, wl * left.partitionBytes[p], wr * right.partitionBytes[p], cutL, cutR);
    const capL = caps[0] / wl,
      capR = caps[1] / wr;
    const slicesOf = (s: SideStats, cut: boolean, cap: number): (RowSlice[] | null)[] =>
      cut
        ? packRowSlices(
            mapRowsOf(s, p),
            s.mapBytes.map((m) => m[p] ?? 0),
            cap,
          )
        : [null];
    const lr = slicesOf(left, cutL, capL),
      rr = slicesOf(right, cutR, capR);
    const bytesOf = (s: SideStats, r: RowSlice[] | null) => {
      if (r === null) return s.partitionBytes[p];
      const rows = mapRowsOf(s, p);
      return r.reduce((a, [t, from, to]) => a + ((s.mapBytes[t][p] ?? 0) * (to - from)) / Math.max(1, rows[t]), 0);
    };
    const hot = o.strategy === 'partition' ? null : hotKeySplits(p, left, right, type, target);
    // Map ranges are the cheaper split (no extra pass to cut keys out): row ranges balance any
    // skewed side they may cut, so they serve unless a skewed side cannot be cut or a key is hot on both sides.
    const splitL = lr.length > 1,
      splitR = rr.length > 1;
    const rangesBalance =
      !skewOut.has(p) && (splitL || splitR) && (!skewL.has(p) || splitL) && (!skewR.has(p) || splitR);
    const useKeys =
      hot !== null &&
      hot.keys.length > 0 &&
      (o.strategy === 'key' || (hot.bytes >= 0.5 * skewedBytes && !rangesBalance));
    if (useKeys) {
      const n = hot!.keys.reduce((s, k) => s + k.leftPieces * k.rightPieces, 0) + 1;
      tasks.push({ kind: 'hot-keys', partition: p, keys: hot!.keys, bytes: size(p) });
      splits.push({
        partition: p,
        method: 'hot-key',
        sides,
        tasks: n,
        keys: hot!.keys.map((k) => ({
          key: k.display,
          leftRows: k.leftRows,
          rightRows: k.rightRows,
          tasks: k.leftPieces * k.rightPieces,
        })),
      });
      continue;
    }
    if (lr.length <= 1 && rr.length <= 1) {
      tasks.push({ kind: 'partitions', partitions: [p], bytes: size(p) });
      const reason =
        type === 'full'
          ? 'a full join splits no side by map ranges'
          : (skewL.has(p) && !canSplitLeft(type)) || (skewR.has(p) && !canSplitRight(type))
            ? `a ${type} join cannot split that side by map ranges`
            : `not larger than the target task size (${target} bytes)`;
      splits.push({ partition: p, method: 'none', sides, tasks: 1, reason });
      continue;
    }
    for (const a of lr)
      for (const b of rr) {
        tasks.push({
          kind: 'map-range',
          partition: p,
          left: a,
          right: b,
          bytes: wl * bytesOf(left, a) + wr * bytesOf(right, b),
        });
      }
    splits.push({ partition: p, method: 'map-range', sides, tasks: lr.length * rr.length });
  }
  tasks.push(...packPartitions(small, size, coalesceTo));
  tasks.sort((a, b) => b.bytes - a.bytes); // largest first
  return { tasks, targetBytes: target, left: dl, right: dr, splits };
}
