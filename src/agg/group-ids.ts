// Group ids of a batch's rows by some columns: one or two one-byte string columns through a direct table
// (agg/code-groups.ts), few groups by comparison (agg/few-groups.ts), else hashing; short strings and pairs of
// 32-bit integers are packed into one word column first, so that they hash and compare as one value.
import { type Batch, type Column, lanes } from '../kernels/column.js';
import { buildKeys, normFor } from '../kernels/keys.js';
import { int32s } from '../kernels/table.js';
import type { Selection } from '../expr/select.js';
import { codeGroups } from './code-groups.js';
import { denseGroups } from './dense-groups.js';
import { FEW_GROUPS, fewGroups } from './few-groups.js';
import { type Groups, groupRows } from './groups.js';

/**
 * `sel`: group only these rows; every other row gets the group id nGroups (one past the last). `shared`: gid in shared
 * memory (a broadcast table's). `lead`: the first `lead` group columns are expected to determine the others (a
 * dimension's key and its columns, plan/eager-push.ts): the rows are grouped by those, and the groups kept when every
 * other group column holds its group's first row's value in each row (then they are the groups of all the columns);
 * else grouped by all of them.
 */
export function groupsOf(b: Batch, groupBy: number[], sel?: Selection, shared = false, lead = 0): Groups {
  if (lead > 0 && lead < groupBy.length) {
    const g = groupsOf(b, groupBy.slice(0, lead), sel, shared);
    if (groupBy.slice(lead).every((c) => sameInGroups(b.columns[c], g, sel))) return g;
  }
  if (groupBy.length === 0) {
    const gid = new Int32Array(b.length);
    if (sel) {
      gid.fill(1);
      for (let k = 0; k < sel.n; k++) gid[sel.idx[k]] = 0;
    }
    return { gid, nGroups: 1, first: new Int32Array(1) };
  }
  // one or two columns of one-byte strings (q01's flags): a direct table of the code pairs, one pass
  const flags =
    groupBy.length <= 2
      ? codeGroups(
          groupBy.map((i) => b.columns[i]),
          shared,
          undefined,
          sel?.idx ?? null,
          sel?.n ?? b.length,
        )
      : null;
  if (flags) return flags;
  const cols = groupBy.map((i) => shortCodes(b.columns[i]) ?? b.columns[i]);
  // integers in a narrow range (ROLLUP's supplier and flag, a map task's customers): slots by value, no hashing
  const dense = denseGroups(cols, undefined, shared, sel?.idx ?? null, sel?.n ?? b.length);
  if (dense) return dense;
  // one column, every row: few groups are found in one pass; past them, the ids array goes on to groupRows.
  // Two 32-bit columns without nulls (q01's two flags) are one 64-bit column to that pass.
  const pair = cols.length === 2 ? pairOf(cols[0], cols[1]) : null;
  const one = cols.length === 1 ? cols[0] : pair;
  const gid = one ? int32s(b.length, shared) : undefined;
  // many pairs already among the first rows (two ids, say): fewGroups would give up
  const tryFew =
    one !== null &&
    (pair === null || !manyPairs(cols[0].values as Int32Array, cols[1].values as Int32Array, Math.min(b.length, 1024)));
  const few = tryFew ? fewGroups(one!, shared, gid!, sel?.idx ?? null, sel?.n ?? b.length) : null;
  if (few) return few;
  // a pair hashed and compared as its one word (groupRows' one-part loop): ROLLUP's (l_suppkey, l_returnflag), 30K
  // groups in 500K rows, 13 ms against 54 as two parts
  const keyCols = pair ? [pair] : cols;
  const keys = buildKeys(
    { length: b.length, columns: keyCols },
    keyCols.map((_, k) => k),
    keyCols.map((c) => normFor(c.type)),
  );
  return groupRows(keys, sel, shared, gid);
}

/** Whether each row of `c` holds the value of its group's first row (null alike; floats bit for bit). */
function sameInGroups(c: Column, g: Groups, sel?: Selection): boolean {
  const n = sel ? sel.n : c.length;
  const rows = sel?.idx ?? null;
  if (c.type.id === 'utf8') return sameStrings(c.offsets!, c.values as Uint8Array, c.valid, g.gid, g.first, rows, n);
  const v = c.values;
  // values of 4 bytes or more compared as their 32-bit words
  const bytes = v.BYTES_PER_ELEMENT * lanes(c.type);
  const w = bytes >= 4 ? new Int32Array(v.buffer, v.byteOffset, v.byteLength >> 2) : (v as Uint8Array);
  return sameWords(w, bytes >= 4 ? bytes >> 2 : 1, c.valid, g.gid, g.first, rows, n);
}

function sameWords(
  w: ArrayLike<number>,
  lanes: number,
  valid: Uint8Array | null,
  gid: Int32Array,
  first: Int32Array,
  rows: Int32Array | null,
  n: number,
): boolean {
  for (let k = 0; k < n; k++) {
    const r = rows === null ? k : rows[k];
    const f = first[gid[r]];
    if (f === r) continue;
    if (valid !== null && valid[r] !== valid[f]) return false;
    if (valid !== null && valid[r] === 0) continue;
    for (let j = 0; j < lanes; j++) if (w[r * lanes + j] !== w[f * lanes + j]) return false;
  }
  return true;
}

