// A window task's sort keys packed into one number a row when they are integers (ints, dates, int64 and one-lane
// decimals whose values stay below 2^53): each key as its rank within the task's [min, max] (descending: from the
// top; nulls one more value where the key puts them), mixed-radix, the product of the ranges below 2^53 (or the
// order keys' alone, when the partitions are counted). The rows are grouped by partition by counting,
// each partition's rows sorted by the number (not at all when they arrive in order; by insertion when few; else
// radix), and the partitions and peers read off the sorted numbers: no comparison of columns, no key gathered to
// find them. Pure; window/source.ts sorts by the columns (kernels/sort.ts) when a key does not pack.
import { type Batch, type Column, lanes, rowCount } from '../../kernels/column.js';
import type { SortKey } from '../../kernels/sort.js';
import { CutShape, type Shape } from './bounds.js';
import { scratchF64, scratchI32, scratchZeroU8 } from './scratch.js';

const TWO32 = 4294967296;
const LIMIT = 2 ** 53;

/** The packed keys of a task's rows: a number a row, below 2^53, whose order is the keys'. */
export interface Packed {
  codes: Float64Array;
  /** the order keys' part of a number: floor(number / orderSpan) is the row's partition, below partSpan (when the
   * number holds the partition: not always where `part` is set, see packKeys) */
  orderSpan: number;
  partSpan: number;
  /** each row's partition (floor(number / orderSpan)), when the partitions are few enough to group by counting */
  part: Int32Array | null;
}

/**
 * A column's values as numbers when each is an integer below 2^53 in magnitude (integers, dates, decimals of one
 * lane: their scaled integers; a view when they already are numbers, 64-bit ones read as 32-bit words without a
 * bigint a row), else null: a packed sort key, and a window sum that stays exact in a double (functions.ts).
 */
export function exactIntegers(c: Column): ArrayLike<number> | null {
  const v = c.values,
    n = c.length;
  if (c.type.id === 'float32' || c.type.id === 'float64' || c.type.id === 'utf8' || c.type.id === 'bool') return null;
  if (v instanceof BigInt64Array) {
    if (lanes(c.type) === 2) return null;
    const w = new Int32Array(v.buffer, v.byteOffset, 2 * n);
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const hi = w[2 * i + 1];
      if (hi >= 0x200000 || hi < -0x200000) return null;
      out[i] = hi * TWO32 + (w[2 * i] >>> 0);
    }
    return out;
  }
  if (
    v instanceof Int32Array ||
    v instanceof Int16Array ||
    v instanceof Int8Array ||
    v instanceof Uint32Array ||
    v instanceof Uint16Array ||
    v instanceof Uint8Array
  )
    return v.length === n ? v : v.subarray(0, n);
  return null;
}

/** Whether a task's rows are grouped by partition by counting (else the whole number is sorted at once). */
const countable = (partSpan: number, n: number) => partSpan > 1 && partSpan <= Math.max(65536, 2 * n);

// Each loop below is a function of its own, called with one kind of typed array: the first task of a run reaches
// these cold, and a function holding several loops is compiled (on the thread, --no-concurrent-recompilation)
// for the first loop on the stack, then thrown away at the next loop it has no type feedback for, and compiled
// again. One loop a function compiles once. 64-bit keys are read as their 32-bit words in place: no number array
// made a key.

/** A key column's values read as numbers, in the form its loops take: int32s, int64 words, or numbers (the rest). */
type KeyValues = { i32: Int32Array } | { words: Int32Array } | { x: ArrayLike<number> };

