// Range (inequality, band) join kernels over float64 keys: the built side sorted by its bound, each probing row's
// run of sorted positions found by binary search, and for intervals sorted by their lower bound, the positions whose
// upper bound still reaches the value found through a tree of block maxima. The keys are monotone images of the
// compared values (physical/join/range-keys.ts); where one is not exact the caller asks for non-strict bounds and
// keeps its filter above, so the pairs are then a superset of the matches.
import type { Column } from './data-type.js';
import { sortIndices } from './sort.js';

/**
 * How probing rows meet the sorted built keys `a` (and `b`, the upper bounds of built intervals in `a`'s order):
 * `above` / `below`: built keys above (below) the probing value, a suffix (prefix) of the sorted keys;
 * `around`: built points between the probing row's two bounds `x` and `y`;
 * `within`: built intervals [a, b] holding the probing value `x`.
 * Strict: `<` rather than `<=` on that bound (the built key beside the probing value).
 */
export type RangeShape =
  | { kind: 'above' | 'below'; strict: boolean }
  | { kind: 'around'; loStrict: boolean; hiStrict: boolean }
  | { kind: 'within'; loStrict: boolean; hiStrict: boolean };

/** The built side's keys in sorted order: `a` ascending; `b` the interval's upper bound (within). */
export interface BuiltKeys {
  a: Float64Array;
  b?: Float64Array;
}

/** A probing side's keys: `x` (a value, or a lower bound), `y` (around: the upper bound); `valid`: 0 where null. */
export interface ProbeKeys {
  x: Float64Array;
  y?: Float64Array;
  valid: Uint8Array | null;
}

/**
 * Sorted keys searched by value: the key range cut into buckets (about two a key), each bucket's first position
 * kept, so that a search reads its bucket's bounds and binary searches the few keys between them, not all of them.
 * Buckets are a monotone function of the value, so every key of a lower bucket is below the value searched and every
 * key of a higher one above it; infinite keys (a NaN's) fall into the end buckets.
 */
export class SortedKeys {
  private readonly starts: Int32Array;
  private readonly lo: number;
  private readonly hi: number;
  private readonly scale: number;
  private readonly last: number;

  constructor(readonly k: Float64Array) {
    const m = k.length;
    let f = 0,
      l = m - 1;
    while (f < m && !Number.isFinite(k[f])) f++;
    while (l >= 0 && !Number.isFinite(k[l])) l--;
    const span = l > f ? k[l] - k[f] : 0;
    const buckets = span > 0 && Number.isFinite(span) ? Math.min(1 << 22, 2 * m) : 1;
    this.lo = f < m ? k[f] : 0;
    this.hi = l >= 0 ? k[l] : 0;
    this.scale = buckets > 1 ? buckets / span : 0;
    this.last = buckets - 1;
    const starts = new Int32Array(buckets + 1);
    let j = 0;
    for (let i = 0; i < m; i++) {
      const b = this.bucket(k[i]);
      while (j <= b) starts[j++] = i;
    }
    while (j <= buckets) starts[j++] = m;
    this.starts = starts;
  }

  private bucket(v: number): number {
    if (this.last === 0 || v <= this.lo) return 0;
    if (v >= this.hi) return this.last;
    const b = Math.floor((v - this.lo) * this.scale);
    return b < this.last ? b : this.last;
  }

