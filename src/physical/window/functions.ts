// Window functions over a task's sorted rows (bounds.ts gives partitions, peers and frames): each function one
// column, computed over typed arrays. Ranks from the partition and peer bounds; lag/lead, first/last/nth_value and
// min/max as row indices gathered once; count/sum/avg over sliding frames by adding the rows a frame gains and
// removing those it loses (a cumulative frame only adds: a running sum); min/max by a monotonic deque.
import { ExecutionError } from '../../errors.js';
import {
  type Batch,
  type Column,
  type DataType,
  concatColumns,
  decimalAt,
  gather,
  allocValues,
  isFloat,
  lanes,
  rowWidth,
} from '../../kernels/column.js';
import { decimalColumn } from '../../kernels/decimal.js';
import { type SortKey, valueComparator } from '../../kernels/sort.js';
import type { BoundWindowFn } from '../../plan/bound.js';
import type { WindowFnName } from '../../plan/spec.js';
import { type Shape, frameOf } from './bounds.js';
import { exactIntegers } from './packed.js';
import { scratchI32 } from './scratch.js';
import { groupsOf } from '../../agg/group-ids.js';

/** Integers below 2^53 as an int64 column, written as 32-bit words (little-endian): no bigint a row. */
const int64Column = (v: ArrayLike<number>, n: number): Column => {
  const out = new BigInt64Array(n);
  const w = new Int32Array(out.buffer);
  for (let i = 0; i < n; i++) {
    const x = v[i];
    const hi = Math.floor(x / TWO32);
    w[2 * i] = (x - hi * TWO32) | 0;
    w[2 * i + 1] = hi;
  }
  return { type: { id: 'int64' }, length: n, values: out, valid: null };
};
const float64Column = (v: Float64Array): Column => ({
  type: { id: 'float64' },
  length: v.length,
  values: v,
  valid: null,
});

/** A function's column over the sorted rows `b` (shape `s`). */
type Kernel = (f: BoundWindowFn, b: Batch, s: Shape, orderBy: SortKey[]) => Column;

/** row_number, rank: the row's (its first peer's) place in its partition, counted from 1. */
const placeIn =
  (peers: boolean): Kernel =>
  (_f, _b, s) => {
    const { n, partStart } = s;
    // below 2^31: the low words written, the high ones left 0
    const out = new BigInt64Array(n);
    placeWords(new Int32Array(out.buffer), peers ? s.peerStart : null, partStart, n);
    return { type: { id: 'int64' }, length: n, values: out, valid: null };
  };

/** Row i's place (from[i]'s, when given) in its partition from partStart[i], counted from 1, as low words. */
function placeWords(w: Int32Array, from: Int32Array | null, partStart: Int32Array, n: number): void {
  if (from === null) for (let i = 0; i < n; i++) w[2 * i] = i - partStart[i] + 1;
  else for (let i = 0; i < n; i++) w[2 * i] = from[i] - partStart[i] + 1;
}

/** lag (-1) or lead (1): the value `n` rows away in the partition, else the default (null without one). */
const offsetRow =
  (dir: number): Kernel =>
  (f, b, s) => {
    const { n, partStart: ps, partEnd: pe } = s;
    const arg = b.columns[f.col];
    const def = f.def >= 0 ? b.columns[f.def] : null;
    if (def === null && f.n > 0 && arg.type.id !== 'utf8') return shifted(arg, dir * f.n, dir < 0 ? ps : pe, n);
    const idx = scratchI32('offsetRows', n); // read by the gather only
    for (let i = 0; i < n; i++) {
      const j = i + dir * f.n;
      idx[i] = j >= ps[i] && j < pe[i] ? j : def ? n + i : -1;
    }
    return gather(def ? concatColumns(arg.type, [arg, def]) : arg, idx);
  };

/**
 * lag/lead of a fixed-width column without a default: the values moved `by` rows (negative: lag) as one copy, null
 * (and zero) where the row that far away is outside the partition (`bound`: each row's partition start for lag, end
 * for lead) or null itself. No row indices, no gather.
 */
