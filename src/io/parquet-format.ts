// What the Parquet writer (io/parquet-encode.ts) writes each engine type as: the
// constants of parquet.thrift (physical and converted types, encodings, page
// types), a column's plan (its physical, converted and logical types and how
// its values are laid out in pages, as parquet-rs wrote them for the same
// Arrow types) and the little-endian 4-byte write the pages and footer share.
import type { DataType, Field } from '../kernels/column.js';
import type { ThriftWriter } from './thrift-compact.js';

/** Physical types, converted types and encodings of parquet.thrift. */
const enum Phys {
  BOOLEAN = 0,
  INT32 = 1,
  INT64 = 2,
  FLOAT = 4,
  DOUBLE = 5,
  BYTE_ARRAY = 6,
  FIXED_LEN_BYTE_ARRAY = 7,
}
const CONV = {
  UTF8: 0,
  DECIMAL: 5,
  DATE: 6,
  TIMESTAMP_MILLIS: 9,
  TIMESTAMP_MICROS: 10,
  UINT_8: 11,
  UINT_16: 12,
  UINT_32: 13,
  UINT_64: 14,
  INT_8: 15,
  INT_16: 16,
};
export const PLAIN = 0,
  PLAIN_DICTIONARY = 2,
  RLE = 3,
  SNAPPY = 1,
  DATA_PAGE = 0,
  DICTIONARY_PAGE = 2;
export const MAGIC = new Uint8Array([0x50, 0x41, 0x52, 0x31]); // PAR1

/** How a column's values are laid out in its pages. */
type Layout =
  | 'bytes4'
  // 'bytes4', 'bytes8': the engine's bytes as they are (int32, uint32 bits, float, date; int64, double, timestamp,
  // decimal <= 18)
  | 'bytes8'
  | 'widen' // an 8- or 16-bit integer as INT32
  | 'dec32' // a decimal of precision <= 9 (one int64 lane) as INT32
  | 'bool'
  | 'string'
  | 'flba'; // a decimal of precision > 18 (two lanes) as big-endian bytes

export interface ColumnPlan {
  name: string;
  phys: Phys;
  layout: Layout;
  /** fixed_len_byte_array only */
  typeLength?: number;
  converted?: number;
  scale?: number;
  precision?: number;
  /** writes the LogicalType union's member, or nothing */
  logical?: (w: ThriftWriter) => void;
}

/** Bytes of a decimal of this precision as a fixed-length byte array (parquet-rs's rule). */
export const decimalBytes = (precision: number) => Math.ceil((Math.log2(10 ** precision + 1) + 1) / 8);

const intType = (bits: number, signed: boolean) => (w: ThriftWriter) => {
  w.begin(10).i8(1, bits).bool(2, signed).end();
};
const UNIT_IDS = { millisecond: 1, microsecond: 2, nanosecond: 3 } as const;

export function columnPlan(f: Field): ColumnPlan {
  const t: DataType = f.type,
    name = f.name;
  switch (t.id) {
    case 'int8':
    case 'int16':
    case 'uint8':
    case 'uint16': {
      const bits = t.id.endsWith('8') ? 8 : 16,
        signed = t.id.startsWith('int');
      const converted = signed ? (bits === 8 ? CONV.INT_8 : CONV.INT_16) : bits === 8 ? CONV.UINT_8 : CONV.UINT_16;
      return { name, phys: Phys.INT32, layout: 'widen', converted, logical: intType(bits, signed) };
    }
    case 'int32':
      return { name, phys: Phys.INT32, layout: 'bytes4' };
    case 'uint32':
      return { name, phys: Phys.INT32, layout: 'bytes4', converted: CONV.UINT_32, logical: intType(32, false) };
    case 'int64':
      return { name, phys: Phys.INT64, layout: 'bytes8' };
    case 'uint64':
      return { name, phys: Phys.INT64, layout: 'bytes8', converted: CONV.UINT_64, logical: intType(64, false) };
    case 'float32':
      return { name, phys: Phys.FLOAT, layout: 'bytes4' };
    case 'float64':
      return { name, phys: Phys.DOUBLE, layout: 'bytes8' };
    case 'bool':
      return { name, phys: Phys.BOOLEAN, layout: 'bool' };
    case 'utf8':
      return {
        name,
        phys: Phys.BYTE_ARRAY,
        layout: 'string',
        converted: CONV.UTF8,
        logical: (w) => {
          w.begin(1).end();
        },
      };
    case 'date32':
      return {
        name,
        phys: Phys.INT32,
        layout: 'bytes4',
        converted: CONV.DATE,
        logical: (w) => {
          w.begin(6).end();
        },
      };
    case 'timestamp': {
      // seconds have no Parquet unit: a plain INT64 (the Arrow schema in the footer keeps the type)
      if (t.unit === 'second') return { name, phys: Phys.INT64, layout: 'bytes8' };
      const unit = UNIT_IDS[t.unit!];
      const converted =
        t.unit === 'millisecond' ? CONV.TIMESTAMP_MILLIS : t.unit === 'microsecond' ? CONV.TIMESTAMP_MICROS : undefined;
      const utc = t.tz != null;
      return {
        name,
        phys: Phys.INT64,
        layout: 'bytes8',
        converted,
        logical: (w) => {
          w.begin(8).bool(1, utc).begin(2).begin(unit).end().end().end();
        },
      };
    }
    case 'decimal': {
      const p = t.precision!,
        s = t.scale!;
      const logical = (w: ThriftWriter) => {
        w.begin(5).i32(1, s).i32(2, p).end();
      };
      const base = { name, converted: CONV.DECIMAL, scale: s, precision: p, logical };
      if (p <= 9) return { ...base, phys: Phys.INT32, layout: 'dec32' };
      if (p <= 18) return { ...base, phys: Phys.INT64, layout: 'bytes8' };
      return { ...base, phys: Phys.FIXED_LEN_BYTE_ARRAY, layout: 'flba', typeLength: decimalBytes(p) };
    }
  }
}

/** x as 4 little-endian bytes at buf[at] (level and string lengths, 4-byte values, the footer's length). */
export function le32(buf: Uint8Array, at: number, x: number) {
  buf[at] = x & 0xff;
  buf[at + 1] = (x >> 8) & 0xff;
  buf[at + 2] = (x >> 16) & 0xff;
  buf[at + 3] = (x >>> 24) & 0xff;
}
