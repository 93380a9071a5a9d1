// A Parquet file's footer, read without WebAssembly for the direct reader
// (io/parquet-direct.ts): the leaf columns of a flat schema and where each
// row group's column chunks lie. Kept per thread while the file is unchanged.
import fs from 'node:fs';
import { ThriftReader, type TStruct } from './thrift-read.js';

export class NotDirect extends Error {}

export interface Leaf {
  name: string;
  /** parquet.thrift's physical type: 1 INT32, 2 INT64, 4 FLOAT, 5 DOUBLE, 6 BYTE_ARRAY, 7 FIXED_LEN_BYTE_ARRAY */
  phys: number;
  typeLength: number;
  optional: boolean;
  converted: number | undefined;
  scale: number | undefined;
  precision: number | undefined;
  /** the LogicalType union: the id of its member and the member */
  logical: { id: number; value: TStruct } | undefined;
}

export interface Chunk {
  phys: number;
  codec: number;
  encodings: number[];
  numValues: number;
  /** byte range of the chunk's pages in the file */
  start: number;
  size: number;
  /** byte ranges of the chunk's column index and offset index (the page index), where the file has them */
  columnIndex?: [number, number];
  offsetIndex?: [number, number];
}

export interface Footer {
  /** null: a schema the direct reader does not take (nested, repeated) */
  leaves: Leaf[] | null;
  /** `bytes`: the row group's total_byte_size (uncompressed) */
  rowGroups: { rows: number; bytes: number; chunks: Chunk[] }[];
  /** the value of the key `ARROW:schema` (the writer's Arrow schema, base64 of an IPC message), if any */
  arrowSchema: string | null;
}

const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
const utf8 = new TextDecoder();

function leavesOf(schema: TStruct[]): Leaf[] | null {
  if (schema.length === 0) return null;
  const root = schema[0];
  if ((num(root[5]) ?? 0) !== schema.length - 1) return null; // a nested child somewhere
  const out: Leaf[] = [];
  for (const s of schema.slice(1)) {
    if (s[5] !== undefined || s[1] === undefined) return null; // a group
    const rep = num(s[3]) ?? 0;
    if (rep === 2) return null; // repeated
    const lt = s[10] as TStruct | undefined;
    const ltId = lt ? Number(Object.keys(lt)[0]) : undefined;
    out.push({
      name: utf8.decode(s[4] as Uint8Array),
      phys: num(s[1])!,
      typeLength: num(s[2]) ?? 0,
      optional: rep === 1,
      converted: num(s[6]),
      scale: num(s[7]),
      precision: num(s[8]),
      logical: ltId === undefined ? undefined : { id: ltId, value: lt![ltId] as TStruct },
    });
  }
  return out;
}

/** A byte range of the file, when both its offset and its length are given. */
const range = (offset: unknown, length: unknown): [number, number] | undefined =>
  typeof offset === 'number' && typeof length === 'number' ? [offset, length] : undefined;

function parse(meta: TStruct): Footer {
  const leaves = leavesOf((meta[2] ?? []) as TStruct[]);
  const kv = ((meta[5] ?? []) as TStruct[]).find(
    (e) => e[1] instanceof Uint8Array && utf8.decode(e[1]) === 'ARROW:schema',
  );
  const rowGroups = ((meta[4] ?? []) as TStruct[]).map((rg) => ({
    rows: num(rg[3]) ?? 0,
    bytes: num(rg[2]) ?? 0,
    chunks: ((rg[1] ?? []) as TStruct[]).map((cc): Chunk => {
      const md = cc[3] as TStruct | undefined;
      if (!md || cc[1] !== undefined) throw new NotDirect('column chunk in another file or without metadata');
      const data = num(md[9])!,
        dict = num(md[11]);
      const start = dict !== undefined && dict > 0 && dict < data ? dict : data;
      return {
        phys: num(md[1])!,
        codec: num(md[4])!,
        encodings: (md[2] ?? []) as number[],
        numValues: num(md[5])!,
        start,
        size: num(md[7])!,
        columnIndex: range(cc[6], cc[7]),
        offsetIndex: range(cc[4], cc[5]),
      };
    }),
  }));
  const schema = kv?.[2];
  return { leaves, rowGroups, arrowSchema: schema instanceof Uint8Array ? utf8.decode(schema) : null };
}

function readAt(fd: number, pos: number, n: number): Uint8Array {
  const b = Buffer.allocUnsafe(n);
  let got = 0;
  while (got < n) {
    const k = fs.readSync(fd, b, got, n - got, pos + got);
    if (k === 0) throw new NotDirect('file shorter than its footer says');
    got += k;
  }
  return new Uint8Array(b.buffer, b.byteOffset, n); // a plain view: Buffer's subarray costs far more
}

/** The footer of an open file of `size` bytes. */
function readFooter(fd: number, size: number): Footer {
  if (size < 12) throw new NotDirect('too short for Parquet');
  const tail = readAt(fd, size - 8, 8);
  const len = tail[0] | (tail[1] << 8) | (tail[2] << 16) | (tail[3] << 24);
  if (String.fromCharCode(...tail.subarray(4)) !== 'PAR1' || len <= 0 || len > size - 12)
    throw new NotDirect('no Parquet footer');
  return parse(new ThriftReader(readAt(fd, size - 8 - len, len)).struct());
}

const CACHED = 16;
const cache = new Map<string, { footer: Footer; size: number; mtimeMs: number }>();

/** The file opened (the caller closes `fd`) and its footer, from the cache while size and mtime are unchanged. */
export function openFooter(path: string): { fd: number; footer: Footer } {
  const fd = fs.openSync(path, 'r');
  try {
    const st = fs.fstatSync(fd);
    const hit = cache.get(path);
    if (hit && hit.size === st.size && hit.mtimeMs === st.mtimeMs) return { fd, footer: hit.footer };
    const footer = readFooter(fd, st.size);
    cache.delete(path);
    cache.set(path, { footer, size: st.size, mtimeMs: st.mtimeMs });
    if (cache.size > CACHED) cache.delete(cache.keys().next().value!);
    return { fd, footer };
  } catch (e) {
    fs.closeSync(fd);
    throw e;
  }
}

/** The footer alone (the file closed again), or null for a file whose footer cannot be read here. */
export function footerOf(path: string): Footer | null {
  try {
    const { fd, footer } = openFooter(path);
    fs.closeSync(fd);
    return footer;
  } catch {
    return null;
  }
}

export { readAt };
