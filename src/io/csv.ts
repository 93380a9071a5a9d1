// CSV read (RFC 4180): a byte range of a file, starting and ending at record starts (io/csv-infer.ts finds them),
// read in blocks, split into field offsets (typed arrays), and each wanted column parsed from the bytes straight
// into the engine's columns. No row objects: a field is a start and an end in the block.
import fs from 'node:fs';
import { InputError } from '../errors.js';
import { type Batch, type Column, type DataType, type Field, allocValues, typeName } from '../kernels/column.js';
import { decimalColumn, parseDecimal, pow10 } from '../kernels/decimal.js';

const QUOTE = 34,
  LF = 10,
  CR = 13,
  SPACE = 32;

/** What a map task reads: the byte range [start, end) of a file whose first record is on line `line` (from 1). */
export interface CsvRange {
  path: string;
  delimiter: string;
  /** every column of the file, in order, with the type it is read as */
  columns: Field[];
  start: number;
  end: number;
  line: number;
}

/** Field offsets of the records of one block (`rows` x `ncols`), and the line each record starts on. */
export class Fields {
  rows = 0;
  starts: Int32Array;
  ends: Int32Array;
  /** 1 where a quoted field holds doubled quotes (its bytes are copied without the doubling) */
  escaped: Uint8Array;
  lines: Float64Array;
  constructor(
    readonly ncols: number,
    readonly capacity: number,
  ) {
    this.starts = new Int32Array(ncols * capacity);
    this.ends = new Int32Array(ncols * capacity);
    this.escaped = new Uint8Array(ncols * capacity);
    this.lines = new Float64Array(capacity);
  }
}

/** A data error at a line of a file. */
const csvError = (path: string, line: number, what: string, column?: string) =>
  new InputError(`${path}: line ${line}${column === undefined ? '' : `, column "${column}"`}: ${what}`, path, column);

/**
 * The complete records of `buf` from `p`, at most `out.capacity`, into `out`; the position after the last one and
 * the line there. A record cut by the end of the block is left for the next (unless `final`: the file ends there).
 * `ncols` 0 takes the first record's width (a header). A record of another width is a data error naming its line.
 */
export function tokenize(
  buf: Uint8Array,
  p: number,
  final: boolean,
  delim: number,
  line: number,
  out: Fields,
  path: string,
): { p: number; line: number } {
  const n = buf.length,
    ncols = out.ncols,
    { starts, ends, escaped, lines } = out;
  let rows = 0;
  records: while (rows < out.capacity && p < n) {
    const recStart = p,
      recLine = line;
    // blank lines are no records
    if (buf[p] === LF) {
      p++;
      line++;
      continue;
    }
    if (buf[p] === CR && (p + 1 < n ? buf[p + 1] === LF : final)) {
      p += p + 1 < n ? 2 : 1;
      line++;
      continue;
    }
    const base = rows * ncols;
    let col = 0;
    for (;;) {
      let s: number,
        e: number,
        esc = 0;
      if (p < n && buf[p] === QUOTE) {
        let q = p + 1;
        s = q;
        for (;;) {
          const k = buf.indexOf(QUOTE, q);
          if (k < 0 || (k + 1 >= n && !final)) {
            if (final && k < 0)
              throw csvError(path, recLine, 'a quoted field is not closed before the end of the file');
            p = recStart;
            line = recLine;
            break records;
          }
          if (k + 1 < n && buf[k + 1] === QUOTE) {
            esc = 1;
            q = k + 2;
            continue;
          }
          e = k;
          p = k + 1;
          break;
        }
        for (let j = buf.indexOf(LF, s); j >= 0 && j < e; j = buf.indexOf(LF, j + 1)) line++;
        if (p < n && buf[p] === CR) p++;
        if (p < n && buf[p] !== delim && buf[p] !== LF) {
          throw csvError(path, line, `unexpected "${String.fromCharCode(buf[p])}" after a closing quote`);
        }
        if (p >= n && !final) {
          p = recStart;
          line = recLine;
          break records;
        }
      } else {
        s = p;
        while (p < n) {
          const c = buf[p];
          if (c === delim || c === LF) break;
          p++;
        }
        if (p >= n && !final) {
          p = recStart;
          line = recLine;
          break records;
        }
        e = p > s && buf[p - 1] === CR ? p - 1 : p;
      }
      if (col < ncols) {
        starts[base + col] = s;
        ends[base + col] = e;
        escaped[base + col] = esc;
      }
      col++;
      if (p < n && buf[p] === delim) {
        p++;
        continue;
      }
      if (p < n) p++; // the line feed
      line++;
      break;
    }
    if (col !== ncols) throw csvError(path, recLine, `expected ${ncols} fields, found ${col}`);
    lines[rows++] = recLine;
  }
  out.rows = rows;
  return { p, line };
}

