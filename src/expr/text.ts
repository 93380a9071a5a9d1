// String kernels over UTF-8 bytes and offsets: LIKE (a constant pattern is
// compiled once; computed patterns once per distinct pattern), prefix, suffix
// and substring tests, length in characters, and the functions that build
// new strings (concat, substr, lower, upper, trim).
import type { Column } from '../kernels/column.js';
import { andValid, exactNums, fromScalars, scalarAt } from './vector.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

type Matcher = (bytes: Uint8Array, s: number, e: number) => boolean;

function startsAt(bytes: Uint8Array, s: number, p: Uint8Array): boolean {
  for (let k = 0; k < p.length; k++) if (bytes[s + k] !== p[k]) return false;
  return true;
}

function indexIn(bytes: Uint8Array, s: number, e: number, p: Uint8Array): boolean {
  return indexFrom(bytes, s, e, p) >= 0;
}

/** Where p first occurs in bytes[s, e), or -1. */
function indexFrom(bytes: Uint8Array, s: number, e: number, p: Uint8Array): number {
  if (p.length === 0) return s;
  const last = e - p.length,
    p0 = p[0];
  for (let x = s; x <= last; x++) if (bytes[x] === p0 && startsAt(bytes, x, p)) return x;
  return -1;
}

/**
 * A LIKE pattern (`%` any run, `_` one character, case-sensitive) as a matcher
 * on UTF-8 bytes. Without `_`: the prefix, the suffix, and the pieces between
 * `%`s found left to right (the leftmost match of each leaves the most room
 * for the rest); UTF-8 bytes match only at character boundaries.
 */
function likeMatcher(pattern: string): Matcher {
  if (!pattern.includes('_')) {
    const parts = pattern.split('%').map((x) => encoder.encode(x));
    const pre = parts[0];
    if (parts.length === 1) return (b, s, e) => e - s === pre.length && startsAt(b, s, pre);
    const suf = parts[parts.length - 1],
      mids = parts.slice(1, -1).filter((x) => x.length > 0);
    return (b, s, e) => {
      if (e - s < pre.length + suf.length || !startsAt(b, s, pre) || !startsAt(b, e - suf.length, suf)) return false;
      const end = e - suf.length;
      let x = s + pre.length;
      for (const m of mids) {
        x = indexFrom(b, x, end, m);
        if (x < 0) return false;
        x += m.length;
      }
      return true;
    };
  }
  const re = new RegExp(
    '^' +
      [...pattern]
        .map((ch) => (ch === '%' ? '.*' : ch === '_' ? '.' : ch.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&')))
        .join('') +
      '$',
    'su',
  );
  return (b, s, e) => re.test(decoder.decode(b.subarray(s, e)));
}

/** s LIKE pattern, three-valued; the pattern is a column (computed: one matcher per distinct pattern). */
export function like(s: Column, pat: Column): Uint8Array {
  const cache = new Map<string, Matcher>();
  return likeRows(s, (i) => {
    const p = scalarAt(pat, i) as string | null;
    if (p === null) return null;
    let m = cache.get(p);
    if (!m) {
      m = likeMatcher(p);
      cache.set(p, m);
    }
    return m;
  });
}

/** s LIKE a constant pattern (null: every row null), matched by one matcher compiled once. */
export function likeConstant(pattern: string | null): (s: Column) => Uint8Array {
  const m = pattern === null ? null : likeMatcher(pattern);
  return (s) => likeRows(s, () => m);
}

function likeRows(s: Column, matcherAt: (i: number) => Matcher | null): Uint8Array {
  const n = s.length,
    out = new Uint8Array(n),
    bytes = s.values as Uint8Array,
    o = s.offsets!;
  for (let i = 0; i < n; i++) {
    const m = matcherAt(i);
    if (m === null || (s.valid !== null && s.valid[i] === 0)) out[i] = 2;
    else out[i] = m(bytes, o[i], o[i + 1]) ? 1 : 0;
  }
  return out;
}

/** starts_with, ends_with, contains: three-valued. */
export function stringTest(fn: string, s: Column, t: Column): Uint8Array {
  const n = s.length,
    out = new Uint8Array(n);
  const a = s.values as Uint8Array,
    b = t.values as Uint8Array,
    ao = s.offsets!,
    bo = t.offsets!;
  for (let i = 0; i < n; i++) {
    if ((s.valid !== null && s.valid[i] === 0) || (t.valid !== null && t.valid[i] === 0)) {
      out[i] = 2;
      continue;
    }
    const p = b.subarray(bo[i], bo[i + 1]),
      st = ao[i],
      e = ao[i + 1];
    if (e - st < p.length) {
      out[i] = 0;
      continue;
    }
    out[i] = (
      fn === 'starts_with'
        ? startsAt(a, st, p)
        : fn === 'ends_with'
          ? startsAt(a, e - p.length, p)
          : indexIn(a, st, e, p)
    )
      ? 1
      : 0;
  }
  return out;
}

/** Characters (code points) of every string. */
export function lengthOf(s: Column): Column {
  const n = s.length,
    out = new BigInt64Array(n),
    w = new Int32Array(out.buffer),
    b = s.values as Uint8Array,
    o = s.offsets!;
  for (let i = 0; i < n; i++) {
    let c = 0;
    for (let x = o[i]; x < o[i + 1]; x++) if ((b[x] & 0xc0) !== 0x80) c++;
    w[2 * i] = c;
  }
  return { type: { id: 'int64' }, length: n, values: out, valid: s.valid };
}

/** A string function row by row over decoded values (null in, null out). */
function mapRows(cols: Column[], f: (i: number, vals: (string | number | null)[]) => string | null): Column {
  const n = cols[0].length,
    out: (string | null)[] = new Array(n);
  const vals: (string | number | null)[] = new Array(cols.length);
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < cols.length; k++) {
      const v = scalarAt(cols[k], i);
      vals[k] = typeof v === 'bigint' ? Number(v) : (v as string | number | null);
    }
    out[i] = f(i, vals);
  }
  return fromScalars({ id: 'utf8' }, out);
}