function shifted(arg: Column, by: number, bound: Int32Array, n: number): Column {
  const width = rowWidth(arg.type);
  const values = allocValues(arg.type, n);
  const bytes = new Uint8Array(values.buffer, values.byteOffset, n * width);
  const from = new Uint8Array(arg.values.buffer, arg.values.byteOffset, n * width);
  const k = Math.min(Math.abs(by), n);
  if (by < 0) bytes.set(from.subarray(0, (n - k) * width), k * width);
  else bytes.set(from.subarray(k * width, n * width), 0);
  const valid = new Uint8Array(n);
  if (by < 0) lagValid(valid, bound, arg.valid, k, n);
  else leadValid(valid, bound, arg.valid, k, n);
  zeroNulls(bytes, valid, width, n);
  return { type: arg.type, length: n, values, valid };
}

/** valid[i]: row i - k is in row i's partition (from start[i]) and not null. */
function lagValid(valid: Uint8Array, start: Int32Array, from: Uint8Array | null, k: number, n: number): void {
  for (let i = 0; i < n; i++) valid[i] = i - k >= start[i] && (from === null || from[i - k] !== 0) ? 1 : 0;
}

/** valid[i]: row i + k is in row i's partition (before end[i]) and not null. */
function leadValid(valid: Uint8Array, end: Int32Array, from: Uint8Array | null, k: number, n: number): void {
  for (let i = 0; i < n; i++) valid[i] = i + k < end[i] && (from === null || from[i + k] !== 0) ? 1 : 0;
}

/** The bytes of the null rows zeroed (as a gather leaves a missing row). */
function zeroNulls(bytes: Uint8Array, valid: Uint8Array, width: number, n: number): void {
  for (let i = 0; i < n; i++) if (valid[i] === 0) for (let b = i * width; b < (i + 1) * width; b++) bytes[b] = 0;
}

/** A row of each frame (-1: none): first, last or nth value. */
const frameRow =
  (pick: (start: number, end: number, f: BoundWindowFn) => number): Kernel =>
  (f, b, s, orderBy) => {
    const { start, end } = frameOf(s, f.frame, b, orderBy);
    const idx = new Int32Array(s.n);
    for (let i = 0; i < s.n; i++) {
      const j = pick(start[i], end[i], f);
      idx[i] = j >= start[i] && j < end[i] ? j : -1;
    }
    return gather(b.columns[f.col], idx);
  };

const countOver: Kernel = (f, b, s, orderBy) => {
  const { start, end } = frameOf(s, f.frame, b, orderBy);
  const n = s.n;
  const arg = f.col >= 0 ? b.columns[f.col] : null;
  const v = new Float64Array(n);
  if (f.distinct) slide(new Uint8Array(n), arg!.valid, s, start, end, v, distinctIds(arg!), true);
  else if (!arg || arg.valid === null) for (let i = 0; i < n; i++) v[i] = end[i] - start[i];
  else {
    const pre = validPrefix(arg);
    for (let i = 0; i < n; i++) v[i] = pre[end[i]] - pre[start[i]];
  }
  return int64Column(v, n);
};

const extreme =
  (max: boolean): Kernel =>
  (f, b, s, orderBy) => {
    const { start, end } = frameOf(s, f.frame, b, orderBy);
    const arg = b.columns[f.col];
    return gather(arg, extremes(arg, s, start, end, max));
  };

const sumOver: Kernel = (f, b, s, orderBy) => {
  const fast = f.fn === 'sum' && f.frame.start === null && f.frame.end === 0 && !f.distinct;
  const running = fast ? runningSum(f, b.columns[f.col], s) : null;
  if (running) return running;
  const { start, end } = frameOf(s, f.frame, b, orderBy);
  return sums(f, b.columns[f.col], s, start, end);
};