/** The first record's fields as text (a header), and where the records after it start. */
export function firstRecord(buf: Uint8Array, delim: number, path: string): { names: string[]; next: number } {
  // count the fields with a tokenizer as wide as the record can be
  let width = 1;
  for (;;) {
    const f = new Fields(width, 1);
    try {
      const r = tokenize(buf, 0, true, delim, 1, f, path);
      const names = Array.from({ length: width }, (_, c) => fieldText(buf, f, 0, c));
      return { names, next: r.p };
    } catch (e) {
      const m = /expected \d+ fields, found (\d+)$/.exec((e as Error).message);
      if (!m) throw e;
      width = Number(m[1]);
    }
  }
}

/** One field's text (quotes undone). */
function fieldText(buf: Uint8Array, f: Fields, r: number, c: number): string {
  const k = r * f.ncols + c;
  const s = f.starts[k],
    e = f.ends[k];
  const text = Buffer.from(buf.buffer, buf.byteOffset + s, e - s).toString('utf8');
  return f.escaped[k] ? text.replaceAll('""', '"') : text;
}

// ---- values parsed from bytes; `bad` is set when a field is not of the type ----

let bad = false;

const trimStart = (buf: Uint8Array, s: number, e: number) => {
  while (s < e && buf[s] === SPACE) s++;
  return s;
};
const trimEnd = (buf: Uint8Array, s: number, e: number) => {
  while (e > s && buf[e - 1] === SPACE) e--;
  return e;
};
const latin1 = (buf: Uint8Array, s: number, e: number) =>
  Buffer.from(buf.buffer, buf.byteOffset + s, e - s).toString('latin1');

/**
 * An integer field as a number (exact up to 2^53); a longer one as NaN with `bad` unset (read it as a bigint).
 * `strict` (inference, as DuckDB's): no leading zeros and no plus sign.
 */
function intAt(buf: Uint8Array, s: number, e: number, strict: boolean): number {
  s = trimStart(buf, s, e);
  e = trimEnd(buf, s, e);
  let neg = false;
  if (s < e && (buf[s] === 45 || (buf[s] === 43 && !strict))) {
    neg = buf[s] === 45;
    s++;
  }
  if (s >= e || (strict && buf[s] === 48 && e - s > 1)) {
    bad = true;
    return 0;
  }
  let v = 0;
  for (let i = s; i < e; i++) {
    const d = buf[i] - 48;
    if (d < 0 || d > 9) {
      bad = true;
      return 0;
    }
    v = v * 10 + d;
  }
  if (e - s > 15) return Number.NaN;
  return neg ? -v : v;
}

const INT64_MIN = -(2n ** 63n),
  INT64_MAX = 2n ** 63n - 1n;

/** An integer field too long for a number, as a bigint in [lo, hi]; else `bad`. */
function bigAt(buf: Uint8Array, s: number, e: number, lo: bigint, hi: bigint): bigint {
  const x = BigInt(latin1(buf, trimStart(buf, s, e), trimEnd(buf, s, e)).replace(/^\+/, ''));
  if (x < lo || x > hi) bad = true;
  return x;
}

