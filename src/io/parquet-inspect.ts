// A Parquet file's columns and row groups for planning, from its footer read
// without WebAssembly (io/parquet-footer.ts): the coordinator of a run over
// common flat files then never loads parquet-wasm (20 ms, and 15-25 ms more
// of its first calls, on the thread that plans while the workers start).
// The engine types are the ones parquet-wasm (arrow-rs) gives the same file:
// the Parquet types and their annotations as arrow-rs maps them, and where
// the writer stored its Arrow schema (ARROW:schema, which arrow-rs follows),
// that schema agreeing field by field. Anything else (nested or repeated
// columns, timestamps, small or unsigned integers, binary, dictionary or large
// types in the Arrow schema, page indexes arrow-rs would reject) answers null,
// and io/parquet.ts asks parquet-wasm, which names the types and the errors.
import fs from 'node:fs';
import type { DataType } from '../kernels/column.js';
import { type Footer, type Leaf, openFooter, readAt } from './parquet-footer.js';
import { ThriftReader, type TStruct } from './thrift-read.js';

export interface InspectedFooter {
  columns: { name: string; type: DataType }[];
  rowGroupRows: number[];
  rowGroupBytes: number[];
}

// parquet.thrift: physical types, converted types, LogicalType's members
const BOOLEAN = 0,
  INT32 = 1,
  INT64 = 2,
  FLOAT = 4,
  DOUBLE = 5,
  BYTE_ARRAY = 6;
const C_UTF8 = 0,
  C_DECIMAL = 5,
  C_DATE = 6,
  C_INT_32 = 17,
  C_INT_64 = 18;
const L_STRING = 1,
  L_DECIMAL = 5,
  L_DATE = 6,
  L_INTEGER = 10;

/** A decimal's type, or null beyond Decimal128 (arrow-rs reads those as Decimal256). */
function decimalOf(leaf: Leaf): DataType | null {
  const lt = leaf.logical?.id === L_DECIMAL ? leaf.logical.value : undefined;
  const scale = (lt?.[1] as number | undefined) ?? leaf.scale ?? 0;
  const precision = (lt?.[2] as number | undefined) ?? leaf.precision;
  if (precision === undefined || precision < 1 || precision > 38 || scale < 0 || scale > precision) return null;
  return { id: 'decimal', precision, scale };
}

/** The engine type arrow-rs reads a leaf as, among the plain ones; null for any other. */
function leafType(leaf: Leaf): DataType | null {
  const l = leaf.logical?.id,
    c = leaf.converted;
  if (l === L_DECIMAL || c === C_DECIMAL) return leaf.phys === BYTE_ARRAY ? null : decimalOf(leaf);
  switch (leaf.phys) {
    case BOOLEAN:
      return l === undefined && c === undefined ? { id: 'bool' } : null;
    case INT32:
    case INT64: {
      const wide = leaf.phys === INT64;
      if (l === L_DATE || c === C_DATE) return wide ? null : { id: 'date32' };
      if (l === L_INTEGER) {
        const it = leaf.logical!.value;
        return it[1] === (wide ? 64 : 32) && it[2] === true ? { id: wide ? 'int64' : 'int32' } : null;
      }
      if (l !== undefined || (c !== undefined && c !== (wide ? C_INT_64 : C_INT_32))) return null;
      return { id: wide ? 'int64' : 'int32' };
    }
    case FLOAT:
    case DOUBLE:
      return l === undefined && c === undefined ? { id: leaf.phys === FLOAT ? 'float32' : 'float64' } : null;
    case BYTE_ARRAY:
      return l === L_STRING || (l === undefined && c === C_UTF8) ? { id: 'utf8' } : null;
    default:
      return null; // INT96, FIXED_LEN_BYTE_ARRAY without DECIMAL
  }
}

// --- the Arrow schema a writer stored: a flatbuffer (Arrow's Message table holding a Schema), read as far as
// the top-level fields' names and types

class Flat {
  private readonly dv: DataView;
  constructor(private readonly b: Uint8Array) {
    this.dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  }
  /** Where field `i` of the table at `t` lies, or 0 when absent. */
  private at(t: number, i: number): number {
    const vt = t - this.dv.getInt32(t, true),
      size = this.dv.getUint16(vt, true);
    const o = 4 + 2 * i < size ? this.dv.getUint16(vt + 4 + 2 * i, true) : 0;
    return o === 0 ? 0 : t + o;
  }
  ref(t: number, i: number): number {
    const p = this.at(t, i);
    return p === 0 ? 0 : p + this.dv.getUint32(p, true);
  }
  int(t: number, i: number, dflt: number, bytes: 1 | 2 | 4): number {
    const p = this.at(t, i);
    if (p === 0) return dflt;
    return bytes === 1 ? this.dv.getUint8(p) : bytes === 2 ? this.dv.getInt16(p, true) : this.dv.getInt32(p, true);
  }
  /** The tables of the vector field `i` of the table at `t`. */
  tables(t: number, i: number): number[] {
    const v = this.ref(t, i);
    if (v === 0) return [];
    const n = this.dv.getUint32(v, true),
      out: number[] = [];
    for (let k = 0; k < n; k++) {
      const e = v + 4 + 4 * k;
      out.push(e + this.dv.getUint32(e, true));
    }
    return out;
  }
  str(t: number, i: number): string | null {
    const s = this.ref(t, i);
    return s === 0 ? null : new TextDecoder().decode(this.b.subarray(s + 4, s + 4 + this.dv.getUint32(s, true)));
  }
  root(): number {
    return this.dv.getUint32(0, true);
  }
}

