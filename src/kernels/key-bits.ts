// A bitmap of a built table's keys, probed before its slots: a probe row whose key's bit is clear finds no row
// without touching the table. A broadcast table at SF 10 is tens of MB (q05's 2.3M orders: 73 MB of slots, q07's
// 1.4M line items) and most probing rows find nothing (85% of q05's line items), each a cache miss; the bitmap of
// the keys' range is an eighth of that or less (a bit a value, at most BITS_PER_ROW values a row) and mostly cached.
import type { Keys } from './keys.js';
import { type KeyBits, SLOT, int32s } from './table.js';

export type { KeyBits };

/** A bitmap spans at most this many values a row (8 bytes a row, a quarter of the compact table's 32 at least). */
const BITS_PER_ROW = 64;
/**
 * Or, for a table of at least LARGE_ROWS rows, at most this many values (8 MB), however sparse: its slots are
 * larger still and out of the caches, and probing keys that come in order (a fact's foreign keys sorted as their
 * dimension's: TPC-H's line items by order) read the bitmap in order (q04 at SF 10: 575K orders of one quarter
 * spanning all 60M order keys, 104 values a row).
 */
const LARGE_SPAN = 1 << 26;
const LARGE_ROWS = 1 << 16;

/** Whether a bitmap of `span` values serves `n` keys (dense enough, or a large table's within LARGE_SPAN). */
export const spanFits = (span: number, n: number) =>
  span > 0 && (span <= BITS_PER_ROW * n || (n >= LARGE_ROWS && span <= LARGE_SPAN));

/** The bitmap of one 64-bit key column whose non-null keys are 32-bit integers within its span; else null. */
export function keyBits(keys: Keys, shared = false): KeyBits | null {
  if (keys.parts.length !== 1 || keys.parts[0].kind !== 'w' || keys.n === 0) return null;
  const w = keys.parts[0].w,
    nulls = keys.anyNull,
    n = keys.n;
  let min = 0x7fffffff,
    max = -0x80000000;
  for (let i = 0; i < n; i++) {
    if (nulls !== null && nulls[i]) continue;
    const lo = w[2 * i];
    if (w[2 * i + 1] !== lo >> 31) return null;
    if (lo < min) min = lo;
    if (lo > max) max = lo;
  }
  const span = max - min + 1;
  if (!spanFits(span, n)) return null;
  const bits = int32s((span + 31) >>> 5, shared);
  setBits(w, nulls, n, min, bits);
  return { bits, base: min, span };
}

function setBits(w: Int32Array, nulls: Uint8Array | null, n: number, base: number, bits: Int32Array): void {
  for (let i = 0; i < n; i++) {
    if (nulls !== null && nulls[i]) continue;
    const d = w[2 * i] - base;
    bits[d >>> 5] |= 1 << (d & 31);
  }
}

// biome-ignore lint/correctness/noUnusedVariables: written, never read, on purpose
let touched = 0; // keeps the touching loads from being optimized away

/**
 * findRows (kernels/table.ts) with the keys' bitmap first: rows whose bit is clear find none (-1) and touch
 * nothing; the others' slots are touched in a first pass, then probed.
 */
export function findRowsBits(
  slots: Int32Array,
  mask: number,
  probe: Keys,
  from: number,
  to: number,
  out: Int32Array,
  kb: KeyBits,
): void {
  const ph = probe.hash,
    pw = (probe.parts[0] as { w: Int32Array }).w,
    pNull = probe.anyNull,
    { bits, base, span } = kb;
  let t = 0;
  for (let i = from; i < to; i++) {
    const lo = pw[2 * i],
      d = lo - base;
    const maybe =
      (pNull === null || pNull[i] === 0) &&
      pw[2 * i + 1] === lo >> 31 &&
      d >= 0 &&
      d < span &&
      (bits[d >>> 5] & (1 << (d & 31))) !== 0;
    if (maybe) t ^= slots[(ph[i] & mask) * SLOT];
    out[i - from] = maybe ? 0 : -1;
  }
  touched ^= t;
  for (let i = from; i < to; i++) {
    if (out[i - from] < 0) continue;
    const lo = pw[2 * i],
      hi = pw[2 * i + 1];
    let row = -1;
    for (let s = ph[i] & mask; ; s = (s + 1) & mask) {
      const o = s * SLOT,
        r = slots[o + 2];
      if (r < 0) break;
      if (slots[o] === lo && slots[o + 1] === hi) {
        row = r;
        break;
      }
    }
    out[i - from] = row;
  }
}
