// Date kernels on day numbers (date32) and timestamps: year, month, day,
// date_add by days, months or years (a month step clamps to the month's last
// day, as SQL's `date + interval '1' month`), date_diff in days.
import type { Column } from '../kernels/column.js';
import { exactNums } from './vector.js';

const US_PER_DAY = 86400000000;
const UNIT_PER_DAY = {
  second: 86400,
  millisecond: 86400000,
  microsecond: US_PER_DAY,
  nanosecond: US_PER_DAY * 1000,
} as const;

/** Civil date of a day number (days since 1970-01-01), proleptic Gregorian (H. Hinnant's algorithm). */
export function civil(z: number): [number, number, number] {
  z += 719468;
  const era = Math.floor(z / 146097),
    doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100)),
    mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1,
    m = mp < 10 ? mp + 3 : mp - 9;
  return [yoe + era * 400 + (m <= 2 ? 1 : 0), m, d];
}

export function daysFromCivil(y: number, m: number, d: number): number {
  y -= m <= 2 ? 1 : 0;
  const era = Math.floor(y / 400),
    yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

const daysInMonth = (y: number, m: number) =>
  m === 2
    ? (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0
      ? 29
      : 28
    : [31, 0, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1];

/**
 * Day numbers of a date or timestamp column (timestamps floored to their day), and the time of day in the column's
 * unit.
 */
function days(c: Column): { days: Float64Array; rest: Float64Array | null } {
  if (c.type.id === 'date32') return { days: Float64Array.from(c.values as Int32Array), rest: null };
  const per = UNIT_PER_DAY[c.type.unit!],
    x = exactNums(c),
    n = c.length;
  const d = new Float64Array(n),
    rest = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const v = x[i] === x[i] ? x[i] : Number((c.values as BigInt64Array)[i]);
    d[i] = Math.floor(v / per);
    rest[i] = v - d[i] * per;
  }
  return { days: d, rest };
}

export function datePart(fn: string, c: Column): Column {
  const n = c.length,
    out = new BigInt64Array(n),
    w = new Int32Array(out.buffer),
    { days: d } = days(c);
  const k = fn === 'year' ? 0 : fn === 'month' ? 1 : 2;
  for (let i = 0; i < n; i++) {
    const v = civil(d[i])[k];
    w[2 * i] = v;
    w[2 * i + 1] = v < 0 ? -1 : 0;
  }
  return { type: { id: 'int64' }, length: n, values: out, valid: c.valid };
}

/** A date (or timestamp) moved by n days, months or years. */
export function dateAdd(c: Column, count: Column, unit: string): Column {
  const n = c.length,
    { days: d, rest } = days(c),
    k = exactNums(count);
  const res = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const by = k[i] === k[i] ? k[i] : Number((count.values as any)[i]);
    if (unit === 'day') {
      res[i] = d[i] + by;
      continue;
    }
    const [y, m, day] = civil(d[i]);
    const months = y * 12 + (m - 1) + (unit === 'year' ? 12 * by : by);
    const ny = Math.floor(months / 12),
      nm = months - ny * 12 + 1;
    res[i] = daysFromCivil(ny, nm, Math.min(day, daysInMonth(ny, nm)));
  }
  let valid = c.valid;
  if (count.valid) {
    valid = (valid ?? new Uint8Array(n).fill(1)).slice();
    for (let i = 0; i < n; i++) valid[i] &= count.valid[i];
  }
  if (c.type.id === 'date32') return { type: c.type, length: n, values: Int32Array.from(res), valid };
  const per = BigInt(UNIT_PER_DAY[c.type.unit!]),
    out = new BigInt64Array(n);
  for (let i = 0; i < n; i++) out[i] = BigInt(res[i]) * per + BigInt(rest![i]);
  return { type: c.type, length: n, values: out, valid };
}

/** Days from start to end. */
export function dateDiff(a: Column, b: Column): Column {
  const n = a.length,
    out = new BigInt64Array(n);
  dayDiffs(a.values as Int32Array, b.values as Int32Array, new Int32Array(out.buffer), n);
  let valid: Uint8Array | null = null;
  if (a.valid || b.valid) {
    valid = new Uint8Array(n);
    for (let i = 0; i < n; i++) valid[i] = (a.valid?.[i] ?? 1) & (b.valid?.[i] ?? 1);
  }
  return { type: { id: 'int64' }, length: n, values: out, valid };
}

/**
 * y[i] - x[i] as int64 words into w. A loop of its own with nothing after it: compiled while it runs (on-stack
 * replacement), the code after it had no type feedback and every call deoptimized there (lag_gaps: 11 a run).
 */
function dayDiffs(x: Int32Array, y: Int32Array, w: Int32Array, n: number): void {
  for (let i = 0; i < n; i++) {
    const v = y[i] - x[i];
    w[2 * i] = v;
    w[2 * i + 1] = v < 0 ? -1 : 0;
  }
}
