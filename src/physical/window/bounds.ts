// The shape of a window task's sorted rows: where each partition and each group of peers (rows equal on the order
// keys) starts and ends, and each row's frame as [start, end) row indices, clamped to its partition. Pure, over the
// rows sorted by (partition keys, order keys).
import { type Batch, type Column, decimalAt } from '../../kernels/column.js';
import { type SortKey, valueComparator } from '../../kernels/sort.js';
import type { BoundFrame } from '../../plan/bound.js';
import { type Slot, scratchI32 } from './scratch.js';

/** Per row: its partition's [start, end) and its peers' [start, end). */
export interface Shape {
  readonly n: number;
  readonly partStart: Int32Array;
  readonly partEnd: Int32Array;
  readonly peerStart: Int32Array;
  readonly peerEnd: Int32Array;
}

/**
 * A shape from where its runs start (`partCut[i]`: a partition starts at row i; `peerCut[i]`: a group of peers,
 * every partition's first row one), each bound array made when a function first reads it: a running sum reads two
 * of the four, row_number one (each is 4 bytes a row written, on a task of 700,000 rows). `pooled`: the arrays are
 * the thread's scratch slots (window/scratch.ts), valid until the next task's shape: the task's packed sort's one.
 */
export class CutShape implements Shape {
  #partStart: Int32Array | null = null;
  #partEnd: Int32Array | null = null;
  #peerStart: Int32Array | null = null;
  #peerEnd: Int32Array | null = null;
  constructor(
    readonly n: number,
    private readonly partCut: Uint8Array,
    private readonly peerCut: Uint8Array,
    private readonly pooled = false,
  ) {}
  private out(slot: Slot): Int32Array {
    return this.pooled ? scratchI32(slot, this.n) : new Int32Array(this.n);
  }
  get partStart(): Int32Array {
    this.#partStart ??= runStarts(this.n, this.partCut, this.out('partStart'));
    return this.#partStart;
  }
  get partEnd(): Int32Array {
    this.#partEnd ??= runEnds(this.n, this.partCut, this.out('partEnd'));
    return this.#partEnd;
  }
  get peerStart(): Int32Array {
    this.#peerStart ??= runStarts(this.n, this.peerCut, this.out('peerStart'));
    return this.#peerStart;
  }
  get peerEnd(): Int32Array {
    this.#peerEnd ??= runEnds(this.n, this.peerCut, this.out('peerEnd'));
    return this.#peerEnd;
  }
}

/** Each row's run's first row (`cut[i]`: a run starts at i), into `out`. */
function runStarts(n: number, cut: Uint8Array, out: Int32Array): Int32Array {
  let s = 0;
  for (let i = 0; i < n; i++) {
    if (cut[i]) s = i;
    out[i] = s;
  }
  return out;
}

/** Each row's run's end (one past its last row), into `out`. */
function runEnds(n: number, cut: Uint8Array, out: Int32Array): Int32Array {
  let e = n;
  for (let i = n - 1; i >= 0; i--) {
    out[i] = e;
    if (cut[i]) e = i;
  }
  return out;
}

/** Whether rows i and j are equal on the columns (nulls equal to each other: one partition, one group of peers). */
function equalOn(b: Batch, cols: number[]): (i: number, j: number) => boolean {
  const eqs = cols.map((c) => {
    const col = b.columns[c];
    const cmp = valueComparator(col);
    const valid = col.valid;
    return (i: number, j: number) => {
      if (valid !== null && (valid[i] === 0 || valid[j] === 0)) return valid[i] === valid[j];
      return cmp(i, j) === 0;
    };
  });
  return (i, j) => {
    for (const eq of eqs) if (!eq(i, j)) return false;
    return true;
  };
}

