// The hash table a join builds over one side's keys. One 64-bit key column
// (the common case: integer keys) gets a compact open-addressing layout, the
// key words inline beside the row, so a probe costs one cache miss instead of
// three (slot head, row hash, row key); over a dense range of values (a
// dimension's ids, say) it is a direct array indexed by the key, half the
// compact layout's memory at most, and probes need no hashes; other keys chain rows by slot.
import type { Keys } from './keys.js';

/** Int32 words per slot of the compact layout: key lo, key hi, first row (-1: empty), unused (alignment). */
export const SLOT = 4;

/** The keys' bitmap: bit d set when base + d is a key of the table (kernels/key-bits.ts builds it). */
export interface KeyBits {
  bits: Int32Array;
  base: number;
  span: number;
}

/** The arrays of a table, as shared with other threads (see physical/join/broadcast.ts). */
export interface TableArrays {
  /** chains: first row per slot (-1: none); empty in the compact layout */
  heads: Int32Array;
  /** the next row of the same slot (chains) or of the same key (compact), -1 at the end */
  next: Int32Array;
  mask: number;
  /** the compact layout, SLOT words per slot; null for chains and direct tables */
  slots: Int32Array | null;
  /** the direct layout: the first row of key `base + i` at i (-1: none); null for the other layouts */
  direct: Int32Array | null;
  /** the smallest key of a direct table, as a number (exact: direct keys lie within ±2^53) */
  base: number;
  /** no key has a second row (nulls aside): a probe follows no chain */
  unique: boolean;
  /** the compact layout's keys as a bitmap, probed first (kernels/key-bits.ts); a broadcast table's only */
  bits?: KeyBits | null;
}

/**
 * A direct table spans at most this many values per row (4 bytes each: 16 bytes a row, half the compact layout's 32 at
 * least), or DIRECT_MIN values.
 */
const DIRECT_SPAN = 4;
const DIRECT_MIN = 1024;
const TWO32 = 4294967296;

/** n Int32 words, in a SharedArrayBuffer when `shared` (a broadcast table's: no copy into shared memory afterwards). */
export const int32s = (n: number, shared = false) =>
  new Int32Array(shared ? new SharedArrayBuffer(4 * n) : new ArrayBuffer(4 * n));

/** Whether keys take the compact layout: one key column of 64-bit words. */
export const compactKeys = (k: Keys) => k.parts.length === 1 && k.parts[0].kind === 'w';

export class KeyTable implements TableArrays {
  readonly heads: Int32Array;
  readonly next: Int32Array;
  readonly mask: number;
  readonly slots: Int32Array | null;
  readonly direct: Int32Array | null = null;
  readonly base: number = 0;
  readonly unique: boolean = false;
  readonly bits: KeyBits | null = null;

  /**
   * `built`: the arrays of a table built before over the same keys (shared memory).
   * Keys without hashes (buildKeys' `hashed` false) take directTable instead.
   * `shared`: the arrays are allocated in shared memory.
   */
  constructor(
    readonly keys: Keys,
    skipNullKeys: boolean,
    built?: TableArrays,
    shared = false,
  ) {
    if (built) {
      this.heads = built.heads;
      this.next = built.next;
      this.mask = built.mask;
      this.slots = built.slots;
      this.direct = built.direct;
      this.base = built.base;
      this.unique = built.unique;
      this.bits = built.bits ?? null;
      return;
    }
    let cap = 16;
    while (cap < keys.n * 2) cap *= 2;
    this.mask = cap - 1;
    this.next = int32s(keys.n, shared);
    const { hash, anyNull } = keys;
    if (compactKeys(keys)) {
      this.heads = new Int32Array(0);
      const d = buildDirect(keys, this.next, shared);
      if (d) {
        this.slots = null;
        this.direct = d.direct;
        this.base = d.base;
        this.unique = d.unique;
        return;
      }
      const b = buildSlots(keys, skipNullKeys, cap, this.next, shared);
      this.slots = b.slots;
      this.unique = b.unique;
      return;
    }
    this.slots = null;
    this.heads = int32s(cap, shared).fill(-1);
    for (let i = keys.n - 1; i >= 0; i--) {
      if (skipNullKeys && anyNull !== null && anyNull[i]) continue;
      const s = hash[i] & this.mask;
      this.next[i] = this.heads[s];
      this.heads[s] = i;
    }
  }
}

/**
 * A direct table over keys (hashed or not), or null when their layout or range does not allow one; `shared`: see
 * KeyTable.
 */
