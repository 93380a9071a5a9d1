// Broadcast or shuffle: a pure function of the join type, the sides' sizes
// and the threshold, as skew/decide.ts is for the reduce plan. Which side may
// be broadcast follows Spark: the side whose unmatched rows are never output
// (inner: either; left, semi, anti: the right; right: the left; full: neither).
import type { JoinType } from '../plan/spec.js';

/**
 * The default `broadcastBytes`, measured on this machine class (2 cores,
 * whole processes, paired, docs/design/joins.md): 2M fact rows against a
 * 100K-row dimension (1.7 MB) cost 11% less CPU broadcast than shuffled; 5M
 * against a 1M-row dimension (17.6 MB) cost the same either way (the table no
 * longer fits the caches, and it is built on one thread). So sides up to a
 * little above that are broadcast; they cannot be skewed, and nothing is shuffled.
 */
export const DEFAULT_BROADCAST_BYTES = 24 * 1024 * 1024;

export type Side = 'left' | 'right';

/** The sides a join type allows to broadcast, in no particular order. */
export function broadcastable(type: JoinType): Side[] {
  switch (type) {
    case 'inner': return ['left', 'right'];
    case 'left': case 'semi': case 'anti': return ['right'];
    case 'right': return ['left'];
    case 'full': return [];
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
 * The decision from the sides' sizes in bytes (undefined: not known, e.g.
 * not measured because its estimate was too large). With both sides allowed
 * and small enough, the smaller one is broadcast.
 */
export function decideJoin(type: JoinType, bytes: Partial<Record<Side, number>>, threshold: number): BroadcastDecision {
  if (threshold <= 0) return { strategy: 'shuffle', reason: 'broadcast turned off (broadcastBytes 0)' };
  const sides = broadcastable(type);
  if (sides.length === 0) return { strategy: 'shuffle', reason: `a ${type} join outputs the unmatched rows of both sides: neither may be broadcast` };
  const fits = sides.filter((s) => bytes[s] !== undefined && bytes[s]! <= threshold)
    .sort((a, b) => bytes[a]! - bytes[b]!);
  if (fits.length > 0) {
    const s = fits[0];
    return { strategy: 'broadcast', side: s, reason: `${s} side ${bytes[s]} bytes <= broadcastBytes ${threshold}` };
  }
  const known = sides.filter((s) => bytes[s] !== undefined).map((s) => `${s} ${bytes[s]} bytes`);
  return {
    strategy: 'shuffle',
    reason: `${sides.join(' or ')} side may be broadcast, ${known.length ? known.join(', ') : 'estimated'} > broadcastBytes ${threshold}`,
  };
}

/**
 * The side worth collecting to measure at run time: the allowed side with the
 * smallest estimate, when that estimate is at most `factor` times the
 * threshold (estimates come from Parquet footers, before filters).
 */
export function sideToMeasure(type: JoinType, estimates: Record<Side, number>, threshold: number, factor = 2): Side | null {
  if (threshold <= 0) return null;
  const sides = broadcastable(type).filter((s) => estimates[s] <= factor * threshold).sort((a, b) => estimates[a] - estimates[b]);
  return sides[0] ?? null;
}
