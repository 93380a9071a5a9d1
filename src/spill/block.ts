// Spill files: shuffle blocks written as their raw column buffers, and read
// back by the task that needs them. A spilled block travels between threads
// as a Batch with no columns and a `spill` reference (file, offset, layout);
// the task reading it replaces it with the real batch before it runs.
import fs from 'node:fs';
import { MessageChannel } from 'node:worker_threads';
import {
  type Batch,
  type Column,
  type DataType,
  batchBytes,
  buffersOf,
  lanes,
  valuesCtor,
  viewBatch,
} from '../kernels/column.js';

/** Where a column's regions lie inside a spilled block (byte offsets from the block's start; -1: absent). */
interface SpilledColumn {
  type: DataType;
  valid: number;
  values: number;
  valuesBytes: number;
  offsets: number;
}

interface SpillRef {
  file: string;
  /** byte offset of the block in the file, and its size there */
  offset: number;
  bytes: number;
  columns: SpilledColumn[];
  /** a part of the block: rows [from, to) of its `of` rows (the whole block is read back, then viewed) */
  rows?: { from: number; to: number; of: number };
}

/** A block that lives in a spill file: `columns` is empty until it is read back. */
export type SpilledBatch = Batch & { spill: SpillRef };

export const isSpilled = (b: Batch): b is SpilledBatch => (b as SpilledBatch).spill !== undefined;

/** Bytes a block occupies: in memory, or in its spill file (a part: its share of the rows). */
export const blockBytes = (b: Batch): number => {
  if (!isSpilled(b)) return batchBytes(b);
  const r = b.spill.rows;
  return r ? (b.spill.bytes * (r.to - r.from)) / Math.max(1, r.of) : b.spill.bytes;
};

/** Rows [from, to) of a spilled block: a stand-in read back by the task that reads it. */
export function sliceSpilled(b: SpilledBatch, from: number, to: number): SpilledBatch {
  const base = b.spill.rows?.from ?? 0;
  const of = b.spill.rows?.of ?? b.length;
  return { length: to - from, columns: [], spill: { ...b.spill, rows: { from: base + from, to: base + to, of } } };
}

const align8 = (n: number) => (n + 7) & ~7;
const ZEROS = new Uint8Array(8);
const bytesOf = (a: ArrayBufferView, from = 0, to = a.byteLength) =>
  new Uint8Array(a.buffer, a.byteOffset + from, to - from);

/**
 * The buffers of a block in file order, each region padded to 8 bytes so that
 * every typed array read back is aligned; and where each region starts.
 */
function encode(b: Batch): { parts: Uint8Array[]; bytes: number; columns: SpilledColumn[] } {
  const parts: Uint8Array[] = [];
  let at = 0;
  const put = (x: Uint8Array) => {
    const start = at;
    parts.push(x);
    at += x.byteLength;
    const pad = align8(at) - at;
    if (pad) {
      parts.push(ZEROS.subarray(0, pad));
      at += pad;
    }
    return start;
  };
  const columns = b.columns.map((c: Column): SpilledColumn => {
    const valid = c.valid ? put(bytesOf(c.valid, 0, c.length)) : -1;
    if (c.type.id === 'utf8') {
      const o = c.offsets!;
      const values = put(bytesOf(c.values, o[0], o[c.length]));
      // offsets as written start at 0
      const rebased = o[0] === 0 ? o.subarray(0, c.length + 1) : o.subarray(0, c.length + 1).map((x) => x - o[0]);
      return { type: c.type, valid, values, valuesBytes: o[c.length] - o[0], offsets: put(bytesOf(rebased)) };
    }
    // a wide decimal has two 64-bit lanes per value
    const n = c.length * lanes(c.type) * valuesCtor(c.type).BYTES_PER_ELEMENT;
    return { type: c.type, valid, values: put(bytesOf(c.values, 0, n)), valuesBytes: n, offsets: -1 };
  });
  return { parts, bytes: at, columns };
}

/**
 * Append blocks to an open spill file at `position`; null blocks stay null.
 * Returns the spilled stand-ins and the bytes written.
 */
/**
 * Give the memory of blocks nobody reads any more back now, not at some later garbage collection: their buffers
 * (ArrayBuffers, not shared memory) are moved into a message that is dropped unread, which frees them at once. Only
 * for blocks whose buffers nothing else views: a worker's task output the coordinator owns alone (its buffers were
 * transferred from the worker). Such buffers are invisible to the main thread's V8 (`process.memoryUsage()` counts
 * none of them), which therefore never collects garbage for their sake: three concurrent 1 GB queries kept hundreds
 * of MB of spilled and finished shuffle blocks in RSS between major collections (docs/design/memory.md).
 */
