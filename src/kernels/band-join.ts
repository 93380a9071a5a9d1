// Keyed band join kernels: the built rows of each join key in one run, sorted by their bound (intervals by their
// lower bound), and each probing row binary searched inside its key's run only, so that a hot key with many periods
// makes the pairs that match, not every pair of the key. The shapes are the range join's (kernels/range-join.ts);
// keys are float64 images of the bounds (physical/join/range-keys.ts), runs found through the join's hash table.
import type { Column } from './data-type.js';
import { keysEqual, type Keys } from './keys.js';
import type { PairOut, RangeShape } from './range-join.js';
import { sortIndices } from './sort.js';
import { type TableArrays, compactKeys, findDirect, findRows } from './table.js';

/** The built rows in (key, bound) order and each key's run among them. */
export interface BandIndex {
  /** built row of each sorted position */
  rows: Int32Array;
  /** the bound of each sorted position (within: the lower one) */
  a: Float64Array;
  /** within: the upper bound of each sorted position, and its running maximum inside its run */
  b: Float64Array | null;
  reach: Float64Array | null;
  /** by a key's first built row (as the table finds it): its run [start, end) of sorted positions; -1: none */
  start: Int32Array;
  end: Int32Array;
}

/**
 * The first built row of each probing row's key (-1: none, or a null key), as the table's probes find it: the same
 * row for every row of a key, so it names the key's run.
 */
export function firstRows(t: TableArrays, build: Keys, probe: Keys, out: Int32Array): void {
  const n = probe.n;
  if (t.direct !== null && compactKeys(probe)) {
    findDirect(t.direct, t.base, probe, 0, n, out);
    return;
  }
  if (t.slots !== null && compactKeys(probe)) {
    findRows(t.slots, t.mask, probe, 0, n, out);
    return;
  }
  const { heads, next, mask } = t,
    ph = probe.hash,
    bh = build.hash,
    pNull = probe.anyNull;
  for (let i = 0; i < n; i++) {
    let row = -1;
    if (pNull === null || pNull[i] === 0) {
      const h = ph[i];
      for (let j = heads[h & mask]; j >= 0; j = next[j])
        if (bh[j] === h && keysEqual(probe, i, build, j)) {
          row = j;
          break;
        }
    }
    out[i] = row;
  }
}

/**
 * The index over built rows: `first` each row's key's first row (-1: a null key), `a` (and `b`) their bounds,
 * `valid` 0 where a bound is null. Rows with a null key or bound, and empty intervals (a > b), are left out.
 */
export function bandIndex(
  first: Int32Array,
  a: Float64Array,
  b: Float64Array | null,
  valid: Uint8Array | null,
): BandIndex {
  const n = first.length;
  const kept = new Int32Array(n);
  let m = 0;
  for (let i = 0; i < n; i++) {
    if (first[i] < 0 || (valid !== null && valid[i] === 0) || (b !== null && a[i] > b[i])) continue;
    kept[m++] = i;
  }
  const gid = new Int32Array(m),
    ka = new Float64Array(m);
  for (let i = 0; i < m; i++) {
    gid[i] = first[kept[i]];
    ka[i] = a[kept[i]];
  }
  const col = (type: Column['type'], values: Int32Array | Float64Array): Column => ({
    type,
    length: m,
    values,
    valid: null,
  });
  const order = sortIndices({ length: m, columns: [col({ id: 'int32' }, gid), col({ id: 'float64' }, ka)] }, [
    { col: 0, desc: false, nullsFirst: false },
    { col: 1, desc: false, nullsFirst: false },
  ]);
  const rows = new Int32Array(m),
    sa = new Float64Array(m),
    sb = b ? new Float64Array(m) : null,
    reach = b ? new Float64Array(m) : null;
  const start = new Int32Array(n).fill(-1),
    end = new Int32Array(n).fill(-1);
  let run = -1,
    top = -Infinity;
  for (let j = 0; j < m; j++) {
    const k = order[j],
      g = gid[k];
    rows[j] = kept[k];
    sa[j] = ka[k];
    if (g !== run) {
      if (run >= 0) end[run] = j;
      start[g] = j;
      run = g;
      top = -Infinity;
    }
    if (sb !== null) {
      const v = b![kept[k]];
      sb[j] = v;
      reach![j] = top = v > top ? v : top;
    }
  }
  if (run >= 0) end[run] = m;
  return { rows, a: sa, b: sb, reach, start, end };
}

/** First position in [lo, hi) whose key is >= v (strict: > v); hi when none. */
function search(a: Float64Array, lo: number, hi: number, v: number, strict: boolean): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (strict ? a[mid] <= v : a[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** A probing side's rows: its key's first built row (firstRows), its bound `x` (around: and `y`), `valid`: 0 where null. */
export interface BandProbe {
  first: Int32Array;
  x: Float64Array;
  y: Float64Array | null;
  valid: Uint8Array | null;
}

/**
 * The matching pairs of every probing row (its index, and the built row) into `out`: the positions of its key's run
 * that its bound selects, by binary search (within: the intervals starting early enough, scanned back while the
 * run's running maximum of upper bounds still reaches the value: one or two steps where a key's periods do not
 * overlap).
 */
export function bandPairs(s: RangeShape, ix: BandIndex, p: BandProbe, out: PairOut): void {
  const { rows, a, start, end } = ix,
    { first, x, valid } = p,
    pr = out.probe,
    bu = out.built,
    cap = pr.length;
  let n = 0;
  for (let i = 0; i < first.length; i++) {
    const r = first[i];
    if (r < 0 || (valid !== null && valid[i] === 0)) continue;
    const s0 = start[r];
    if (s0 < 0) continue;
    const e0 = end[r],
      v = x[i];
    if (s.kind === 'within') {
      const b = ix.b!,
        reach = ix.reach!,
        hiStrict = s.hiStrict;
      for (let j = search(a, s0, e0, v, !s.loStrict) - 1; j >= s0; j--) {
        if (hiStrict ? reach[j] <= v : reach[j] < v) break;
        if (hiStrict ? b[j] <= v : b[j] < v) continue;
        pr[n] = i;
        bu[n++] = rows[j];
        if (n === cap) {
          out.flush(n);
          n = 0;
        }
      }
      continue;
    }
    let from = s0,
      to = e0;
    if (s.kind === 'above') from = search(a, s0, e0, v, s.strict);
    else if (s.kind === 'below') to = search(a, s0, e0, v, !s.strict);
    else if (s.kind === 'around') {
      from = search(a, s0, e0, v, s.loStrict);
      to = search(a, from, e0, p.y![i], !s.hiStrict);
    }
    for (let j = from; j < to; j++) {
      pr[n] = i;
      bu[n++] = rows[j];
      if (n === cap) {
        out.flush(n);
        n = 0;
      }
    }
  }
  if (n > 0) out.flush(n);
}
