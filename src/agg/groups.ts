// Group ids for rows by key: a growable open-addressing table over typed
// arrays. Null key values form a group of their own.
import { type Keys, keysEqual } from '../kernels/keys.js';
import { int32s } from '../kernels/table.js';

export interface Groups {
  /** group id of every row */
  gid: Int32Array;
  nGroups: number;
  /** first row of each group, to gather the group key columns */
  first: Int32Array;
}

/** `sel`: group only these rows; every other row gets the group id nGroups (one past the last). `shared`: gid in shared memory. */
export function groupRows(keys: Keys, sel?: { idx: Int32Array; n: number }, shared = false): Groups {
  const n = sel ? sel.n : keys.n;
  const gid = int32s(keys.n, shared);
  let first = new Int32Array(Math.max(16, Math.min(n, 1 << 16)));
  let groupHash = new Int32Array(first.length);
  let cap = 64;
  while (cap < first.length * 2) cap *= 2;
  let slots = new Int32Array(cap).fill(-1);
  let mask = cap - 1;
  let nGroups = 0;
  const h = keys.hash;
  const rows = sel?.idx;
  if (rows) gid.fill(-1);
  for (let k = 0; k < n; k++) {
    const i = rows ? rows[k] : k;
    const hi = h[i];
    let s = hi & mask;
    let g: number;
    for (;;) {
      g = slots[s];
      if (g < 0 || (groupHash[g] === hi && keysEqual(keys, i, keys, first[g]))) break;
      s = (s + 1) & mask;
    }
    if (g < 0) {
      g = nGroups++;
      if (g === first.length) {
        const f = new Int32Array(g * 2); f.set(first); first = f;
        const gh = new Int32Array(g * 2); gh.set(groupHash); groupHash = gh;
      }
      first[g] = i;
      groupHash[g] = hi;
      slots[s] = g;
      if (nGroups * 2 > cap) {
        cap *= 2;
        mask = cap - 1;
        slots = new Int32Array(cap).fill(-1);
        for (let k = 0; k < nGroups; k++) {
          let t = groupHash[k] & mask;
          while (slots[t] >= 0) t = (t + 1) & mask;
          slots[t] = k;
        }
      }
    }
    gid[i] = g;
  }
  if (rows) for (let i = 0; i < keys.n; i++) if (gid[i] < 0) gid[i] = nGroups;
  return { gid, nGroups, first: first.subarray(0, nGroups) };
}