const ASCII = /^[\x00-\x7f]*$/;

/** DuckDB's substring: start counted from 1 (negative: from the end), length optional. */
function substr(s: string, start: number, len?: number): string {
  const chars = ASCII.test(s) ? null : Array.from(s);
  const n = chars ? chars.length : s.length;
  if (start < 0) start = n + start + 1;
  let from = start,
    to = len === undefined ? n + 1 : start + len;
  if (len !== undefined && len < 0) {
    to = start;
    from = start + len;
  }
  from = Math.max(from, 1);
  to = Math.min(to, n + 1);
  if (to <= from) return '';
  return chars ? chars.slice(from - 1, to - 1).join('') : s.slice(from - 1, to - 1);
}

const INTS = new Set(['int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32']);

/**
 * substr over bytes, where every string is ASCII (a character a byte) and
 * start and length are integers: substr's arithmetic on offsets, the bytes
 * copied, no JavaScript string a row (TPC-H q22's country codes of 150K phone
 * numbers, twice, were most of its time through decoded strings). Null when
 * that does not hold: the general path decides.
 */
function asciiSubstr(args: Column[]): Column | null {
  const s = args[0];
  if (s.type.id !== 'utf8' || args.length < 2 || !args.slice(1).every((a) => INTS.has(a.type.id))) return null;
  const bytes = s.values as Uint8Array,
    o = s.offsets!,
    n = s.length;
  if (!ascii(bytes, o[0], o[n])) return null;
  // beyond ±2^53 exactNums gives NaN: such arguments go the general way
  const start = exactNums(args[1]),
    len = args.length > 2 ? exactNums(args[2]) : null;
  if (anyNaN(start) || (len !== null && anyNaN(len))) return null;
  const valid = andValid(args, n);
  const from = new Int32Array(n),
    to = new Int32Array(n);
  const total = substrRanges(o, start, len, valid, from, to, n);
  const out = new Uint8Array(total),
    offsets = new Int32Array(n + 1);
  copyRanges(bytes, from, to, out, offsets, n);
  return { type: { id: 'utf8' }, length: n, values: out, offsets, valid };
}

function ascii(bytes: Uint8Array, s: number, e: number): boolean {
  let all = true;
  for (let x = s; x < e && all; x++) all = bytes[x] < 0x80;
  return all;
}

function anyNaN(x: Float64Array): boolean {
  let nan = false;
  for (let i = 0; i < x.length && !nan; i++) nan = x[i] !== x[i];
  return nan;
}

/** substr's range of each row in bytes (see `substr`): [from, to) into from/to; returns the bytes in all. */
function substrRanges(
  o: Int32Array,
  start: Float64Array,
  len: Float64Array | null,
  valid: Uint8Array | null,
  from: Int32Array,
  to: Int32Array,
  n: number,
): number {
  let total = 0;
  for (let i = 0; i < n; i++) {
    if (valid !== null && valid[i] === 0) continue;
    const m = o[i + 1] - o[i];
    let st = start[i];
    if (st < 0) st = m + st + 1;
    let f = st,
      t = len === null ? m + 1 : st + len[i];
    if (len !== null && len[i] < 0) {
      t = st;
      f = st + len[i];
    }
    f = Math.max(f, 1);
    t = Math.min(t, m + 1);
    if (t <= f) continue;
    from[i] = o[i] + f - 1;
    to[i] = o[i] + t - 1;
    total += t - f;
  }
  return total;
}