const POW = Array.from({ length: 23 }, (_, i) => 10 ** i);
const FLOAT_TEXT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/**
 * A number field as float64: with at most 15 significant digits and a power of ten up to 22, one correctly
 * rounded operation (Clinger's fast path); otherwise JavaScript's own parse. `strict`: no inf, no leading zeros.
 */
function floatAt(buf: Uint8Array, s: number, e: number, strict: boolean): number {
  s = trimStart(buf, s, e);
  e = trimEnd(buf, s, e);
  let i = s,
    neg = false;
  if (i < e && (buf[i] === 45 || buf[i] === 43)) {
    if (strict && buf[i] === 43) {
      bad = true;
      return 0;
    }
    neg = buf[i] === 45;
    i++;
  }
  if (strict && i + 1 < e && buf[i] === 48 && buf[i + 1] >= 48 && buf[i + 1] <= 57) {
    bad = true;
    return 0;
  }
  let m = 0,
    digits = 0,
    exp = 0,
    any = false,
    point = false;
  for (; i < e; i++) {
    const c = buf[i];
    if (c >= 48 && c <= 57) {
      any = true;
      if (digits > 0 || c !== 48) {
        if (digits < 15) {
          m = m * 10 + (c - 48);
          digits++;
          if (point) exp--;
        } else {
          digits++;
          if (!point) exp++;
        }
      } else if (point) exp--;
    } else if (c === 46 && !point) point = true;
    else break;
  }
  if (i < e && (buf[i] === 101 || buf[i] === 69) && any) {
    let j = i + 1,
      eneg = false,
      x = 0;
    if (j < e && (buf[j] === 45 || buf[j] === 43)) eneg = buf[j++] === 45;
    if (j >= e) return slowFloat(buf, s, e, strict);
    for (; j < e; j++) {
      const d = buf[j] - 48;
      if (d < 0 || d > 9) return slowFloat(buf, s, e, strict);
      x = x * 10 + d;
    }
    exp += eneg ? -x : x;
    i = e;
  }
  if (i < e || !any || digits > 15 || exp > 22 || exp < -22) return slowFloat(buf, s, e, strict);
  const v = exp >= 0 ? m * POW[exp] : m / POW[-exp];
  return neg ? -v : v;
}

function slowFloat(buf: Uint8Array, s: number, e: number, strict: boolean): number {
  const t = latin1(buf, s, e);
  if (FLOAT_TEXT.test(t)) return Number(t);
  const l = t.toLowerCase();
  if (l === 'nan') return Number.NaN;
  if (!strict && (l === 'inf' || l === 'infinity' || l === '+inf' || l === '+infinity')) return Infinity;
  if (!strict && (l === '-inf' || l === '-infinity')) return -Infinity;
  bad = true;
  return 0;
}

const DAYS_IN = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const leap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;

function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400),
    yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  return era * 146097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy - 719468;
}

/** Where a date `YYYY-MM-DD` (or `/`, one-digit month and day allowed) parsed from `s` ends; -1 if none. */
let dateDays = 0;
function dateEnd(buf: Uint8Array, s: number, e: number): number {
  let i = s,
    y = 0;
  while (i < e && i - s < 4 && buf[i] >= 48 && buf[i] <= 57) y = y * 10 + buf[i++] - 48;
  if (i - s !== 4 || i >= e || (buf[i] !== 45 && buf[i] !== 47)) return -1;
  const sep = buf[i++];
  let m = 0,
    k = i;
  while (i < e && i - k < 2 && buf[i] >= 48 && buf[i] <= 57) m = m * 10 + buf[i++] - 48;
  if (i === k || i >= e || buf[i] !== sep) return -1;
  i++;
  let d = 0;
  k = i;
  while (i < e && i - k < 2 && buf[i] >= 48 && buf[i] <= 57) d = d * 10 + buf[i++] - 48;
  if (i === k || m < 1 || m > 12 || d < 1 || d > (m === 2 && leap(y) ? 29 : DAYS_IN[m])) return -1;
  dateDays = daysFromCivil(y, m, d);
  return i;
}

