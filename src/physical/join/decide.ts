// Broadcast or shuffle: a pure function of the join type, the sides' sizes
// and the threshold, as skew/decide.ts is for the reduce plan. Which side may
// be broadcast follows Spark: the side whose unmatched rows are never output
// (inner: either; left, semi, anti: the right; right: the left; full: neither).
import type { JoinType } from '../../plan/spec.js';
import type { JoinStrategyName } from '../stats.js';

export type Side = 'left' | 'right';

/**
 * A shared build is built on one thread (about 0.4-0.7 µs a row at SF 10, two-column keys the most), where a
 * shuffle partitions both sides on every thread (about 0.3 µs a row in all): it pays when the other side has at
 * least this many times its rows (q09 at SF 10: 8M partsupp rows built for 3.3M probing line items cost 6 s on
 * one thread, twice the shuffle's time; 3.3M line items built for 15M probing orders, 4.6 times, was still 1.2
 * times the shuffle's time paired; q05's 26 times gained in every pair, q07's 10.5 times lost in 2 of 3 pairs on the
 * loaded machine, where the phases on one thread wait longest).
 */
export const SHARED_BUILD_RATIO = 16;

/**
 * At most this many rows in a shared build: its slots (16 bytes a slot, twice the rows or more) outgrow the caches
 * and every insert misses on the one thread that builds it while the workers wait (q21 at SF 10: 7.3M orders took
 * 8 s, 12.9M 18 s on the loaded machine, and 2.5 GB peak against 1.3 GB shuffled).
 */
export const SHARED_BUILD_ROWS = 4 * 1024 * 1024;

/**
 * The bytes up to which each side may be broadcast: `threshold`, or up to `shared` (0: none) and the other
 * side's estimate from its files, whichever is less: a side is not read past what the other side's files hold.
 */
export function sideBounds(threshold: number, estimates: Record<Side, number>, shared = 0): Record<Side, number> {
  const b = (other: Side) => (threshold <= 0 ? threshold : Math.max(threshold, Math.min(shared, estimates[other])));
  return { left: b('right'), right: b('left') };
}

/** The sides a join type allows to broadcast, in no particular order. */
export function broadcastable(type: JoinType): Side[] {
  switch (type) {
    case 'inner':
      return ['left', 'right'];
    case 'left':
    case 'semi':
    case 'anti':
      return ['right'];
    case 'right':
      return ['left'];
    case 'full':
      return [];
  }
}

export interface BroadcastDecision {
  /** of the strategies (physical/stats.ts JOIN_STRATEGIES) the ones decided from the sides' sizes */
  strategy: Extract<JoinStrategyName, 'broadcast' | 'shuffle'>;
  /** the side built into the shared table */
  side?: Side;
  /** why, in words for --explain --analyze */
  reason: string;
}

/**
 * The decision from the sides' sizes in bytes, measured after their filters
 * (`bytes`: sides read whole; a side not read is absent). `partial`: sides
 * whose reading stopped at a cap, with the bytes read by then (the side is
 * larger): never broadcast. Of the allowed sides that fit, the smaller one is
 * broadcast.
 */
export function decideJoin(
  type: JoinType,
  bytes: Partial<Record<Side, number>>,
  threshold: number,
  partial: Partial<Record<Side, number>> = {},
  bounds: Record<Side, number> = { left: threshold, right: threshold },
): BroadcastDecision {
  if (threshold <= 0) return { strategy: 'shuffle', reason: 'broadcast turned off (broadcastBytes 0)' };
  const sides = broadcastable(type);
  if (sides.length === 0)
    return {
      strategy: 'shuffle',
      reason: `a ${type} join outputs the unmatched rows of both sides: neither may be broadcast`,
    };
  const fits = sides
    .filter((s) => bytes[s] !== undefined && bytes[s]! <= Math.max(threshold, bounds[s]))
    .sort((a, b) => bytes[a]! - bytes[b]!);
  const over = (s: Side) => `over ${partial[s]} bytes (read stopped there)`;
  const stopped = sides.filter((s) => partial[s] !== undefined).map((s) => `${s} ${over(s)}`);
  if (fits.length > 0) {
    const s = fits[0],
      o = sides.find((x) => x !== s && (bytes[x] !== undefined || partial[x] !== undefined));
    const other =
      o === undefined ? '' : `; the ${o} side is ${bytes[o] !== undefined ? `larger (${bytes[o]} bytes)` : over(o)}`;
    const fit =
      bytes[s]! <= threshold
        ? `<= broadcastBytes ${threshold}`
        : `> broadcastBytes ${threshold} but <= the shared-build bound ${bounds[s]} (the other side's files ` +
          `are larger)`;
    return { strategy: 'broadcast', side: s, reason: `${s} side ${bytes[s]} bytes ${fit}${other}` };
  }
  const known = [...sides.filter((s) => bytes[s] !== undefined).map((s) => `${s} ${bytes[s]} bytes`), ...stopped];
  const wide = sides.filter((s) => bounds[s] > threshold).map((s) => `${s} ${bounds[s]}`);
  return {
    strategy: 'shuffle',
    reason:
      `${sides.join(' or ')} side may be broadcast, ${known.length ? known.join(', ') : 'estimated'} ` +
      `> broadcastBytes ` +
      `${threshold}${wide.length ? ` (shared-build bound: ${wide.join(', ')})` : ''}`,
  };
}

/**
 * The sides to measure at run time, in the order to read them: the allowed
 * sides by their estimates from the Parquet footers (before filters), smaller
 * first. A side whose reading can stop at a cap (`capped`: a scan's map tasks,
 * see physical/join/broadcast.ts) is always measured, since a filter may keep little of
 * a large file (q17's parts, q12's line items); one that cannot (a join's or
 * an aggregate's output) only when its estimate is at most `factor` times the
 * threshold.
 */
export function sidesToMeasure(
  type: JoinType,
  estimates: Record<Side, number>,
  threshold: number,
  capped: Record<Side, boolean>,
  factor = 2,
  bounds: Record<Side, number> = { left: threshold, right: threshold },
): Side[] {
  if (threshold <= 0) return [];
  return broadcastable(type)
    .filter((s) => capped[s] || estimates[s] <= factor * Math.max(threshold, bounds[s]))
    .sort((a, b) => estimates[a] - estimates[b]);
}
