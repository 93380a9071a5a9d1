// The map side of a hash shuffle: partition ids from the key hashes, then
// one scatter per column straight into one block per partition. Rows with a
// null key never match, so they are spread round-robin instead of piling up
// in one partition.
import {
  type Batch,
  type Column,
  type DataType,
  Int32Scratch,
  batchBytes,
  lanes,
  rowCount,
  rowWidth,
  valuesCtor,
  wordView,
} from '../kernels/column.js';
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
  /**
   * the rows are one partition of a shuffle into this many: partition by the next bits of the hash (grace hash join)
   */
  within?: number;
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
// monomorphic: row i of the task goes to slot dest[i] of the column's region,
// where each partition's rows are contiguous.
function scatter1(dst: Uint8Array, src: Uint8Array, dest: Int32Array, at: number) {
  for (let i = 0; i < src.length; i++) dst[dest[at + i]] = src[i];
}
function scatter2(dst: Uint16Array, src: Uint16Array, dest: Int32Array, at: number) {
  for (let i = 0; i < src.length; i++) dst[dest[at + i]] = src[i];
}
function scatter4(dst: Int32Array, src: Int32Array, dest: Int32Array, at: number) {
  for (let i = 0; i < src.length; i++) dst[dest[at + i]] = src[i];
}
function scatter8(dst: Int32Array, src: Int32Array, dest: Int32Array, at: number) {
  const n = src.length >> 1;
  for (let i = 0; i < n; i++) {
    const d = 2 * dest[at + i];
    dst[d] = src[2 * i];
    dst[d + 1] = src[2 * i + 1];
  }
}
function scatter16(dst: Int32Array, src: Int32Array, dest: Int32Array, at: number) {
  const n = src.length >> 2;
  for (let i = 0; i < n; i++) {
    const d = 4 * dest[at + i],
      s = 4 * i;
    dst[d] = src[s];
    dst[d + 1] = src[s + 1];
    dst[d + 2] = src[s + 2];
    dst[d + 3] = src[s + 3];
  }
}
function ones(dst: Uint8Array, dest: Int32Array, at: number, n: number) {
  for (let i = 0; i < n; i++) dst[dest[at + i]] = 1;
}

const align8 = (n: number) => (n + 7) & ~7;

/**
 * Where the task's shuffle output goes: one SharedArrayBuffer holding every
 * column as one region, each partition's rows contiguous inside it, so all
 * blocks of a map task are one allocation and reach any reduce task without a
 * transfer list or a copy. `start[p]` is partition p's first row in a region.
 */
export interface Layout {
  buf: SharedArrayBuffer;
  start: Int32Array;
  /**
   * per column: byte offsets of its validity, values and (utf8) offsets regions; byte starts of each partition's
   * strings
   */
  cols: { valid: number; values: number; offsets: number; strStart: Float64Array | null }[];
}

export function layout(
  types: DataType[],
  hasValid: boolean[],
  strBytes: (Float64Array | null)[],
  rows: number[],
  total: number,
): Layout {
  const P = rows.length;
  const start = new Int32Array(P);
  for (let p = 1; p < P; p++) start[p] = start[p - 1] + rows[p - 1];
  let at = 0;
  const cols: Layout['cols'] = [];
  for (let c = 0; c < types.length; c++) {
    const t = types[c];
    const valid = hasValid[c] ? at : -1;
    if (hasValid[c]) at += align8(total);
    const values = at;
    let offsets = -1,
      strStart: Float64Array | null = null;
    if (t.id === 'utf8') {
      strStart = new Float64Array(P);
      const nb = strBytes[c]!;
      for (let p = 1; p < P; p++) strStart[p] = strStart[p - 1] + nb[p - 1];
      at += align8(strStart[P - 1] + nb[P - 1]);
      offsets = at;
      at += align8(4 * (total + P));
    } else {
      at += align8(total * rowWidth(t));
    }
    cols.push({ valid, values, offsets, strStart });
  }
  return { buf: new SharedArrayBuffer(Math.max(at, 8)), start, cols };
}

