// Runtime join filters: a built join side's keys summarized (the least and greatest of one integer key; a bitmap of
// its values where they are dense, kernels/key-bits.ts; else a Bloom filter over the keys' hashes) and tested
// against the other side's keys before that side's rows go further: in its scan, before its other columns are
// decoded (physical/scan/masks.ts), or before its map tasks partition the rows. A filter only ever says "no match"
// for a key the built side lacks (no false negatives): a row it drops would have found nothing. A null key matches
// nothing, so its row is dropped too. Every array is plain typed memory, in a SharedArrayBuffer when built for the
// pool (read in place by every task).
import type { KeyNorm } from '../plan/bound.js';
import type { Batch, Column } from './column.js';
import { type KeyBits, keyBits, spanFits } from './key-bits.js';
import { type Keys, buildKeys } from './keys.js';
import { int32s } from './table.js';

/** What a filter holds: which test decides (the min/max test comes with the others where the key allows one). */
type FilterKind = 'bitmap' | 'bloom' | 'minmax';
/** The setting: auto (a bitmap where dense, else a Bloom filter), off, or one kind forced (tests, baselines). */
export type FilterMode = 'auto' | 'off' | FilterKind;

export interface RuntimeFilter {
  /** its name in --explain and the statistics: the join and its built side ("join-2.right") */
  id: string;
  /** unique per filter built (what a thread learned of one filter is not taken for another's) */
  uid: string;
  kind: FilterKind;
  /** tested wherever it applies (a kind forced by the setting), never left out for keeping most rows */
  always?: boolean;
  /** keys the filter was built from (non-null) */
  keys: number;
  /** one integer key: its least and greatest value (as doubles: rounding keeps every key within) */
  min?: number;
  max?: number;
  bits?: KeyBits;
  /** a Bloom filter: a power of two of 32-bit words, BLOOM_PROBES bits set in one word a key */
  bloom?: Int32Array;
}

/** Bloom bits a key (a power of two of words rounds it up to less than twice). */
const BLOOM_BITS_PER_KEY = 16;
/** At most this many words (16 MB): beyond 8M keys the false positives grow rather than the memory. */
const BLOOM_MAX_WORDS = 1 << 22;
const BLOOM_MIN_WORDS = 64;
const TWO32 = 4294967296;

/** The words of a Bloom filter for `n` keys. */
function bloomWords(n: number): number {
  let w = BLOOM_MIN_WORDS;
  while (w < BLOOM_MAX_WORDS && w * 32 < n * BLOOM_BITS_PER_KEY) w *= 2;
  return w;
}

let built = 0;

/** Whether keys are one integer column (a min/max and a bitmap apply). */
const oneWord = (k: Keys) => k.parts.length === 1 && k.parts[0].kind === 'w';

/** The words of a Bloom filter for `n` keys in at most `maxBytes` (0 when not even the least one fits). */
function bloomWordsWithin(n: number, maxBytes: number): number {
  let w = bloomWords(n);
  while (w > BLOOM_MIN_WORDS && w * 4 > maxBytes) w /= 2;
  return w * 4 <= maxBytes ? w : 0;
}

/** The bytes of a bitmap over the integers min..max. */
const bitmapBytes = (min: number, max: number) => Math.ceil((max - min + 1) / 32) * 4;

/**
 * The filter of a built side's keys, given as one or more key sets (`hashed(i)`: set i hashed, asked for a Bloom
 * filter when it is not), or null when `mode` builds none for these keys (off; min/max forced on a key that is not
 * one integer). Its words take at most `maxBytes` (the memory budget's share, counted by the caller): a bitmap
 * larger gives way to a Bloom filter, a Bloom filter is made smaller (more false positives), and where not even the
 * smallest fits, the filter is its min/max alone (or none).
 */