/** A key's values (null: not integers below 2^53 in magnitude), and its least and greatest valid value. */
function keyValues(c: Column, n: number): { v: KeyValues; lo: number; hi: number; nulls: boolean } | null {
  const v = c.values;
  if (c.valid === null && v instanceof Int32Array) {
    const hi = rangeI32(v, n);
    return { v: { i32: v }, lo: least, hi, nulls: false };
  }
  if (c.valid === null && v instanceof BigInt64Array && lanes(c.type) === 1) {
    const words = new Int32Array(v.buffer, v.byteOffset, 2 * n);
    const hi = rangeWords(words, n);
    return hi !== hi ? null : { v: { words }, lo: least, hi, nulls: false };
  }
  const x = exactIntegers(c);
  if (x === null) return null;
  anyNull = false;
  const hi = c.valid === null ? minMax(x, n) : minMaxValid(x, c.valid, n);
  return { v: { x }, lo: least, hi, nulls: anyNull };
}

// The range loops return their greatest value and leave the least (and whether a value was null) here: after a
// loop compiled while it ran (on-stack replacement) nothing but a return of a local, or a store to a module variable
// (no type feedback either needs), or V8 keeps entering that loop code and deoptimizing after it (see
// groupIdsOfRows in agg/joinagg.ts): an array returned did, at every call.
let least = 0;
let anyNull = false;

/**
 * The sort keys (partition keys ascending, then the order keys) of the rows of `batches` (one after another, as if
 * concatenated) packed, or null when they do not pack (`apart` false: nor when only the order keys would, apart
 * from the counted partitions). Read from each batch in place: a key column is not copied into one array first,
 * and a batch's numbers are built while they stay in the caches.
 */
export function packKeys(
  batches: readonly Batch[],
  partitionBy: number[],
  orderBy: SortKey[],
  apart = true,
): Packed | null {
  const keys = [...partitionBy.map((col) => ({ col, desc: false, nullsFirst: false })), ...orderBy];
  // per batch, per key: its values
  const vals: KeyValues[][] = batches.map(() => []);
  // per key: its range, and a row's rank as base + sign * value (a null's: nullCode)
  const spans: number[] = [],
    bases: number[] = [],
    signs: number[] = [],
    nullCodes: number[] = [];
  let orderSpan = 1,
    partSpan = 1;
  for (let k = 0; k < keys.length; k++) {
    let lo0 = Infinity,
      hi0 = -Infinity,
      nulls = false;
    for (let j = 0; j < batches.length; j++) {
      const key = keyValues(batches[j].columns[keys[k].col], batches[j].length);
      if (key === null) return null;
      vals[j].push(key.v);
      if (key.lo < lo0) lo0 = key.lo;
      if (key.hi > hi0) hi0 = key.hi;
      if (key.nulls) nulls = true;
    }
    const [lo, hi] = lo0 > hi0 ? [0, 0] : [lo0, hi0]; // every row null
    const span = hi - lo + 1 + (nulls ? 1 : 0);
    if (k < partitionBy.length) partSpan *= span;
    else orderSpan *= span;
    if (partSpan >= LIMIT || orderSpan >= LIMIT) return null;
    const { desc, nullsFirst } = keys[k];
    spans.push(span);
    // ascending: x - lo; descending: hi - x; one more past a null placed first
    bases.push((desc ? hi : -lo) + (nulls && nullsFirst ? 1 : 0));
    signs.push(desc ? -1 : 1);
    nullCodes.push(nullsFirst ? 0 : span - 1);
  }
  const n = rowCount(batches);
  // the partition keys' number is written out as each row's partition on the way, when it will be counted
  const counted = partitionBy.length > 0 && countable(partSpan, n);
  // partitions grouped by counting need not be in the number: past 2^53 together, the number holds the order keys
  // alone and `part` the partition (JCC-H SF 10's orders by customer, then date and order key: 2^57 together,
  // 2^37 the order keys; the window tasks of lag gaps sorted by the columns took 2.5 times as long a row)
  const orderOnly = partSpan * orderSpan >= LIMIT;
  if (orderOnly && !(counted && apart)) return null;
  // each key's rank added below the keys before it (codes holds a reused slot's old values: zeroed first)
  const codes = scratchF64('codes', n).fill(0);
  const part = counted ? scratchI32('part', n) : null;
  let at = 0;
  for (let j = 0; j < batches.length; j++) {
    const m = batches[j].length;
    for (let k = 0; k < keys.length; k++) {
      const v = vals[j][k],
        span = spans[k],
        base = bases[k],
        sign = signs[k];
      if ('i32' in v) addI32(codes, at, v.i32, m, span, base, sign);
      else if ('words' in v) addWords(codes, at, v.words, m, span, base, sign);
      else addNumbers(codes, at, v.x, batches[j].columns[keys[k].col].valid, m, span, base, sign, nullCodes[k]);
      if (part !== null && k === partitionBy.length - 1) {
        truncate(codes, part, at, m);
        if (orderOnly) codes.fill(0, at, at + m);
      }
    }
    at += m;
  }
  return { codes, orderSpan, partSpan, part };
}

