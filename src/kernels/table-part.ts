// A hash table built by several threads at once (physical/join/partitioned.ts): one table, the layout of
// kernels/table.ts (chains for any keys, the compact open-addressing slots for one 64-bit key column), whose slots
// are cut into `parts` ranges, a power of two. A row's part is its home slot's top bits, so each part's rows only
// ever write its own range of slots (and their own `next` entries): the parts are built in parallel with no lock,
// and a probe reads the finished table exactly as it reads one built on one thread (kernels/join.ts).
//
// The compact layout probes on from a taken slot to the next (linear probing): a key whose run of taken slots
// reaches the end of its part's range would spill into the next part's range while that part is being built. It is
// left out (`deferred`) and inserted after every part is done, in one short pass on one thread (inserting it then
// into slots past its part's end is what a build on one thread would have done: a lookup finds it the same way).
import type { Keys } from './keys.js';
import { SLOT, type TableArrays, compactKeys, int32s } from './table.js';

/** The slots of a table over n rows: a power of two, at least 16 and twice the rows (as KeyTable sizes them). */
export function tableCapacity(n: number): number {
  let cap = 16;
  while (cap < n * 2) cap *= 2;
  return cap;
}

/** log2 of a power of two. */
const log2 = (x: number) => 31 - Math.clz32(x);

/**
 * The arrays of a table over `keys` (hashed), allocated in shared memory and not yet filled: each part clears its
 * own range as it builds it (a retried part starts over).
 */
export function allocateTable(keys: Keys): TableArrays {
  const cap = tableCapacity(keys.n);
  const compact = compactKeys(keys);
  return {
    heads: compact ? new Int32Array(0) : int32s(cap, true),
    next: int32s(keys.n, true),
    mask: cap - 1,
    slots: compact ? int32s(cap * SLOT, true) : null,
    direct: null,
    base: 0,
    unique: compact,
  };
}

/**
 * Which rows each part holds: the row ids of each range of rows (the hashing tasks' ranges, in order) sorted by
 * part, rows in order within a part, `order` holding every range's at its own rows' places and `starts` each
 * range's part boundaries (`parts + 1` entries a range: part p's rows of range r are
 * order[starts[r * (parts + 1) + p] .. starts[r * (parts + 1) + p + 1])).
 */
export interface PartRows {
  order: Int32Array;
  starts: Int32Array;
  ranges: number;
}

/** The part of a row whose hash is h, in a table of `mask + 1` slots cut into `parts`. */
const partShift = (mask: number, parts: number) => log2(mask + 1) - log2(parts);

/**
 * Rows [from, to) (range r of `rows`) sorted by part into `rows.order` at the same places, and the range's part
 * boundaries into `rows.starts` (a counting sort over the rows' hashes).
 */
export function sortRange(
  hash: Int32Array,
  from: number,
  to: number,
  r: number,
  mask: number,
  parts: number,
  rows: PartRows,
): void {
  const shift = partShift(mask, parts),
    base = r * (parts + 1),
    { order, starts } = rows;
  starts.fill(0, base, base + parts + 1);
  countParts(hash, from, to, mask, shift, starts, base);
  starts[base] = from;
  for (let p = 0; p < parts; p++) starts[base + p + 1] += starts[base + p];
  const cursor = starts.slice(base, base + parts);
  placeRows(hash, from, to, mask, shift, cursor, order);
}

function countParts(
  hash: Int32Array,
  from: number,
  to: number,
  mask: number,
  shift: number,
  starts: Int32Array,
  base: number,
): void {
  for (let i = from; i < to; i++) starts[base + ((hash[i] & mask) >>> shift) + 1]++;
}

function placeRows(
  hash: Int32Array,
  from: number,
  to: number,
  mask: number,
  shift: number,
  cursor: Int32Array,
  order: Int32Array,
): void {
  for (let i = from; i < to; i++) order[cursor[(hash[i] & mask) >>> shift]++] = i;
}

/** The rows of part `part` of `parts` inserted into `t`: how many, whether every key was unique, the rows deferred. */
export interface PartBuilt {
  rows: number;
  unique: boolean;
  deferred: Int32Array;
}

/**
 * Build part `part` of `parts` (a power of two, at most the slots) of table `t` over `keys`: its slot range cleared,
 * then its rows (`rows`, see sortRange) inserted, last row first (each key's rows chain in order, as KeyTable chains
 * them). Null keys are left out (a join's null never matches).
 */
