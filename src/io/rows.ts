// Result rows as plain JavaScript objects (the library's `toRows()`): how each
// column type reads in JavaScript, with dates and timestamps as the caller asks.
import { type Column, type Field, type Batch, valueAt } from '../kernels/column.js';
import { formatDate, formatTimestamp } from './output.js';

/**
 * How `toRows()` gives dates and timestamps:
 * - `iso` (default): text as `--json` prints it, `'1996-09-24'` and `'1996-09-24T10:30:00.000000'`
 *   (a `Z` when the column has a time zone): exact to the column's unit, and a date stays the
 *   calendar day whatever the machine's time zone;
 * - `date`: JavaScript `Date` objects (midnight UTC for a date; sub-millisecond digits are dropped);
 * - `raw`: the stored numbers: days since 1970-01-01 for a date, a bigint count of the column's unit for a timestamp.
 */
export type DateForm = 'iso' | 'date' | 'raw';

/**
 * How `toRows()` gives 64-bit integer columns (int64, uint64: counts, sums of integers, most keys):
 * - `bigint` (default): exact whatever the value, but `JSON.stringify` refuses bigint;
 * - `number`: plain numbers, exact up to 2^53 - 1 in magnitude; a value beyond that is an error naming the
 *   column and the value (never a number rounded silently).
 */
export type IntegerForm = 'bigint' | 'number';

export interface RowOptions {
  dates?: DateForm;
  integers?: IntegerForm;
}

const PER_MS = { second: 1000n, millisecond: 1n, microsecond: 1000n, nanosecond: 1000000n } as const;

const MAX_EXACT = BigInt(Number.MAX_SAFE_INTEGER);

/** A 64-bit integer as a number, exact, or an error naming its column. */
function exactNumber(v: bigint, column: string): number {
  if (v > MAX_EXACT || v < -MAX_EXACT) {
    throw new RangeError(
      `toRows: column "${column}" holds ${v}, beyond 2^53 - 1: not exact as a number; ` +
        `use { integers: 'bigint' } (the default) for this column`,
    );
  }
  return Number(v);
}

/** One cell as a JavaScript value. */
function rowValue(c: Column, i: number, dates: DateForm, integers: IntegerForm, name: string): unknown {
  const v = valueAt(c, i);
  if (v === null) return v;
  if (typeof v === 'bigint' && integers === 'number' && (c.type.id === 'int64' || c.type.id === 'uint64'))
    return exactNumber(v, name);
  if (dates === 'raw') return v;
  if (c.type.id === 'date32') return dates === 'iso' ? formatDate(v as number) : new Date((v as number) * 86_400_000);
  if (c.type.id === 'timestamp') {
    const unit = c.type.unit!;
    if (dates === 'iso') return formatTimestamp(v as bigint, unit, c.type.tz);
    // seconds and milliseconds multiply, finer units divide (rounding toward minus infinity)
    const t = v as bigint;
    const ms = unit === 'second' ? t * 1000n : unit === 'millisecond' ? t : floorDiv(t, PER_MS[unit]);
    return new Date(Number(ms));
  }
  return v;
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
}

/** Every row of the batches as an object keyed by column name. */
export function batchRows(schema: Field[], batches: Batch[], o: RowOptions = {}): Record<string, unknown>[] {
  const dates = o.dates ?? 'iso';
  if (!['iso', 'date', 'raw'].includes(dates)) {
    throw new TypeError(`toRows: dates must be "iso", "date" or "raw", got ${JSON.stringify(dates)}`);
  }
  const integers = o.integers ?? 'bigint';
  if (integers !== 'bigint' && integers !== 'number') {
    throw new TypeError(`toRows: integers must be "bigint" or "number", got ${JSON.stringify(integers)}`);
  }
  return batches.flatMap((b) =>
    Array.from({ length: b.length }, (_, i) =>
      Object.fromEntries(schema.map((f, k) => [f.name, rowValue(b.columns[k], i, dates, integers, f.name)])),
    ),
  );
}
