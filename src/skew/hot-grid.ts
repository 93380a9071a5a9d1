// The hot keys of one skewed join partition sized as a grid of tasks (skew/decide.ts plans with it): each key's
// rows on both sides from the map tasks' sketches, the pieces each side is cut into so that a cell's rows and its
// joined pairs (a key hot on both sides multiplies) fit the target task size. Pure, as decide.ts.
import type { JoinType } from '../plan/spec.js';
import type { HotKeySplit, HotKeyStat, SideStats } from './side-stats.js';

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
export function outputBytes(p: number, left: SideStats, right: SideStats): number {
  const { keys, lb, rb } = hotKeysOf(p, left, right);
  return keys.reduce((s, k) => s + k.leftRows * k.rightRows * (lb + rb) * PAIR_WEIGHT, 0);
}

export function hotKeySplits(
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
