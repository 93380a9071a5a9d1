// One value converted between types: literals when a plan is bound, and the
// rows of a cast that no vector loop in cast.ts covers (strings parsed as
// numbers or dates). `undefined` means the value does not convert.
import { type DataType, decimalText, isInteger } from '../kernels/column.js';
import { parseDecimal, pow10 } from '../kernels/decimal.js';
import { formatDate, formatTimestamp } from '../io/output.js';
import { civil, daysFromCivil } from './dates.js';
import type { Scalar } from './types.js';

const RANGES: Record<string, [bigint, bigint]> = {
  int8: [-128n, 127n],
  int16: [-32768n, 32767n],
  int32: [-2147483648n, 2147483647n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  uint8: [0n, 255n],
  uint16: [0n, 65535n],
  uint32: [0n, 4294967295n],
  uint64: [0n, 2n ** 64n - 1n],
};
const US_PER_UNIT = { second: 1000000n, millisecond: 1000n, microsecond: 1n, nanosecond: 1n } as const;

/** Scaled integer x at scale `from` brought to scale `to`, rounding half away from zero (as SQL casts do). */
export function rescale(x: bigint, from: number, to: number): bigint {
  if (to >= from) return x * pow10(to - from);
  const f = pow10(from - to),
    q = x / f,
    r = x % f;
  const twice = (r < 0n ? -r : r) * 2n;
  return twice >= f ? q + (x < 0n ? -1n : 1n) : q;
}

/** A value as an exact scaled integer at `scale`, or undefined. */
function exactOf(v: Scalar, from: DataType, scale: number): bigint | undefined {
  if (typeof v === 'boolean') return undefined;
  if (from.id === 'decimal') return rescale(v as bigint, from.scale!, scale);
  if (isInteger(from)) return BigInt(v as number | bigint) * pow10(scale);
  if (from.id === 'float32' || from.id === 'float64') return floatToScaled(v as number, scale);
  if (from.id === 'utf8') {
    const d = parseDecimal(v as string);
    return d ? rescale(d.scaled, d.scale, scale) : undefined;
  }
  return undefined;
}

/**
 * A float at `scale` as DuckDB casts one to a decimal: the value times 10^scale in double arithmetic, rounded half
 * away from zero (1.005 is 1.00499999999999989...: 1.00 at scale 2, not the 1.01 its shortest text would give).
 */
function floatToScaled(x: number, scale: number): bigint | undefined {
  const v = x * 10 ** scale;
  if (!Number.isFinite(v)) return undefined;
  const t = Math.trunc(v);
  return BigInt(Math.abs(v - t) >= 0.5 ? t + Math.sign(v) : t);
}

const isSpace = (c: number) => c === 32 || (c >= 9 && c <= 13);
const isDigit = (c: number) => c >= 48 && c <= 57;

/** One or two digits at `s[i]`: the value and the position after them, or undefined. */
function twoDigits(s: string, i: number): [number, number] | undefined {
  if (!isDigit(s.charCodeAt(i))) return undefined;
  const a = s.charCodeAt(i) - 48;
  return isDigit(s.charCodeAt(i + 1)) ? [a * 10 + s.charCodeAt(i + 1) - 48, i + 2] : [a, i + 1];
}

/**
 * A date as DuckDB reads text (its casts and literals alike, Date::TryConvertDate when not strict): spaces before,
 * an optional minus, the year's digits, a separator (` `, `-`, `/` or `\`) repeated between a month and a day of one
 * or two digits, an optional " (BC)", then anything but another digit ('2024-01-05 10:00', '2024-01-05x' are the
 * 5th of January; '2024-01-055' and '20240105' are not dates); 'epoch' is 1970-01-01.
 */
function parseDate(s: string): number | undefined {
  let i = 0;
  const n = s.length;
  while (i < n && isSpace(s.charCodeAt(i))) i++;
  const neg = s[i] === '-';
  if (neg) i++;
  if (!isDigit(s.charCodeAt(i))) return !neg && s.slice(i).trim().toLowerCase() === 'epoch' ? 0 : undefined;
  let y = 0;
  for (; i < n && isDigit(s.charCodeAt(i)); i++) {
    if (y >= 100000000) return undefined;
    y = y * 10 + s.charCodeAt(i) - 48;
  }
  const sep = s[i++];
  if (sep !== ' ' && sep !== '-' && sep !== '/' && sep !== '\\') return undefined;
  const m = twoDigits(s, i);
  if (!m || s[m[1]] !== sep) return undefined;
  const d = twoDigits(s, m[1] + 1);
  if (!d) return undefined;
  i = d[1];
  if (neg) y = -y;
  if (n - i >= 5 && isSpace(s.charCodeAt(i)) && /^\((?:bc|BC|bC|Bc)\)$/.test(s.slice(i + 1, i + 5))) {
    if (neg || y === 0) return undefined;
    y = -y + 1;
    i += 5;
  }
  if (isDigit(s.charCodeAt(i))) return undefined;
  const mo = m[0],
    day = d[0];
  if (mo < 1 || mo > 12 || day < 1) return undefined;
  const days = daysFromCivil(y, mo, day);
  const [y2, m2, d2] = civil(days); // a day past the month's end does not come back the same
  return y2 === y && m2 === mo && d2 === day ? days : undefined;
}

/** The characters a float's text may hold, as DuckDB reads one: `_` only between digits ('1_000.5'). */
const FLOAT_TEXT = /^-?(?:\d+(?:_\d+)*(?:\.(?:\d+(?:_\d+)*)?)?|\.\d+(?:_\d+)*)(?:[eE][+-]?\d+(?:_\d+)*)?$/;

/**
 * A float as DuckDB reads text: spaces around, an optional `+` before the sign, digits with `_` between them, or
 * inf, infinity and nan in any case with an optional minus ('-inf'); a value past the type's range is infinite
 * ('1e400'). No hexadecimal or binary forms (which JavaScript's Number() would take).
 */
function parseFloatText(v: string): number | undefined {
  let t = v.trim();
  if (t[0] === '+') t = t.slice(1);
  if (FLOAT_TEXT.test(t)) return Number(t.includes('_') ? t.replaceAll('_', '') : t);
  const m = /^(-?)(inf|infinity|nan)$/i.exec(t);
  if (!m) return undefined;
  return m[2].toLowerCase() === 'nan' ? Number.NaN : m[1] ? -Infinity : Infinity;
}

/** DuckDB's text for booleans (TryCast to BOOLEAN): these words in any case, nothing around them. */
const BOOL_TEXT = new Map<string, boolean>([
  ['t', true],
  ['true', true],
  ['y', true],
  ['yes', true],
  ['1', true],
  ['f', false],
  ['false', false],
  ['n', false],
  ['no', false],
  ['0', false],
]);

function parseTimestampUs(s: string): bigint | undefined {
  const t = s.trim();
  if (!/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?([zZ]|[+-]\d\d:?\d\d)?$/.test(t)) return undefined;
  const iso = /[T ]/.test(t) ? t.replace(' ', 'T') : t + 'T00:00:00';
  const ms = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(iso) ? iso : iso + 'Z');
  if (Number.isNaN(ms)) return undefined;
  const frac = /\.(\d+)/.exec(t)?.[1] ?? '';
  return BigInt(ms) * 1000n + BigInt((frac + '000000').slice(3, 6));
}