/** Each window function's kernel, by name: a new function in the plan's enum needs its entry (plan/window-fns.ts). */
const KERNELS: Record<WindowFnName, Kernel> = {
  row_number: placeIn(false),
  rank: placeIn(true),
  dense_rank: (_f, _b, s) => {
    const v = new Float64Array(s.n);
    const { partStart, peerStart } = s;
    let r = 0;
    for (let i = 0; i < s.n; i++) {
      if (i === partStart[i]) r = 1;
      else if (i === peerStart[i]) r++;
      v[i] = r;
    }
    return int64Column(v, s.n);
  },
  percent_rank: (_f, _b, s) => {
    const { n, partStart, partEnd, peerStart } = s;
    const v = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const size = partEnd[i] - partStart[i];
      v[i] = size > 1 ? (peerStart[i] - partStart[i]) / (size - 1) : 0;
    }
    return float64Column(v);
  },
  cume_dist: (_f, _b, s) => {
    const { n, partStart, partEnd, peerEnd } = s;
    const v = new Float64Array(n);
    for (let i = 0; i < n; i++) v[i] = (peerEnd[i] - partStart[i]) / (partEnd[i] - partStart[i]);
    return float64Column(v);
  },
  // as DuckDB (after SQLite's ntileValueFunc): the first n_total % buckets buckets hold one row more
  ntile: (f, _b, s) => {
    const { n, partStart, partEnd } = s;
    const v = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const total = partEnd[i] - partStart[i];
      const buckets = Math.min(f.n, total);
      const size = Math.floor(total / buckets);
      const large = total - buckets * size;
      const small = large * (size + 1);
      const r = i - partStart[i];
      v[i] = r < small ? 1 + Math.floor(r / (size + 1)) : 1 + large + Math.floor((r - small) / size);
    }
    return int64Column(v, n);
  },
  lag: offsetRow(-1),
  lead: offsetRow(1),
  first_value: frameRow((start) => start),
  last_value: frameRow((_start, end) => end - 1),
  nth_value: frameRow((start, _end, f) => start + f.n - 1),
  count: countOver,
  sum: sumOver,
  avg: sumOver,
  min: extreme(false),
  max: extreme(true),
};

/** The function's column over the sorted rows `b` (shape `s`). */
export const windowColumn: Kernel = (f, b, s, orderBy) => KERNELS[f.fn](f, b, s, orderBy);

/** prefix[k]: valid rows among the first k. */
function validPrefix(c: Column): Float64Array {
  const pre = new Float64Array(c.length + 1);
  const v = c.valid;
  for (let i = 0; i < c.length; i++) pre[i + 1] = pre[i] + (v === null ? 1 : v[i]);
  return pre;
}

/**
 * Row index of each frame's min (or max) non-null value, -1 for none: a deque of rows whose values only increase
 * (decrease) from its head; the frame's ends move forward within a partition, so each row enters and leaves once.
 */
function extremes(c: Column, s: Shape, start: Int32Array, end: Int32Array, max: boolean): Int32Array {
  const n = s.n;
  const cmp = valueComparator(c);
  const valid = c.valid;
  const out = new Int32Array(n);
  const dq = new Int32Array(n);
  const partStart = s.partStart;
  let head = 0,
    tail = 0,
    next = 0;
  for (let i = 0; i < n; i++) {
    if (i === partStart[i]) {
      head = tail = 0;
      next = i;
    }
    if (next < start[i]) next = start[i];
    for (; next < end[i]; next++) {
      if (valid !== null && valid[next] === 0) continue;
      // drop rows the new one beats (ties: the later row stays, it leaves the frame later)
      while (tail > head && (max ? cmp(dq[tail - 1], next) <= 0 : cmp(dq[tail - 1], next) >= 0)) tail--;
      dq[tail++] = next;
    }
    while (tail > head && dq[head] < start[i]) head++;
    out[i] = tail > head ? dq[head] : -1;
  }
  return out;
}

const SAFE = 2 ** 53;