export function buildPart(t: TableArrays, keys: Keys, part: number, parts: number, rows: PartRows): PartBuilt {
  const shift = partShift(t.mask, parts);
  const lo = part << shift,
    hi = lo + (1 << shift);
  let n = 0;
  for (let r = 0; r < rows.ranges; r++) {
    const b = r * (parts + 1) + part;
    n += rows.starts[b + 1] - rows.starts[b];
  }
  if (t.slots === null) {
    t.heads.fill(-1, lo, hi);
    for (let r = rows.ranges - 1; r >= 0; r--) {
      const b = r * (parts + 1) + part;
      chainRows(t.heads, t.next, t.mask, keys.hash, keys.anyNull, rows.order, rows.starts[b], rows.starts[b + 1]);
    }
    return { rows: n, unique: false, deferred: new Int32Array(0) };
  }
  for (let s = lo; s < hi; s++) t.slots[s * SLOT + 2] = -1;
  const w = (keys.parts[0] as { w: Int32Array }).w;
  const deferred = new Int32Array(n);
  let nd = 0,
    unique = true;
  for (let r = rows.ranges - 1; r >= 0; r--) {
    const b = r * (parts + 1) + part;
    nd = slotRows(
      t.slots,
      t.next,
      t.mask,
      hi,
      keys.hash,
      keys.anyNull,
      w,
      rows.order,
      rows.starts[b],
      rows.starts[b + 1],
      deferred,
      nd,
    );
    if (nd < 0) {
      nd = -nd - 1;
      unique = false;
    }
  }
  return { rows: n, unique, deferred: deferred.slice(0, nd) };
}

/** Chains: rows order[e - 1] down to order[s] pushed onto their slots' chains. */
function chainRows(
  heads: Int32Array,
  next: Int32Array,
  mask: number,
  hash: Int32Array,
  anyNull: Uint8Array | null,
  order: Int32Array,
  s: number,
  e: number,
): void {
  for (let j = e - 1; j >= s; j--) {
    const i = order[j];
    if (anyNull !== null && anyNull[i]) continue;
    const h = hash[i] & mask;
    next[i] = heads[h];
    heads[h] = i;
  }
}

/**
 * The compact layout: rows order[e - 1] down to order[s] each probe from its home slot up to the end of the part's
 * range (`hi`); a row that reaches it is deferred (appended to `deferred` from `nd` on). Returns the deferred count,
 * as -count - 1 when a key repeated.
 */
function slotRows(
  slots: Int32Array,
  next: Int32Array,
  mask: number,
  hi: number,
  hash: Int32Array,
  anyNull: Uint8Array | null,
  w: Int32Array,
  order: Int32Array,
  s0: number,
  e: number,
  deferred: Int32Array,
  nd: number,
): number {
  let repeated = false;
  for (let j = e - 1; j >= s0; j--) {
    const i = order[j];
    if (anyNull !== null && anyNull[i]) {
      next[i] = -1;
      continue;
    }
    const lo = w[2 * i],
      hiWord = w[2 * i + 1];
    let s = hash[i] & mask;
    for (; s < hi; s++) {
      const o = s * SLOT,
        r = slots[o + 2];
      if (r < 0) {
        slots[o] = lo;
        slots[o + 1] = hiWord;
        slots[o + 2] = i;
        next[i] = -1;
        break;
      }
      if (slots[o] === lo && slots[o + 1] === hiWord) {
        next[i] = r;
        slots[o + 2] = i;
        repeated = true;
        break;
      }
    }
    if (s === hi) deferred[nd++] = i;
  }
  return repeated ? -nd - 1 : nd;
}

/**
 * The deferred rows of every part (each part's last row first) inserted on this thread, probing on past their
 * part's range as a lookup does; returns whether every key stayed unique.
 */
export function insertDeferred(t: TableArrays, keys: Keys, deferred: Int32Array[]): boolean {
  const slots = t.slots!,
    mask = t.mask,
    hash = keys.hash,
    w = (keys.parts[0] as { w: Int32Array }).w;
  let unique = true;
  for (const rows of deferred)
    for (const i of rows) {
      const lo = w[2 * i],
        hi = w[2 * i + 1];
      for (let s = hash[i] & mask; ; s = (s + 1) & mask) {
        const o = s * SLOT,
          r = slots[o + 2];
        if (r < 0) {
          slots[o] = lo;
          slots[o + 1] = hi;
          slots[o + 2] = i;
          t.next[i] = -1;
          break;
        }
        if (slots[o] === lo && slots[o + 1] === hi) {
          t.next[i] = r;
          slots[o + 2] = i;
          unique = false;
          break;
        }
      }
    }
  return unique;
}
