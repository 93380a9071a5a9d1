// The TPC-H generator's columns (bench/tpch.ts): Arrow data made from typed
// arrays (int32, dates, DECIMAL(15,2) from cents), strings from a pool of
// distinct values picked by index, and chunks of columns streamed to one
// Parquet file through parquet-wasm.
import fs from 'node:fs';
import { Writable } from 'node:stream';
import * as arrow from 'apache-arrow';
import * as pw from 'parquet-wasm';

export type Cols = [string, arrow.Data][];
export const int32 = (v: Int32Array) => arrow.makeData({ type: new arrow.Int32(), length: v.length, data: v });
export const date = (v: Int32Array) => arrow.makeData({ type: new arrow.DateDay(), length: v.length, data: v });
/** DECIMAL(15,2) from cents: 128-bit little-endian two's complement words. */
export function money(cents: Int32Array): arrow.Data {
  const w = new Uint32Array(cents.length * 4);
  for (let i = 0; i < cents.length; i++) {
    const v = cents[i],
      hi = v < 0 ? 0xffffffff : 0;
    w[4 * i] = v >>> 0;
    w[4 * i + 1] = hi;
    w[4 * i + 2] = hi;
    w[4 * i + 3] = hi;
  }
  return arrow.makeData({ type: new arrow.Decimal(2, 15, 128), length: cents.length, data: w });
}

/** Distinct strings encoded once; a column picks them by index without a string per row. */
export class Pool {
  readonly bytes: Uint8Array;
  readonly offsets: Int32Array;
  constructor(readonly strings: string[]) {
    const enc = new TextEncoder();
    const parts = strings.map((s) => enc.encode(s));
    this.offsets = new Int32Array(parts.length + 1);
    parts.forEach((p, i) => {
      this.offsets[i + 1] = this.offsets[i] + p.length;
    });
    this.bytes = new Uint8Array(this.offsets[parts.length]);
    parts.forEach((p, i) => this.bytes.set(p, this.offsets[i]));
  }
  get size() {
    return this.strings.length;
  }
  column(idx: Int32Array): arrow.Data {
    const n = idx.length,
      off = new Int32Array(n + 1),
      from = this.offsets,
      bytes = this.bytes;
    for (let i = 0; i < n; i++) off[i + 1] = off[i] + from[idx[i] + 1] - from[idx[i]];
    const data = new Uint8Array(off[n]);
    // a byte loop: most strings are a few bytes, where a subarray per row costs more than the copy
    for (let i = 0, o = 0; i < n; i++)
      for (let k = from[idx[i]], e = from[idx[i] + 1]; k < e; k++) data[o++] = bytes[k];
    return arrow.makeData({ type: new arrow.Utf8(), length: n, valueOffsets: off, data });
  }
}
export const utf8 = (strings: string[]) => new Pool(strings).column(Int32Array.from(strings, (_, i) => i));

/** Write chunks of columns to one Parquet file, a row group at most every `rowGroupSize` rows. */
export async function writeParquet(file: string, chunks: Iterable<Cols>, rowGroupSize: number): Promise<void> {
  const it = chunks[Symbol.iterator]();
  const batches = new ReadableStream({
    pull(c) {
      const r = it.next();
      if (r.done) {
        c.close();
        return;
      }
      const t = new arrow.Table(Object.fromEntries(r.value.map(([n, d]) => [n, arrow.makeVector(d)])));
      // free the table at once: its batches hold their own references, and a table left to the
      // garbage collector keeps every chunk's data in the module's memory until the end
      const table = pw.Table.fromIPCStream(arrow.tableToIPC(t, 'stream'));
      const parts = table.recordBatches();
      table.free();
      for (const b of parts) c.enqueue(b);
    },
  });
  const props = new pw.WriterPropertiesBuilder()
    .setCompression(pw.Compression.SNAPPY)
    .setMaxRowGroupSize(rowGroupSize)
    .build();
  const tmp = `${file}.tmp`;
  try {
    await (await pw.transformParquetStream(batches, props)).pipeTo(Writable.toWeb(fs.createWriteStream(tmp)));
    fs.renameSync(tmp, file);
  } finally {
    fs.rmSync(tmp, { force: true });
  }
}