export function freeBlocks(blocks: Iterable<Batch | null>): void {
  const buffers = [...buffersOf(notSpilled(blocks))];
  if (buffers.length === 0) return;
  const { port1, port2 } = new MessageChannel();
  try {
    port1.postMessage(null, buffers);
  } catch {
    // a buffer that cannot be moved (a WebAssembly module's memory): left to the collector
  } finally {
    port1.close();
    port2.close();
  }
}

function* notSpilled(blocks: Iterable<Batch | null>): Iterable<Batch> {
  for (const b of blocks) if (b && !isSpilled(b)) yield b;
}

export function writeBlocks(
  fd: number,
  file: string,
  position: number,
  blocks: (Batch | null)[],
): { blocks: (Batch | null)[]; bytes: number } {
  let at = position;
  const out = blocks.map((b): Batch | null => {
    if (b === null) return null;
    const { parts, bytes, columns } = encode(b);
    let written = 0;
    // writev takes at most IOV_MAX buffers at once and may write less than asked
    for (let i = 0; i < parts.length; i += 512) {
      const chunk = parts.slice(i, i + 512);
      const want = chunk.reduce((s, p) => s + p.byteLength, 0);
      let n = fs.writevSync(fd, chunk, at + written);
      while (n < want) n += fs.writeSync(fd, Buffer.concat(chunk).subarray(n), 0, want - n, at + written + n);
      written += want;
    }
    const ref: SpillRef = { file, offset: at, bytes, columns };
    at += bytes;
    const stub: SpilledBatch = { length: b.length, columns: [], spill: ref };
    return stub;
  });
  return { blocks: out, bytes: at - position };
}

/** Read one spilled block back into memory (its own ArrayBuffer, transferable). */
function readBlock(fd: number, b: SpilledBatch): Batch {
  const { offset, bytes, columns } = b.spill;
  const buf = new ArrayBuffer(Math.max(bytes, 8));
  const view = new Uint8Array(buf, 0, bytes);
  let got = 0;
  while (got < bytes) {
    const n = fs.readSync(fd, view, got, bytes - got, offset + got);
    if (n === 0) throw new Error(`spill file ${b.spill.file}: ends before its block at ${offset}`);
    got += n;
  }
  const n = b.spill.rows?.of ?? b.length;
  const whole: Batch = {
    length: n,
    columns: columns.map((c): Column => {
      const valid = c.valid >= 0 ? new Uint8Array(buf, c.valid, n) : null;
      if (c.type.id === 'utf8') {
        return {
          type: c.type,
          length: n,
          values: new Uint8Array(buf, c.values, c.valuesBytes),
          offsets: new Int32Array(buf, c.offsets, n + 1),
          valid,
        };
      }
      return { type: c.type, length: n, values: new (valuesCtor(c.type))(buf, c.values, n * lanes(c.type)), valid };
    }),
  };
  return b.spill.rows ? viewBatch(whole, b.spill.rows.from, b.spill.rows.to) : whole;
}

/** Read back every spilled block of a list (one open per file); counts the bytes read. */
export function readBack(blocks: Batch[], counter: { bytes: number }): Batch[] {
  if (!blocks.some(isSpilled)) return blocks;
  const fds = new Map<string, number>();
  try {
    return blocks.map((b) => {
      if (!isSpilled(b)) return b;
      let fd = fds.get(b.spill.file);
      if (fd === undefined) {
        fd = fs.openSync(b.spill.file, 'r');
        fds.set(b.spill.file, fd);
      }
      counter.bytes += b.spill.bytes;
      return readBlock(fd, b);
    });
  } finally {
    for (const fd of fds.values()) fs.closeSync(fd);
  }
}

/** Consecutive blocks packed into chunks of about `target` bytes (at least one chunk). */
export function packBlocks(blocks: Batch[], target: number): Batch[][] {
  const chunks: Batch[][] = [[]];
  let bytes = 0;
  for (const b of blocks) {
    const n = blockBytes(b);
    if (bytes > 0 && bytes + n > target) {
      chunks.push([]);
      bytes = 0;
    }
    chunks[chunks.length - 1].push(b);
    bytes += n;
  }
  return chunks;
}
