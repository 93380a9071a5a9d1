// The map side of a hash shuffle: partition ids from the key hashes, then
// one scatter per column straight into one block per partition. Rows with a
// null key never match, so they are spread round-robin instead of piling up
// in one partition.
import { type Batch, type Column, type DataType, allocValues, batchBytes } from '../kernels/column.js';
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

/** Scatter one column of every batch into its partitions; rows[p] rows go to partition p. */
function scatterColumn(type: DataType, cols: Column[], pids: Int32Array[], rows: number[]): (Column | null)[] {
  const P = rows.length;
  let valid: Uint8Array[] | null = null;
  if (cols.some((c) => c.valid !== null)) {
    valid = rows.map((n) => new Uint8Array(n));
    const pos = new Int32Array(P);
    cols.forEach((c, k) => (c.valid ? scatter1(valid!, c.valid, pids[k], pos) : ones(valid!, pids[k], pos)));
  }
  if (type.id === 'utf8') {
    const nbytes = new Float64Array(P);
    cols.forEach((c, k) => {
      const o = c.offsets!, pid = pids[k];
      for (let i = 0; i < pid.length; i++) nbytes[pid[i]] += o[i + 1] - o[i];
    });
    const bytes = rows.map((_, p) => new Uint8Array(nbytes[p]));
    const offs = rows.map((n) => new Int32Array(n + 1));
    const pos = new Int32Array(P), bpos = new Float64Array(P);
    cols.forEach((c, k) => {
      const o = c.offsets!, src = c.values as Uint8Array, pid = pids[k];
      for (let i = 0; i < pid.length; i++) {
        const p = pid[i], s = o[i], e = o[i + 1], out = bytes[p];
        let b = bpos[p];
        for (let x = s; x < e; x++) out[b++] = src[x];
        bpos[p] = b;
        offs[p][++pos[p]] = b;
      }
    });
    return rows.map((n, p) => (n === 0 ? null : { type, length: n, values: bytes[p], offsets: offs[p], valid: valid ? valid[p] : null }));
  }
  const values = rows.map((n) => allocValues(type, n));
  const width = allocValues(type, 0).BYTES_PER_ELEMENT;
  const dst = values.map((v) => words(v, width));
  const pos = new Int32Array(P);
  cols.forEach((c, k) => {
    const src = words(c.values, width);
    if (width === 1) scatter1(dst, src, pids[k], pos);
    else if (width === 2) scatter2(dst, src, pids[k], pos);
    else if (width === 4) scatter4(dst, src, pids[k], pos);
    else scatter8(dst, src, pids[k], pos);
  });
  return rows.map((n, p) => (n === 0 ? null : { type, length: n, values: values[p], valid: valid ? valid[p] : null }));
}

/** Partition ids of every row: high bits of the key hash, or round-robin for null join keys. */
export function partitionIds(keys: Keys, spec: PartitionSpec, rr: { next: number }): Int32Array {
  const { hash } = keys;
  const anyNull = spec.spreadNulls ? keys.anyNull : null;
  const P = spec.partitions;
  const pid = new Int32Array(keys.n);
  for (let i = 0; i < keys.n; i++) {
    pid[i] = anyNull !== null && anyNull[i] ? rr.next++ % P : partitionOf(hash[i], P);
  }
  return pid;
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
  const keys = batches.map((b) => buildKeys(b, spec.keys, spec.norms));
  const pids = keys.map((k) => partitionIds(k, spec, rr));
  const counts = new Int32Array(P);
  for (const pid of pids) for (let i = 0; i < pid.length; i++) counts[pid[i]]++;
  const rows = Array.from(counts);
  const nCols = batches.length ? batches[0].columns.length : 0;
  const perCol = Array.from({ length: nCols }, (_, c) =>
    scatterColumn(batches[0].columns[c].type, batches.map((b) => b.columns[c]), pids, rows));
  const blocks: (Batch | null)[] = [];
  const bytes: number[] = [];
  for (let p = 0; p < P; p++) {
    const block = rows[p] > 0 ? { length: rows[p], columns: perCol.map((cs) => cs[p]!) } : null;
    blocks.push(block);
    bytes.push(block ? batchBytes(block) : 0);
  }
  return { blocks, rows, bytes, ...(spec.sketch ? { sketch: sketchKeys(batches, keys, spec) } : {}) };
}