export function directTable(keys: Keys, shared = false): KeyTable | null {
  if (!compactKeys(keys)) return null;
  const next = int32s(keys.n, shared);
  const d = buildDirect(keys, next, shared);
  return d && new KeyTable(keys, true, { heads: new Int32Array(0), next, mask: 0, slots: null, ...d });
}

/** The key of row i of one 64-bit key column as a number: exact when the high word is within ±2^21. */
export const keyValue = (w: Int32Array, i: number) => w[2 * i + 1] * TWO32 + (w[2 * i] >>> 0);

/**
 * A direct table when the non-null keys span few enough values (see
 * DIRECT_SPAN); rows chained in order through `next`. Null keys are never
 * found (a join's null never matches), so they are left out.
 */
function buildDirect(
  keys: Keys,
  next: Int32Array,
  shared: boolean,
): { direct: Int32Array; base: number; unique: boolean } | null {
  const w = (keys.parts[0] as { w: Int32Array }).w,
    nulls = keys.anyNull,
    n = keys.n;
  // keys within 32 bits (a dimension's ids, the common case) in integer arithmetic, others as doubles
  const narrow = int32Range(w, nulls, n, RANGE);
  const rows = narrow >= 0 ? narrow : keyRange(w, nulls, n, RANGE);
  if (rows <= 0) return null;
  const min = RANGE[0],
    max = RANGE[1];
  if (max - min + 1 > Math.max(DIRECT_MIN, DIRECT_SPAN * rows)) return null;
  const direct = int32s(max - min + 1, shared).fill(-1);
  const unique =
    narrow >= 0 ? chainDirect32(w, nulls, n, min, direct, next) : chainDirect(w, nulls, n, min, direct, next);
  return { direct, base: min, unique };
}

// The loops of buildDirect and buildSlots are functions of their own whose
// code after the loop is a bare return, and they hand back one plain value:
// see groupIdsOfRows in agg/joinagg.ts for why.

/** The smallest and largest non-null key (written to range[0], range[1] as they change). */
const RANGE = new Float64Array(2);

/** The non-null rows, their keys' range in `range`; -1 when a key is beyond ±2^53. */
function keyRange(w: Int32Array, nulls: Uint8Array | null, n: number, range: Float64Array): number {
  let min = Infinity,
    max = -Infinity,
    rows = 0;
  range[0] = min;
  range[1] = max;
  for (let i = 0; i < n; i++) {
    if (nulls !== null && nulls[i]) continue;
    const hi = w[2 * i + 1];
    if (hi > 0x1fffff || hi < -0x200000) return -1;
    const v = hi * TWO32 + (w[2 * i] >>> 0);
    if (v < min) {
      min = v;
      range[0] = v;
    }
    if (v > max) {
      max = v;
      range[1] = v;
    }
    rows++;
  }
  return rows;
}

/**
 * keyRange where every key is a 32-bit integer (its high word its low word's
 * sign), else -1. Integer arithmetic only: the doubles of keyRange and
 * chainDirect cost about twice as much per key (1M keys: 40-49 ms, warm).
 */
function int32Range(w: Int32Array, nulls: Uint8Array | null, n: number, range: Float64Array): number {
  let min = 0x7fffffff,
    max = -0x80000000,
    rows = 0;
  for (let i = 0; i < n; i++) {
    if (nulls !== null && nulls[i]) continue;
    const lo = w[2 * i];
    if (w[2 * i + 1] !== lo >> 31) return -1;
    if (lo < min) {
      min = lo;
      range[0] = lo;
    }
    if (lo > max) {
      max = lo;
      range[1] = lo;
    }
    rows++;
  }
  return rows;
}

/** Rows chained in order through `next` from their key's slot of `direct`; whether every key is unique. */
function chainDirect(
  w: Int32Array,
  nulls: Uint8Array | null,
  n: number,
  min: number,
  direct: Int32Array,
  next: Int32Array,
): boolean {
  let unique = true;
  for (let i = n - 1; i >= 0; i--) {
    if (nulls !== null && nulls[i]) {
      next[i] = -1;
      continue;
    }
    const d = keyValue(w, i) - min;
    const r = direct[d];
    if (r >= 0) unique = false;
    next[i] = r;
    direct[d] = i;
  }
  return unique;
}

/** chainDirect for 32-bit keys (see int32Range), with integer indices. */
function chainDirect32(
  w: Int32Array,
  nulls: Uint8Array | null,
  n: number,
  min: number,
  direct: Int32Array,
  next: Int32Array,
): boolean {
  let unique = true;
  for (let i = n - 1; i >= 0; i--) {
    if (nulls !== null && nulls[i]) {
      next[i] = -1;
      continue;
    }
    const d = w[2 * i] - min;
    const r = direct[d];
    if (r >= 0) unique = false;
    next[i] = r;
    direct[d] = i;
  }
  return unique;
}

