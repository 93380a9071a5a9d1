// Row-range slices of shuffle blocks: a split partition's tasks read ranges of
// rows of map-output blocks (views into the blocks' shared memory, no copy of
// the data), packed so that every task holds nearly the same bytes, whatever
// the number of blocks (one map task's block may feed many tasks).
import { type Batch, viewBatch } from '../kernels/column.js';
import { isSpilled, sliceSpilled } from '../spill/block.js';

/** Rows [from, to) of block `block` (an index into the list being cut). */
export type RowSlice = [block: number, from: number, to: number];

/**
 * Cut the rows of a list of blocks, in order, into n = ceil(total bytes / cap)
 * pieces of nearly equal bytes. A row weighs its block's bytes / rows, so a
 * piece holds at most total / n bytes plus one row. Blocks without rows are
 * skipped; no piece is empty.
 */
export function packRowSlices(rows: readonly number[], bytes: readonly number[], cap: number): RowSlice[][] {
  let total = 0;
  for (let i = 0; i < rows.length; i++) if (rows[i] > 0) total += bytes[i];
  const n = Math.max(1, Math.ceil(total / Math.max(cap, 1)));
  const goal = total / n;
  const pieces: RowSlice[][] = Array.from({ length: n }, () => []);
  let before = 0; // bytes of the blocks before this one
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    if (r <= 0) continue;
    const w = bytes[i] / r;
    // piece k holds the rows whose first byte lies in [k * goal, (k + 1) * goal)
    const pieceOf = (row: number) => (goal > 0 ? Math.min(n - 1, Math.floor((before + row * w) / goal)) : 0);
    const firstRow = (k: number) => (w > 0 ? Math.max(0, Math.min(r, Math.ceil((k * goal - before) / w))) : 0);
    const first = pieceOf(0),
      last = pieceOf(r - 1);
    for (let k = first; k <= last; k++) {
      const from = k === first ? 0 : firstRow(k),
        to = k === last ? r : firstRow(k + 1);
      if (to > from) pieces[k].push([i, from, to]);
    }
    before += bytes[i];
  }
  return pieces.filter((p) => p.length > 0);
}

/**
 * Runs of rows found over the concatenated rows of `slices` (triples [owner,
 * from, to), as skew/split.ts hotKeyRuns gives them) as slices of the blocks
 * the slices index: one list per owner (0 to owners - 1), in order.
 */
export function runsToSlices(slices: readonly RowSlice[], runs: Int32Array, owners: number): RowSlice[][] {
  const out: RowSlice[][] = Array.from({ length: owners }, () => []);
  let s = 0,
    base = 0; // the slice holding row `base` of the concatenation starts there
  for (let i = 0; i < runs.length; i += 3) {
    const owner = runs[i];
    let from = runs[i + 1];
    const to = runs[i + 2];
    while (from < to) {
      while (from >= base + slices[s][2] - slices[s][1]) {
        base += slices[s][2] - slices[s][1];
        s++;
      }
      const [block, start, end] = slices[s];
      const upto = Math.min(to, base + end - start);
      out[owner].push([block, start + from - base, start + upto - base]);
      from = upto;
    }
  }
  return out;
}

/**
 * The rows of the slices as blocks: whole blocks as they are, parts as views (a spilled block's part is read back by
 * its task).
 */
export function sliceBlocks(blocks: readonly Batch[], slices: readonly RowSlice[]): Batch[] {
  return slices.map(([i, from, to]) => {
    const b = blocks[i];
    if (from === 0 && to === b.length) return b;
    return isSpilled(b) ? sliceSpilled(b, from, to) : viewBatch(b, from, to);
  });
}

/**
 * Byte caps for the pieces of the two sides of a split join task, so that a
 * task (a piece of each side) holds at most `target` bytes: a side cut alone
 * leaves room for the whole other side (but keeps at least half the target,
 * or a large other side would multiply the tasks); both cut: half each.
 */
export function pieceCaps(
  target: number,
  leftBytes: number,
  rightBytes: number,
  cutLeft: boolean,
  cutRight: boolean,
): [number, number] {
  if (cutLeft && cutRight) return [target / 2, target / 2];
  if (cutLeft) return [Math.max(target / 2, target - rightBytes), Infinity];
  if (cutRight) return [Infinity, Math.max(target / 2, target - leftBytes)];
  return [Infinity, Infinity];
}

/** Map slices over the blocks of a side back to labels: "t3:0-5000,t4" (block index, rows when not whole). */
export function sliceLabel(
  slices: readonly RowSlice[],
  rowsOf: (block: number) => number,
  name: (block: number) => number = (i) => i,
): string {
  return slices
    .map(([i, from, to]) => (from === 0 && to === rowsOf(i) ? `t${name(i)}` : `t${name(i)}:${from}-${to}`))
    .join(',');
}