/** Scatter one column of every batch into its region. */
function scatterColumn(
  type: DataType,
  cols: Column[],
  pids: Int32Array,
  dest: Int32Array,
  L: Layout,
  c: number,
  total: number,
  rows: number[],
  unit: boolean,
): void {
  const { buf, start } = L;
  const { valid: vOff, values: off, offsets: oOff, strStart } = L.cols[c];
  if (vOff >= 0) {
    const dst = new Uint8Array(buf, vOff, total);
    let at = 0;
    for (const col of cols) {
      if (col.valid) scatter1(dst, col.valid.subarray(0, col.length), dest, at);
      else ones(dst, dest, at, col.length);
      at += col.length;
    }
  }
  if (type.id === 'utf8') {
    const P = start.length;
    const bytes = new Uint8Array(buf, off, oOff - off);
    const offs = new Int32Array(buf, oOff, total + P);
    if (unit) {
      // one byte a row (scatterRows' unitStrings): a row's byte lands where its row does, and each block's end
      // offsets count 1, 2, ... its rows
      let at = 0;
      for (const col of cols) {
        scatterUnits(bytes, col.values as Uint8Array, col.offsets![0], dest, at, col.length);
        at += col.length;
      }
      for (let p = 0; p < P; p++) countUp(offs, start[p] + p + 1, rows[p]);
      return;
    }
    const bpos = Float64Array.from(strStart!);
    let at = 0;
    for (const col of cols) {
      scatterStrings(bytes, offs, bpos, strStart!, col.offsets!, col.values as Uint8Array, pids, dest, at, col.length);
      at += col.length;
    }
    return;
  }
  const width = rowWidth(type);
  const dst = wordView(new Uint8Array(buf, off, total * width), width, total);
  let at = 0;
  for (const col of cols) {
    const src = wordView(col.values, width, col.length);
    if (width === 1) scatter1(dst, src, dest, at);
    else if (width === 2) scatter2(dst, src, dest, at);
    else if (width === 4) scatter4(dst, src, dest, at);
    else if (width === 8) scatter8(dst, src, dest, at);
    else scatter16(dst, src, dest, at);
    at += col.length;
  }
}

/**
 * Rows at..at+n of the string column (offsets o, bytes src) to their
 * partitions: bytes from bpos[p] on, end offsets relative to sStart[p]. A loop
 * of its own: scatterColumn sees every column type (see gatherMany).
 */
function scatterStrings(
  bytes: Uint8Array,
  offs: Int32Array,
  bpos: Float64Array,
  sStart: Float64Array,
  o: Int32Array,
  src: Uint8Array,
  pids: Int32Array,
  dest: Int32Array,
  at: number,
  n: number,
): void {
  for (let i = 0; i < n; i++) {
    const r = at + i,
      p = pids[r],
      s = o[i],
      e = o[i + 1];
    let b = bpos[p];
    for (let x = s; x < e; x++) bytes[b++] = src[x];
    bpos[p] = b;
    offs[dest[r] + p + 1] = b - sStart[p];
  }
}

/** The one-byte strings of rows at.. (bytes from `o0` on in `src`) to their rows' places. */
function scatterUnits(bytes: Uint8Array, src: Uint8Array, o0: number, dest: Int32Array, at: number, n: number) {
  for (let i = 0; i < n; i++) bytes[dest[at + i]] = src[o0 + i];
}

/** offs[from + k] = k + 1 for k < n. */
function countUp(offs: Int32Array, from: number, n: number) {
  for (let k = 0; k < n; k++) offs[from + k] = k + 1;
}

/** Partition p's rows of column c: views into the layout. */
function blockColumn(type: DataType, L: Layout, c: number, p: number, n: number): Column {
  const { buf, start } = L;
  const { valid: vOff, values: off, offsets: oOff, strStart } = L.cols[c];
  const valid = vOff >= 0 ? new Uint8Array(buf, vOff + start[p], n) : null;
  if (type.id === 'utf8') {
    const offsets = new Int32Array(buf, oOff + 4 * (start[p] + p), n + 1);
    return { type, length: n, values: new Uint8Array(buf, off + strStart![p], offsets[n]), offsets, valid };
  }
  const ctor = valuesCtor(type),
    l = lanes(type);
  return { type, length: n, values: new ctor(buf, off + start[p] * rowWidth(type), n * l), valid };
}