/** Like findRows, for a direct table: one independent load per probe row, no hash. */
export function findDirect(
  direct: Int32Array,
  base: number,
  probe: Keys,
  from: number,
  to: number,
  out: Int32Array,
): void {
  const pw = (probe.parts[0] as { w: Int32Array }).w,
    pNull = probe.anyNull,
    size = direct.length;
  for (let i = from; i < to; i++) {
    let row = -1;
    if (pNull === null || pNull[i] === 0) {
      const d = keyValue(pw, i) - base;
      if (d >= 0 && d < size) row = direct[d | 0];
    }
    out[i - from] = row;
  }
}

/**
 * Probe rows per round: a first pass touches each row's slot, so that the second (the real probe) finds them in cache.
 */
export const PROBE_ROUND = 256;
const ROUND = PROBE_ROUND;
// biome-ignore lint/correctness/noUnusedVariables: written, never read, on purpose
let touched = 0; // keeps the touching loads from being optimized away

/** Rows in reverse, so each key's chain lists its rows in order; a round's slots are touched first (see findRows). */
function buildSlots(
  keys: Keys,
  skipNullKeys: boolean,
  cap: number,
  next: Int32Array,
  shared: boolean,
): { slots: Int32Array; unique: boolean } {
  const slots = int32s(cap * SLOT, shared);
  clearSlots(slots);
  const unique = insertRows(
    slots,
    cap - 1,
    keys.hash,
    keys.anyNull,
    (keys.parts[0] as { w: Int32Array }).w,
    keys.n,
    skipNullKeys,
    next,
  );
  return { slots, unique };
}

function clearSlots(slots: Int32Array): void {
  for (let s = 2; s < slots.length; s += SLOT) slots[s] = -1;
}

/** buildSlots' rows into `slots`; whether every key is unique. */
function insertRows(
  slots: Int32Array,
  mask: number,
  hash: Int32Array,
  anyNull: Uint8Array | null,
  w: Int32Array,
  n: number,
  skipNullKeys: boolean,
  next: Int32Array,
): boolean {
  let t = 0,
    unique = true;
  for (let r1 = n; r1 > 0; r1 -= ROUND) {
    const r0 = Math.max(0, r1 - ROUND);
    for (let i = r0; i < r1; i++) t ^= slots[(hash[i] & mask) * SLOT];
    for (let i = r1 - 1; i >= r0; i--) {
      if (skipNullKeys && anyNull !== null && anyNull[i]) {
        next[i] = -1;
        continue;
      }
      const lo = w[2 * i],
        hi = w[2 * i + 1];
      for (let s = hash[i] & mask; ; s = (s + 1) & mask) {
        const o = s * SLOT,
          r = slots[o + 2];
        if (r < 0) {
          slots[o] = lo;
          slots[o + 1] = hi;
          slots[o + 2] = i;
          next[i] = -1;
          break;
        }
        if (slots[o] === lo && slots[o + 1] === hi) {
          next[i] = r;
          slots[o + 2] = i;
          unique = false;
          break;
        }
      }
    }
    touched ^= t; // in the loop: an operation after it would be one the early-compiled code never saw
  }
  return unique;
}

/**
 * The first row of every probe row's key in a compact table (-1: none; a null
 * key finds none), written to `out`; later rows of the key follow `next`.
 * The loads of a round are independent, so the memory system overlaps their
 * misses; then the dependent compares hit the cache.
 */
export function findRows(
  slots: Int32Array,
  mask: number,
  probe: Keys,
  from: number,
  to: number,
  out: Int32Array,
): void {
  const ph = probe.hash,
    pw = (probe.parts[0] as { w: Int32Array }).w,
    pNull = probe.anyNull;
  let t = 0;
  for (let i = from; i < to; i++) t ^= slots[(ph[i] & mask) * SLOT];
  touched ^= t;
  for (let i = from; i < to; i++) {
    let row = -1;
    if (pNull === null || pNull[i] === 0) {
      const lo = pw[2 * i],
        hi = pw[2 * i + 1];
      for (let s = ph[i] & mask; ; s = (s + 1) & mask) {
        const o = s * SLOT,
          r = slots[o + 2];
        if (r < 0) break;
        if (slots[o] === lo && slots[o + 1] === hi) {
          row = r;
          break;
        }
      }
    }
    out[i - from] = row;
  }
}
