// The engine's column types: a DataType, the typed array holding its values, and the Column and Batch built on
// them (kernels/column.ts). A leaf: what every kernel file may import without a circle.

export type TypeId =
  | 'int8'
  | 'int16'
  | 'int32'
  | 'int64'
  | 'uint8'
  | 'uint16'
  | 'uint32'
  | 'uint64'
  | 'float32'
  | 'float64'
  | 'bool'
  | 'utf8'
  | 'date32'
  | 'timestamp'
  | 'decimal';

export type TimeUnit = 'second' | 'millisecond' | 'microsecond' | 'nanosecond';

export interface DataType {
  id: TypeId;
  /** timestamp only */
  unit?: TimeUnit;
  /** timestamp only: time zone, or null for a naive timestamp */
  tz?: string | null;
  /** utf8 only: the source column was large utf8 (64-bit offsets); written back as such */
  large?: boolean;
  /** decimal only: digits in all (1..38) and after the point; values are integers scaled by 10^scale */
  precision?: number;
  scale?: number;
}

export interface Field {
  name: string;
  type: DataType;
}
export type Schema = Field[];

export type Values =
  | Int8Array
  | Int16Array
  | Int32Array
  | BigInt64Array
  | Uint8Array
  | Uint16Array
  | Uint32Array
  | BigUint64Array
  | Float32Array
  | Float64Array;

export interface Column {
  type: DataType;
  length: number;
  /** utf8: the bytes of all strings; bool: one byte per row (0/1) */
  values: Values;
  /** utf8 only: length + 1 offsets into values */
  offsets?: Int32Array;
  /** one byte per row, 1 = valid; null when every row is valid */
  valid: Uint8Array | null;
}

export interface Batch {
  length: number;
  columns: Column[];
}

const INTEGER_IDS: ReadonlySet<TypeId> = new Set([
  'int8',
  'int16',
  'int32',
  'int64',
  'uint8',
  'uint16',
  'uint32',
  'uint64',
]);
export const isInteger = (t: DataType) => INTEGER_IDS.has(t.id);
export const isFloat = (t: DataType) => t.id === 'float32' || t.id === 'float64';
/** Two floats in DuckDB's order: NaN equals NaN and sorts above every number (filters, sorts, min/max, comparisons). */
export const floatOrder = (a: number, b: number): number =>
  a < b ? -1 : a > b ? 1 : a === b ? 0 : a === a ? -1 : b === b ? 1 : 0;
export const isDecimal = (t: DataType) => t.id === 'decimal';
export const isNumeric = (t: DataType) => isInteger(t) || isFloat(t) || t.id === 'decimal';

/**
 * 64-bit lanes per row: a decimal of precision above 18 is a 128-bit integer,
 * two lanes (low, then high; the layout of Arrow's Decimal128). Every other
 * fixed-width type has one element per row.
 */
export const lanes = (t: DataType): number => (t.id === 'decimal' && t.precision! > 18 ? 2 : 1);
/** Bytes per row of a fixed-width type. */
export const rowWidth = (t: DataType): number => CTORS[t.id].BYTES_PER_ELEMENT * lanes(t);

export function typeName(t: DataType): string {
  if (t.id === 'decimal') return `decimal(${t.precision},${t.scale})`;
  if (t.id === 'timestamp') return `timestamp[${t.unit}${t.tz ? ', ' + t.tz : ''}]`;
  if (t.id === 'utf8' && t.large) return 'large_utf8';
  return t.id;
}

/** The typed array class holding a type's values: a new one of n values, or a view on a buffer. */
export type ValuesCtor = {
  new (n: number): Values;
  new (buffer: ArrayBufferLike, byteOffset: number, length: number): Values;
  BYTES_PER_ELEMENT: number;
};
const CTORS: Record<TypeId, ValuesCtor> = {
  int8: Int8Array,
  int16: Int16Array,
  int32: Int32Array,
  int64: BigInt64Array,
  uint8: Uint8Array,
  uint16: Uint16Array,
  uint32: Uint32Array,
  uint64: BigUint64Array,
  float32: Float32Array,
  float64: Float64Array,
  bool: Uint8Array,
  utf8: Uint8Array,
  date32: Int32Array,
  timestamp: BigInt64Array,
  decimal: BigInt64Array,
};

export function allocValues(t: DataType, n: number): Values {
  return new CTORS[t.id](n * lanes(t));
}
export const valuesCtor = (t: DataType): ValuesCtor => CTORS[t.id];
