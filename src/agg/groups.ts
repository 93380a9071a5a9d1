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

/**
 * `sel`: group only these rows; every other row gets the group id nGroups (one past the last). `shared`: gid in
 * shared memory; `gid`: the array to write the ids to (every entry is written).
 */
export function groupRows(
  keys: Keys,
  sel?: { idx: Int32Array; n: number },
  shared = false,
  gid = int32s(keys.n, shared),
): Groups {
  const n = sel ? sel.n : keys.n;
  const first = new Int32Array(Math.max(16, Math.min(n, 1 << 16)));
  let cap = 64;
  while (cap < first.length * 2) cap *= 2;
  const t: Table = { first, groupHash: new Int32Array(first.length), slots: new Int32Array(cap).fill(-1), nGroups: 0 };
  const rows = sel?.idx ?? null;
  if (rows) gid.fill(-1);
  // The loop stops where the table must grow, and resumes after: growing is
  // then never an untried path inside compiled code (see groupIdsOfRows in joinagg.ts).
  // one 64-bit key part without nulls (an integer, date or short code): its words compared
  // here, no keysEqual call (whether V8 inlined that call into insertRows varied with the other
  // key shapes the thread had grouped: aggregate by key, 18 ms a run spent in keysEqual)
  const p = keys.parts.length === 1 ? keys.parts[0] : null;
  const w = p !== null && p.kind === 'w' && p.nulls === null ? p.w : null;
  if (w !== null)
    for (
      let k = insertWords(t, w, keys.hash, rows, gid, 0, n);
      k < n;
      k = insertWords(t, w, keys.hash, rows, gid, k, n)
    )
      grow(t);
  else for (let k = insertRows(t, keys, rows, gid, 0, n); k < n; k = insertRows(t, keys, rows, gid, k, n)) grow(t);
  if (rows) fillUnselected(gid, t.nGroups);
  return { gid, nGroups: t.nGroups, first: t.first.subarray(0, t.nGroups) };
}

/** A growable open-addressing table: groups' first rows and hashes, slots of group ids (-1: empty). */
interface Table {
  first: Int32Array;
  groupHash: Int32Array;
  slots: Int32Array;
  nGroups: number;
}

/**
 * Group ids of rows k0..n (of `rows`, else in order) into gid; returns n, or
 * the first row needing a new group that does not fit (grow, then resume there).
 */
function insertRows(t: Table, keys: Keys, rows: Int32Array | null, gid: Int32Array, k0: number, n: number): number {
  const { first, groupHash, slots } = t,
    mask = slots.length - 1,
    h = keys.hash;
  for (let k = k0; k < n; k++) {
    const i = rows !== null ? rows[k] : k;
    const hi = h[i];
    let s = hi & mask;
    let g: number;
    for (;;) {
      g = slots[s];
      if (g < 0 || (groupHash[g] === hi && keysEqual(keys, i, keys, first[g]))) break;
      s = (s + 1) & mask;
    }
    if (g < 0 && (g = addGroup(t, s, i, hi)) < 0) return k;
    gid[i] = g;
  }
  return n;
}

/** A new group whose first row is i, in slot s; -1 when the table must grow first. */
function addGroup(t: Table, s: number, i: number, hi: number): number {
  const g = t.nGroups;
  if (g === t.first.length || (g + 1) * 2 > t.slots.length) return -1;
  t.first[g] = i;
  t.groupHash[g] = hi;
  t.slots[s] = g;
  t.nGroups = g + 1;
  return g;
}

/** insertRows for one 64-bit key part without nulls: two words a row (`w`), compared inline. */
function insertWords(
  t: Table,
  w: Int32Array,
  h: Int32Array,
  rows: Int32Array | null,
  gid: Int32Array,
  k0: number,
  n: number,
): number {
  const { first, groupHash, slots } = t,
    mask = slots.length - 1;
  // the previous row's key and group: a run of one key (rows clustered by it, as TPC-H's line items by order)
  // takes its group without a probe (q18's group by l_orderkey: about four rows an order)
  let pl = 0,
    pu = 0,
    pg = -1;
  for (let k = k0; k < n; k++) {
    const i = rows !== null ? rows[k] : k;
    const lo = w[2 * i],
      up = w[2 * i + 1];
    if (lo === pl && up === pu && pg >= 0) {
      gid[i] = pg;
      continue;
    }
    const hi = h[i];
    let s = hi & mask;
    let g: number;
    for (;;) {
      g = slots[s];
      if (g < 0) break;
      const f = first[g];
      if (groupHash[g] === hi && w[2 * f] === lo && w[2 * f + 1] === up) break;
      s = (s + 1) & mask;
    }
    if (g < 0 && (g = addGroup(t, s, i, hi)) < 0) return k;
    gid[i] = g;
    pl = lo;
    pu = up;
    pg = g;
  }
  return n;
}

/** Room for one more group: twice the group arrays when full, twice the slots when half full. */
function grow(t: Table): void {
  const n = t.nGroups;
  if (n === t.first.length) {
    const f = new Int32Array(n * 2);
    f.set(t.first);
    t.first = f;
    const gh = new Int32Array(n * 2);
    gh.set(t.groupHash);
    t.groupHash = gh;
  }
  if ((n + 1) * 2 > t.slots.length) {
    t.slots = new Int32Array(t.slots.length * 2).fill(-1);
    rehash(t.slots, t.groupHash, n);
  }
}

function rehash(slots: Int32Array, groupHash: Int32Array, n: number): void {
  const mask = slots.length - 1;
  for (let k = 0; k < n; k++) {
    let s = groupHash[k] & mask;
    while (slots[s] >= 0) s = (s + 1) & mask;
    slots[s] = k;
  }
}

/** Rows left at -1 (not selected) get the group id one past the last. */
export function fillUnselected(gid: Int32Array, nGroups: number): void {
  for (let i = 0; i < gid.length; i++) if (gid[i] < 0) gid[i] = nGroups;
}