/** The greatest of v[0, n) (-Infinity when n is 0); the least into `least` (Infinity). */
function rangeI32(v: Int32Array, n: number): number {
  let lo = Infinity,
    hi = -Infinity;
  for (let i = 0; i < n; i++) {
    const x = v[i];
    if (x < lo) lo = x;
    if (x > hi) hi = x;
  }
  least = lo;
  return hi;
}

/** The same for the int64s whose words are w[0, 2n); NaN when one is 2^53 or more in magnitude. */
function rangeWords(w: Int32Array, n: number): number {
  let lo = Infinity,
    hi = -Infinity;
  for (let i = 0; i < n; i++) {
    const h = w[2 * i + 1];
    if (h >= 0x200000 || h < -0x200000) return Number.NaN;
    const x = h * TWO32 + (w[2 * i] >>> 0);
    if (x < lo) lo = x;
    if (x > hi) hi = x;
  }
  least = lo;
  return hi;
}

/** codes[at + i] = codes[at + i] * span + base + sign * v[i], for i below n. */
function addI32(codes: Float64Array, at: number, v: Int32Array, n: number, span: number, base: number, sign: number) {
  for (let i = 0; i < n; i++) codes[at + i] = codes[at + i] * span + (base + sign * v[i]);
}

/** The same for the int64s of words w[2i], w[2i + 1]. */
function addWords(codes: Float64Array, at: number, w: Int32Array, n: number, span: number, base: number, sign: number) {
  for (let i = 0; i < n; i++)
    codes[at + i] = codes[at + i] * span + (base + sign * (w[2 * i + 1] * TWO32 + (w[2 * i] >>> 0)));
}

/** The same for numbers, a null row's rank `nullCode`. */
function addNumbers(
  codes: Float64Array,
  at: number,
  x: ArrayLike<number>,
  valid: Uint8Array | null,
  n: number,
  span: number,
  base: number,
  sign: number,
  nullCode: number,
): void {
  for (let i = 0; i < n; i++)
    codes[at + i] = codes[at + i] * span + (valid !== null && valid[i] === 0 ? nullCode : base + sign * x[i]);
}

/** part[at + i] = codes[at + i] (an integer below 2^31), for i below n. */
function truncate(codes: Float64Array, part: Int32Array, at: number, n: number): void {
  for (let i = at; i < at + n; i++) part[i] = codes[i];
}

