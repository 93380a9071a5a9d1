// The map side of a hash shuffle: partition ids from the key hashes, then
// one scatter per column straight into one block per partition. Rows with a
// null key never match, so they are spread round-robin instead of piling up
// in one partition.
import { type Batch, type Column, type DataType, type Values, allocValues, batchBytes, rowCount } from '../kernels/column.js';
import { type Keys, buildKeys, keyIdentity, partitionOf } from '../kernels/keys.js';
import { cellText } from '../io/output.js';
import { SpaceSaving } from '../skew/sketch.js';
import type { KeyNorm } from '../plan/bound.js';

export interface PartitionSpec {
  keys: number[];
  norms: KeyNorm[];
  partitions: number;
  /** join keys: null keys never match, so spread their rows round-robin from this partition */
  spreadNulls: boolean;
  nullSeed: number;
  /** keep a Space-Saving summary of the keys with this many counters (0: none) */
  sketch?: number;
}

/** A map task's heavy hitters, with each key's identity and printable value. */
export interface TaskSketch {
  n: number;
  /** a key not listed has at most this many rows in the task */
  d: number;
  capacity: number;
  entries: { hash: number; count: number; error: number; match: string; display: string[] }[];
}

export interface Partitioned {
  /** one block per partition, null when empty */
  blocks: (Batch | null)[];
  rows: number[];
  bytes: number[];
  sketch?: TaskSketch;
}

// Scatters by element width, each over one array type so that the loops stay
// monomorphic; dst[p] is partition p's output, pos[p] its next free slot.
function scatter1(dst: Uint8Array[], src: Uint8Array, pid: Int32Array, pos: Int32Array) {
  for (let i = 0; i < pid.length; i++) { const p = pid[i]; dst[p][pos[p]++] = src[i]; }
}
function scatter2(dst: Uint16Array[], src: Uint16Array, pid: Int32Array, pos: Int32Array) {
  for (let i = 0; i < pid.length; i++) { const p = pid[i]; dst[p][pos[p]++] = src[i]; }
}
function scatter4(dst: Int32Array[], src: Int32Array, pid: Int32Array, pos: Int32Array) {
  for (let i = 0; i < pid.length; i++) { const p = pid[i]; dst[p][pos[p]++] = src[i]; }
}
function scatter8(dst: Int32Array[], src: Int32Array, pid: Int32Array, pos: Int32Array) {
  for (let i = 0; i < pid.length; i++) {
    const p = pid[i], d = 2 * pos[p]++, out = dst[p];
    out[d] = src[2 * i];
    out[d + 1] = src[2 * i + 1];
  }
}
function ones(dst: Uint8Array[], pid: Int32Array, pos: Int32Array) {
  for (let i = 0; i < pid.length; i++) { const p = pid[i]; dst[p][pos[p]++] = 1; }
}

function words(a: ArrayBufferView, width: number): any {
  if (width === 1) return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  if (width === 2) return new Uint16Array(a.buffer, a.byteOffset, a.byteLength / 2);
  return new Int32Array(a.buffer, a.byteOffset, a.byteLength / 4);
}

/** Destination arrays of one column, one per partition (unused entries for empty partitions). */
interface ColumnOut { valid: Uint8Array[] | null; values: Values[]; offsets: Int32Array[] | null }