function dateAt(buf: Uint8Array, s: number, e: number): number {
  s = trimStart(buf, s, e);
  e = trimEnd(buf, s, e);
  if (dateEnd(buf, s, e) !== e) bad = true;
  return dateDays;
}

/** The last timestamp's day and microseconds into it: exact where the sum passes 2^53 (beyond the year 2255). */
let tsDays = 0,
  tsRest = 0;

/** A timestamp `YYYY-MM-DD[( |T)HH:MM[:SS[.fraction]]]` as microseconds since 1970 (no time zone). */
function timestampAt(buf: Uint8Array, s: number, e: number): number {
  tsRest = 0;
  s = trimStart(buf, s, e);
  e = trimEnd(buf, s, e);
  let i = dateEnd(buf, s, e);
  if (i < 0) {
    bad = true;
    return 0;
  }
  tsDays = dateDays;
  const us = dateDays * 86400e6;
  if (i === e) return us;
  if (buf[i] !== SPACE && buf[i] !== 84) {
    bad = true;
    return 0;
  }
  i++;
  const two = (at: number) =>
    at + 1 < e && buf[at] >= 48 && buf[at] <= 57 && buf[at + 1] >= 48 && buf[at + 1] <= 57
      ? (buf[at] - 48) * 10 + buf[at + 1] - 48
      : -1;
  const h = two(i),
    mi = buf[i + 2] === 58 ? two(i + 3) : -1;
  if (h < 0 || h > 23 || mi < 0 || mi > 59) {
    bad = true;
    return 0;
  }
  i += 5;
  let sec = 0;
  if (i < e && buf[i] === 58) {
    sec = two(i + 1);
    if (sec < 0 || sec > 59) {
      bad = true;
      return 0;
    }
    i += 3;
    if (i < e && buf[i] === 46) {
      i++;
      let f = 0,
        k = 0;
      for (; i < e && buf[i] >= 48 && buf[i] <= 57; i++, k++) if (k < 6) f = f * 10 + buf[i] - 48;
      if (k === 0) bad = true;
      for (; k < 6; k++) f *= 10;
      tsRest = f;
    }
  }
  if (i !== e) bad = true;
  tsRest += ((h * 60 + mi) * 60 + sec) * 1e6;
  return us + tsRest;
}

const WORDS: [number[], number][] = [
  [[116, 114, 117, 101], 1], // true
  [[116], 1], // t
  [[121, 101, 115], 1], // yes
  [[102, 97, 108, 115, 101], 0], // false
  [[102], 0], // f
  [[110, 111], 0], // no
];

/** A boolean field: true/false, t/f, yes/no in any case (and 1/0 unless `strict`); 1, 0 or `bad`. */
function boolAt(buf: Uint8Array, s: number, e: number, strict: boolean): number {
  s = trimStart(buf, s, e);
  e = trimEnd(buf, s, e);
  if (e - s === 1 && !strict && (buf[s] === 48 || buf[s] === 49)) return buf[s] - 48;
  words: for (const [w, v] of WORDS) {
    if (w.length !== e - s) continue;
    for (let i = 0; i < w.length; i++) if ((buf[s + i] | 32) !== w[i]) continue words;
    return v;
  }
  bad = true;
  return 0;
}

// ---- inference ----

/** Type candidates of a column, narrowest first (DuckDB's order where we have the type). */
export const CANDIDATES: DataType[] = [
  { id: 'bool' },
  { id: 'int64' },
  { id: 'float64' },
  { id: 'date32' },
  { id: 'timestamp', unit: 'microsecond', tz: null },
];

/**
 * Clear bit k of `mask` for every candidate k the fields of column c in `f` do not parse as (inference: as
 * DuckDB's sniffer, an integer of more than 64 bits is a float, leading zeros make text).
 */
