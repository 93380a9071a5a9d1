// Broadcast or shuffle: a pure function of the join type, the sides' sizes
// and the threshold, as skew/decide.ts is for the reduce plan. Which side may
// be broadcast follows Spark: the side whose unmatched rows are never output
// (inner: either; left, semi, anti: the right; right: the left; full: neither).
import type { JoinType } from '../../plan/spec.js';

export type Side = 'left' | 'right';

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
  strategy: 'broadcast' | 'shuffle';
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
): BroadcastDecision {
  if (threshold <= 0) return { strategy: 'shuffle', reason: 'broadcast turned off (broadcastBytes 0)' };
  const sides = broadcastable(type);
  if (sides.length === 0)
    return {
      strategy: 'shuffle',
      reason: `a ${type} join outputs the unmatched rows of both sides: neither may be broadcast`,
    };
  const fits = sides
    .filter((s) => bytes[s] !== undefined && bytes[s]! <= threshold)
    .sort((a, b) => bytes[a]! - bytes[b]!);
  const over = (s: Side) => `over ${partial[s]} bytes (read stopped there)`;
  const stopped = sides.filter((s) => partial[s] !== undefined).map((s) => `${s} ${over(s)}`);
  if (fits.length > 0) {
    const s = fits[0],
      o = sides.find((x) => x !== s && (bytes[x] !== undefined || partial[x] !== undefined));
    const other =
      o === undefined ? '' : `; the ${o} side is ${bytes[o] !== undefined ? `larger (${bytes[o]} bytes)` : over(o)}`;
    return {
      strategy: 'broadcast',
      side: s,
      reason: `${s} side ${bytes[s]} bytes <= broadcastBytes ${threshold}${other}`,
    };
  }
  const known = [...sides.filter((s) => bytes[s] !== undefined).map((s) => `${s} ${bytes[s]} bytes`), ...stopped];
  return {
    strategy: 'shuffle',
    reason: `${sides.join(' or ')} side may be broadcast, ${known.length ? known.join(', ') : 'estimated'} > broadcastBytes ${threshold}`,
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
): Side[] {
  if (threshold <= 0) return [];
  return broadcastable(type)
    .filter((s) => capped[s] || estimates[s] <= factor * threshold)
    .sort((a, b) => estimates[a] - estimates[b]);
}