export function buildFilter(
  id: string,
  keys: Keys[],
  mode: FilterMode,
  hashed: (i: number) => Keys = (i) => keys[i],
  shared = true,
  maxBytes = Number.POSITIVE_INFINITY,
): RuntimeFilter | null {
  if (mode === 'off' || keys.length === 0) return null;
  const one = keys.every(oneWord);
  const uid = `${id}.${Date.now().toString(36)}.${(++built).toString(36)}.${Math.random().toString(36).slice(2, 8)}`;
  const n = keys.reduce((a, k) => a + nonNull(k), 0);
  const f: RuntimeFilter = { id, uid, kind: 'minmax', keys: n, ...(mode !== 'auto' ? { always: true } : {}) };
  if (one) {
    let min = Infinity,
      max = -Infinity;
    for (const k of keys) {
      const [a, b] = minMax(k);
      if (a <= b) {
        min = Math.min(min, a);
        max = Math.max(max, b);
      }
    }
    [f.min, f.max] = min <= max ? [min, max] : [1, 0];
  } else if (mode === 'minmax') return null;
  if (mode === 'minmax') return f;
  const bitmapFits = one && bitmapBytes(f.min!, f.max!) <= maxBytes;
  const bits = bitmapFits && mode !== 'bloom' ? bitmapOf(keys, f.min!, f.max!, n, shared) : null;
  if (bits) {
    f.kind = 'bitmap';
    f.bits = bits;
    return f;
  }
  const words = bloomWordsWithin(n, maxBytes);
  if (words === 0) return one ? f : null;
  f.kind = 'bloom';
  f.bloom = int32s(words, shared);
  keys.forEach((k0, i) => {
    const k = k0.hash.length === k0.n ? k0 : hashed(i);
    if (k.hash.length !== k.n) throw new Error('internal: a Bloom filter needs the keys hashed');
    bloomAdd(f.bloom!, k.hash, k.anyNull, k.n);
  });
  return f;
}

/** A bitmap of one integer key over [min, max] (32-bit values, the span dense enough: kernels/key-bits.ts), or null. */
function bitmapOf(keys: Keys[], min: number, max: number, n: number, shared: boolean): KeyBits | null {
  if (keys.length === 1) return keyBits(keys[0], shared);
  if (min < -0x80000000 || max > 0x7fffffff || !spanFits(max - min + 1, n)) return null;
  const span = max - min + 1,
    bits = int32s((span + 31) >>> 5, shared);
  for (const k of keys) {
    const w = (k.parts[0] as { w: Int32Array }).w,
      nulls = k.anyNull;
    for (let i = 0; i < k.n; i++) {
      if (nulls !== null && nulls[i] === 1) continue;
      const d = w[2 * i] - min;
      bits[d >>> 5] |= 1 << (d & 31);
    }
  }
  return { bits, base: min, span };
}

function nonNull(k: Keys): number {
  const nulls = k.anyNull;
  if (nulls === null) return k.n;
  let n = 0;
  for (let i = 0; i < k.n; i++) n += nulls[i] ^ 1;
  return n;
}

/** The least and greatest non-null key (one integer column), as doubles; [1, 0] when there is none. */
function minMax(k: Keys): [number, number] {
  const w = (k.parts[0] as { w: Int32Array }).w,
    nulls = k.anyNull;
  let min = Infinity,
    max = -Infinity;
  for (let i = 0; i < k.n; i++) {
    if (nulls !== null && nulls[i] === 1) continue;
    const v = w[2 * i + 1] * TWO32 + (w[2 * i] >>> 0);
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return min <= max ? [min, max] : [1, 0];
}

/** The second hash of a key: its bits in its word (the word is chosen by the first hash's low bits). */
const mix = (h: number) => Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);

