// Bound expressions: the plan's expression JSON with columns resolved to
// indices, every node typed, implicit conversions made explicit as casts and
// literals in the representation of their type. Compiled by compile.ts.
import { type DataType, isDecimal, isFloat, isInteger, typeName } from '../kernels/column.js';
import { MAX_PRECISION, decimalType } from '../kernels/decimal.js';

/**
 * A literal's value in its type's representation: bigint for int64, uint64,
 * timestamp and decimals (the scaled integer); number for other integers,
 * floats and dates (days); string; boolean; null.
 */
export type Scalar = bigint | number | string | boolean | null;

export type BoundExpr =
  | { k: 'col'; col: number; type: DataType; name: string }
  | { k: 'lit'; value: Scalar; type: DataType }
  /** `what`: where the expression stands in the plan, for run-time errors (overflow, a value that does not convert) */
  | { k: 'fn'; fn: string; args: BoundExpr[]; type: DataType; what: string }
  | { k: 'case'; whens: BoundExpr[]; thens: BoundExpr[]; else: BoundExpr | null; type: DataType }
  | { k: 'cast'; arg: BoundExpr; type: DataType; what: string };

export const BOOL: DataType = { id: 'bool' };
export const INT64: DataType = { id: 'int64' };
export const FLOAT64: DataType = { id: 'float64' };
const FLOAT32: DataType = { id: 'float32' };
export const UTF8: DataType = { id: 'utf8' };
export const DATE: DataType = { id: 'date32' };
const TIMESTAMP_US: DataType = { id: 'timestamp', unit: 'microsecond', tz: null };

/** A type name of the plan (`decimal(15,2)`, `date`, ...) as an engine type, or null. */
export function parseTypeName(s: string): DataType | null {
  const t = s.replace(/\s+/g, '');
  const m = /^decimal\((\d+),(\d+)\)$/.exec(t);
  if (m) {
    const p = Number(m[1]),
      sc = Number(m[2]);
    return p >= 1 && p <= MAX_PRECISION && sc <= p ? { id: 'decimal', precision: p, scale: sc } : null;
  }
  if (t === 'date') return DATE;
  if (t === 'timestamp') return { id: 'timestamp', unit: 'microsecond', tz: null };
  if (/^(bool|u?int(8|16|32|64)|float(32|64)|utf8)$/.test(t)) return { id: t as DataType['id'] };
  return null;
}

/** The plan's name of a type (date32 is `date`). */
export const planTypeName = (t: DataType) =>
  t.id === 'date32' ? 'date' : t.id === 'timestamp' ? 'timestamp' : typeName(t);

export const isExact = (t: DataType) => isInteger(t) || isDecimal(t);
export const isNum = (t: DataType) => isExact(t) || isFloat(t);

const INT_DIGITS: Record<string, number> = {
  int8: 3,
  int16: 5,
  int32: 10,
  int64: 19,
  uint8: 3,
  uint16: 5,
  uint32: 10,
  uint64: 20,
};
/** Digits before the point a value of the type may have. */
export const integerDigits = (t: DataType): number =>
  t.id === 'decimal' ? t.precision! - t.scale! : (INT_DIGITS[t.id] ?? 0);
export const scaleOf = (t: DataType): number => t.scale ?? 0;

/** The decimal type that holds every value of an exact type (an integer literal: only its digits). */
export function asDecimal(e: BoundExpr): DataType {
  if (e.type.id === 'decimal') return e.type;
  if (e.k === 'lit' && typeof e.value === 'bigint')
    return decimalType((e.value < 0n ? -e.value : e.value).toString().length, 0);
  return decimalType(integerDigits(e.type), 0);
}

/**
 * The float type numbers of these types meet in, as DuckDB's: float64 next to a float64, else float32 next to a
 * float32 (an integer or a decimal with a float32 is float32: `r > 0.3` compares 0.3 as float32), else float64.
 */
export const floatOf = (ts: DataType[]): DataType =>
  ts.some((t) => t.id === 'float64') || !ts.some((t) => t.id === 'float32') ? FLOAT64 : FLOAT32;

/**
 * The common type of several (case branches, coalesce arguments, both sides
 * of a comparison): integer < decimal < float32 < float64 (floatOf); null when they do not mix.
 */
export function unify(es: BoundExpr[]): DataType | null {
  const ts = es.filter((e) => !(e.k === 'lit' && e.value === null)).map((e) => e.type);
  if (ts.length === 0) return es[0]?.type ?? INT64;
  if (ts.every(isNum)) {
    if (ts.some(isFloat)) return floatOf(ts);
    const exact = es.filter((e) => !(e.k === 'lit' && e.value === null));
    if (ts.every(isInteger)) return ts.every((t) => t.id === ts[0].id) ? ts[0] : INT64;
    const ds = exact.map(asDecimal);
    const scale = Math.max(...ds.map(scaleOf)),
      digits = Math.max(...ds.map((d) => d.precision! - d.scale!));
    // past 38 digits the scale gives way, as DuckDB's: decimal(38,2) with decimal(30,4) is decimal(38,2)
    if (digits + scale > MAX_PRECISION) return decimalType(MAX_PRECISION, Math.max(0, MAX_PRECISION - digits));
    return decimalType(digits + scale, scale);
  }
  const first = ts[0];
  // dates and timestamps: a date is its midnight (SQL); timestamps of two units meet at microseconds
  if (ts.every((t) => t.id === 'date32' || t.id === 'timestamp') && ts.some((t) => t.id === 'timestamp')) {
    const stamps = ts.filter((t) => t.id === 'timestamp');
    return stamps.every((t) => t.unit === stamps[0].unit) ? stamps[0] : TIMESTAMP_US;
  }
  if (ts.every((t) => t.id === first.id && (t.id !== 'timestamp' || t.unit === first.unit))) return first;
  return null;
}