export function shapeOf(b: Batch, partitionBy: number[], orderBy: SortKey[]): Shape {
  const n = b.length;
  const cut = new Uint8Array(n);
  if (n > 0) cut[0] = 1;
  if (partitionBy.length > 0) {
    const eq = equalOn(b, partitionBy);
    for (let i = 1; i < n; i++) if (!eq(i - 1, i)) cut[i] = 1;
  }
  const peers = cut.slice();
  if (orderBy.length > 0) {
    const eq = equalOn(
      b,
      orderBy.map((k) => k.col),
    );
    for (let i = 1; i < n; i++) if (!peers[i] && !eq(i - 1, i)) peers[i] = 1;
  }
  return new CutShape(n, cut, peers);
}

/** The order key as float64 (a decimal: its scaled integer), for RANGE offsets. */
function keyNumbers(c: Column): Float64Array {
  const out = new Float64Array(c.length);
  if (c.type.id === 'decimal') for (let i = 0; i < c.length; i++) out[i] = Number(decimalAt(c, i));
  else {
    const v = c.values as ArrayLike<number | bigint>;
    for (let i = 0; i < c.length; i++) out[i] = Number(v[i]);
  }
  return out;
}

/** A RANGE offset in the key's units: a decimal's is scaled. */
const scaled = (c: Column, x: number) => (c.type.id === 'decimal' ? x * 10 ** c.type.scale! : x);

/**
 * Each row's frame [start, end) as row indices (end >= start; an empty frame has end = start), clamped to its
 * partition. Starts and ends never decrease within a partition (the sliding aggregates rely on it).
 */
export function frameOf(s: Shape, f: BoundFrame, b: Batch, orderBy: SortKey[]): { start: Int32Array; end: Int32Array } {
  const { n, partStart, partEnd, peerStart, peerEnd } = s;
  const start = new Int32Array(n),
    end = new Int32Array(n);
  const offsets = f.unit === 'range' && ((f.start ?? 0) !== 0 || (f.end ?? 0) !== 0);
  const key = offsets ? b.columns[orderBy[0].col] : null;
  const vals = key ? keyNumbers(key) : null;
  const dir = orderBy[0]?.desc ? -1 : 1;
  for (let i = 0; i < n; i++) {
    const ps = partStart[i],
      pe = partEnd[i];
    let a: number, e: number;
    if (f.unit === 'rows') {
      a = f.start === null ? ps : Math.min(pe, Math.max(ps, i + f.start));
      e = f.end === null ? pe : Math.min(pe, Math.max(ps, i + f.end + 1));
    } else if (key === null || (key.valid !== null && key.valid[i] === 0)) {
      // no offsets, or a null key (null plus or minus an offset is null: its peers, as DuckDB)
      a = f.start === null ? ps : peerStart[i];
      e = f.end === null ? pe : peerEnd[i];
    } else {
      // the partition's non-null keys, increasing in dir * key
      const [lo, hi] = nonNull(key, ps, pe, peerStart, peerEnd);
      const v = dir * vals![i];
      a = f.start === null ? ps : firstAtLeast(vals!, dir, lo, hi, v + scaled(key, f.start), false);
      e = f.end === null ? pe : firstAtLeast(vals!, dir, lo, hi, v + scaled(key, f.end), true);
    }
    start[i] = a;
    end[i] = Math.max(a, e);
  }
  return { start, end };
}

/** The rows [lo, hi) of a partition whose order key is not null (nulls are one group of peers at one end). */
function nonNull(key: Column, ps: number, pe: number, peerStart: Int32Array, peerEnd: Int32Array): [number, number] {
  const v = key.valid;
  if (v === null || pe === ps) return [ps, pe];
  if (v[ps] === 0) return [peerEnd[ps], pe];
  if (v[pe - 1] === 0) return [ps, peerStart[pe - 1]];
  return [ps, pe];
}

/** The first row of [lo, hi) whose dir * key is >= x (`strict`: > x), or hi. */
function firstAtLeast(vals: Float64Array, dir: number, lo: number, hi: number, x: number, strict: boolean): number {
  while (lo < hi) {
    const m = (lo + hi) >>> 1;
    const y = dir * vals[m];
    if (strict ? y <= x : y < x) lo = m + 1;
    else hi = m;
  }
  return lo;
}