// Arrow's Type union: the members this reader compares
const A_INT = 2,
  A_FLOAT = 3,
  A_UTF8 = 5,
  A_BOOL = 6,
  A_DECIMAL = 7,
  A_DATE = 8;

/** The engine type of an Arrow field (Field: 0 name, 2 type_type, 3 type, 4 dictionary, 5 children), or null. */
function arrowFieldType(f: Flat, field: number): DataType | null {
  if (f.ref(field, 4) !== 0 || f.tables(field, 5).length > 0) return null; // dictionary, nested
  const t = f.ref(field, 3);
  switch (f.int(field, 2, 0, 1)) {
    case A_INT: {
      const bits = f.int(t, 0, 0, 4),
        signed = f.int(t, 1, 0, 1) === 1;
      return signed && (bits === 32 || bits === 64) ? { id: bits === 32 ? 'int32' : 'int64' } : null;
    }
    case A_FLOAT: {
      const precision = f.int(t, 0, 0, 2); // 1 SINGLE, 2 DOUBLE
      return precision === 1 ? { id: 'float32' } : precision === 2 ? { id: 'float64' } : null;
    }
    case A_UTF8:
      return { id: 'utf8' };
    case A_BOOL:
      return { id: 'bool' };
    case A_DECIMAL:
      return f.int(t, 2, 128, 4) === 128
        ? { id: 'decimal', precision: f.int(t, 0, 0, 4), scale: f.int(t, 1, 0, 4) }
        : null;
    case A_DATE:
      return f.int(t, 0, 1, 2) === 0 ? { id: 'date32' } : null; // DAY; the default is MILLISECOND
    default:
      return null;
  }
}

const sameType = (a: DataType, b: DataType) =>
  a.id === b.id && (a.id !== 'decimal' || (a.precision === b.precision && a.scale === b.scale));

/** Whether the stored Arrow schema names the same columns with the same types. */
function arrowAgrees(base64: string, leaves: Leaf[], types: DataType[]): boolean {
  const ipc = new Uint8Array(Buffer.from(base64, 'base64'));
  const dv = new DataView(ipc.buffer, ipc.byteOffset, ipc.byteLength);
  // an encapsulated message: the continuation marker 0xFFFFFFFF and the length (older writers: the length alone)
  const start = dv.getUint32(0, true) === 0xffffffff ? 8 : 4;
  const f = new Flat(ipc.subarray(start));
  const msg = f.root();
  if (f.int(msg, 1, 0, 1) !== 1) return false; // the header is not a Schema
  const fields = f.tables(f.ref(msg, 2), 1);
  if (fields.length !== leaves.length) return false;
  return fields.every((fd, i) => {
    const t = arrowFieldType(f, fd);
    return f.str(fd, 0) === leaves[i].name && t !== null && sameType(t, types[i]);
  });
}

/** Page indexes to check at most: beyond this the footer path declines (a read of the whole span). */
const INDEX_SPAN = 4 * 1024 * 1024;

/**
 * Whether every page index of the file has the fields arrow-rs requires (parquetjs-lite writes column indexes
 * without `null_pages`, which arrow-rs's reader rejects: io/parquet.ts then reads the file whole). Thrift writes a
 * struct's fields in the order of their ids, so an index holds its required first field (ColumnIndex's null_pages,
 * OffsetIndex's page_locations: id 1) when its first field header is that of field 1: one byte per index read,
 * not the whole index parsed (lineitem's 1,500 indexes: 10 ms).
 */
function pageIndexesWhole(fd: number, footer: Footer): boolean {
  const starts: number[] = [],
    lengths: number[] = [];
  for (const rg of footer.rowGroups)
    for (const c of rg.chunks)
      for (const r of [c.columnIndex, c.offsetIndex])
        if (r) {
          starts.push(r[0]);
          lengths.push(r[1]);
        }
  if (starts.length === 0) return true;
  let lo = Infinity,
    hi = 0;
  for (let i = 0; i < starts.length; i++) {
    lo = Math.min(lo, starts[i]);
    hi = Math.max(hi, starts[i] + lengths[i]);
  }
  if (hi - lo > INDEX_SPAN) return false;
  const bytes = readAt(fd, lo, hi - lo);
  for (let i = 0; i < starts.length; i++) {
    const h = bytes[starts[i] - lo];
    if (h >> 4 === 1) continue; // field 1, its id given as a delta
    // the id written in full (or another first field): the struct read whole
    const s: TStruct = new ThriftReader(bytes, starts[i] - lo, starts[i] - lo + lengths[i]).struct();
    if (s[1] === undefined) return false;
  }
  return true;
}

/** The columns and row groups of a flat file of plain types, as parquet-wasm would give them; null otherwise. */
export function inspectFooter(path: string): InspectedFooter | null {
  let fd: number;
  let footer: Footer;
  try {
    ({ fd, footer } = openFooter(path));
  } catch {
    return null;
  }
  try {
    const leaves = footer.leaves;
    if (!leaves || leaves.length === 0) return null;
    const types = leaves.map(leafType);
    if (types.some((t) => t === null)) return null;
    const known = types as DataType[];
    if (footer.arrowSchema !== null && !arrowAgrees(footer.arrowSchema, leaves, known)) return null;
    if (!pageIndexesWhole(fd, footer)) return null;
    return {
      columns: leaves.map((l, i) => ({ name: l.name, type: known[i] })),
      rowGroupRows: footer.rowGroups.map((g) => g.rows),
      rowGroupBytes: footer.rowGroups.map((g) => g.bytes),
    };
  } catch {
    return null; // anything unexpected: parquet-wasm reads the footer and reports what is wrong
  } finally {
    fs.closeSync(fd);
  }
}