function sameStrings(
  o: Int32Array,
  v: Uint8Array,
  valid: Uint8Array | null,
  gid: Int32Array,
  first: Int32Array,
  rows: Int32Array | null,
  n: number,
): boolean {
  for (let k = 0; k < n; k++) {
    const r = rows === null ? k : rows[k];
    const f = first[gid[r]];
    if (f === r) continue;
    if (valid !== null && valid[r] !== valid[f]) return false;
    if (valid !== null && valid[r] === 0) continue;
    const a = o[r],
      b = o[f],
      len = o[r + 1] - a;
    if (len !== o[f + 1] - b) return false;
    for (let j = 0; j < len; j++) if (v[a + j] !== v[b + j]) return false;
  }
  return true;
}

/** Two int32 columns without nulls as one int64 column (the first the high word): equal pairs, equal values. */
export function pairOf(a: Column, b: Column): Column | null {
  if (a.type.id !== 'int32' || b.type.id !== 'int32' || a.valid !== null || b.valid !== null) return null;
  const n = a.length,
    v = new BigInt64Array(n);
  interleave(a.values as Int32Array, b.values as Int32Array, new Int32Array(v.buffer), n);
  return { type: { id: 'int64' }, length: n, values: v, valid: null };
}

/** Whether the first n rows hold more than FEW_GROUPS distinct (a, b) pairs. */
function manyPairs(a: Int32Array, b: Int32Array, n: number): boolean {
  const pa = new Int32Array(FEW_GROUPS + 1),
    pb = new Int32Array(FEW_GROUPS + 1);
  let k = 0;
  for (let i = 0; i < n && k <= FEW_GROUPS; i++) {
    let seen = false;
    for (let j = 0; j < k && !seen; j++) seen = pa[j] === a[i] && pb[j] === b[i];
    if (!seen) {
      pa[k] = a[i];
      pb[k] = b[i];
      k++;
    }
  }
  return k > FEW_GROUPS;
}

function interleave(hi: Int32Array, lo: Int32Array, w: Int32Array, n: number): void {
  for (let i = 0; i < n; i++) {
    w[2 * i] = lo[i];
    w[2 * i + 1] = hi[i];
  }
}

/**
 * A string column of short values as integers grouped alike, with no byte
 * loops: values of at most 3 bytes (flags, codes: q01's l_returnflag) as one
 * int32 per row, their bytes and length; values of at most 8 bytes (a
 * dimension's region, a ship mode) as their bytes in one 64-bit word,
 * zero-padded, where no value holds a zero byte ("a" and "a\0" would be one
 * word). Null when some value is longer.
 */
function shortCodes(c: Column): Column | null {
  if (c.type.id !== 'utf8') return null;
  const o = c.offsets!,
    v = c.values as Uint8Array,
    n = c.length;
  const longest = longestUpTo(o, n, 8);
  if (longest > 8) return null;
  if (longest > 3) return wordCodes(c);
  const codes = new Int32Array(n);
  packShort(o, v, codes, n);
  return { type: { id: 'int32' }, length: n, values: codes, valid: c.valid };
}

// The loops of shortCodes and wordCodes are functions of their own with nothing
// after the loop but a return: see groupIdsOfRows in joinagg.ts for why.

/** The longest of the n values (byte offsets o), or the first length above `limit`. */
function longestUpTo(o: Int32Array, n: number, limit: number): number {
  let longest = 0;
  for (let i = 0; i < n; i++) {
    const len = o[i + 1] - o[i];
    if (len > longest) {
      longest = len;
      if (len > limit) return len;
    }
  }
  return longest;
}

function packShort(o: Int32Array, v: Uint8Array, codes: Int32Array, n: number): void {
  for (let i = 0; i < n; i++) {
    const s = o[i],
      len = o[i + 1] - s;
    codes[i] = len | (len > 0 ? v[s] << 8 : 0) | (len > 1 ? v[s + 1] << 16 : 0) | (len > 2 ? v[s + 2] << 24 : 0);
  }
}

/** Values of at most 8 bytes as 64-bit words (see shortCodes); null where a value holds a zero byte. */
function wordCodes(c: Column): Column | null {
  const o = c.offsets!,
    v = c.values as Uint8Array,
    n = c.length,
    w = new Int32Array(2 * n);
  if (!packWords(o, v, w, n)) return null;
  return { type: { id: 'int64' }, length: n, values: new BigInt64Array(w.buffer), valid: c.valid };
}

/** Values as zero-padded 64-bit words (two int32 each); false at the first zero byte. */
function packWords(o: Int32Array, v: Uint8Array, w: Int32Array, n: number): boolean {
  for (let i = 0; i < n; i++) {
    const s = o[i],
      e = o[i + 1];
    let lo = 0,
      hi = 0;
    for (let k = s, sh = 0; k < e; k++, sh += 8) {
      const x = v[k];
      if (x === 0) return false;
      if (sh < 32) lo |= x << sh;
      else hi |= x << (sh - 32);
    }
    w[2 * i] = lo;
    w[2 * i + 1] = hi;
  }
  return true;
}
