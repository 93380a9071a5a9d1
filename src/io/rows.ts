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

export interface RowOptions {
  dates?: DateForm;
}

const PER_MS = { second: 1000n, millisecond: 1n, microsecond: 1000n, nanosecond: 1000000n } as const;

/** One cell as a JavaScript value. */
function rowValue(c: Column, i: number, dates: DateForm): unknown {
  const v = valueAt(c, i);
  if (v === null || dates === 'raw') return v;
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
  return batches.flatMap((b) =>
    Array.from({ length: b.length }, (_, i) =>
      Object.fromEntries(schema.map((f, k) => [f.name, rowValue(b.columns[k], i, dates)])),
    ),
  );
}
