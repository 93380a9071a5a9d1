// Row-range cutting at run time, once a hot-key split has found the rows
// exactly: a key's rows on each side into the pieces of its grid, and the
// rest of the partition into ranges where the join type allows, so that no
// task of a split partition holds much more than the target.
import type { Batch } from '../kernels/column.js';
import type { JoinType } from '../plan/spec.js';
import { blockBytes } from '../spill/block.js';
import { canSplitLeft, canSplitRight } from './decide.js';
import { packRowSlices, pieceCaps, sliceBlocks } from './slices.js';

const bytesOf = (bs: readonly Batch[]) => bs.reduce((a, b) => a + blockBytes(b), 0);

/**
 * Blocks cut into row ranges of at most `cap` bytes, and at least `min` pieces; one empty piece when there are no rows.
 */
function cutRows(blocks: Batch[], cap: number, min = 1): Batch[][] {
  const bytes = blocks.map(blockBytes);
  const total = bytes.reduce((a, b) => a + b, 0);
  // a hair above total / min, so that rounding does not add a piece
  const c = min > 1 ? Math.min(cap, (total / min) * (1 + 1e-9)) : cap;
  const pieces = packRowSlices(
    blocks.map((b) => b.length),
    bytes,
    c,
  ).map((s) => sliceBlocks(blocks, s));
  return pieces.length > 0 ? pieces : [[]];
}

/**
 * Pieces of the two sides of a join whose every (left piece, right piece)
 * pair is one task: sides larger than half the target are cut (when the
 * join type and `may` allow) so that a pair holds at most the target, and at
 * least `min` pieces per side (a grid sized for its output). Either side
 * uncut is one piece.
 */
function grid(
  left: Batch[],
  right: Batch[],
  target: number,
  may: [boolean, boolean],
  min: [number, number],
): { left: Batch[][]; right: Batch[][] } {
  const lb = bytesOf(left),
    rb = bytesOf(right);
  const big = lb + rb > target;
  const cutL = may[0] && (min[0] > 1 || (big && lb > target / 2));
  const cutR = may[1] && (min[1] > 1 || (big && rb > target / 2));
  const [capL, capR] = pieceCaps(target, lb, rb, cutL, cutR);
  return {
    left: cutL ? cutRows(left, capL, min[0]) : [left],
    right: cutR ? cutRows(right, capR, min[1]) : [right],
  };
}

/** A hot key's grid from its rows on each side: semi and anti joins keep a key's right rows in one piece. */
export function keyGrid(
  type: JoinType,
  left: Batch[],
  right: Batch[],
  target: number,
  pieces: [number, number],
): { left: Batch[][]; right: Batch[][] } {
  const whole = type === 'semi' || type === 'anti';
  return grid(left, right, target, [true, !whole], [pieces[0], whole ? 1 : pieces[1]]);
}

/**
 * The rest of a hot-key split (no hot key in it): cut into row ranges as a map-range split would, where the join type
 * allows.
 */
export function restGrid(
  type: JoinType,
  left: Batch[],
  right: Batch[],
  target: number,
): { left: Batch[][]; right: Batch[][] } {
  return grid(left, right, target, [canSplitLeft(type), canSplitRight(type)], [1, 1]);
}
