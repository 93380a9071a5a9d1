// Key columns in a normalized form, hashed once per batch. Both sides of a
// join normalize alike (any integer width to 64-bit words, floats to float64
// bits, timestamps to a common unit), so equal keys hash and compare equal.
import type { KeyNorm } from '../plan/bound.js';
import { type Batch, type Column, type DataType, decimalAt, lanes } from './column.js';

/** How a column of type `t` is normalized as a key (a group, join or partition key). */
export function normFor(t: DataType): KeyNorm {
  if (t.id === 'utf8') return { kind: 'str' };
  if (t.id === 'float32' || t.id === 'float64') return { kind: 'float' };
  if (t.id === 'decimal') return { kind: 'dec', mul: 0, wide: t.precision! > 18 };
  return { kind: 'int' };
}

/** One key column: 64-bit words (lo, hi interleaved) or UTF-8 strings; nulls[i] = 1 for a null. */
export type KeyPart =
  | { kind: 'w'; w: Int32Array; nulls: Uint8Array | null }
  | { kind: 's'; bytes: Uint8Array; offs: Int32Array; nulls: Uint8Array | null };

export interface Keys {
  n: number;
  parts: KeyPart[];
  /** 32-bit hash of every row's key (a row with a null key part hashes its null as a value) */
  hash: Int32Array;
  /** 1 when any key part of the row is null */
  anyNull: Uint8Array | null;
}

/** A decimal or integer key rescaled (see KeyNorm 'dec'): 64-bit words, or 16 bytes per row when wide. */
function decimalKey(c: Column, norm: Extract<KeyNorm, { kind: 'dec' }>): BigInt64Array {
  const n = c.length,
    l = lanes(c.type);
  if (norm.mul === 0 && l === (norm.wide ? 2 : 1) && c.type.id === 'decimal') return c.values as BigInt64Array;
  const f = 10n ** BigInt(norm.mul);
  const out = new BigInt64Array(norm.wide ? 2 * n : n);
  const v = c.values as any;
  for (let i = 0; i < n; i++) {
    const x = (c.type.id === 'decimal' ? decimalAt(c, i) : BigInt(v[i])) * f;
    if (norm.wide) {
      out[2 * i] = BigInt.asIntN(64, x);
      out[2 * i + 1] = x >> 64n;
    } else out[i] = x;
  }
  return out;
}

const wideOffsets = (n: number) => {
  const o = new Int32Array(n + 1);
  for (let i = 0; i <= n; i++) o[i] = 16 * i;
  return o;
};

function wordsOf(c: Column, norm: KeyNorm): Int32Array {
  const n = c.length;
  const v = c.values as any;
  if (norm.kind === 'dec') {
    const d = decimalKey(c, norm);
    return new Int32Array(d.buffer, d.byteOffset, 2 * n);
  }
  // Each loop in a function of its own, this one none: a loop compiled while
  // it runs (on-stack replacement) is then never kept with this dispatch in it,
  // which deoptimizes on each new column type or norm shape (see groupIdsOfRows in agg/joinagg.ts).
  switch (c.type.id) {
    case 'int64':
    case 'uint64':
    case 'timestamp': {
      const scale = norm.kind === 'int' ? norm.scale : undefined;
      if (scale && scale !== 1) return scaledWords(v as BigInt64Array, BigInt(scale), n);
      return new Int32Array(v.buffer, v.byteOffset, 2 * n);
    }
    case 'float32':
    case 'float64':
      return floatWords(v, n);
    case 'uint32':
      return uint32Words(v as Uint32Array, n);
    default:
      return narrowWords(v, n); // narrow ints, date32, bool
  }
}

function scaledWords(v: BigInt64Array, s: bigint, n: number): Int32Array {
  const out = new BigInt64Array(n);
  for (let i = 0; i < n; i++) out[i] = v[i] * s;
  return new Int32Array(out.buffer);
}