/** sum or avg over each frame (with `distinct`, over its distinct values): exact for integers and decimals. */
function sums(f: BoundWindowFn, c: Column, s: Shape, start: Int32Array, end: Int32Array): Column {
  const n = s.n;
  const cnt = new Float64Array(n);
  const ids = f.distinct ? distinctIds(c) : null;
  if (isFloat(c.type)) {
    const total = slide(c.values as Float32Array | Float64Array, c.valid, s, start, end, cnt, ids, false)!;
    if (f.fn === 'avg') for (let i = 0; i < n; i++) total[i] = cnt[i] > 0 ? total[i] / cnt[i] : 0;
    return withNulls({ type: f.type, length: n, values: total, valid: null }, cnt);
  }
  const num = c.type.id === 'decimal' && lanes(c.type) === 2 ? null : exactIntegers(c);
  const exact = (num && slide(num, c.valid, s, start, end, cnt, ids, true)) || slideBig(c, s, start, end, cnt, ids);
  const scale = c.type.id === 'decimal' ? 10 ** c.type.scale! : 1;
  if (f.fn === 'avg') {
    // one division of the exact sum, as DuckDB divides it by count x 10^scale (two would round twice)
    const v = new Float64Array(n);
    for (let i = 0; i < n; i++) v[i] = cnt[i] > 0 ? Number(exact[i]) / (scale * cnt[i]) : 0;
    return withNulls(float64Column(v), cnt);
  }
  if (f.type.id === 'decimal') {
    if (exact instanceof Float64Array) {
      const fast = decimalOfNumbers(exact, cnt, f.type);
      if (fast) return fast;
    }
    const vals: (bigint | null)[] = new Array(n);
    for (let i = 0; i < n; i++) vals[i] = cnt[i] > 0 ? BigInt(exact[i]) : null;
    return decimalColumn(vals, f.type, `window sum ${f.as}`);
  }
  if (exact instanceof Float64Array) return withNulls(decimalOfNumbers(exact, cnt, f.type)!, cnt);
  const out = new BigInt64Array(n);
  for (let i = 0; i < n; i++) {
    const x = BigInt(exact[i]);
    if (x !== BigInt.asIntN(64, x)) throw new ExecutionError(`window sum ${f.as}: integer overflow (${x})`);
    out[i] = x;
  }
  return withNulls({ type: f.type, length: n, values: out, valid: null }, cnt);
}

/**
 * A cumulative frame's sums (the partition's rows up to the row, or under RANGE up to its last peer) of an integer
 * or one-lane decimal column, read from its 32-bit words and written as the int64 or decimal result's words: no
 * frame arrays, no bigint, one pass. Null when it does not apply (floats, wide decimals) or a value or sum leaves
 * ±2^53 or the result's precision: the general path then (which names an overflow).
 */
function runningSum(f: BoundWindowFn, c: Column, s: Shape): Column | null {
  const type = f.type;
  if ((type.id !== 'int64' && type.id !== 'decimal') || isFloat(c.type) || lanes(c.type) === 2) return null;
  const v = c.values;
  const n = s.n;
  let words: Int32Array | null = null,
    small: ArrayLike<number> | null = null;
  if (v instanceof BigInt64Array) words = new Int32Array(v.buffer, v.byteOffset, 2 * n);
  else small = exactIntegers(c);
  if (words === null && small === null) return null;
  const valid = c.valid;
  const wide = lanes(type) === 2;
  const stride = wide ? 4 : 2;
  const limit = Math.min(SAFE, type.id === 'decimal' ? 10 ** type.precision! : SAFE);
  const out = new BigInt64Array(wide ? 2 * n : n);
  const w = new Int32Array(out.buffer);
  let nulls: Uint8Array | null = null;
  const { partStart } = s;
  // RANGE: a row's sum is its last peer's; ROWS: its own
  const upTo = f.frame.unit === 'range' ? s.peerEnd : null;
  let sum = 0,
    k = 0,
    i = 0;
  while (i < n) {
    if (i === partStart[i]) sum = k = 0;
    const to = upTo === null ? i + 1 : upTo[i];
    for (let j = i; j < to; j++) {
      if (valid !== null && valid[j] === 0) continue;
      let x: number;
      if (words !== null) {
        const hi = words[2 * j + 1];
        if (hi >= 0x200000 || hi < -0x200000) return null;
        x = hi * TWO32 + (words[2 * j] >>> 0);
      } else x = small![j];
      sum += x;
      k++;
    }
    if (sum >= limit || -sum >= limit) return null;
    const hi = Math.floor(sum / TWO32);
    const lo = (sum - hi * TWO32) | 0;
    const sign = hi < 0 ? -1 : 0;
    for (; i < to; i++) {
      if (k === 0) {
        nulls ??= new Uint8Array(n).fill(1);
        nulls[i] = 0;
        continue;
      }
      const at = stride * i;
      w[at] = lo;
      w[at + 1] = hi;
      if (wide) w[at + 2] = w[at + 3] = sign;
    }
  }
  return { type, length: n, values: out, valid: nulls };
}

