// What a Parquet file's footer says of its columns for planning: the file's rows, and per column its null count
// and, for INT32/INT64 physical columns, the min and max over every row group (a row group without them leaves the
// column without a range). Read without WebAssembly; kept per process while the file's size and mtime are unchanged
// (the SQL planner and the join order read the same files).
import fs from 'node:fs';
import { InputError } from '../errors.js';
import { ThriftReader, type TStruct } from './thrift-read.js';

export interface ColStats {
  nulls: number;
  min?: number;
  max?: number;
}

export interface FileStats {
  rows: number;
  stats: Map<string, ColStats>;
}

const cache = new Map<string, { size: number; mtimeMs: number; s: FileStats }>();

/** The footer's row count and column statistics of one file (an InputError when it is no Parquet file). */
export function footerStats(file: string): FileStats {
  const fd = fs.openSync(file, 'r');
  try {
    const st = fs.fstatSync(fd);
    const hit = cache.get(file);
    if (hit && hit.size === st.size && hit.mtimeMs === st.mtimeMs) return hit.s;
    const size = st.size;
    const tail = Buffer.alloc(8);
    fs.readSync(fd, tail, 0, 8, size - 8);
    const len = tail.readUInt32LE(0);
    if (size < 12 || tail.toString('latin1', 4) !== 'PAR1' || len <= 0 || len > size - 12) {
      throw new InputError(`${file}: not a Parquet file (no footer)`, file);
    }
    const buf = Buffer.alloc(len);
    fs.readSync(fd, buf, 0, len, size - 8 - len);
    const meta = new ThriftReader(new Uint8Array(buf.buffer, buf.byteOffset, len)).struct();
    const stats = new Map<string, ColStats>();
    for (const rg of (meta[4] ?? []) as TStruct[]) {
      for (const cc of (rg[1] ?? []) as TStruct[]) {
        const md = cc[3] as TStruct | undefined;
        if (!md) continue;
        const name = ((md[3] ?? []) as Uint8Array[]).map((b) => Buffer.from(b).toString('utf8')).join('.');
        const s = md[12] as TStruct | undefined;
        const prev = stats.get(name);
        const nulls = typeof s?.[3] === 'number' ? s[3] : Number.NaN;
        const lo = intOf(s?.[6] ?? s?.[2], md[1] as number),
          hi = intOf(s?.[5] ?? s?.[1], md[1] as number);
        stats.set(
          name,
          prev
            ? { nulls: prev.nulls + nulls, min: minOf(prev.min, lo), max: maxOf(prev.max, hi) }
            : { nulls, min: lo, max: hi },
        );
      }
    }
    const s = { rows: Number(meta[3] ?? 0), stats };
    cache.set(file, { size: st.size, mtimeMs: st.mtimeMs, s });
    if (cache.size > 64) cache.delete(cache.keys().next().value!);
    return s;
  } finally {
    fs.closeSync(fd);
  }
}

/** A statistics value of an INT32 (1) or INT64 (2) column as a number. */
function intOf(v: unknown, phys: number): number | undefined {
  if (!(v instanceof Uint8Array)) return undefined;
  const b = Buffer.from(v);
  if (phys === 1 && b.length === 4) return b.readInt32LE(0);
  if (phys === 2 && b.length === 8) return Number(b.readBigInt64LE(0));
  return undefined;
}

export const minOf = (a?: number, b?: number) => (a === undefined || b === undefined ? undefined : Math.min(a, b));
export const maxOf = (a?: number, b?: number) => (a === undefined || b === undefined ? undefined : Math.max(a, b));
