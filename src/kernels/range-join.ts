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
  | { kind: 'around' | 'within'; loStrict: boolean; hiStrict: boolean };

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

/** First position in [lo, hi) whose key is >= v (strict: > v); hi when none. */
function firstFrom(k: Float64Array, v: number, strict: boolean, lo = 0, hi = k.length): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (strict ? k[mid] <= v : k[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
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
export function candidateRun(s: RangeShape, k: BuiltKeys, p: ProbeKeys, i: number, run: Int32Array): void {
  const a = k.a,
    v = p.x[i];
  let from = 0,
    to = 0;
  if (p.valid === null || p.valid[i] !== 0) {
    switch (s.kind) {
      case 'above':
        from = firstFrom(a, v, s.strict);
        to = a.length;
        break;
      case 'below':
        to = firstFrom(a, v, !s.strict);
        break;
      case 'around':
        from = firstFrom(a, v, s.loStrict);
        to = Math.max(from, firstFrom(a, p.y![i], !s.hiStrict));
        break;
      case 'within':
        to = firstFrom(a, v, !s.loStrict);
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
    run = new Int32Array(2);
  for (let i = 0; i < n; i++) {
    candidateRun(s, k, p, i, run);
    let c = run[1] - run[0];
    if (s.kind === 'within' && c > 0) c -= firstFrom(bSorted!, p.x[i], s.hiStrict);
    out[i] = c;
  }
  return out;
}

/** Positions per leaf of the tree of upper bounds' maxima. */
const BLOCK = 16;

/** The maxima of `b` over blocks of BLOCK positions, as a binary tree in an array (leaves from `size`). */
export function blockMaxTree(b: Float64Array): { tree: Float64Array; size: number } {
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

/** Where the pairs of a probe go: indices into the probing rows and the built positions, flushed when full. */
export interface PairOut {
  probe: Int32Array;
  built: Int32Array;
  /** called with the pairs filled, when the buffers are full and at the end; the buffers are then reused */
  flush(n: number): void;
}

/**
 * The pairs of probing rows [r0, r1) with built positions [b0, b1), in probing row order. `tree`: for `within`, the
 * block maxima of `k.b` (blockMaxTree).
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
  tree?: { tree: Float64Array; size: number },
): void {
  const cap = out.probe.length,
    pr = out.probe,
    bu = out.built,
    run = new Int32Array(2);
  let n = 0;
  const stack = new Int32Array(64);
  for (let i = r0; i < r1; i++) {
    candidateRun(s, k, p, i, run);
    const from = Math.max(b0, run[0]),
      to = Math.min(b1, run[1]);
    if (from >= to) continue;
    if (s.kind !== 'within') {
      for (let j = from; j < to; j++) {
        pr[n] = i;
        bu[n++] = j;
        if (n === cap) {
          out.flush(n);
          n = 0;
        }
      }
      continue;
    }
    // intervals in [from, to) whose upper bound reaches v: descend the blocks whose maximum does
    const v = p.x[i],
      strict = s.hiStrict,
      b = k.b!,
      t = tree!.tree,
      size = tree!.size;
    const firstBlock = (from / BLOCK) | 0,
      lastBlock = ((to - 1) / BLOCK) | 0;
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
  }
  if (n > 0) out.flush(n);
}