/** Partition ids of every row (into `pid`): high bits of the key hash, or round-robin for null join keys. */
function partitionIds(
  keys: Keys,
  spec: PartitionSpec,
  rr: { next: number },
  pid: Int32Array = new Int32Array(keys.n),
): Int32Array {
  const { hash } = keys;
  const anyNull = spec.spreadNulls ? keys.anyNull : null;
  const P = spec.partitions;
  const W = spec.within ?? 0;
  for (let i = 0; i < keys.n; i++) {
    // within W: the fraction of the hash below its partition's bits (exact: at most 2^48)
    const h = W > 0 ? ((hash[i] >>> 0) * W) % 4294967296 : hash[i];
    pid[i] = anyNull !== null && anyNull[i] ? rr.next++ % P : partitionOf(h, P);
  }
  return pid;
}

/** Hashes and partition ids of a map task's rows: needed only while it partitions them. */
const scratch = new Int32Scratch(2 << 17, 2 << 20);

/**
 * Rows of a map task beyond which the sketch reads every SKETCH_STRIDE-th row. Every 8th,
 * not 4th: at s = 0 (a million keys, nearly every row a new one) the summary's counting was
 * 10% of the map stage's CPU (fact ⋈ dim, 23 ms a run), and a key worth splitting (a share of
 * the rows that fills a task) still shows in thousands of the rows read.
 */
const SKETCH_ALL_ROWS = 32768;
const SKETCH_STRIDE = 8;

/**
 * The heavy hitters of a map task's keys. Large tasks sketch a systematic
 * sample of every 4th row, with counts scaled back: a heavy hitter of the task
 * is a heavy hitter of the sample, and the split task counts its rows exactly.
 */
function sketchKeys(batches: Batch[], keys: Keys[], spec: PartitionSpec): TaskSketch {
  const ss = new SpaceSaving(spec.sketch!);
  // loops, not callbacks: see PairRouter in physical/task.ts (a closure a call loses its compiled code at each full GC)
  let total = 0;
  for (const k of keys) total += k.n;
  const stride = total > SKETCH_ALL_ROWS ? SKETCH_STRIDE : 1;
  for (let b = 0; b < keys.length; b++) ss.addAll(keys[b].hash, keys[b].anyNull, b, stride);
  const s = ss.summary();
  // Only keys certainly above n/m rows are worth naming: a key below that in every
  // map task is below it overall, so the merged summary loses no heavy hitter.
  const floor = Math.max(2, s.n / s.capacity);
  const entries: TaskSketch['entries'] = [];
  for (const e of s.entries) {
    if (e.count - e.error < floor) continue;
    const display: string[] = [];
    for (const c of spec.keys) display.push(cellText(batches[e.batch].columns[c], e.row) ?? 'null');
    entries.push({
      hash: e.hash,
      count: e.count * stride,
      error: e.error * stride,
      match: keyIdentity(keys[e.batch], e.row),
      display,
    });
  }
  return { n: s.n * stride, d: (s.d + floor) * stride, capacity: s.capacity, entries };
}

export function partitionBatches(batches: Batch[], spec: PartitionSpec): Partitioned {
  const P = spec.partitions;
  const rr = { next: spec.nullSeed };
  const total = rowCount(batches);
  const buf = scratch.get(2 * total);
  const pids = buf.subarray(0, total),
    dest = buf.subarray(total, 2 * total);
  let at = 0;
  const keys: Keys[] = [];
  for (const b of batches) {
    // the hashes live in `dest` until the partition ids are known
    const k = buildKeys(b, spec.keys, spec.norms, dest.subarray(at, at + b.length));
    keys.push(k);
    partitionIds(k, spec, rr, pids.subarray(at, at + b.length));
    at += b.length;
  }
  const sketch = spec.sketch ? sketchKeys(batches, keys, spec) : undefined;
  return { ...scatterRows(batches, pids, dest, P), ...(sketch ? { sketch } : {}) };
}

/**
 * Rows of `batches` (in order) into P blocks by `ids` (one per row, 0..P-1),
 * all in one shared buffer; `dest` is scratch space of the same length. A
 * block is null when no row went to it.
 */