/** Scatter one column of every batch into its partitions' preallocated arrays. */
function scatterColumn(type: DataType, cols: Column[], pids: Int32Array[], out: ColumnOut): void {
  const P = out.values.length;
  if (out.valid !== null) {
    const valid = out.valid;
    const pos = new Int32Array(P);
    cols.forEach((c, k) => (c.valid ? scatter1(valid, c.valid, pids[k], pos) : ones(valid, pids[k], pos)));
  }
  if (type.id === 'utf8') {
    const bytes = out.values as Uint8Array[], offs = out.offsets!;
    const pos = new Int32Array(P), bpos = new Float64Array(P);
    cols.forEach((c, k) => {
      const o = c.offsets!, src = c.values as Uint8Array, pid = pids[k];
      for (let i = 0; i < pid.length; i++) {
        const p = pid[i], s = o[i], e = o[i + 1], dst = bytes[p];
        let b = bpos[p];
        for (let x = s; x < e; x++) dst[b++] = src[x];
        bpos[p] = b;
        offs[p][++pos[p]] = b;
      }
    });
    return;
  }
  const width = allocValues(type, 0).BYTES_PER_ELEMENT;
  const dst = out.values.map((v) => words(v, width));
  const pos = new Int32Array(P);
  cols.forEach((c, k) => {
    const src = words(c.values, width);
    if (width === 1) scatter1(dst, src, pids[k], pos);
    else if (width === 2) scatter2(dst, src, pids[k], pos);
    else if (width === 4) scatter4(dst, src, pids[k], pos);
    else scatter8(dst, src, pids[k], pos);
  });
}

/**
 * Carves typed arrays out of one SharedArrayBuffer: all blocks a map task
 * writes live in one allocation, and reach any reduce task without a
 * transfer list or a copy. Two passes: measure, then allocate and carve.
 */
class Arena {
  private buf: SharedArrayBuffer | null = null;
  private at = 0;
  alloc<T extends Values | Int32Array | Uint8Array>(ctor: { new(b: SharedArrayBuffer, off: number, n: number): T; BYTES_PER_ELEMENT: number }, n: number): T {
    const off = this.at;
    this.at += (n * ctor.BYTES_PER_ELEMENT + 7) & ~7;
    return this.buf === null ? (null as unknown as T) : new ctor(this.buf, off, n);
  }
  /** End the measuring pass. */
  allocate() { this.buf = new SharedArrayBuffer(Math.max(this.at, 8)); this.at = 0; }
}

type ValuesCtor = { new(b: SharedArrayBuffer, off: number, n: number): Values; BYTES_PER_ELEMENT: number };

/** The destination arrays of every column (measuring pass when the arena is not allocated yet). */
function carve(arena: Arena, types: DataType[], hasValid: boolean[], strBytes: (Float64Array | null)[], rows: number[]): ColumnOut[] {
  return types.map((type, c) => {
    const out: ColumnOut = { valid: hasValid[c] ? [] : null, values: [], offsets: type.id === 'utf8' ? [] : null };
    const ctor = allocValues(type, 0).constructor as unknown as ValuesCtor;
    rows.forEach((n, p) => {
      if (out.valid) out.valid.push(arena.alloc(Uint8Array, n));
      if (type.id === 'utf8') {
        out.values.push(arena.alloc(Uint8Array, n === 0 ? 0 : strBytes[c]![p]));
        out.offsets!.push(arena.alloc(Int32Array, n === 0 ? 0 : n + 1));
      } else {
        out.values.push(arena.alloc(ctor, n));
      }
    });
    return out;
  });
}

/** Partition ids of every row (into `pid`): high bits of the key hash, or round-robin for null join keys. */
export function partitionIds(keys: Keys, spec: PartitionSpec, rr: { next: number }, pid: Int32Array = new Int32Array(keys.n)): Int32Array {
  const { hash } = keys;
  const anyNull = spec.spreadNulls ? keys.anyNull : null;
  const P = spec.partitions;
  for (let i = 0; i < keys.n; i++) {
    pid[i] = anyNull !== null && anyNull[i] ? rr.next++ % P : partitionOf(hash[i], P);
  }
  return pid;
}

/** Hashes and partition ids of a map task's rows: needed only while it partitions them. */
let scratch: Int32Array = new Int32Array(2 << 17);

function scratchOf(rows: number): Int32Array {
  if (scratch.length < 2 * rows) {
    const fresh: Int32Array = new Int32Array(2 * rows);
    if (rows <= 1 << 20) scratch = fresh; // keep it unless one task was unusually large
    return fresh;
  }
  return scratch;
}