function copyRanges(
  bytes: Uint8Array,
  from: Int32Array,
  to: Int32Array,
  out: Uint8Array,
  offsets: Int32Array,
  n: number,
): void {
  let p = 0;
  for (let i = 0; i < n; i++) {
    for (let x = from[i]; x < to[i]; x++) out[p++] = bytes[x];
    offsets[i + 1] = p;
  }
}

/** `a || b || ...`: the bytes of each row's arguments one after another; null where any argument is null (SQL). */
function concatRows(args: Column[]): Column {
  const n = args[0].length,
    offsets = new Int32Array(n + 1);
  let valid: Uint8Array | null = null;
  for (const c of args)
    if (c.valid !== null) {
      valid ??= new Uint8Array(n).fill(1);
      for (let i = 0; i < n; i++) valid[i] &= c.valid[i];
    }
  for (let i = 0; i < n; i++) {
    let len = 0;
    if (valid === null || valid[i] === 1) for (const c of args) len += c.offsets![i + 1] - c.offsets![i];
    offsets[i + 1] = offsets[i] + len;
  }
  const out = new Uint8Array(offsets[n]);
  for (let i = 0; i < n; i++) {
    if (offsets[i + 1] === offsets[i]) continue;
    let p = offsets[i];
    for (const c of args) {
      const o = c.offsets!,
        v = c.values as Uint8Array;
      out.set(v.subarray(o[i], o[i + 1]), p);
      p += o[i + 1] - o[i];
    }
  }
  return { type: { id: 'utf8' }, length: n, values: out, offsets, valid };
}

/**
 * The simple (one code point to one) upper or lower case of a code point whose full case JavaScript gives as several
 * (ß → SS, ᾀ → ἈΙ, İ → i̇): DuckDB maps each code point alone (utf8proc), to these or to itself (ŉ, ﬁ, ΐ stay).
 */
const SIMPLE_UPPER = new Map<number, number>([
  [0xdf, 0x1e9e],
  [0x1fb3, 0x1fbc],
  [0x1fc3, 0x1fcc],
  [0x1ff3, 0x1ffc],
]);
for (const base of [0x1f80, 0x1f90, 0x1fa0])
  for (let k = 0; k < 8; k++) {
    SIMPLE_UPPER.set(base + k, base + 8 + k);
    SIMPLE_UPPER.set(base + 8 + k, base + 8 + k); // titlecase: its own simple upper case
  }
const SIMPLE_LOWER = new Map<number, number>([[0x130, 0x69]]);

/** Each non-ASCII code point's simple case, once per code point seen. */
const cased = [new Map<number, string>(), new Map<number, string>()];

/**
 * upper() and lower() as DuckDB computes them: code point by code point (no final sigma, no ß → SS), a code point
 * without a one-to-one case mapping kept.
 */
function caseOf(s: string, upper: boolean): string {
  if (/^[\x00-\x7f]*$/.test(s)) return upper ? s.toUpperCase() : s.toLowerCase();
  const memo = cased[upper ? 0 : 1];
  let out = '';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    let m = memo.get(c);
    if (m === undefined) {
      const full = upper ? ch.toUpperCase() : ch.toLowerCase();
      const simple = (upper ? SIMPLE_UPPER : SIMPLE_LOWER).get(c);
      m =
        simple !== undefined
          ? String.fromCodePoint(simple)
          : full.length === ch.length || [...full].length === 1
            ? full
            : ch;
      memo.set(c, m);
    }
    out += m;
  }
  return out;
}

export function stringFn(fn: string, args: Column[]): Column {
  switch (fn) {
    case 'concat':
      return concatRows(args);
    case 'substr':
      return (
        asciiSubstr(args) ??
        mapRows(args, (_, v) =>
          v.some((x) => x === null) ? null : substr(v[0] as string, v[1] as number, v[2] as number | undefined),
        )
      );
    case 'lower':
      return mapRows(args, (_, v) => (v[0] === null ? null : caseOf(v[0] as string, false)));
    case 'upper':
      return mapRows(args, (_, v) => (v[0] === null ? null : caseOf(v[0] as string, true)));
    default:
      // trim: spaces, as DuckDB
      return mapRows(args, (_, v) => (v[0] === null ? null : (v[0] as string).replace(/^ +| +$/g, '')));
  }
}
