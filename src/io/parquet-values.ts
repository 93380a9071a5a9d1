// How a column is read by the direct readers (its plan), and the values of a direct-read page (io/parquet-walk.ts
// walks the pages) into a column chunk's words or strings: PLAIN values copied or widened, dictionary indices
// looked up, nulls spread over the page's rows by validity.
import { CorruptPage } from './rle.js';
import type { Field } from '../kernels/column.js';
import { type Leaf, NotDirect } from './parquet-footer.js';
import type { TStruct } from './thrift-read.js';
import type { DataType } from '../kernels/column.js';

/** How a column's values become engine words (32-bit, `words` per row). */
type Kind = 'copy' | 'int32-decimal' | 'flba-decimal' | 'utf8';
export interface Plan {
  field: Field;
  leaf: Leaf;
  index: number;
  kind: Kind;
  words: number;
  physBytes: number;
}

export const u32 = (b: Uint8Array, p: number) => (b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b[p + 3] << 24)) >>> 0;

const INTEGER = 10,
  DATE = 6,
  DECIMAL = 5,
  TIMESTAMP = 8;
const TS_UNITS = ['millisecond', 'microsecond', 'nanosecond'] as const;

/** Whether a leaf is a plain integer of `bits` (no converted or logical type beyond that). */
function plainInt(l: Leaf, bits: number): boolean {
  if (l.logical) return l.logical.id === INTEGER && l.logical.value[1] === bits && l.logical.value[2] === true;
  return l.converted === undefined || l.converted === (bits === 32 ? 17 : 18);
}

function decimalOf(l: Leaf): { precision: number; scale: number } | null {
  if (l.logical?.id === DECIMAL)
    return { scale: Number(l.logical.value[1] ?? 0), precision: Number(l.logical.value[2]) };
  if (l.converted === DECIMAL && l.precision !== undefined) return { precision: l.precision, scale: l.scale ?? 0 };
  return null;
}

function timestampUnit(l: Leaf): string | null {
  if (l.logical?.id === TIMESTAMP) {
    const u = l.logical.value[2] as TStruct | undefined;
    return u ? (TS_UNITS[Number(Object.keys(u)[0]) - 1] ?? null) : null;
  }
  return l.converted === 9 ? 'millisecond' : l.converted === 10 ? 'microsecond' : null;
}

/** How `field` is read from `leaf`, or NotDirect. */
function planColumn(field: Field, leaf: Leaf, index: number): Plan {
  const t: DataType = field.type,
    p = leaf.phys;
  const plan = (kind: Kind, words: number, physBytes: number): Plan => ({ field, leaf, index, kind, words, physBytes });
  switch (t.id) {
    case 'int32':
      if (p === 1 && plainInt(leaf, 32)) return plan('copy', 1, 4);
      break;
    case 'date32':
      if (p === 1 && (leaf.logical?.id === DATE || leaf.converted === 6)) return plan('copy', 1, 4);
      break;
    case 'int64':
      if (p === 2 && plainInt(leaf, 64)) return plan('copy', 2, 8);
      break;
    case 'float32':
      if (p === 4) return plan('copy', 1, 4);
      break;
    case 'float64':
      if (p === 5) return plan('copy', 2, 8);
      break;
    case 'timestamp':
      if (p === 2 && timestampUnit(leaf) === t.unit) return plan('copy', 2, 8);
      break;
    case 'utf8':
      if (p === 6) return plan('utf8', 0, 0);
      break;
    case 'decimal': {
      const d = decimalOf(leaf);
      if (!d || d.precision !== t.precision || d.scale !== t.scale) break;
      const words = t.precision! > 18 ? 4 : 2;
      if (p === 1 && words === 2) return plan('int32-decimal', 2, 4);
      if (p === 2 && words === 2) return plan('copy', 2, 8);
      if (p === 7 && leaf.typeLength > 0 && leaf.typeLength <= 16) return plan('flba-decimal', words, leaf.typeLength);
      break;
    }
  }
  throw new NotDirect(`column ${field.name}: ${t.id} from physical type ${p}`);
}

export function planOf(leaves: Leaf[] | null, f: Field): Plan {
  if (!leaves) throw new NotDirect('nested schema');
  const i = leaves.findIndex((l) => l.name === f.name);
  if (i < 0) throw new NotDirect(`no column ${f.name}`);
  return planColumn(f, leaves[i], i);
}

