// Conversions between Arrow JS (the I/O boundary) and the engine's columns.
import * as arrow from 'apache-arrow';
import { decimalFromArrow } from '../kernels/decimal.js';
import {
  type Batch,
  type Column,
  type DataType,
  type Field,
  type Schema,
  type TimeUnit,
  allocValues,
  gather,
  lanes,
  valuesCtor,
} from '../kernels/column.js';

const UNITS: TimeUnit[] = ['second', 'millisecond', 'microsecond', 'nanosecond'];

/** The engine type of an Arrow type, or a string naming the unsupported type. */
export function fromArrowType(t: arrow.DataType): DataType | string {
  if (arrow.DataType.isDictionary(t)) return fromArrowType(t.dictionary);
  if (arrow.DataType.isInt(t)) {
    const id = `${t.isSigned ? 'int' : 'uint'}${t.bitWidth}` as DataType['id'];
    return { id };
  }
  if (arrow.DataType.isFloat(t)) {
    if (t.precision === arrow.Precision.SINGLE) return { id: 'float32' };
    if (t.precision === arrow.Precision.DOUBLE) return { id: 'float64' };
    return String(t);
  }
  if (arrow.DataType.isBool(t)) return { id: 'bool' };
  if (arrow.DataType.isUtf8(t)) return { id: 'utf8' };
  if (arrow.DataType.isLargeUtf8(t)) return { id: 'utf8', large: true };
  if (arrow.DataType.isDate(t)) return { id: 'date32' };
  if (arrow.DataType.isTimestamp(t)) return { id: 'timestamp', unit: UNITS[t.unit], tz: t.timezone ?? null };
  if (
    arrow.DataType.isDecimal(t) &&
    t.bitWidth === 128 &&
    t.scale >= 0 &&
    t.scale <= t.precision &&
    t.precision <= 38
  ) {
    return { id: 'decimal', precision: t.precision, scale: t.scale };
  }
  return String(t);
}

export function toArrowType(t: DataType): arrow.DataType {
  switch (t.id) {
    case 'int8':
      return new arrow.Int8();
    case 'int16':
      return new arrow.Int16();
    case 'int32':
      return new arrow.Int32();
    case 'int64':
      return new arrow.Int64();
    case 'uint8':
      return new arrow.Uint8();
    case 'uint16':
      return new arrow.Uint16();
    case 'uint32':
      return new arrow.Uint32();
    case 'uint64':
      return new arrow.Uint64();
    case 'float32':
      return new arrow.Float32();
    case 'float64':
      return new arrow.Float64();
    case 'bool':
      return new arrow.Bool();
    case 'utf8':
      return t.large ? new arrow.LargeUtf8() : new arrow.Utf8();
    case 'date32':
      return new arrow.DateDay();
    case 'timestamp':
      return new arrow.Timestamp(UNITS.indexOf(t.unit!) as arrow.TimeUnit, t.tz ?? null);
    case 'decimal':
      return new arrow.Decimal(t.scale!, t.precision!, 128);
  }
}

function validityOf(d: arrow.Data): Uint8Array | null {
  if (d.nullCount === 0 || !d.nullBitmap || d.nullBitmap.length === 0) return null;
  const bm = d.nullBitmap,
    off = d.offset,
    n = d.length;
  const valid = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const k = i + off;
    valid[i] = (bm[k >> 3] >> (k & 7)) & 1;
  }
  return valid;
}

/** One Arrow chunk as an engine column; fixed-width values are views, not copies. */
export function columnFromArrow(d: arrow.Data, type: DataType): Column {
  const n = d.length;
  const valid = validityOf(d);
  const at = d.type as arrow.DataType;
  if (arrow.DataType.isDictionary(at)) {
    const dict = columnFromArrow(d.dictionary!.data[0], type);
    const idx = new Int32Array(n);
    const keys = d.values as any;
    for (let i = 0; i < n; i++) idx[i] = valid && !valid[i] ? -1 : Number(keys[i]);
    return gather(dict, idx, n);
  }
  if (type.id === 'bool') {
    const bits = d.values as Uint8Array,
      off = d.offset;
    const v = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const k = i + off;
      v[i] = (bits[k >> 3] >> (k & 7)) & 1;
    }
    return { type, length: n, values: v, valid };
  }
  if (type.id === 'utf8') {
    const vo = d.valueOffsets as Int32Array | BigInt64Array;
    const offsets = new Int32Array(n + 1);
    const base = Number(vo[0]);
    for (let i = 0; i <= n; i++) offsets[i] = Number(vo[i]) - base;
    const values = (d.values as Uint8Array).slice(base, base + offsets[n]);
    return { type, length: n, values, offsets, valid };
  }
  if (type.id === 'date32' && arrow.DataType.isDate(at) && at.unit === arrow.DateUnit.MILLISECOND) {
    const src = d.values as any;
    const v = new Int32Array(n);
    for (let i = 0; i < n; i++) v[i] = Math.floor(Number(src[i]) / 86400000);
    return { type, length: n, values: v, valid };
  }
  if (type.id === 'decimal') return decimalFromArrow(d.values as Uint32Array, n, type, valid);
  const src = d.values as any;
  if (src instanceof valuesCtor(type)) return { type, length: n, values: src.subarray(0, n), valid };
  const values = allocValues(type, n) as any;
  values.set(src.subarray(0, n));
  return { type, length: n, values, valid };
}