function floatWords(v: Float64Array | Float32Array, n: number): Int32Array {
  const f = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const x = v[i];
    f[i] = x === 0 ? 0 : x !== x ? NaN : x; // -0 equals 0; one NaN
  }
  return new Int32Array(f.buffer);
}

function uint32Words(v: Uint32Array, n: number): Int32Array {
  const w = new Int32Array(2 * n);
  for (let i = 0; i < n; i++) w[2 * i] = v[i] | 0;
  return w;
}

/** Sign-extended to 64 bits (unsigned values, up to 32 bits, come out as they are: their sign is 0). */
export function narrowWords(
  v: Int32Array | Int16Array | Int8Array | Uint32Array | Uint16Array | Uint8Array,
  n: number,
): Int32Array {
  const w = new Int32Array(2 * n);
  for (let i = 0; i < n; i++) {
    const x = v[i];
    w[2 * i] = x;
    w[2 * i + 1] = x < 0 ? -1 : 0;
  }
  return w;
}

function nullsOf(c: Column): Uint8Array | null {
  if (!c.valid) return null;
  const out = new Uint8Array(c.length);
  let any = false;
  for (let i = 0; i < c.length; i++)
    if (!c.valid[i]) {
      out[i] = 1;
      any = true;
    }
  return any ? out : null;
}

const C1 = 0xcc9e2d51,
  C2 = 0x1b873593;
const NULL_HASH = 0x5bd1e995;

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

const NO_HASHES = new Int32Array(0);

/** One key column as a key part: its 64-bit words, or its bytes (strings, and wide decimals rescaled). */
function keyPart(c: Column, norm: KeyNorm): KeyPart {
  const nulls = nullsOf(c);
  if (norm.kind === 'dec' && norm.wide) {
    const d = decimalKey(c, norm);
    return {
      kind: 's' as const,
      bytes: new Uint8Array(d.buffer, d.byteOffset, 16 * c.length),
      offs: wideOffsets(c.length),
      nulls,
    };
  }
  return c.type.id === 'utf8'
    ? { kind: 's' as const, bytes: c.values as Uint8Array, offs: c.offsets!, nulls }
    : { kind: 'w' as const, w: wordsOf(c, norm), nulls };
}

/**
 * Normalize and hash the key columns of a batch. `scratch`, when given and
 * large enough, holds the hashes instead of a new array: for keys that do not
 * outlive the caller's loop. `hashed` false: no hashes (an empty `hash`), for
 * keys only looked up in a direct table (kernels/table.ts).
 */
export function buildKeys(b: Batch, cols: number[], norms: KeyNorm[], scratch?: Int32Array, hashed = true): Keys {
  const n = b.length;
  // pushed, not mapped: Array.prototype.map makes a holey array where V8 runs
  // it as a builtin and a packed one where it inlined it into optimized code,
  // so that every kernel reading `parts` met a second array map (and
  // deoptimized) whenever this function was recompiled, run after run
  const parts: KeyPart[] = [];
  for (let k = 0; k < cols.length; k++) parts.push(keyPart(b.columns[cols[k]], norms[k]));
  if (!hashed) {
    let anyNull: Uint8Array | null = null;
    for (const p of parts) {
      if (p.nulls === null) continue;
      anyNull ??= new Uint8Array(n);
      orNulls(anyNull, p.nulls, n);
    }
    return { n, parts, hash: NO_HASHES, anyNull };
  }
  const hash = scratch !== undefined && scratch.length >= n ? scratch.subarray(0, n) : new Int32Array(n);
  const p0 = parts[0];
  if (parts.length === 1 && p0.kind === 'w' && p0.nulls === null) {
    // The common case in one pass: the general loop below gives the same hashes.
    hashOneWord(hash, p0.w, n);
    return { n, parts, hash, anyNull: null };
  }
  hash.fill(0);
  let anyNull: Uint8Array | null = null;
  for (const p of parts) {
    if (p.nulls) {
      anyNull ??= new Uint8Array(n);
      orNulls(anyNull, p.nulls, n);
    }
    if (p.kind === 'w') mixWords(hash, p.w, p.nulls, n);
    else mixStrings(hash, p.bytes, p.offs, p.nulls, n);
  }
  finishHashes(hash, parts.length, n);
  return { n, parts, hash, anyNull };
}