/** Each row's value as an id (equal values one id, agg/group-ids.ts), for counting a frame's distinct values. */
function distinctIds(c: Column): Int32Array {
  return groupsOf({ length: c.length, columns: [c] }, [0]).gid;
}

const TWO32 = 4294967296;

/**
 * Integers below 2^53 (a decimal's scaled ones) as an int64 or decimal column, written as 32-bit words
 * (little-endian, as the lanes are read elsewhere) without a bigint a row; null where the frame held no value. Null
 * when one is beyond a decimal's precision: the bigint path then names the overflow.
 */
function decimalOfNumbers(x: Float64Array, cnt: Float64Array, type: DataType): Column | null {
  const n = x.length,
    wide = lanes(type) === 2;
  const limit = type.id === 'decimal' ? 10 ** type.precision! : Infinity;
  const out = new BigInt64Array(wide ? 2 * n : n);
  const w = new Int32Array(out.buffer);
  let valid: Uint8Array | null = null;
  for (let i = 0; i < n; i++) {
    if (cnt[i] === 0) {
      valid ??= new Uint8Array(n).fill(1);
      valid[i] = 0;
      continue;
    }
    const v = x[i];
    if (v >= limit || -v >= limit) return null;
    const hi = Math.floor(v / TWO32);
    const at = wide ? 4 * i : 2 * i;
    w[at] = (v - hi * TWO32) | 0;
    w[at + 1] = hi;
    if (wide) w[at + 2] = w[at + 3] = hi < 0 ? -1 : 0;
  }
  return { type, length: n, values: out, valid };
}

/** Null where the frame held no value. */
function withNulls(c: Column, cnt: Float64Array): Column {
  let valid: Uint8Array | null = null;
  for (let i = 0; i < cnt.length; i++) {
    if (cnt[i] > 0) continue;
    valid ??= new Uint8Array(cnt.length).fill(1);
    valid[i] = 0;
  }
  return { ...c, valid };
}

/** Frames of at most this many rows are summed afresh (floats), left to right. */
const NARROW = 16;

/**
 * Sums over each frame as it slides (its start and end only move forward within a partition): the values entering
 * added, those leaving removed; `cnt` the values in each frame (non-null; with `ids`, distinct: a value counts once
 * while any copy of it is in the frame). `exact`: integers (a decimal's scaled ones), null once a sum leaves
 * ±2^53. Floats as DuckDB's segment tree sums them where it can be matched: a frame of at most NARROW rows summed
 * afresh, left to right (as the tree sums a frame inside its leaves), a frame from the partition's start (nothing
 * removed yet) the plain running sum, left to right; past those, a frame that lost values the compensated sum
 * (Neumaier), so that the values removed leave no rounding behind. NaN and infinities are counted apart (a frame
 * holding NaN, or both infinities, sums to NaN, as adding them would).
 */