/** `count` PLAIN fixed-width values from data[p] as engine words into out[at * words]; returns bytes read. */
export function plainWords(
  plan: Plan,
  data: Uint8Array,
  p: number,
  count: number,
  out: Int32Array,
  at: number,
): number {
  const need = count * plan.physBytes;
  if (p + need > data.length) throw new CorruptPage('values end early');
  if (plan.kind === 'copy') {
    new Uint8Array(out.buffer, out.byteOffset + at * 4 * plan.words, need).set(data.subarray(p, p + need));
  } else if (plan.kind === 'int32-decimal') {
    for (let k = 0; k < count; k++, p += 4) {
      const v = data[p] | (data[p + 1] << 8) | (data[p + 2] << 16) | (data[p + 3] << 24);
      out[2 * (at + k)] = v;
      out[2 * (at + k) + 1] = v >> 31;
    }
  } else {
    // big-endian two's complement of L bytes to little-endian words, sign-extended
    const L = plan.physBytes,
      w = plan.words;
    for (let k = 0; k < count; k++, p += L) {
      const sign = data[p] & 0x80 ? 0xff : 0;
      for (let q = 0; q < w; q++) {
        let word = 0;
        for (let b = 3; b >= 0; b--) {
          const i = L - 1 - 4 * q - b; // index from the value's first (most significant) byte
          word = (word << 8) | (i >= 0 ? data[p + i] : sign);
        }
        out[(at + k) * w + q] = word;
      }
    }
  }
  return need;
}

/** Strings: offsets (rows + 1) and bytes, grown as pages arrive. */
export class Strings {
  bytes: Uint8Array;
  len = 0;
  constructor(
    readonly offsets: Int32Array,
    size: number,
  ) {
    this.bytes = new Uint8Array(Math.max(64, size));
  }
  room(n: number) {
    if (this.len + n <= this.bytes.length) return;
    const b = new Uint8Array(Math.max(2 * this.bytes.length, this.len + n));
    b.set(this.bytes.subarray(0, this.len));
    this.bytes = b;
  }
}

/** A dictionary page's values: words for fixed widths, or where each string lies in `data`. */
export interface Dict {
  n: number;
  words: Int32Array | null;
  starts: Int32Array | null;
  lens: Int32Array | null;
  data: Uint8Array;
  /** strings: the byte length of every entry when they all have one (flags, codes), else -1 */
  width: number;
}

/**
 * Spread `nonNull` dense values at rows [row, row + nonNull) over the page's n rows by validity (backwards, in place).
 */
function spread(words: Int32Array, w: number, valid: Uint8Array, row: number, n: number, nonNull: number) {
  let j = row + nonNull - 1;
  for (let i = row + n - 1; i >= row; i--) {
    if (valid[i]) {
      if (j !== i) for (let q = 0; q < w; q++) words[i * w + q] = words[j * w + q];
      j--;
    } else for (let q = 0; q < w; q++) words[i * w + q] = 0;
  }
}

export function plainValues(
  plan: Plan,
  data: Uint8Array,
  p: number,
  n: number,
  nonNull: number,
  row: number,
  words: Int32Array | null,
  strings: Strings | null,
  valid: Uint8Array | null,
) {
  if (words) {
    plainWords(plan, data, p, nonNull, words, row);
    if (nonNull < n) spread(words, plan.words, valid!, row, n, nonNull);
    return;
  }
  // the page's strings take at most its bytes
  const s = strings!,
    off = s.offsets;
  s.room(data.length - p);
  const d = s.bytes;
  let at = s.len;
  for (let i = row; i < row + n; i++) {
    if (valid === null || valid[i]) {
      if (p + 4 > data.length) throw new CorruptPage('values end early');
      const len = u32(data, p);
      p += 4;
      if (p + len > data.length) throw new CorruptPage('values end early');
      copyBytes(d, at, data, p, len);
      at += len;
      p += len;
    }
    off[i + 1] = at;
  }
  s.len = at;
}

/** Short strings byte by byte (no view made), long ones as one copy. */
function copyBytes(d: Uint8Array, at: number, src: Uint8Array, from: number, n: number) {
  if (n <= 32) for (let k = 0; k < n; k++) d[at + k] = src[from + k];
  else d.set(src.subarray(from, from + n), at);
}

