// The split task of key-level skew handling: cut a partition's rows (one
// side) into the rows of each hot key, in pieces of nearly equal size, and
// the rest. Rows are matched by hash first (a small open-addressing table of
// the hot hashes), then by key. Blocks are read where they are: each output
// piece is gathered straight from the input blocks, without concatenating them.
import { type Batch, type Schema, emptyBatch, gatherMany } from '../kernels/column.js';
import { type Keys, buildKeys, keyIdentity, keysEqual } from '../kernels/keys.js';
import type { KeyNorm } from '../plan/bound.js';

export interface SplitKey { hash: number; match: string; pieces: number }

/** A growable list of (block, row) pairs. */
class Rows {
  block = new Int32Array(256);
  row = new Int32Array(256);
  n = 0;
  push(b: number, r: number) {
    if (this.n === this.block.length) {
      const nb = new Int32Array(2 * this.n); nb.set(this.block); this.block = nb;
      const nr = new Int32Array(2 * this.n); nr.set(this.row); this.row = nr;
    }
    this.block[this.n] = b;
    this.row[this.n++] = r;
  }
}

/** Rows [from, to) of a list, gathered from the blocks they are in (runs of one block at a time). */
function gatherRows(schema: Schema, blocks: Batch[], rows: Rows, from: number, to: number): Batch {
  if (to <= from) return emptyBatch(schema);
  const runs: { block: number; idx: Int32Array }[] = [];
  for (let s = from; s < to;) {
    const b = rows.block[s];
    let e = s + 1;
    while (e < to && rows.block[e] === b) e++;
    runs.push({ block: b, idx: rows.row.subarray(s, e) });
    s = e;
  }
  return {
    length: to - from,
    columns: schema.map((f, c) => gatherMany(f.type, runs.map((r) => blocks[r.block].columns[c]), runs.map((r) => r.idx))),
  };
}

/** [rest, key 0 piece 0, key 0 piece 1, ..., key 1 piece 0, ...] */
export function splitHotKeys(schema: Schema, blocks: Batch[], keyCols: number[], norms: KeyNorm[], hot: SplitKey[]): Batch[] {
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
  const rest = new Rows();
  const keyRows = hot.map(() => new Rows());
  blocks.forEach((block, b) => {
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
          const same = ref === null ? hot[i].match === keyIdentity(keys, r)
            : w !== null ? w[2 * r] === refWords[2 * i] && w[2 * r + 1] === refWords[2 * i + 1]
              : keysEqual(keys, r, ref, refRow[i]);
          if (same) {
            if (ref === null) {
              refKeys[i] = keys; refRow[i] = r;
              if (w !== null) { refWords[2 * i] = w[2 * r]; refWords[2 * i + 1] = w[2 * r + 1]; }
            }
            owner = i;
            break;
          }
        }
      }
      if (owner < 0) rest.push(b, r); else keyRows[owner].push(b, r);
    }
  });
  const out: Batch[] = [gatherRows(schema, blocks, rest, 0, rest.n)];
  hot.forEach((h, i) => {
    const rows = keyRows[i], n = rows.n;
    for (let k = 0; k < h.pieces; k++) {
      out.push(gatherRows(schema, blocks, rows, Math.floor((k * n) / h.pieces), Math.floor(((k + 1) * n) / h.pieces)));
    }
  });
  return out;
}