function slide(
  v: ArrayLike<number>,
  valid: Uint8Array | null,
  s: Shape,
  start: Int32Array,
  end: Int32Array,
  cnt: Float64Array,
  ids: Int32Array | null,
  exact: boolean,
): Float64Array | null {
  const n = s.n;
  const partStart = s.partStart;
  const out = new Float64Array(n);
  let mult: Int32Array | null = null;
  if (ids) {
    let most = 0;
    for (let i = 0; i < n; i++) if (ids[i] > most) most = ids[i];
    mult = new Int32Array(most + 1);
  }
  let sum = 0,
    comp = 0,
    k = 0,
    nan = 0,
    pos = 0,
    neg = 0,
    a = 0,
    e = 0;
  for (let i = 0; i < n; i++) {
    if (i === partStart[i]) {
      if (mult !== null) for (; a < e; a++) mult[ids![a]] = 0;
      sum = comp = k = nan = pos = neg = 0;
      a = e = i;
    }
    const from = start[i],
      to = end[i] > from ? end[i] : from;
    for (; e < to; e++) {
      if (valid !== null && valid[e] === 0) continue;
      if (mult !== null && mult[ids![e]]++ > 0) continue;
      const x = v[e];
      k++;
      if (exact) sum += x;
      else if (x - x === 0) {
        const t = sum + x;
        comp += Math.abs(sum) >= Math.abs(x) ? sum - t + x : x - t + sum;
        sum = t;
      } else if (x !== x) nan++;
      else if (x > 0) pos++;
      else neg++;
    }
    for (; a < from; a++) {
      if (valid !== null && valid[a] === 0) continue;
      if (mult !== null && --mult[ids![a]] > 0) continue;
      const x = -v[a];
      k--;
      if (exact) sum += x;
      else if (x - x === 0) {
        const t = sum + x;
        comp += Math.abs(sum) >= Math.abs(x) ? sum - t + x : x - t + sum;
        sum = t;
      } else if (x !== x) nan--;
      else if (x > 0) neg--;
      else pos--;
    }
    cnt[i] = k;
    if (exact) {
      if (sum >= SAFE || sum <= -SAFE) return null;
      out[i] = sum;
      continue;
    }
    // a frame that lost every value starts again from zero
    if (k === 0) sum = comp = 0;
    if (nan > 0 || (pos > 0 && neg > 0)) out[i] = Number.NaN;
    else if (pos > 0 || neg > 0) out[i] = pos > 0 ? Infinity : -Infinity;
    else if (mult === null && to - from <= NARROW) {
      let d = 0;
      for (let j = from; j < to; j++) if (valid === null || valid[j] === 1) d += v[j];
      out[i] = d;
    } else out[i] = a === partStart[i] ? sum : sum + comp;
  }
  return out;
}

/** Integer and decimal sums as bigints (past ±2^53): as slide's, exact. */
function slideBig(
  c: Column,
  s: Shape,
  start: Int32Array,
  end: Int32Array,
  cnt: Float64Array,
  ids: Int32Array | null,
): bigint[] {
  const n = s.n;
  const valid = c.valid;
  const wide = c.type.id === 'decimal' && lanes(c.type) === 2;
  const v = c.values as ArrayLike<number | bigint>;
  const at = (j: number) => (wide ? decimalAt(c, j) : BigInt(v[j]));
  const mult = ids ? new Int32Array(n) : null;
  const out: bigint[] = new Array(n);
  const partStart = s.partStart;
  let sum = 0n,
    k = 0,
    a = 0,
    e = 0;
  for (let i = 0; i < n; i++) {
    if (i === partStart[i]) {
      if (mult !== null) for (; a < e; a++) mult[ids![a]] = 0;
      sum = 0n;
      k = 0;
      a = e = i;
    }
    const from = start[i],
      to = end[i] > from ? end[i] : from;
    for (; e < to; e++)
      if ((valid === null || valid[e] === 1) && (mult === null || mult[ids![e]]++ === 0)) {
        sum += at(e);
        k++;
      }
    for (; a < from; a++)
      if ((valid === null || valid[a] === 1) && (mult === null || --mult[ids![a]] === 0)) {
        sum -= at(a);
        k--;
      }
    cnt[i] = k;
    out[i] = sum;
  }
  return out;
}