// The loops of buildKeys are functions of their own with nothing after the
// loop: see groupIdsOfRows in agg/joinagg.ts for why.

function orNulls(anyNull: Uint8Array, nulls: Uint8Array, n: number): void {
  for (let i = 0; i < n; i++) anyNull[i] |= nulls[i];
}

/** One 64-bit key part, no nulls: the hashes of mixWords then finishHashes in one pass. */
function hashOneWord(hash: Int32Array, w: Int32Array, n: number): void {
  for (let i = 0; i < n; i++) hash[i] = fmix(mixWord(mixWord(0, w[2 * i]), w[2 * i + 1]) ^ 1);
}

function mixWords(hash: Int32Array, w: Int32Array, nl: Uint8Array | null, n: number): void {
  for (let i = 0; i < n; i++) {
    let h = hash[i];
    if (nl !== null && nl[i]) h = mixWord(h, NULL_HASH);
    else h = mixWord(mixWord(h, w[2 * i]), w[2 * i + 1]);
    hash[i] = h;
  }
}

function mixStrings(hash: Int32Array, bytes: Uint8Array, offs: Int32Array, nl: Uint8Array | null, n: number): void {
  for (let i = 0; i < n; i++) {
    let h = hash[i];
    if (nl !== null && nl[i]) h = mixWord(h, NULL_HASH);
    else {
      let s = offs[i];
      const e = offs[i + 1];
      for (; s + 4 <= e; s += 4)
        h = mixWord(h, bytes[s] | (bytes[s + 1] << 8) | (bytes[s + 2] << 16) | (bytes[s + 3] << 24));
      let k = 0;
      for (let sh = 0; s < e; s++, sh += 8) k |= bytes[s] << sh;
      h = mixWord(h, k ^ (e - offs[i]));
    }
    hash[i] = h;
  }
}

function finishHashes(hash: Int32Array, nParts: number, n: number): void {
  for (let i = 0; i < n; i++) hash[i] = fmix(hash[i] ^ nParts);
}

/** Whether row i of a equals row j of b (nulls equal nulls: the grouping semantics). */
export function keysEqual(a: Keys, i: number, b: Keys, j: number): boolean {
  for (let k = 0; k < a.parts.length; k++) {
    const p = a.parts[k],
      q = b.parts[k];
    const pn = p.nulls !== null && p.nulls[i] === 1,
      qn = q.nulls !== null && q.nulls[j] === 1;
    if (pn || qn) {
      if (pn !== qn) return false;
      continue;
    }
    if (p.kind === 'w') {
      const w = (q as typeof p).w;
      if (p.w[2 * i] !== w[2 * j] || p.w[2 * i + 1] !== w[2 * j + 1]) return false;
    } else {
      const s = q as typeof p;
      const a0 = p.offs[i],
        a1 = p.offs[i + 1],
        b0 = s.offs[j],
        b1 = s.offs[j + 1];
      if (a1 - a0 !== b1 - b0) return false;
      for (let x = a0, y = b0; x < a1; x++, y++) if (p.bytes[x] !== s.bytes[y]) return false;
    }
  }
  return true;
}

/** Partition of a hash among p, from its high bits (the table slot uses the low bits). */
export function partitionOf(hash: number, p: number): number {
  return Math.floor(((hash >>> 0) * p) / 4294967296);
}

const idDecoder = new TextDecoder();
/** A key's normalized identity as a string: equal for equal keys on both sides of a join. */
export function keyIdentity(k: Keys, row: number): string {
  return k.parts
    .map((p) => {
      if (p.nulls !== null && p.nulls[row]) return 'null';
      if (p.kind === 'w') return `${p.w[2 * row]}:${p.w[2 * row + 1]}`;
      return JSON.stringify(idDecoder.decode(p.bytes.subarray(p.offs[row], p.offs[row + 1])));
    })
    .join(',');
}
