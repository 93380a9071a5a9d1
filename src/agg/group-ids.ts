// Group ids of a batch's rows by some columns: one or two one-byte string columns through a direct table
// (agg/code-groups.ts); several columns of few values each (flags, short strings read in place) through a small
// table per column and a direct table of their combinations; one column of few groups by comparison
// (agg/few-groups.ts); else hashing: integer keys (short strings as their codes) as 32-bit words in the table of
// agg/groups.ts groupWords, other keys (longer strings) compared through kernels/keys.ts.
import { type Batch, type Column, lanes } from '../kernels/column.js';
import { buildKeys, normFor } from '../kernels/keys.js';
import { int32s } from '../kernels/table.js';
import type { Selection } from '../expr/select.js';
import { codeGroups } from './code-groups.js';
import { FEW_GROUPS, fewGroups } from './few-groups.js';
import { type Groups, fillUnselected, groupRows, groupWords } from './groups.js';

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
  // several columns of few values each (ROLLUP's flags and ship mode): each column's groups, short strings
  // read in place, then their combinations through a direct table
  const gid = int32s(b.length, shared);
  if (groupBy.length > 1) {
    const folded = foldFew(
      groupBy.map((i) => b.columns[i]),
      gid,
      sel?.idx ?? null,
      sel?.n ?? b.length,
    );
    if (folded) return folded;
  }
  const cols = groupBy.map((i) => shortCodes(b.columns[i]) ?? b.columns[i]);
  // one column, every row: few groups are found in one pass; past them, the ids array goes on to the hash table.
  // Two 32-bit columns without nulls (q01's two flags) are one 64-bit column to that pass.
  const one = cols.length === 1 ? cols[0] : cols.length === 2 ? pairOf(cols[0], cols[1]) : null;
  const few = one ? fewGroups(one, shared, gid, sel?.idx ?? null, sel?.n ?? b.length) : null;
  if (few) return few;
  // integer keys (short strings as their codes): their words, one hash table with the words inline
  const m = columnWords(cols, b.length);
  if (m) return groupWords(m.words, m.width, b.length, sel, gid);
  const keys = buildKeys(
    { length: b.length, columns: cols },
    cols.map((_, k) => k),
    cols.map((c) => normFor(c.type)),
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

/** Combinations of the columns' groups a direct table takes. */
const FOLD_CODES = 1 << 12;

/**
 * The groups of several columns that each hold few values (fewGroups, one-byte strings through codeGroups): a
 * row's groups combined into one code, whose first appearances number the groups. Null as soon as a column has
 * more values, or the combinations could be more than FOLD_CODES. Ids and first rows are groupRows'.
 */
function foldFew(cols: Column[], gid: Int32Array, rows: Int32Array | null, m: number): Groups | null {
  let codes = 1,
    code: Int32Array | null = null;
  for (const c of cols) {
    const g = smallGroups(c, gid, rows, m);
    if (g === null || codes * (g.nGroups + 1) > FOLD_CODES) return null;
    code ??= new Int32Array(gid.length);
    addCodes(code, gid, codes, rows, m);
    codes *= g.nGroups + 1;
  }
  const table = new Int32Array(codes).fill(-1),
    first = new Int32Array(Math.min(codes, m));
  if (rows !== null) gid.fill(-1);
  const nGroups = numberCodes(code!, table, gid, first, rows, m);
  if (rows !== null) fillUnselected(gid, nGroups);
  return { gid, nGroups, first: first.subarray(0, nGroups) };
}

/** Groups a column's small table holds at most (smallGroups), and its slots (a power of two, 4x as many). */
const SMALL_GROUPS = 256;
/** Types whose equal values are equal words (32 or 64 bits) within a column. */
const SMALL_TYPES = new Set(['int32', 'int64', 'date32', 'timestamp', 'decimal']);
const SMALL_SLOTS = 1024;
const smallKeys = new Int32Array(3 * SMALL_SLOTS),
  smallIds = new Int32Array(SMALL_SLOTS),
  smallFirst = new Int32Array(SMALL_GROUPS + 1);

/**
 * The groups of one 32- or 64-bit integer column (short strings as their codes) of at most SMALL_GROUPS values,
 * nulls one group, through a table that stays in the first-level cache; null past that (gid then partly
 * written). Ids in first appearance; the rows not in `rows` are left as they are.
 */
function smallGroups(c: Column, gid: Int32Array, rows: Int32Array | null, m: number): Groups | null {
  const v = c.values;
  if (c.type.id === 'utf8') {
    smallIds.fill(-1);
    const nGroups = smallStrings(c.offsets!, v as Uint8Array, c.valid, rows, m, gid, smallKeys, smallIds, smallFirst);
    return nGroups < 0 ? null : { gid, nGroups, first: smallFirst.slice(0, nGroups) };
  }
  const w =
    v instanceof Int32Array
      ? v
      : v instanceof BigInt64Array
        ? new Int32Array(v.buffer, v.byteOffset, 2 * c.length)
        : null;
  if (w === null || !SMALL_TYPES.has(c.type.id) || (c.type.id === 'decimal' && c.type.precision! > 18)) return null;
  smallIds.fill(-1);
  const nGroups = smallInsert(
    w,
    v instanceof Int32Array ? 1 : 2,
    c.valid,
    rows,
    m,
    gid,
    smallKeys,
    smallIds,
    smallFirst,
  );
  return nGroups < 0 ? null : { gid, nGroups, first: smallFirst.slice(0, nGroups) };
}

/**
 * smallInsert over strings of at most 8 bytes, read in place: a value's key its bytes as two words and its length
 * (-1 past 8 bytes or SMALL_GROUPS groups). Slots of three words.
 */
function smallStrings(
  o: Int32Array,
  v: Uint8Array,
  valid: Uint8Array | null,
  rows: Int32Array | null,
  m: number,
  gid: Int32Array,
  keys: Int32Array,
  ids: Int32Array,
  first: Int32Array,
): number {
  const mask = SMALL_SLOTS - 1;
  let nGroups = 0,
    nullGroup = -1;
  for (let k = 0; k < m; k++) {
    const i = rows !== null ? rows[k] : k;
    if (valid !== null && valid[i] === 0) {
      if (nullGroup < 0) {
        if (nGroups === SMALL_GROUPS) return -1;
        nullGroup = nGroups++;
        first[nullGroup] = i;
      }
      gid[i] = nullGroup;
      continue;
    }
    const b = o[i],
      len = o[i + 1] - b;
    if (len > 8) return -1;
    let lo = 0,
      hi = 0;
    for (let x = 0; x < len; x++) {
      if (x < 4) lo |= v[b + x] << (8 * x);
      else hi |= v[b + x] << (8 * (x - 4));
    }
    let s = (Math.imul(lo, 0x9e3779b1) ^ Math.imul(hi + len, 0x85ebca77)) >>> 22,
      g = ids[s];
    while (g >= 0 && (keys[3 * s] !== lo || keys[3 * s + 1] !== hi || keys[3 * s + 2] !== len)) {
      s = (s + 1) & mask;
      g = ids[s];
    }
    if (g < 0) {
      if (nGroups === SMALL_GROUPS) return -1;
      g = ids[s] = nGroups;
      keys[3 * s] = lo;
      keys[3 * s + 1] = hi;
      keys[3 * s + 2] = len;
      first[nGroups++] = i;
    }
    gid[i] = g;
  }
  return nGroups;
}

function smallInsert(
  w: Int32Array,
  width: number,
  valid: Uint8Array | null,
  rows: Int32Array | null,
  m: number,
  gid: Int32Array,
  keys: Int32Array,
  ids: Int32Array,
  first: Int32Array,
): number {
  const mask = SMALL_SLOTS - 1;
  let nGroups = 0,
    nullGroup = -1;
  for (let k = 0; k < m; k++) {
    const i = rows !== null ? rows[k] : k;
    if (valid !== null && valid[i] === 0) {
      if (nullGroup < 0) {
        if (nGroups === SMALL_GROUPS) return -1;
        nullGroup = nGroups++;
        first[nullGroup] = i;
      }
      gid[i] = nullGroup;
      continue;
    }
    const lo = w[width * i],
      hi = width === 2 ? w[2 * i + 1] : 0;
    let s = (Math.imul(lo, 0x9e3779b1) ^ Math.imul(hi, 0x85ebca77)) >>> 22,
      g = ids[s];
    while (g >= 0 && (keys[3 * s] !== lo || keys[3 * s + 1] !== hi)) {
      s = (s + 1) & mask;
      g = ids[s];
    }
    if (g < 0) {
      if (nGroups === SMALL_GROUPS) return -1;
      g = ids[s] = nGroups;
      keys[3 * s] = lo;
      keys[3 * s + 1] = hi;
      first[nGroups++] = i;
    }
    gid[i] = g;
  }
  return nGroups;
}

// The loops of foldFew, each in a function of its own (see groupIdsOfRows in joinagg.ts).

/** code += gid * codes at each row (a column's groups as one more digit, base nGroups + 1). */
function addCodes(code: Int32Array, gid: Int32Array, codes: number, rows: Int32Array | null, m: number): void {
  for (let k = 0; k < m; k++) {
    const i = rows !== null ? rows[k] : k;
    code[i] += gid[i] * codes;
  }
}

/** Group ids by code, in first appearance; the number of groups. */
function numberCodes(
  code: Int32Array,
  table: Int32Array,
  gid: Int32Array,
  first: Int32Array,
  rows: Int32Array | null,
  m: number,
): number {
  let nGroups = 0;
  for (let k = 0; k < m; k++) {
    const i = rows !== null ? rows[k] : k;
    const c = code[i];
    let g = table[c];
    if (g < 0) {
      g = table[c] = nGroups;
      first[nGroups++] = i;
    }
    gid[i] = g;
  }
  return nGroups;
}

/** Types whose values are one 32-bit word each, equal values equal words (within one column). */
const ONE_WORD = new Set(['int8', 'int16', 'int32', 'uint8', 'uint16', 'uint32', 'date32']);

/**
 * The key words of the columns' rows, row-major (agg/groups.ts groupWords): a 32-bit column one word, another
 * two (its key words: floats and decimals normalized as kernels/keys.ts does), a last word of null flags when a
 * column has nulls (a null's words zero). A single column without nulls is its own words (no copy). Null when a
 * column is a string (or wide decimal) or there are over 31 columns.
 */
function columnWords(cols: Column[], n: number): { words: Int32Array; width: number } | null {
  if (cols.length > 31) return null;
  const parts: (Int32Array | null)[] = [];
  let width = 0,
    nullable = false;
  for (const c of cols) {
    if (c.valid !== null) nullable = true;
    if (ONE_WORD.has(c.type.id)) {
      parts.push(null);
      width++;
      continue;
    }
    const p = buildKeys({ length: n, columns: [c] }, [0], [normFor(c.type)], undefined, false).parts[0];
    if (p.kind !== 'w') return null;
    parts.push(p.w);
    width += 2;
  }
  if (cols.length === 1 && !nullable) {
    const c = cols[0],
      v = c.values;
    if (parts[0] !== null) return { words: parts[0], width: 2 };
    if (v instanceof Int32Array) return { words: v, width: 1 };
  }
  if (nullable) width++;
  const words = new Int32Array(width * n);
  let at = 0;
  for (let k = 0; k < cols.length; k++) {
    const c = cols[k],
      w = parts[k],
      valid = c.valid;
    if (w === null) copyOne(words, width, at++, c.values as Int32Array, n);
    else {
      copyTwo(words, width, at, w, n);
      at += 2;
    }
    if (valid !== null) flagNulls(words, width, at - (w === null ? 1 : 2), w === null ? 1 : 2, valid, 1 << k, n);
  }
  return { words, width };
}

// The loops of columnWords, each in a function of its own (see groupIdsOfRows in joinagg.ts).

function copyOne(out: Int32Array, width: number, at: number, v: ArrayLike<number>, n: number): void {
  for (let i = 0, o = at; i < n; i++, o += width) out[o] = v[i] | 0;
}

function copyTwo(out: Int32Array, width: number, at: number, w: Int32Array, n: number): void {
  for (let i = 0, o = at; i < n; i++, o += width) {
    out[o] = w[2 * i];
    out[o + 1] = w[2 * i + 1];
  }
}

/** Null rows of a column: its `span` words zeroed, its bit set in the row's last word. */
function flagNulls(
  out: Int32Array,
  width: number,
  at: number,
  span: number,
  valid: Uint8Array,
  bit: number,
  n: number,
): void {
  for (let i = 0, o = 0; i < n; i++, o += width) {
    if (valid[i] !== 0) continue;
    out[o + at] = 0;
    if (span === 2) out[o + at + 1] = 0;
    out[o + width - 1] |= bit;
  }
}

/** Two int32 columns without nulls as one int64 column (the first the high word): equal pairs, equal values. */
function pairOf(a: Column, b: Column): Column | null {
  if (a.type.id !== 'int32' || b.type.id !== 'int32' || a.valid !== null || b.valid !== null) return null;
  // many pairs already among the first rows (two ids, say): fewGroups would give up, so no column is made for it
  if (manyPairs(a.values as Int32Array, b.values as Int32Array, Math.min(a.length, 1024))) return null;
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
