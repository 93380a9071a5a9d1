// The split task of key-level skew handling: cut a partition's rows (one
// side) into the rows of each hot key, in pieces of nearly equal size, and
// the rest. Rows are matched by hash first, then by key identity.
import { type Batch, type Schema, concatBatches, gatherBatch } from '../kernels/column.js';
import { buildKeys, keyIdentity, keysEqual } from '../kernels/keys.js';
import type { KeyNorm } from '../plan/bound.js';

export interface SplitKey { hash: number; match: string; pieces: number }

/** [rest, key 0 piece 0, key 0 piece 1, ..., key 1 piece 0, ...] */
export function splitHotKeys(schema: Schema, blocks: Batch[], keyCols: number[], norms: KeyNorm[], hot: SplitKey[]): Batch[] {
  const b = concatBatches(schema, blocks);
  const keys = buildKeys(b, keyCols, norms);
  const byHash = new Map<number, number[]>();
  hot.forEach((h, i) => byHash.set(h.hash, [...(byHash.get(h.hash) ?? []), i]));
  const owner = new Int32Array(b.length).fill(-1);
  const counts = new Int32Array(hot.length);
  // The first row found of each hot key becomes its reference: later rows compare against it
  // directly, and only a hash collision with another key pays for the identity string.
  const ref = new Int32Array(hot.length).fill(-1);
  for (let r = 0; r < b.length; r++) {
    if (keys.anyNull !== null && keys.anyNull[r]) continue;
    const cands = byHash.get(keys.hash[r]);
    if (!cands) continue;
    for (const i of cands) {
      const same = ref[i] >= 0 ? keysEqual(keys, r, keys, ref[i]) : hot[i].match === keyIdentity(keys, r);
      if (!same) continue;
      if (ref[i] < 0) ref[i] = r;
      owner[r] = i;
      counts[i]++;
      break;
    }
  }
  const restIdx = new Int32Array(b.length - counts.reduce((a, c) => a + c, 0));
  const keyIdx = hot.map((_, i) => new Int32Array(counts[i]));
  const fill = new Int32Array(hot.length);
  let nr = 0;
  for (let r = 0; r < b.length; r++) {
    const o = owner[r];
    if (o < 0) restIdx[nr++] = r; else keyIdx[o][fill[o]++] = r;
  }
  const out: Batch[] = [gatherBatch(b, restIdx)];
  hot.forEach((h, i) => {
    const n = counts[i];
    for (let k = 0; k < h.pieces; k++) {
      const from = Math.floor((k * n) / h.pieces), to = Math.floor(((k + 1) * n) / h.pieces);
      out.push(gatherBatch(b, keyIdx[i].subarray(from, to)));
    }
  });
  return out;
}