export function narrowCandidates(buf: Uint8Array, f: Fields, c: number, mask: number): number {
  for (let r = 0; r < f.rows && mask; r++) {
    const k = r * f.ncols + c,
      s = f.starts[k],
      e = f.ends[k];
    if (s === e) continue;
    if (mask & 1) {
      bad = false;
      boolAt(buf, s, e, true);
      if (bad) mask &= ~1;
    }
    if (mask & 2) {
      bad = false;
      const v = intAt(buf, s, e, true);
      if (!bad && v !== v) bigAt(buf, s, e, INT64_MIN, INT64_MAX);
      if (bad) mask &= ~2;
    }
    if (mask & 4) {
      bad = false;
      floatAt(buf, s, e, true);
      if (bad) mask &= ~4;
    }
    if (mask & 8) {
      bad = false;
      dateAt(buf, s, e);
      if (bad) mask &= ~8;
    }
    if (mask & 16) {
      bad = false;
      timestampAt(buf, s, e);
      if (bad) mask &= ~16;
    }
  }
  return mask;
}

// ---- columns ----

const NUMBER_RANGE: Partial<Record<DataType['id'], [number, number]>> = {
  int8: [-128, 127],
  int16: [-32768, 32767],
  int32: [-2147483648, 2147483647],
  uint8: [0, 255],
  uint16: [0, 65535],
  uint32: [0, 4294967295],
};

/** Column c of the records in `f`, read as `type`; a field that is not of the type is a data error. */
function columnOf(buf: Uint8Array, f: Fields, c: number, field: Field, path: string): Column {
  const n = f.rows,
    w = f.ncols,
    { starts, ends } = f;
  const type = field.type;
  let valid: Uint8Array | null = null;
  const nulls = () => (valid ??= new Uint8Array(n).fill(1));
  const fail = (r: number) => {
    const text = fieldText(buf, f, r, c);
    const what = type.id === 'date32' ? 'date' : typeName(type);
    return csvError(path, f.lines[r], `"${text}" does not parse as ${what}`, field.name);
  };
  if (type.id === 'utf8') return stringColumn(buf, f, c, type);
  if (type.id === 'decimal') {
    const vals: (bigint | null)[] = new Array(n);
    for (let r = 0; r < n; r++) {
      const k = r * w + c;
      if (starts[k] === ends[k]) {
        vals[r] = null;
        continue;
      }
      const d = parseDecimal(latin1(buf, starts[k], ends[k]));
      if (!d) throw fail(r);
      const sc = type.scale!;
      vals[r] = d.scale <= sc ? d.scaled * pow10(sc - d.scale) : roundScaled(d.scaled, d.scale - sc);
    }
    return decimalColumn(vals, type, `column "${field.name}" of ${path}`);
  }
  const values = allocValues(type, n);
  const u32 =
    values instanceof BigInt64Array || values instanceof BigUint64Array
      ? new Uint32Array(values.buffer, values.byteOffset, 2 * n)
      : null;
  const range = NUMBER_RANGE[type.id];
  for (let r = 0; r < n; r++) {
    const k = r * w + c,
      s = starts[k],
      e = ends[k];
    if (s === e) {
      nulls()[r] = 0;
      continue;
    }
    bad = false;
    let v: number;
    switch (type.id) {
      case 'bool':
        v = boolAt(buf, s, e, false);
        break;
      case 'float32':
      case 'float64':
        v = floatAt(buf, s, e, false);
        break;
      case 'date32':
        v = dateAt(buf, s, e);
        break;
      case 'timestamp':
        v = timestampAt(buf, s, e);
        if (!bad && Math.abs(v) > Number.MAX_SAFE_INTEGER) {
          (values as BigInt64Array)[r] = BigInt(tsDays) * 86400000000n + BigInt(tsRest);
          continue;
        }
        break;
      default: {
        v = intAt(buf, s, e, false);
        if (!bad && v !== v) {
          // more than 15 digits: exact through a bigint
          const lo = type.id === 'uint64' ? 0n : INT64_MIN,
            hi = type.id === 'uint64' ? 2n ** 64n - 1n : INT64_MAX;
          const x = bigAt(buf, s, e, lo, hi);
          if (bad || range) throw fail(r);
          (values as BigInt64Array | BigUint64Array)[r] = x as never;
          continue;
        }
        if (range && (v < range[0] || v > range[1])) bad = true;
        if (type.id === 'uint64' && v < 0) bad = true;
      }
    }
    if (bad) throw fail(r);
    if (u32) {
      const hi = Math.floor(v / 4294967296);
      u32[2 * r] = v - hi * 4294967296;
      u32[2 * r + 1] = hi;
    } else values[r] = v;
  }
  return { type, length: n, values, valid };
}