function bloomAdd(words: Int32Array, hash: Int32Array, nulls: Uint8Array | null, n: number): void {
  const m = words.length - 1;
  for (let i = 0; i < n; i++) {
    if (nulls !== null && nulls[i] === 1) continue;
    const h = hash[i],
      g = mix(h);
    words[h & m] |= (1 << (g >>> 27)) | (1 << ((g >>> 22) & 31)) | (1 << ((g >>> 17) & 31)) | (1 << ((g >>> 12) & 31));
  }
}

/**
 * 1 where a row's key may be on the built side, else 0 (`out`, n bytes): null keys, keys outside the min/max,
 * keys whose bit (bitmap) or bits (Bloom) are clear give 0. Returns the rows kept.
 */
function testKeys(f: RuntimeFilter, k: Keys, out: Uint8Array): number {
  const n = k.n;
  if (f.bits) return testBits(f.bits, k, out);
  if (f.bloom) {
    if (k.hash.length !== n) throw new Error('internal: a Bloom filter is tested with hashed keys');
    return f.min !== undefined && oneWord(k)
      ? testBloomRange(f.bloom, f.min, f.max!, k, out)
      : testBloom(f.bloom, k.hash, k.anyNull, n, out);
  }
  return testRange(f.min!, f.max!, k, out);
}

function testBits(kb: KeyBits, k: Keys, out: Uint8Array): number {
  const w = (k.parts[0] as { w: Int32Array }).w,
    nulls = k.anyNull,
    { bits, base, span } = kb;
  let kept = 0;
  for (let i = 0; i < k.n; i++) {
    const lo = w[2 * i],
      d = lo - base;
    const yes =
      (nulls === null || nulls[i] === 0) &&
      w[2 * i + 1] === lo >> 31 &&
      d >= 0 &&
      d < span &&
      (bits[d >>> 5] & (1 << (d & 31))) !== 0;
    out[i] = yes ? 1 : 0;
    kept += out[i];
  }
  return kept;
}

function testRange(min: number, max: number, k: Keys, out: Uint8Array): number {
  const w = (k.parts[0] as { w: Int32Array }).w,
    nulls = k.anyNull;
  let kept = 0;
  for (let i = 0; i < k.n; i++) {
    const v = w[2 * i + 1] * TWO32 + (w[2 * i] >>> 0);
    const yes = (nulls === null || nulls[i] === 0) && v >= min && v <= max;
    out[i] = yes ? 1 : 0;
    kept += out[i];
  }
  return kept;
}

function testBloom(words: Int32Array, hash: Int32Array, nulls: Uint8Array | null, n: number, out: Uint8Array): number {
  const m = words.length - 1;
  let kept = 0;
  for (let i = 0; i < n; i++) {
    const h = hash[i],
      g = mix(h);
    const want = (1 << (g >>> 27)) | (1 << ((g >>> 22) & 31)) | (1 << ((g >>> 17) & 31)) | (1 << ((g >>> 12) & 31));
    const yes = (nulls === null || nulls[i] === 0) && (words[h & m] & want) === want;
    out[i] = yes ? 1 : 0;
    kept += out[i];
  }
  return kept;
}

function testBloomRange(words: Int32Array, min: number, max: number, k: Keys, out: Uint8Array): number {
  const w = (k.parts[0] as { w: Int32Array }).w,
    hash = k.hash,
    nulls = k.anyNull,
    m = words.length - 1;
  let kept = 0;
  for (let i = 0; i < k.n; i++) {
    const v = w[2 * i + 1] * TWO32 + (w[2 * i] >>> 0);
    const h = hash[i],
      g = mix(h);
    const want = (1 << (g >>> 27)) | (1 << ((g >>> 22) & 31)) | (1 << ((g >>> 17) & 31)) | (1 << ((g >>> 12) & 31));
    const yes = (nulls === null || nulls[i] === 0) && v >= min && v <= max && (words[h & m] & want) === want;
    out[i] = yes ? 1 : 0;
    kept += out[i];
  }
  return kept;
}

/** Whether testing these keys needs their hashes (a Bloom filter). */
const testHashes = (f: RuntimeFilter) => f.bloom !== undefined;