// Dictionary gathers by row width, each over one array shape so that the loops stay monomorphic;
// an index beyond the dictionary reads undefined, which stores as 0, and is reported after the loop.
function gather1(out: Int32Array, row: number, d: Int32Array, idx: Int32Array, m: number, dn: number): number {
  let bad = 0;
  for (let k = 0; k < m; k++) {
    const j = idx[k];
    bad |= dn - 1 - j;
    out[row + k] = d[j];
  }
  return bad;
}
function gather2(out: Int32Array, row: number, d: Int32Array, idx: Int32Array, m: number, dn: number): number {
  let bad = 0;
  for (let k = 0; k < m; k++) {
    const j = idx[k];
    bad |= dn - 1 - j;
    const o = 2 * (row + k);
    out[o] = d[2 * j];
    out[o + 1] = d[2 * j + 1];
  }
  return bad;
}
function gatherW(
  out: Int32Array,
  row: number,
  d: Int32Array,
  idx: Int32Array,
  m: number,
  dn: number,
  w: number,
): number {
  let bad = 0;
  for (let k = 0; k < m; k++) {
    const j = idx[k];
    bad |= dn - 1 - j;
    for (let q = 0; q < w; q++) out[(row + k) * w + q] = d[j * w + q];
  }
  return bad;
}

export function dictValues(
  plan: Plan,
  dict: Dict,
  idx: Int32Array,
  n: number,
  nonNull: number,
  row: number,
  words: Int32Array | null,
  strings: Strings | null,
  valid: Uint8Array | null,
) {
  const dn = dict.n;
  if (words) {
    const d = dict.words!,
      w = plan.words;
    const bad =
      w === 1
        ? gather1(words, row, d, idx, nonNull, dn)
        : w === 2
          ? gather2(words, row, d, idx, nonNull, dn)
          : gatherW(words, row, d, idx, nonNull, dn, w);
    if (bad < 0) throw new CorruptPage('dictionary index out of range');
    if (nonNull < n) spread(words, w, valid!, row, n, nonNull);
    return;
  }
  const s = strings!,
    starts = dict.starts!,
    lens = dict.lens!,
    width = dict.width;
  // the indices checked and the bytes counted in one pass (entries of one width: counted by multiplying)
  const total = width >= 0 ? stringsChecked(idx, nonNull, dn) * width : stringBytes(idx, nonNull, dn, lens);
  if (total < 0) throw new CorruptPage('dictionary index out of range');
  s.room(total);
  if (width === 1) oneByteStrings(s, starts, dict.data, idx, row, n, valid);
  else anyStrings(s, starts, lens, dict.data, idx, row, n, valid);
}

/** nonNull when every index lies in the dictionary, else -1. */
function stringsChecked(idx: Int32Array, nonNull: number, dn: number): number {
  let bad = 0;
  for (let k = 0; k < nonNull; k++) bad |= dn - 1 - idx[k];
  return bad < 0 ? -1 : nonNull;
}

/** The bytes of the strings the indices name, or -1 where one lies beyond the dictionary. */
function stringBytes(idx: Int32Array, nonNull: number, dn: number, lens: Int32Array): number {
  let total = 0,
    bad = 0;
  for (let k = 0; k < nonNull; k++) {
    const j = idx[k];
    bad |= dn - 1 - j;
    total += lens[j] | 0; // (an index beyond: undefined, told by bad)
  }
  return bad < 0 ? -1 : total;
}

/** oneByteStrings' dictionary, one byte an entry (kept between pages) */
let byteTable = new Uint8Array(256);

/**
 * Strings of one byte each (flags, status codes: l_returnflag, o_orderstatus) copied from a table of their bytes:
 * with a call and a length a row they took 8 ns a row (4.0 ms for 500K rows of 3 values, hot), 4.7 so.
 */
function oneByteStrings(
  s: Strings,
  starts: Int32Array,
  data: Uint8Array,
  idx: Int32Array,
  row: number,
  n: number,
  valid: Uint8Array | null,
): void {
  const off = s.offsets,
    d = s.bytes,
    dn = starts.length;
  if (byteTable.length < dn) byteTable = new Uint8Array(dn);
  const bt = byteTable;
  for (let j = 0; j < dn; j++) bt[j] = data[starts[j]];
  let at = s.len;
  if (valid === null) {
    for (let k = 0; k < n; k++) {
      d[at + k] = bt[idx[k]];
      off[row + k + 1] = at + k + 1;
    }
    s.len = at + n;
    return;
  }
  let k = 0;
  for (let i = row; i < row + n; i++) {
    if (valid[i]) d[at++] = bt[idx[k++]];
    off[i + 1] = at;
  }
  s.len = at;
}

function anyStrings(
  s: Strings,
  starts: Int32Array,
  lens: Int32Array,
  data: Uint8Array,
  idx: Int32Array,
  row: number,
  n: number,
  valid: Uint8Array | null,
): void {
  const off = s.offsets,
    d = s.bytes;
  let at = s.len,
    k = 0;
  for (let i = row; i < row + n; i++) {
    if (valid === null || valid[i]) {
      const j = idx[k++],
        len = lens[j];
      copyBytes(d, at, data, starts[j], len);
      at += len;
    }
    off[i + 1] = at;
  }
  s.len = at;
}