/** The greatest of x[0, n) (-Infinity when n is 0); the least into `least`. */
function minMax(x: ArrayLike<number>, n: number): number {
  let lo = Infinity,
    hi = -Infinity;
  for (let i = 0; i < n; i++) {
    const v = x[i];
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  least = lo;
  return hi;
}

/** The greatest of the valid x[0, n); the least into `least`, whether any is null into `anyNull`. */
function minMaxValid(x: ArrayLike<number>, valid: Uint8Array, n: number): number {
  let lo = Infinity,
    hi = -Infinity,
    nulls = false;
  for (let i = 0; i < n; i++) {
    if (valid[i] === 0) {
      nulls = true;
      continue;
    }
    const v = x[i];
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  least = lo;
  anyNull = nulls;
  return hi;
}

/** Segments up to this long are sorted by insertion. */
const INSERTION_ROWS = 48;

/**
 * The row order of the packed numbers (stable: ties keep the input order), and the numbers in that order. Rows are
 * first grouped by partition (a counting sort on floor(number / orderSpan), when the partitions are few enough to
 * count), then each partition's rows sorted unless they already are (rows often arrive in their order keys' order,
 * as a file written in it is read): by insertion when few, else by an LSD radix sort of the number. `starts`: where
 * each partition's rows start in the order (partSpan + 1 of them, the last n), when they were grouped by counting.
 */
export function sortPacked(p: Packed): { order: Int32Array; sorted: Float64Array; starts: Int32Array | null } {
  const { codes, partSpan, part } = p;
  const n = codes.length;
  const order = scratchI32('order', n);
  const sorted = scratchF64('sorted', n);
  if (part === null) {
    identity(order, n);
    sorted.set(codes);
    sortSegment(order, sorted, 0, n);
    return { order, sorted, starts: null };
  }
  // at[q]: partition q's rows end there, then (moved back a row at a time) start there; at[partSpan] = n
  const at = scratchI32('partAt', partSpan + 1).fill(0);
  countParts(part, at, n);
  sumCounts(at, partSpan + 1);
  scatterParts(part, codes, at, order, sorted, n);
  sortSegments(at, partSpan, order, sorted);
  return { order, sorted, starts: at };
}

function identity(order: Int32Array, n: number): void {
  for (let i = 0; i < n; i++) order[i] = i;
}

/** at[q] = rows of partition q. */
function countParts(part: Int32Array, at: Int32Array, n: number): void {
  for (let i = 0; i < n; i++) at[part[i]]++;
}

/** at[q] = at[0] + ... + at[q] (each partition's end). */
function sumCounts(at: Int32Array, m: number): void {
  for (let q = 1; q < m; q++) at[q] += at[q - 1];
}

/** Rows moved to their partition's place, from the last (so that each partition keeps the input order). */
function scatterParts(
  part: Int32Array,
  codes: Float64Array,
  at: Int32Array,
  order: Int32Array,
  sorted: Float64Array,
  n: number,
): void {
  for (let i = n - 1; i >= 0; i--) {
    const to = --at[part[i]];
    order[to] = i;
    sorted[to] = codes[i];
  }
}

/** Each partition's rows [at[q], at[q + 1]) sorted. */
function sortSegments(at: Int32Array, partSpan: number, order: Int32Array, sorted: Float64Array): void {
  for (let q = 0; q < partSpan; q++) {
    const a = at[q],
      b = at[q + 1];
    if (b - a > 1) sortSegment(order, sorted, a, b);
  }
}

/** Rows [a, b) of `sorted` (and `order` with them) sorted, stably. */
function sortSegment(order: Int32Array, sorted: Float64Array, a: number, b: number): void {
  if (inOrder(sorted, a, b)) return;
  if (b - a <= INSERTION_ROWS) insertionSort(order, sorted, a, b);
  else radixSegment(order, sorted, a, b);
}

function inOrder(sorted: Float64Array, a: number, b: number): boolean {
  for (let i = a + 1; i < b; i++) if (sorted[i] < sorted[i - 1]) return false;
  return true;
}

function insertionSort(order: Int32Array, sorted: Float64Array, a: number, b: number): void {
  for (let i = a + 1; i < b; i++) {
    const x = sorted[i],
      o = order[i];
    let j = i - 1;
    for (; j >= a && sorted[j] > x; j--) {
      sorted[j + 1] = sorted[j];
      order[j + 1] = order[j];
    }
    sorted[j + 1] = x;
    order[j + 1] = o;
  }
}

/** Digit counts of the 16-bit passes, reused by every sort on the thread. */
const COUNTS16 = new Int32Array(65536);
const COUNTS8 = new Int32Array(256);

/** An LSD radix sort of rows [a, b) by their numbers less the segment's least: 8-bit digits for a short one, else 16. */
function radixSegment(order: Int32Array, sorted: Float64Array, a: number, b: number): void {
  const m = b - a;
  const min = segmentMin(sorted, a, b);
  const bits = Math.ceil(Math.log2(segmentMax(sorted, a, b) - min + 1));
  const digit = m < 4096 ? 8 : 16;
  const mask = (1 << digit) - 1;
  const count = digit === 16 ? COUNTS16 : COUNTS8;
  let key = scratchF64('radixKey', m),
    idx = scratchI32('radixIdx', m),
    keyT = scratchF64('radixKeyT', m),
    idxT = scratchI32('radixIdxT', m);
  loadSegment(sorted, order, a, m, min, key, idx);
  for (let shift = 0; shift < bits; shift += digit) {
    const scale = 2 ** shift;
    count.fill(0);
    countDigits(key, m, scale, mask, count);
    startsOf(count, mask + 1);
    moveByDigit(key, idx, keyT, idxT, m, scale, mask, count);
    [key, keyT] = [keyT, key];
    [idx, idxT] = [idxT, idx];
  }
  storeSegment(sorted, order, a, m, min, key, idx);
}

function segmentMin(x: Float64Array, a: number, b: number): number {
  let min = Infinity;
  for (let i = a; i < b; i++) if (x[i] < min) min = x[i];
  return min;
}

function segmentMax(x: Float64Array, a: number, b: number): number {
  let max = -Infinity;
  for (let i = a; i < b; i++) if (x[i] > max) max = x[i];
  return max;
}

function loadSegment(
  sorted: Float64Array,
  order: Int32Array,
  a: number,
  m: number,
  min: number,
  key: Float64Array,
  idx: Int32Array,
): void {
  for (let i = 0; i < m; i++) {
    key[i] = sorted[a + i] - min;
    idx[i] = order[a + i];
  }
}

function storeSegment(
  sorted: Float64Array,
  order: Int32Array,
  a: number,
  m: number,
  min: number,
  key: Float64Array,
  idx: Int32Array,
): void {
  for (let i = 0; i < m; i++) {
    sorted[a + i] = key[i] + min;
    order[a + i] = idx[i];
  }
}

function countDigits(key: Float64Array, m: number, scale: number, mask: number, count: Int32Array): void {
  for (let i = 0; i < m; i++) count[(key[i] / scale) & mask]++;
}

/** count[d] = count[0] + ... + count[d - 1] (each digit's first place). */
function startsOf(count: Int32Array, digits: number): void {
  let sum = 0;
  for (let d = 0; d < digits; d++) {
    const c = count[d];
    count[d] = sum;
    sum += c;
  }
}

function moveByDigit(
  key: Float64Array,
  idx: Int32Array,
  keyT: Float64Array,
  idxT: Int32Array,
  m: number,
  scale: number,
  mask: number,
  count: Int32Array,
): void {
  for (let i = 0; i < m; i++) {
    const x = key[i],
      at = count[(x / scale) & mask]++;
    keyT[at] = x;
    idxT[at] = idx[i];
  }
}

/**
 * The shape of rows sorted by their packed numbers: a partition is floor(number / orderSpan), or the counting sort's
 * `starts` say where each begins; peers are equal numbers within a partition. With the partitions' `starts` from the
 * counting sort, or without partition keys, a PackedShape; else the partitions' first rows found by division.
 */
export function shapeOfPacked(
  sorted: Float64Array,
  orderSpan: number,
  partitioned: boolean,
  ordered: boolean,
  starts: Int32Array | null = null,
): Shape {
  const n = sorted.length;
  if (starts !== null || !partitioned) return new PackedShape(n, sorted, starts);
  const cut = scratchZeroU8('partCut', n);
  if (n > 0) cut[0] = 1;
  partitionCuts(sorted, orderSpan, cut, n);
  const peers = scratchZeroU8('peerCut', n);
  peers.set(cut);
  if (ordered) peerCuts(sorted, peers, n);
  return new CutShape(n, cut, peers, true);
}

/**
 * A shape read off the sorted numbers and the partitions' starts (null: one partition), each bound array made when
 * a function first reads it (lag and row_number read only the partitions': no pass over the numbers for peers), in
 * the thread's scratch slots (valid until the next task's shape).
 */
class PackedShape implements Shape {
  #partStart: Int32Array | null = null;
  #partEnd: Int32Array | null = null;
  #peerStart: Int32Array | null = null;
  #peerEnd: Int32Array | null = null;
  constructor(
    readonly n: number,
    private readonly sorted: Float64Array,
    private readonly starts: Int32Array | null,
  ) {}
  get partStart(): Int32Array {
    this.#partStart ??= this.runs('partStart', false);
    return this.#partStart;
  }
  get partEnd(): Int32Array {
    this.#partEnd ??= this.runs('partEnd', true);
    return this.#partEnd;
  }
  private runs(slot: 'partStart' | 'partEnd', end: boolean): Int32Array {
    const out = scratchI32(slot, this.n);
    if (this.starts === null) out.fill(end ? this.n : 0);
    else fillRuns(this.starts, out, end);
    return out;
  }
  // peers end at a partition's edge too: two partitions' rows may hold one number where it is the order keys' alone
  get peerStart(): Int32Array {
    this.#peerStart ??= this.peers('peerStart', false);
    return this.#peerStart;
  }
  get peerEnd(): Int32Array {
    this.#peerEnd ??= this.peers('peerEnd', true);
    return this.#peerEnd;
  }
  private peers(slot: 'peerStart' | 'peerEnd', end: boolean): Int32Array {
    const out = scratchI32(slot, this.n);
    if (this.starts !== null) return eachPart(this.starts, this.sorted, out, end);
    return end ? peerEnds(this.sorted, out, 0, this.n) : peerStarts(this.sorted, out, 0, this.n);
  }
}

/** Each row's partition's first row (or with `end`, one past its last), the partitions [starts[q], starts[q + 1]). */
function fillRuns(starts: Int32Array, out: Int32Array, end: boolean): void {
  const last = starts.length - 1;
  for (let q = 0; q < last; q++) {
    const a = starts[q],
      b = starts[q + 1],
      x = end ? b : a;
    for (let i = a; i < b; i++) out[i] = x;
  }
}

/** peerStarts (or with `end`, peerEnds) within each partition [starts[q], starts[q + 1]). */
function eachPart(starts: Int32Array, sorted: Float64Array, out: Int32Array, end: boolean): Int32Array {
  const last = starts.length - 1;
  for (let q = 0; q < last; q++) {
    if (end) peerEnds(sorted, out, starts[q], starts[q + 1]);
    else peerStarts(sorted, out, starts[q], starts[q + 1]);
  }
  return out;
}

/** Each row of [a, b) its first row of equal numbers there. */
function peerStarts(sorted: Float64Array, out: Int32Array, a: number, b: number): Int32Array {
  let s = a;
  for (let i = a; i < b; i++) {
    if (i > a && sorted[i] !== sorted[i - 1]) s = i;
    out[i] = s;
  }
  return out;
}

/** Each row of [a, b) its end (one past its last row) of equal numbers there. */
function peerEnds(sorted: Float64Array, out: Int32Array, a: number, b: number): Int32Array {
  let e = b;
  for (let i = b - 1; i >= a; i--) {
    out[i] = e;
    if (i > a && sorted[i] !== sorted[i - 1]) e = i;
  }
  return out;
}

/** sorted: a partition starts where the number reaches the next multiple of orderSpan. */
function partitionCuts(sorted: Float64Array, orderSpan: number, cut: Uint8Array, n: number): void {
  let next = -1;
  for (let i = 0; i < n; i++) {
    const code = sorted[i];
    if (code < next) continue;
    cut[i] = 1;
    next = (Math.floor(code / orderSpan) + 1) * orderSpan;
  }
}

function peerCuts(sorted: Float64Array, peers: Uint8Array, n: number): void {
  for (let i = 1; i < n; i++) if (sorted[i] !== sorted[i - 1]) peers[i] = 1;
}