/** The filter's outcome over some key columns of a batch (1: may match), and the rows kept. */
export function testBatch(
  f: RuntimeFilter,
  b: Batch,
  cols: number[],
  norms: KeyNorm[],
): { out: Uint8Array; kept: number } {
  const k = buildKeys(b, cols, norms, undefined, testHashes(f));
  const out = new Uint8Array(b.length);
  return { out, kept: testKeys(f, k, out) };
}

/** The filter's outcome over one key column (a scan's mask, physical/scan/masks.ts). */
export function testColumn(f: RuntimeFilter, c: Column, norm: KeyNorm): Uint8Array {
  return testBatch(f, { length: c.length, columns: [c] }, [0], [norm]).out;
}

/** The words of a filter (its memory, for the budget). */
export function filterBytes(f: RuntimeFilter): number {
  return (f.bits?.bits.byteLength ?? 0) + (f.bloom?.byteLength ?? 0);
}

/** The kinds a filter tests, for --explain and the statistics ("bitmap+minmax"). */
export const filterKinds = (f: RuntimeFilter) =>
  f.kind === 'minmax' || f.min === undefined ? f.kind : `${f.kind}+minmax`;

/** Rows a task tested against a filter and rows it kept (the task's metric; `skipped`: the filter left out). */
export interface FilterCount {
  id: string;
  rowsIn: number;
  rowsKept: number;
  skipped?: boolean;
}

// What the tasks of this thread counted since the last take (a task runs its filters, then takes them).
const counted = new Map<string, FilterCount>();

/** Count rows tested and kept by a filter. */
export function countFilter(id: string, rowsIn: number, rowsKept: number, skipped = false): void {
  const c = counted.get(id);
  if (c) {
    c.rowsIn += rowsIn;
    c.rowsKept += rowsKept;
    if (skipped) c.skipped = true;
  } else counted.set(id, { id, rowsIn, rowsKept, ...(skipped ? { skipped } : {}) });
}

/** The counts since the last take, or null when none. */
export function takeFilterCounts(): FilterCount[] | null {
  if (counted.size === 0) return null;
  const out = [...counted.values()];
  counted.clear();
  return out;
}

// The share of rows each filter kept on this thread so far: a filter that keeps most rows is left out of the scan's
// masks (reading its key column twice would cost more than the rows it drops save)
const seen = new Map<string, { rowsIn: number; rowsKept: number }>();

/** Rows a filter must have tested on this thread before its share kept decides. */
const LEARN_ROWS = 1 << 18;
/** A filter keeping more than this share of the rows it tested is left out. */
const KEEP_SHARE = 0.6;

/** Whether a filter is still worth testing on this thread (and note what a test found). */
export function worthTesting(f: RuntimeFilter): boolean {
  if (f.always) return true;
  const s = seen.get(f.uid);
  return !s || s.rowsIn < LEARN_ROWS || s.rowsKept <= KEEP_SHARE * s.rowsIn;
}

/**
 * Whether a filter is worth reading as a mask of its key column in a scan (the key column decoded twice, the other
 * columns at the kept rows only when few are kept): not once this thread found it keeps more than `share` of the
 * rows (it is then tested over the rows as read, or not at all: worthTesting).
 */
export function worthMasking(f: RuntimeFilter, share: number): boolean {
  if (f.always) return true;
  const s = seen.get(f.uid);
  return !s || s.rowsIn < LEARN_ROWS || s.rowsKept <= share * s.rowsIn;
}

export function noteTested(f: RuntimeFilter, rowsIn: number, rowsKept: number): void {
  const s = seen.get(f.uid);
  if (s) {
    s.rowsIn += rowsIn;
    s.rowsKept += rowsKept;
  } else {
    if (seen.size > 64) seen.clear();
    seen.set(f.uid, { rowsIn, rowsKept });
  }
}
