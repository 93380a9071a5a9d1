// The split task of key-level skew handling: find the rows of each hot key in
// a range of a partition's rows (one side), and either report them as runs of
// consecutive rows (few runs: the keys sit together, as in sorted input, and
// the join tasks read them in place, no copy) or cut them out: the rows of
// each key and the rest, scattered like a map task's partitions into one
// shared buffer (the join tasks cut a key's rows into pieces). Rows are matched by hash
// first (a small open-addressing table of the hot hashes), then by key.
import { type Batch, type Schema, emptyBatch, rowCount } from '../kernels/column.js';
import { scatterRows } from '../shuffle/partition.js';
import { type Keys, buildKeys, keyIdentity, keysEqual } from '../kernels/keys.js';
import type { KeyNorm } from '../plan/bound.js';

export interface SplitKey {
  hash: number;
  match: string;
}

/** The owning hot key of every row of the blocks (-1: the rest). */
function hotKeyIds(blocks: Batch[], keyCols: number[], norms: KeyNorm[], hot: SplitKey[]): Int32Array {
  const H = hot.length;
  let cap = 8;
  while (cap < 4 * H) cap *= 2;
  const mask = cap - 1;
  const slot = new Int32Array(cap).fill(-1);
  const hashes = Int32Array.from(hot, (h) => h.hash);
  hot.forEach((h, i) => {
    let s = h.hash & mask;
    while (slot[s] >= 0) s = (s + 1) & mask;
    slot[s] = i;
  });
  // The first row found of each hot key becomes its reference: later rows compare against it
  // directly, and only a hash collision with another key pays for the identity string.
  const refKeys: (Keys | null)[] = new Array(H).fill(null);
  const refRow = new Int32Array(H);
  // one 64-bit key column: the reference's words, compared inline
  const refWords = new Int32Array(2 * H);
  const total = rowCount(blocks);
  const ids = new Int32Array(total); // the owning hot key of each row, -1 for the rest
  let at = 0;
  for (const block of blocks) {
    const keys = buildKeys(block, keyCols, norms);
    const { hash, anyNull } = keys;
    const w = keys.parts.length === 1 && keys.parts[0].kind === 'w' ? keys.parts[0].w : null;
    for (let r = 0; r < block.length; r++) {
      let owner = -1;
      if (anyNull === null || !anyNull[r]) {
        const h = hash[r];
        for (let s = h & mask, i = slot[s]; i >= 0; s = (s + 1) & mask, i = slot[s]) {
          if (hashes[i] !== h) continue;
          const ref = refKeys[i];
          const same =
            ref === null
              ? hot[i].match === keyIdentity(keys, r)
              : w !== null
                ? w[2 * r] === refWords[2 * i] && w[2 * r + 1] === refWords[2 * i + 1]
                : keysEqual(keys, r, ref, refRow[i]);
          if (same) {
            if (ref === null) {
              refKeys[i] = keys;
              refRow[i] = r;
              if (w !== null) {
                refWords[2 * i] = w[2 * r];
                refWords[2 * i + 1] = w[2 * r + 1];
              }
            }
            owner = i;
            break;
          }
        }
      }
      ids[at + r] = owner;
    }
    at += block.length;
  }
  return ids;
}

/**
 * Runs of consecutive rows with one owner, as [owner + 1 (0: the rest), from,
 * to) triples over the blocks' rows in order; null when there would be more
 * than `maxRuns` (the rows are better cut out and scattered).
 */
export function hotKeyRuns(
  blocks: Batch[],
  keyCols: number[],
  norms: KeyNorm[],
  hot: SplitKey[],
  maxRuns: number,
): Int32Array | null {
  const ids = hotKeyIds(blocks, keyCols, norms, hot);
  const runs: number[] = [];
  for (let r = 0; r < ids.length; ) {
    const o = ids[r];
    let e = r + 1;
    while (e < ids.length && ids[e] === o) e++;
    if (runs.length >= 3 * maxRuns) return null;
    runs.push(o + 1, r, e);
    r = e;
  }
  return Int32Array.from(runs);
}

/** [rest, key 0, key 1, ...]: each hot key's rows cut out (the join tasks cut them into pieces). */
export function splitHotKeys(
  schema: Schema,
  blocks: Batch[],
  keyCols: number[],
  norms: KeyNorm[],
  hot: SplitKey[],
): Batch[] {
  const total = rowCount(blocks);
  const ids = hotKeyIds(blocks, keyCols, norms, hot);
  for (let r = 0; r < total; r++) ids[r] += 1; // output 0 is the rest (-1), key i's output is i + 1
  const { blocks: out } = scatterRows(blocks, ids, new Int32Array(total), hot.length + 1);
  return out.map((b) => b ?? emptyBatch(schema));
}
