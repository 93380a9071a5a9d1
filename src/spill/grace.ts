// Grace hash join, the decision: a reduce task whose build side does not fit
// its share of the memory budget is cut into pieces by further bits of the
// same key hash (both sides alike, so every key's rows meet in one piece),
// and the pieces are joined one task each. A pure function: sizes in, a
// piece count out. Hot-key pieces of a skew split are never cut again: the
// caller only asks for whole partitions and the rest of a hot-key split.
import { buildsLeft } from '../kernels/join.js';
import type { JoinType } from '../plan/spec.js';

/** Most pieces one reduce task is cut into. */
export const MAX_GRACE_PIECES = 64;

export interface SideSize { rows: number; bytes: number }

/**
 * Pieces for a reduce task (1: join it whole): enough that the build side's
 * share of each fits `shareBytes` (the budget over the workers that join at once).
 */
export function gracePieces(type: JoinType, left: SideSize, right: SideSize, shareBytes: number): number {
  const build = buildsLeft(type, left.rows, right.rows) ? left : right;
  if (build.bytes <= shareBytes) return 1;
  return Math.min(MAX_GRACE_PIECES, Math.ceil(build.bytes / Math.max(1, shareBytes)));
}