/** x / 10^k rounded half away from zero. */
function roundScaled(x: bigint, k: number): bigint {
  const p = pow10(k),
    q = x / p,
    rem = x % p;
  const twice = (rem < 0n ? -rem : rem) * 2n;
  return twice >= p ? q + (x < 0n ? -1n : 1n) : q;
}

function stringColumn(buf: Uint8Array, f: Fields, c: number, type: DataType): Column {
  const n = f.rows,
    w = f.ncols,
    { starts, ends, escaped } = f;
  let total = 0,
    valid: Uint8Array | null = null;
  for (let r = 0; r < n; r++) total += ends[r * w + c] - starts[r * w + c];
  const values = new Uint8Array(total),
    offsets = new Int32Array(n + 1);
  let o = 0;
  for (let r = 0; r < n; r++) {
    const k = r * w + c,
      s = starts[k],
      e = ends[k];
    if (s === e) (valid ??= new Uint8Array(n).fill(1))[r] = 0;
    else if (!escaped[k]) {
      // a short string byte by byte: no view object per row
      if (e - s <= 32) for (let i = s; i < e; i++) values[o++] = buf[i];
      else {
        values.set(buf.subarray(s, e), o);
        o += e - s;
      }
    } else {
      for (let i = s; i < e; i++) {
        values[o++] = buf[i];
        if (buf[i] === QUOTE) i++; // the second of a doubled quote
      }
    }
    offsets[r + 1] = o;
  }
  return { type, length: n, values: o === total ? values : values.slice(0, o), offsets, valid };
}

// ---- the reader ----

const BLOCK_BYTES = 8 << 20;
const BATCH_ROWS = 65536;
const MAX_FIELDS = 1 << 21;

/** Read `fields` (by name) of the records in a range, at most `limit` rows, as batches. */
export function readCsvRange(range: CsvRange, fields: Field[], limit = Infinity): Batch[] {
  const { path } = range;
  const delim = range.delimiter.charCodeAt(0);
  const at = fields.map((f) => range.columns.findIndex((c) => c.name === f.name));
  let fd: number;
  try {
    fd = fs.openSync(path, 'r');
  } catch (e) {
    throw new InputError(`${path}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, path);
  }
  const out: Batch[] = [];
  try {
    // a wide file reads fewer rows a batch: field offsets stay about 16 MB
    const ncols = range.columns.length;
    const f = new Fields(ncols, Math.max(1024, Math.min(BATCH_ROWS, Math.floor(MAX_FIELDS / ncols))));
    let pos = range.start,
      line = range.line,
      carry: Uint8Array = new Uint8Array(0),
      rows = 0;
    while (rows < limit) {
      const size = Math.min(BLOCK_BYTES, range.end - pos);
      const block = Buffer.allocUnsafe(carry.length + size);
      block.set(carry, 0);
      let got = 0;
      while (got < size) {
        const k = fs.readSync(fd, block, carry.length + got, size - got, pos + got);
        if (k === 0) break;
        got += k;
      }
      pos += got;
      const buf = got < size ? block.subarray(0, carry.length + got) : block;
      const final = pos >= range.end || got < size;
      let p = 0;
      while (rows < limit) {
        const r = tokenize(buf, p, final, delim, line, f, path);
        if (f.rows === 0) break;
        const take = Math.min(f.rows, limit - rows);
        f.rows = take;
        out.push({ length: take, columns: at.map((c, j) => columnOf(buf, f, c, fields[j], path)) });
        rows += take;
        p = r.p;
        line = r.line;
      }
      if (final) break;
      carry = buf.subarray(p);
    }
  } finally {
    fs.closeSync(fd);
  }
  return out;
}