/** Round half to even (a float cast to an integer, as DuckDB does). */
const roundEven = (x: number) => {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
};

export function convertScalar(v: Scalar, from: DataType, to: DataType): Scalar | undefined {
  if (v === null) return null;
  switch (to.id) {
    case 'utf8':
      if (from.id === 'utf8') return v;
      if (from.id === 'decimal') return decimalText(v as bigint, from.scale!);
      if (from.id === 'date32') return formatDate(v as number);
      // as DuckDB prints one: a space before the time, the fraction without trailing zeros
      if (from.id === 'timestamp')
        return formatTimestamp(v as bigint, from.unit!, from.tz)
          .replace('T', ' ')
          .replace(/(\.\d*?)0+(?=Z?$)/, '$1')
          .replace(/\.(?=Z?$)/, '')
          .replace(/Z$/, '+00'); // a zoned timestamp in UTC, as DuckDB (and the Spark lowering) write it
      return String(v);
    case 'bool':
      if (typeof v === 'boolean') return v;
      if (typeof v === 'string') return v.length <= 5 ? BOOL_TEXT.get(v.toLowerCase()) : undefined;
      return Number(v) !== 0;
    case 'float32':
    case 'float64': {
      if (typeof v === 'boolean') return v ? 1 : 0;
      if (from.id === 'decimal') return Number(decimalText(v as bigint, from.scale!));
      if (typeof v === 'string') return parseFloatText(v);
      return Number(v);
    }
    case 'decimal': {
      const x = exactOf(v, from, to.scale!);
      if (x === undefined || x >= pow10(to.precision!) || -x >= pow10(to.precision!)) return undefined;
      return x;
    }
    case 'date32':
      if (from.id === 'date32') return v;
      if (from.id === 'utf8') return parseDate(v as string);
      if (from.id === 'timestamp') {
        const us = ((v as bigint) * US_PER_UNIT[from.unit!]) / (from.unit === 'nanosecond' ? 1000n : 1n);
        const d = us / 86400000000n;
        return Number(us < 0n && d * 86400000000n !== us ? d - 1n : d);
      }
      return undefined;
    case 'timestamp': {
      let us: bigint | undefined;
      if (from.id === 'utf8') us = parseTimestampUs(v as string);
      else if (from.id === 'date32') us = BigInt(v as number) * 86400000000n;
      else if (from.id === 'timestamp')
        us = from.unit === 'nanosecond' ? (v as bigint) / 1000n : (v as bigint) * US_PER_UNIT[from.unit!];
      if (us === undefined) return undefined;
      return to.unit === 'nanosecond' ? us * 1000n : us / US_PER_UNIT[to.unit!];
    }
    default: {
      // integers
      let x: bigint | undefined;
      if (typeof v === 'boolean') x = v ? 1n : 0n;
      else if (isInteger(from)) x = BigInt(v as number | bigint);
      else if (from.id === 'float32' || from.id === 'float64')
        x = Number.isFinite(v as number) ? BigInt(roundEven(v as number)) : undefined;
      else x = exactOf(v, from, 0);
      const [lo, hi] = RANGES[to.id];
      if (x === undefined || x < lo || x > hi) return undefined;
      return to.id === 'int64' || to.id === 'uint64' ? x : Number(x);
    }
  }
}