export function scatterRows(
  batches: Batch[],
  ids: Int32Array,
  dest: Int32Array,
  P: number,
): Omit<Partitioned, 'sketch'> {
  const total = ids.length;
  const counts = new Int32Array(P);
  countIds(ids, counts, total);
  // loops and pushes, not map callbacks: an array from Array.prototype.map is
  // holey or packed as V8 ran the builtin or inlined it, and every kernel
  // reading it then met two maps (a deoptimization in warm runs)
  const rows: number[] = [];
  for (let p = 0; p < P; p++) rows.push(counts[p]);
  const nCols = batches.length ? batches[0].columns.length : 0;
  const types: DataType[] = [],
    hasValid: boolean[] = [],
    strBytes: (Float64Array | null)[] = [],
    units: boolean[] = [];
  for (let c = 0; c < nCols; c++) {
    const t = batches[0].columns[c].type;
    types.push(t);
    let v = false;
    for (const b of batches) v ||= b.columns[c].valid !== null;
    hasValid.push(v);
    let nbytes: Float64Array | null = null;
    let unit = t.id === 'utf8';
    if (unit) for (const b of batches) unit &&= unitStrings(b.columns[c].offsets!, b.length);
    units.push(unit);
    if (t.id === 'utf8') {
      // strings of one byte each (flags, status codes): a block's bytes are its rows
      nbytes = unit ? Float64Array.from(counts) : new Float64Array(P);
      let r = 0;
      if (!unit) for (const b of batches) r = stringBytes(b.columns[c].offsets!, b.length, ids, r, nbytes);
    }
    strBytes.push(nbytes);
  }
  const L = layout(types, hasValid, strBytes, rows, total);
  destinations(ids, Int32Array.from(L.start), dest, total);
  for (let c = 0; c < nCols; c++) {
    const cols: Column[] = [];
    for (const b of batches) cols.push(b.columns[c]);
    scatterColumn(types[c], cols, ids, dest, L, c, total, rows, units[c]);
  }
  return layoutBlocks(types, L, rows);
}

/** Whether each of the n strings of offsets `o` is one byte long. */
function unitStrings(o: Int32Array, n: number): boolean {
  const o0 = o[0];
  if (o[n] - o0 !== n) return false;
  for (let i = 0; i < n; i++) if (o[i + 1] - o[i] !== 1) return false;
  return true;
}

/** Each partition's block of a filled layout: views into its buffer (null when empty). */
export function layoutBlocks(types: DataType[], L: Layout, rows: number[]): Omit<Partitioned, 'sketch'> {
  const blocks: (Batch | null)[] = [];
  const bytes: number[] = [];
  for (let p = 0; p < rows.length; p++) {
    const n = rows[p];
    let block: Batch | null = null;
    if (n > 0) {
      const columns: Column[] = [];
      for (let c = 0; c < types.length; c++) columns.push(blockColumn(types[c], L, c, p, n));
      block = { length: n, columns };
    }
    blocks.push(block);
    bytes.push(block ? batchBytes(block) : 0);
  }
  return { blocks, rows, bytes };
}

// The loops of scatterRows are functions of their own with nothing after the
// loop but a return: see groupIdsOfRows in agg/joinagg.ts for why.

/** Rows per block (counts[id] += 1 for each row's block id). */
export function countIds(ids: Int32Array, counts: Int32Array, total: number): void {
  for (let i = 0; i < total; i++) counts[ids[i]]++;
}

/**
 * Adds the bytes of a string column's n values to their blocks' totals (rows from r in `ids`); returns the next row.
 */
function stringBytes(o: Int32Array, n: number, ids: Int32Array, r: number, nbytes: Float64Array): number {
  for (let i = 0; i < n; i++) nbytes[ids[r++]] += o[i + 1] - o[i];
  return r;
}

/** Every row's place in the shared buffer: its block's next free place (pos, advanced). */
export function destinations(ids: Int32Array, pos: Int32Array, dest: Int32Array, total: number): void {
  for (let i = 0; i < total; i++) dest[i] = pos[ids[i]]++;
}