/** Rows of a map task beyond which the sketch reads every SKETCH_STRIDE-th row. */
const SKETCH_ALL_ROWS = 32768;
const SKETCH_STRIDE = 4;

/**
 * The heavy hitters of a map task's keys. Large tasks sketch a systematic
 * sample of every 4th row, with counts scaled back: a heavy hitter of the task
 * is a heavy hitter of the sample, and the split task counts its rows exactly.
 */
function sketchKeys(batches: Batch[], keys: Keys[], spec: PartitionSpec): TaskSketch {
  const ss = new SpaceSaving(spec.sketch!);
  const total = keys.reduce((a, k) => a + k.n, 0);
  const stride = total > SKETCH_ALL_ROWS ? SKETCH_STRIDE : 1;
  keys.forEach((k, b) => ss.addAll(k.hash, k.anyNull, b, stride));
  const s = ss.summary();
  // Only keys certainly above n/m rows are worth naming: a key below that in every
  // map task is below it overall, so the merged summary loses no heavy hitter.
  const floor = Math.max(2, s.n / s.capacity);
  return {
    n: s.n * stride, d: (s.d + floor) * stride, capacity: s.capacity,
    entries: s.entries.filter((e) => e.count - e.error >= floor).map((e) => ({
      hash: e.hash, count: e.count * stride, error: e.error * stride,
      match: keyIdentity(keys[e.batch], e.row),
      display: spec.keys.map((c) => cellText(batches[e.batch].columns[c], e.row) ?? 'null'),
    })),
  };
}

export function partitionBatches(batches: Batch[], spec: PartitionSpec): Partitioned {
  const P = spec.partitions;
  const rr = { next: spec.nullSeed };
  const total = rowCount(batches);
  const buf = scratchOf(total);
  let at = 0;
  const keys: Keys[] = [], pids: Int32Array[] = [];
  for (const b of batches) {
    const k = buildKeys(b, spec.keys, spec.norms, buf.subarray(at, at + b.length));
    keys.push(k);
    pids.push(partitionIds(k, spec, rr, buf.subarray(total + at, total + at + b.length)));
    at += b.length;
  }
  const counts = new Int32Array(P);
  for (const pid of pids) for (let i = 0; i < pid.length; i++) counts[pid[i]]++;
  const rows = Array.from(counts);
  const nCols = batches.length ? batches[0].columns.length : 0;
  const types = Array.from({ length: nCols }, (_, c) => batches[0].columns[c].type);
  const hasValid = types.map((_, c) => batches.some((b) => b.columns[c].valid !== null));
  const strBytes = types.map((t, c) => {
    if (t.id !== 'utf8') return null;
    const nbytes = new Float64Array(P);
    batches.forEach((b, k) => {
      const o = b.columns[c].offsets!, pid = pids[k];
      for (let i = 0; i < pid.length; i++) nbytes[pid[i]] += o[i + 1] - o[i];
    });
    return nbytes;
  });
  const arena = new Arena();
  carve(arena, types, hasValid, strBytes, rows);
  arena.allocate();
  const outs = carve(arena, types, hasValid, strBytes, rows);
  outs.forEach((out, c) => scatterColumn(types[c], batches.map((b) => b.columns[c]), pids, out));
  const blocks: (Batch | null)[] = [];
  const bytes: number[] = [];
  for (let p = 0; p < P; p++) {
    const n = rows[p];
    const block = n > 0
      ? {
          length: n,
          columns: outs.map((o, c): Column => ({
            type: types[c], length: n, values: o.values[p], valid: o.valid ? o.valid[p] : null, ...(o.offsets ? { offsets: o.offsets[p] } : {}),
          })),
        }
      : null;
    blocks.push(block);
    bytes.push(block ? batchBytes(block) : 0);
  }
  return { blocks, rows, bytes, ...(spec.sketch ? { sketch: sketchKeys(batches, keys, spec) } : {}) };
}
