// Group ids for rows by key: a growable open-addressing table over typed
// arrays. Null key values form a group of their own.
import { type KeyPart, type Keys, keysEqual } from '../kernels/keys.js';
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
 * shared memory; `gid`: the array to write the ids to (every entry is written). Keys of 64-bit words only take
 * groupWords' table (their words inline in its slots); keys with a string part are compared through keysEqual.
 */
export function groupRows(
  keys: Keys,
  sel?: { idx: Int32Array; n: number },
  shared = false,
  gid = int32s(keys.n, shared),
): Groups {
  const m = wordMatrix(keys);
  if (m !== null) return groupWords(m.words, m.width, keys.n, sel, gid);
  const n = sel ? sel.n : keys.n;
  const first = new Int32Array(Math.max(16, Math.min(n, 1 << 16)));
  let cap = 64;
  while (cap < first.length * 2) cap *= 2;
  const t: Table = { first, groupHash: new Int32Array(first.length), slots: new Int32Array(cap).fill(-1), nGroups: 0 };
  const rows = sel?.idx ?? null;
  if (rows) gid.fill(-1);
  // The loop stops where the table must grow, and resumes after: growing is
  // then never an untried path inside compiled code (see groupIdsOfRows in joinagg.ts).
  for (let k = insertRows(t, keys, rows, gid, 0, n); k < n; k = insertRows(t, keys, rows, gid, k, n)) grow(t);
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

// ---- keys as words: a table with the keys inline ----
//
// A row's key is `width` 32-bit words (row-major in one array: a 32-bit column one word, a 64-bit one two, a
// word of null flags when a part is nullable, its words then zero). A slot holds the key's words, its group id
// (-1: empty) and its hash: one cache line read per probe, where groupRows' chained lookup read the slot, the
// group's first row and hash, then that row's key (three or four misses once the table outgrows the cache:
// 800K groups of two keys). Each round of rows is hashed and its slots touched first, so that their misses
// overlap (as kernels/table.ts findRows does for a join's probe).

/** Rows a round hashes and touches before inserting them. */
const ROUND = 256;
const C1 = 0xcc9e2d51,
  C2 = 0x1b873593;
/** The rounds' hashes (a thread's scratch: groupWords runs to its end without yielding). */
const roundHash = new Int32Array(ROUND);
// biome-ignore lint/correctness/noUnusedVariables: written, never read, on purpose
let touched = 0; // keeps the touching loads from being optimized away

function mixWord(h: number, k: number): number {
  k = Math.imul(k, C1);
  k = (k << 15) | (k >>> 17);
  k = Math.imul(k, C2);
  h ^= k;
  h = (h << 13) | (h >>> 19);
  return (Math.imul(h, 5) + 0xe6546b64) | 0;
}

function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** The words table: `width` key words, the group id and the hash per slot. */
interface WordTable {
  slots: Int32Array;
  /** slots - 1 (a power of two, at least twice the groups) */
  mask: number;
  first: Int32Array;
  nGroups: number;
  /** the first group of the piece being grouped (see partitioned): the slots hold groups from here on */
  base: number;
}

/**
 * Groups of rows whose keys are `width` words each in `words` (row-major; see above); ids and first rows as
 * groupRows' (first appearance). `sel`: group only these rows, the others get nGroups.
 */
export function groupWords(
  words: Int32Array,
  width: number,
  n0: number,
  sel?: { idx: Int32Array; n: number },
  gid: Int32Array = new Int32Array(n0),
): Groups {
  const n = sel ? sel.n : n0;
  const rows = sel?.idx ?? null;
  if (rows) gid.fill(-1);
  const groups = Math.max(16, Math.min(n, 1 << 14));
  let cap = 64;
  while (cap < groups * 2) cap *= 2;
  const t: WordTable = {
    slots: emptySlots(cap, width + 2),
    mask: cap - 1,
    first: new Int32Array(groups),
    nGroups: 0,
    base: 0,
  };
  const all = rows === null ? null : rows.subarray(0, n);
  const k = insertAll(t, words, width, all, gid, n, n >= PARTITION_MIN_ROWS ? CACHE_GROUPS : 0);
  // past CACHE_GROUPS groups with most rows still to come: the rows again, cut by their hash into pieces
  // whose tables fit the cache (their groups numbered piece by piece)
  if (k < n) partitioned(t, words, width, all, gid, n, piecesFor(t.nGroups, k, n));
  if (rows) fillUnselected(gid, t.nGroups);
  return { gid, nGroups: t.nGroups, first: t.first.subarray(0, t.nGroups) };
}

/** Rows from which a table past CACHE_GROUPS groups is given up for pieces (fewer: one table, grown as needed). */
const PARTITION_MIN_ROWS = 1 << 17;
/** Groups of a table that fits a core's cache (512 KB of slots of two key words at most), and a piece's target. */
const CACHE_GROUPS = 1 << 14;
const PIECE_GROUPS = 1 << 13;
const MAX_PIECES = 1 << 12;
/** The slots a piece's table starts with. */
const PIECE_SLOTS = 1 << 12;

/**
 * The rows (`rows`, else 0..n) into t, growing it; returns n, or (with `limit` > 0) the row at which t would grow
 * past `limit` groups while more than a quarter of the rows are left.
 */
function insertAll(
  t: WordTable,
  words: Int32Array,
  width: number,
  rows: Int32Array | null,
  gid: Int32Array,
  n: number,
  limit: number,
): number {
  const stride = width + 2;
  for (let k = insertSome(t, words, width, rows, gid, 0, n); k < n; k = insertSome(t, words, width, rows, gid, k, n)) {
    if (limit > 0 && t.nGroups - t.base >= limit && n - k > n / 4) return k;
    growWords(t, stride);
  }
  return n;
}

function insertSome(
  t: WordTable,
  words: Int32Array,
  width: number,
  rows: Int32Array | null,
  gid: Int32Array,
  k0: number,
  n: number,
): number {
  if (width === 1) return insertOne(t, words, rows, gid, k0, n);
  if (width === 2) return insertTwo(t, words, rows, gid, k0, n);
  return insertWide(t, words, width, rows, gid, k0, n);
}

/** Pieces for the rows: the groups extrapolated from the first k rows' (at most), PIECE_GROUPS a piece. */
function piecesFor(groups: number, k: number, n: number): number {
  const estimate = (groups * n) / Math.max(1, k);
  let p = 2;
  while (p < MAX_PIECES && p * PIECE_GROUPS < estimate && p * 2048 < n) p *= 2;
  return p;
}

/**
 * Every row again (t's groups dropped), by pieces: rows counted by the high bits of their hash (the slots take
 * the low bits), their key words copied in piece order, each piece's words then grouped in a table emptied for
 * it (reading its words in order, writing its ids in order), the ids written back to the rows after. A group lies
 * in one piece; ids run piece by piece, in first appearance within a piece.
 */
function partitioned(
  t: WordTable,
  words: Int32Array,
  width: number,
  rows: Int32Array | null,
  gid: Int32Array,
  n: number,
  pieces: number,
): void {
  const shift = 32 - Math.log2(pieces);
  const piece = new Int32Array(n);
  const starts = new Int32Array(pieces + 1);
  pieceOf(words, width, rows, n, shift, piece, starts);
  for (let p = 0, at = 0; p < pieces; p++) {
    const c = starts[p];
    starts[p] = at;
    at += c;
  }
  starts[pieces] = n;
  const order = new Int32Array(n),
    ordered = new Int32Array(n * width),
    ids = new Int32Array(n);
  orderByPiece(words, width, rows, n, piece, starts, order, ordered);
  // starts[p] is now piece p's end: its start is the previous piece's end
  t.nGroups = 0;
  // a piece's table starts small again (emptied for each piece: slots it never needed are not cleared)
  t.slots = new Int32Array(PIECE_SLOTS * (width + 2));
  t.mask = PIECE_SLOTS - 1;
  for (let p = 0, from = 0; p < pieces; p++) {
    const to = starts[p];
    if (to > from) {
      t.base = t.nGroups;
      clearSlots(t.slots, width + 2);
      insertAll(t, ordered.subarray(from * width, to * width), width, null, ids.subarray(from, to), to - from, 0);
      firstRows(t.first, t.base, t.nGroups, order, from);
    }
    from = to;
  }
  t.base = 0;
  scatterIds(gid, ids, order, n);
}

/** A piece's groups' first rows, from positions in the piece to rows. */
function firstRows(first: Int32Array, g0: number, g1: number, order: Int32Array, from: number): void {
  for (let g = g0; g < g1; g++) first[g] = order[from + first[g]];
}

function scatterIds(gid: Int32Array, ids: Int32Array, order: Int32Array, n: number): void {
  for (let k = 0; k < n; k++) gid[order[k]] = ids[k];
}

function clearSlots(slots: Int32Array, stride: number): void {
  for (let o = stride - 2; o < slots.length; o += stride) slots[o] = -1;
}

/** Each row's piece (the hash's high bits), and the rows per piece counted into `counts`. */
function pieceOf(
  w: Int32Array,
  width: number,
  rows: Int32Array | null,
  n: number,
  shift: number,
  piece: Int32Array,
  counts: Int32Array,
): void {
  for (let k = 0; k < n; k++) {
    const at = (rows !== null ? rows[k] : k) * width;
    let h = 0;
    for (let j = 0; j < width; j++) h = mixWord(h, w[at + j]);
    const p = fmix(h ^ width) >>> shift;
    piece[k] = p;
    counts[p]++;
  }
}

/** The rows and their key words in piece order (`starts`: each piece's first position, advanced to its end). */
function orderByPiece(
  w: Int32Array,
  width: number,
  rows: Int32Array | null,
  n: number,
  piece: Int32Array,
  starts: Int32Array,
  order: Int32Array,
  ordered: Int32Array,
): void {
  for (let k = 0; k < n; k++) {
    const i = rows !== null ? rows[k] : k,
      at = starts[piece[k]]++;
    order[at] = i;
    for (let j = 0; j < width; j++) ordered[at * width + j] = w[i * width + j];
  }
}

function emptySlots(cap: number, stride: number): Int32Array {
  const s = new Int32Array(cap * stride);
  for (let o = stride - 2; o < s.length; o += stride) s[o] = -1;
  return s;
}

/** Room for one more group: twice the first rows when full, twice the slots when half full (rehashed by the hashes they hold). */
function growWords(t: WordTable, stride: number): void {
  const n = t.nGroups;
  if (n === t.first.length) {
    const f = new Int32Array(n * 2);
    f.set(t.first);
    t.first = f;
  }
  if ((n - t.base + 1) * 2 > t.mask + 1) {
    const cap = (t.mask + 1) * 2;
    const slots = emptySlots(cap, stride);
    rehashWords(t.slots, slots, stride, cap - 1);
    t.slots = slots;
    t.mask = cap - 1;
  }
}

function rehashWords(from: Int32Array, to: Int32Array, stride: number, mask: number): void {
  const g = stride - 2;
  for (let o = 0; o < from.length; o += stride) {
    if (from[o + g] < 0) continue;
    let s = from[o + g + 1] & mask;
    while (to[s * stride + g] >= 0) s = (s + 1) & mask;
    to.set(from.subarray(o, o + stride), s * stride);
  }
}

// The three loops below return n, or the first row needing a new group that does not fit. Each keeps the
// previous row's key and group where it has a key of one or two words: a run of one key (rows clustered by it,
// as TPC-H's line items by order: q18) takes its group without a probe.

/** One word a row (a 32-bit key without nulls): slots of three words. */
function insertOne(
  t: WordTable,
  w: Int32Array,
  rows: Int32Array | null,
  gid: Int32Array,
  k0: number,
  n: number,
): number {
  const slots = t.slots,
    mask = t.mask,
    first = t.first,
    hs = roundHash,
    base = t.base;
  let nGroups = t.nGroups,
    pv = 0,
    pg = -1;
  for (let r0 = k0; r0 < n; r0 += ROUND) {
    const r1 = Math.min(n, r0 + ROUND);
    let x = 0;
    for (let k = r0; k < r1; k++) {
      const h = fmix(mixWord(0, w[rows !== null ? rows[k] : k]) ^ 1); // the hash of insertWide at width 1
      hs[k - r0] = h;
      x ^= slots[(h & mask) * 3 + 1];
    }
    touched ^= x;
    for (let k = r0; k < r1; k++) {
      const i = rows !== null ? rows[k] : k;
      const v = w[i];
      if (v === pv && pg >= 0) {
        gid[i] = pg;
        continue;
      }
      const h = hs[k - r0];
      let o = (h & mask) * 3,
        g = slots[o + 1];
      while (g >= 0 && slots[o] !== v) {
        o = o + 3 > mask * 3 ? 0 : o + 3;
        g = slots[o + 1];
      }
      if (g < 0) {
        if (nGroups === first.length || (nGroups - base + 1) * 2 > mask + 1) {
          t.nGroups = nGroups;
          return k;
        }
        g = nGroups++;
        slots[o] = v;
        slots[o + 1] = g;
        slots[o + 2] = h;
        first[g] = i;
      }
      gid[i] = g;
      pv = v;
      pg = g;
    }
  }
  t.nGroups = nGroups;
  return n;
}

/** Two words a row (a 64-bit key, or two 32-bit ones, without nulls): slots of four words. */
function insertTwo(
  t: WordTable,
  w: Int32Array,
  rows: Int32Array | null,
  gid: Int32Array,
  k0: number,
  n: number,
): number {
  const slots = t.slots,
    mask = t.mask,
    first = t.first,
    hs = roundHash,
    base = t.base;
  let nGroups = t.nGroups,
    pl = 0,
    pu = 0,
    pg = -1;
  for (let r0 = k0; r0 < n; r0 += ROUND) {
    const r1 = Math.min(n, r0 + ROUND);
    let x = 0;
    for (let k = r0; k < r1; k++) {
      const i = rows !== null ? rows[k] : k;
      const h = fmix(mixWord(mixWord(0, w[2 * i]), w[2 * i + 1]) ^ 2);
      hs[k - r0] = h;
      x ^= slots[(h & mask) * 4 + 2];
    }
    touched ^= x;
    for (let k = r0; k < r1; k++) {
      const i = rows !== null ? rows[k] : k;
      const lo = w[2 * i],
        up = w[2 * i + 1];
      if (lo === pl && up === pu && pg >= 0) {
        gid[i] = pg;
        continue;
      }
      const h = hs[k - r0];
      let s = h & mask,
        g = slots[s * 4 + 2];
      while (g >= 0 && (slots[s * 4] !== lo || slots[s * 4 + 1] !== up)) {
        s = (s + 1) & mask;
        g = slots[s * 4 + 2];
      }
      if (g < 0) {
        if (nGroups === first.length || (nGroups - base + 1) * 2 > mask + 1) {
          t.nGroups = nGroups;
          return k;
        }
        g = nGroups++;
        const o = s * 4;
        slots[o] = lo;
        slots[o + 1] = up;
        slots[o + 2] = g;
        slots[o + 3] = h;
        first[g] = i;
      }
      gid[i] = g;
      pl = lo;
      pu = up;
      pg = g;
    }
  }
  t.nGroups = nGroups;
  return n;
}

/** `width` words a row: slots of width + 2 words, the hashes compared before the words. */
function insertWide(
  t: WordTable,
  w: Int32Array,
  width: number,
  rows: Int32Array | null,
  gid: Int32Array,
  k0: number,
  n: number,
): number {
  const slots = t.slots,
    mask = t.mask,
    first = t.first,
    hs = roundHash,
    stride = width + 2,
    base = t.base;
  let nGroups = t.nGroups;
  for (let r0 = k0; r0 < n; r0 += ROUND) {
    const r1 = Math.min(n, r0 + ROUND);
    let x = 0;
    for (let k = r0; k < r1; k++) {
      const at = (rows !== null ? rows[k] : k) * width;
      let h = 0;
      for (let j = 0; j < width; j++) h = mixWord(h, w[at + j]);
      h = fmix(h ^ width);
      hs[k - r0] = h;
      x ^= slots[(h & mask) * stride + width];
    }
    touched ^= x;
    for (let k = r0; k < r1; k++) {
      const i = rows !== null ? rows[k] : k,
        at = i * width;
      const h = hs[k - r0];
      let s = h & mask,
        g = -1;
      for (;;) {
        const o = s * stride;
        g = slots[o + width];
        if (g < 0) break;
        if (slots[o + width + 1] === h) {
          let j = 0;
          while (j < width && slots[o + j] === w[at + j]) j++;
          if (j === width) break;
        }
        s = (s + 1) & mask;
      }
      if (g < 0) {
        if (nGroups === first.length || (nGroups - base + 1) * 2 > mask + 1) {
          t.nGroups = nGroups;
          return k;
        }
        g = nGroups++;
        const o = s * stride;
        for (let j = 0; j < width; j++) slots[o + j] = w[at + j];
        slots[o + width] = g;
        slots[o + width + 1] = h;
        first[g] = i;
      }
      gid[i] = g;
    }
  }
  t.nGroups = nGroups;
  return n;
}

/** Key parts' words as one word matrix (see above), or null when a part is a string (or there are over 31 parts). */
function wordMatrix(keys: Keys): { words: Int32Array; width: number } | null {
  const parts = keys.parts;
  let nullable = false;
  for (const p of parts) {
    if (p.kind !== 'w') return null;
    if (p.nulls !== null) nullable = true;
  }
  if (parts.length > 31) return null;
  const p0 = parts[0] as Extract<KeyPart, { kind: 'w' }>;
  if (parts.length === 1 && p0.nulls === null) return { words: p0.w, width: 2 };
  const width = 2 * parts.length + (nullable ? 1 : 0),
    n = keys.n;
  const words = new Int32Array(width * n);
  for (let k = 0; k < parts.length; k++) {
    const p = parts[k] as Extract<KeyPart, { kind: 'w' }>;
    if (p.nulls === null) copyWords(words, width, 2 * k, p.w, n);
    else copyNullable(words, width, 2 * k, p.w, p.nulls, 1 << k, n);
  }
  return { words, width };
}

function copyWords(out: Int32Array, width: number, at: number, w: Int32Array, n: number): void {
  for (let i = 0, o = at; i < n; i++, o += width) {
    out[o] = w[2 * i];
    out[o + 1] = w[2 * i + 1];
  }
}

/** A nullable part's words (zero where null) and its bit in the row's last word (the null flags). */
function copyNullable(
  out: Int32Array,
  width: number,
  at: number,
  w: Int32Array,
  nulls: Uint8Array,
  bit: number,
  n: number,
): void {
  for (let i = 0, o = at, f = width - 1; i < n; i++, o += width, f += width) {
    if (nulls[i] === 0) {
      out[o] = w[2 * i];
      out[o + 1] = w[2 * i + 1];
    } else out[f] |= bit;
  }
}

/** Rows left at -1 (not selected) get the group id one past the last. */
export function fillUnselected(gid: Int32Array, nGroups: number): void {
  for (let i = 0; i < gid.length; i++) if (gid[i] < 0) gid[i] = nGroups;
}