/** A decimal column as Decimal128 words (one-lane values sign-extended). */
function decimalWords(c: Column): Uint32Array {
  const n = c.length;
  if (lanes(c.type) === 2) return new Uint32Array(c.values.buffer, c.values.byteOffset, 4 * n);
  const w = new Int32Array(c.values.buffer, c.values.byteOffset, 2 * n);
  const out = new Int32Array(4 * n);
  for (let i = 0; i < n; i++) {
    const hi = w[2 * i + 1];
    out[4 * i] = w[2 * i];
    out[4 * i + 1] = hi;
    out[4 * i + 2] = out[4 * i + 3] = hi < 0 ? -1 : 0;
  }
  return new Uint32Array(out.buffer);
}

function bitmapOf(valid: Uint8Array, n: number): Uint8Array {
  const bm = new Uint8Array((n + 7) >> 3);
  for (let i = 0; i < n; i++) if (valid[i]) bm[i >> 3] |= 1 << (i & 7);
  return bm;
}

export function columnToArrow(c: Column): arrow.Data {
  const type = toArrowType(c.type);
  const n = c.length;
  let nullCount = 0;
  if (c.valid) for (let i = 0; i < n; i++) nullCount += c.valid[i] ^ 1;
  const nullBitmap = nullCount > 0 ? bitmapOf(c.valid!, n) : undefined;
  if (c.type.id === 'bool') {
    return arrow.makeData({
      type: type as arrow.Bool,
      length: n,
      nullCount,
      nullBitmap,
      data: bitmapOf(c.values as Uint8Array, n),
    });
  }
  if (c.type.id === 'utf8') {
    const valueOffsets = c.type.large ? BigInt64Array.from(c.offsets!, (x) => BigInt(x)) : c.offsets!;
    return arrow.makeData({
      type: type as any,
      length: n,
      nullCount,
      nullBitmap,
      valueOffsets: valueOffsets as any,
      data: c.values as Uint8Array,
    });
  }
  const data = c.type.id === 'decimal' ? decimalWords(c) : c.values;
  return arrow.makeData({ type: type as any, length: n, nullCount, nullBitmap, data: data as any });
}

export function arrowSchema(schema: Schema): arrow.Schema {
  return new arrow.Schema(schema.map((f) => new arrow.Field(f.name, toArrowType(f.type), true)));
}

export function batchToArrow(schema: Schema, b: Batch): arrow.RecordBatch {
  const s = arrowSchema(schema);
  const data = arrow.makeData({
    type: new arrow.Struct(s.fields),
    length: b.length,
    nullCount: 0,
    children: b.columns.map(columnToArrow),
  });
  return new arrow.RecordBatch(s, data);
}

export function tableToArrow(schema: Schema, batches: Batch[]): arrow.Table {
  const s = arrowSchema(schema);
  const bs = batches.filter((b) => b.length > 0).map((b) => batchToArrow(schema, b));
  return bs.length ? new arrow.Table(s, bs) : new arrow.Table(s);
}

/** Arrow record batches to engine batches, in the order of `fields` (matched by name). */
export function batchesFromArrow(table: arrow.Table, fields: Field[]): Batch[] {
  const idx = fields.map((f) => table.schema.fields.findIndex((g) => g.name === f.name));
  return table.batches.map((rb) => ({
    length: rb.numRows,
    columns: fields.map((f, i) => columnFromArrow(rb.data.children[idx[i]], f.type)),
  }));
}