  /** First position whose key is >= v; the length when none. */
  atLeast(v: number): number {
    const b = this.bucket(v),
      k = this.k;
    let lo = this.starts[b],
      hi = this.starts[b + 1];
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (k[mid] < v) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** First position whose key is > v; the length when none. */
  above(v: number): number {
    const b = this.bucket(v),
      k = this.k;
    let lo = this.starts[b],
      hi = this.starts[b + 1];
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (k[mid] <= v) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** First position whose key is > v (strict) or >= v. */
  from(v: number, strict: boolean): number {
    return strict ? this.above(v) : this.atLeast(v);
  }
}

/** Row indices of `keys` in ascending key order (radix sorted when large: kernels/sort.ts). */
export function sortedOrder(keys: Float64Array): Int32Array {
  const col: Column = { type: { id: 'float64' }, length: keys.length, values: keys, valid: null };
  return sortIndices({ length: keys.length, columns: [col] }, [{ col: 0, desc: false, nullsFirst: false }]);
}

/**
 * The positions a probing row may match: a run [from, to) of the sorted keys (within: the intervals starting early
 * enough, of which those whose upper bound reaches the value match). Written into `run`.
 */
export function candidateRun(s: RangeShape, a: SortedKeys, p: ProbeKeys, i: number, run: Int32Array): void {
  const v = p.x[i];
  let from = 0,
    to = 0;
  if (p.valid === null || p.valid[i] !== 0) {
    switch (s.kind) {
      case 'above':
        from = a.from(v, s.strict);
        to = a.k.length;
        break;
      case 'below':
        to = a.from(v, !s.strict);
        break;
      case 'around':
        from = a.from(v, s.loStrict);
        to = Math.max(from, a.from(p.y![i], !s.hiStrict));
        break;
      case 'within':
        to = a.from(v, !s.loStrict);
        break;
    }
  }
  run[0] = from;
  run[1] = to;
}

/**
 * Matches of each probing row, for cutting the probing side into tasks: the run's length, and for `within` the run
 * less the intervals ending before the value (`bSorted`: the upper bounds sorted; every interval non-empty, so one
 * that ends too early also starts early enough).
 */
export function matchCounts(s: RangeShape, k: BuiltKeys, p: ProbeKeys, bSorted?: Float64Array): Float64Array {
  const n = p.x.length,
    out = new Float64Array(n),
    a = new SortedKeys(k.a),
    x = p.x,
    valid = p.valid;
  if (s.kind === 'within') {
    const b = new SortedKeys(bSorted!),
      loStrict = s.loStrict,
      hiStrict = s.hiStrict;
    for (let i = 0; i < n; i++) {
      if (valid !== null && valid[i] === 0) continue;
      const v = x[i],
        c = loStrict ? a.atLeast(v) : a.above(v);
      out[i] = c > 0 ? c - (hiStrict ? b.above(v) : b.atLeast(v)) : 0;
    }
    return out;
  }
  const run = new Int32Array(2);
  for (let i = 0; i < n; i++) {
    candidateRun(s, a, p, i, run);
    out[i] = run[1] - run[0];
  }
  return out;
}

/** Positions per leaf of the tree of upper bounds' maxima. */
const BLOCK = 16;

/** The maxima of `b` over blocks of BLOCK positions, as a binary tree in an array (leaves from `size`). */
function blockMaxTree(b: Float64Array): { tree: Float64Array; size: number } {
  const blocks = Math.ceil(b.length / BLOCK);
  let size = 1;
  while (size < blocks) size *= 2;
  const tree = new Float64Array(2 * size).fill(-Infinity);
  for (let i = 0; i < b.length; i++) {
    const j = size + ((i / BLOCK) | 0);
    if (b[i] > tree[j]) tree[j] = b[i];
  }
  for (let j = size - 1; j >= 1; j--) tree[j] = Math.max(tree[2 * j], tree[2 * j + 1]);
  return { tree, size };
}

/** What a `within` search reads besides the keys: the tree of block maxima and the running maximum of `b`. */
export interface WithinIndex {
  tree: Float64Array;
  size: number;
  /** the largest upper bound at or before each position */
  reach: Float64Array;
}

/** The index a `within` search needs over the built upper bounds `b` (in the order of the lower bounds). */
export function withinIndex(b: Float64Array): WithinIndex {
  const reach = new Float64Array(b.length);
  let m = -Infinity;
  for (let i = 0; i < b.length; i++) reach[i] = m = b[i] > m ? b[i] : m;
  return { ...blockMaxTree(b), reach };
}

/** Where the pairs of a probe go: indices into the probing rows and the built positions, flushed when full. */
export interface PairOut {
  probe: Int32Array;
  built: Int32Array;
  /** called with the pairs filled, when the buffers are full and at the end; the buffers are then reused */
  flush(n: number): void;
}

/**
 * The pairs of probing rows [r0, r1) with built positions [b0, b1), by probing row. `index`: for `within`, over `k.b`
 * (withinIndex).
 */
export function rangePairs(
  s: RangeShape,
  k: BuiltKeys,
  p: ProbeKeys,
  r0: number,
  r1: number,
  b0: number,
  b1: number,
  out: PairOut,
  index?: WithinIndex,
): void {
  const a = new SortedKeys(k.a);
  const n =
    s.kind === 'within'
      ? withinPairs(s, a, k.b!, p, r0, r1, b0, b1, out, index!)
      : runPairs(s, a, p, r0, r1, b0, b1, out);
  if (n > 0) out.flush(n);
}

/** above, below, around: each probing row's matches are one run of the sorted keys. Returns the pairs not flushed. */
function runPairs(
  s: RangeShape,
  a: SortedKeys,
  p: ProbeKeys,
  r0: number,
  r1: number,
  b0: number,
  b1: number,
  out: PairOut,
) {
  const cap = out.probe.length,
    pr = out.probe,
    bu = out.built,
    run = new Int32Array(2);
  let n = 0;
  for (let i = r0; i < r1; i++) {
    candidateRun(s, a, p, i, run);
    const from = run[0] > b0 ? run[0] : b0,
      to = run[1] < b1 ? run[1] : b1;
    for (let j = from; j < to; j++) {
      pr[n] = i;
      bu[n++] = j;
      if (n === cap) {
        out.flush(n);
        n = 0;
      }
    }
  }
  return n;
}

/** Steps of the backward scan before a `within` search turns to the tree. */
const SCAN_STEPS = 32;

/**
 * within: the intervals starting early enough are a prefix; of them those whose upper bound reaches the value are
 * found scanning back from its end while the running maximum of the upper bounds still reaches it (one or two steps
 * where intervals seldom overlap), and past SCAN_STEPS through the tree of block maxima (long intervals early on).
 */
function withinPairs(
  s: Extract<RangeShape, { kind: 'within' }>,
  a: SortedKeys,
  b: Float64Array,
  p: ProbeKeys,
  r0: number,
  r1: number,
  b0: number,
  b1: number,
  out: PairOut,
  index: WithinIndex,
) {
  const cap = out.probe.length,
    pr = out.probe,
    bu = out.built,
    x = p.x,
    valid = p.valid,
    reach = index.reach,
    hiStrict = s.hiStrict,
    loStrict = s.loStrict;
  let n = 0;
  for (let i = r0; i < r1; i++) {
    if (valid !== null && valid[i] === 0) continue;
    const v = x[i];
    const end = loStrict ? a.atLeast(v) : a.above(v);
    let j = (end < b1 ? end : b1) - 1,
      steps = 0;
    for (; j >= b0; j--) {
      if (hiStrict ? reach[j] <= v : reach[j] < v) break;
      if (++steps > SCAN_STEPS) break;
      if (hiStrict ? b[j] <= v : b[j] < v) continue;
      pr[n] = i;
      bu[n++] = j;
      if (n === cap) {
        out.flush(n);
        n = 0;
      }
    }
    if (steps > SCAN_STEPS) n = treePairs(i, v, hiStrict, b, index, b0, j + 1, out, n);
  }
  return n;
}

/** The positions in [from, to) whose upper bound reaches v, through the tree of block maxima; returns the pairs held. */
function treePairs(
  i: number,
  v: number,
  strict: boolean,
  b: Float64Array,
  index: WithinIndex,
  from: number,
  to: number,
  out: PairOut,
  n: number,
): number {
  if (from >= to) return n;
  const cap = out.probe.length,
    pr = out.probe,
    bu = out.built,
    t = index.tree,
    size = index.size;
  const firstBlock = (from / BLOCK) | 0,
    lastBlock = ((to - 1) / BLOCK) | 0;
  const stack = new Int32Array(64);
  let sp = 0;
  stack[sp++] = 1;
  while (sp > 0) {
    const node = stack[--sp];
    const m = t[node];
    if (strict ? m <= v : m < v) continue;
    // the node's blocks: [lo, lo + width)
    const depthSize = 1 << (31 - Math.clz32(node));
    const width = size / depthSize,
      lo = (node - depthSize) * width;
    if (lo > lastBlock || lo + width <= firstBlock) continue;
    if (node < size) {
      stack[sp++] = 2 * node + 1;
      stack[sp++] = 2 * node;
      continue;
    }
    const end = Math.min(to, lo * BLOCK + BLOCK);
    for (let j = Math.max(from, lo * BLOCK); j < end; j++) {
      if (strict ? b[j] <= v : b[j] < v) continue;
      pr[n] = i;
      bu[n++] = j;
      if (n === cap) {
        out.flush(n);
        n = 0;
      }
    }
  }
  return n;
}
