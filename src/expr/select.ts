// Filters as selections: a bool expression becomes a function from a batch
// (and the rows still selected) to the rows where it is true. A conjunction
// narrows the selection one term at a time, so a later term looks only at the
// rows the earlier ones passed; a disjunction tries each term on the rows not
// yet taken. A comparison of an exact column (integers, dates, timestamps,
// decimals) with a constant, or of two columns of one integer-like type, is a
// range test in a typed loop over the selection; a string column's equality
// with constants compares bytes; any other term is computed by the expression
// kernels (compile.ts) on the selected rows only.
import { type Batch, type Column, type DataType, Int32Scratch, gather, lanes } from '../kernels/column.js';
import { pow10 } from '../kernels/decimal.js';
import { exprCols } from './columns.js';
import { compileExpr } from './compile.js';
import { foldConstants } from './fold.js';
import { type BoundExpr, isExact, scaleOf } from './types.js';
import { bigAt } from './vector.js';
import { inRange32, inRange64, stop } from './range64.js';

/** Rows of a batch in ascending order: the first n of idx. */
export interface Selection {
  idx: Int32Array;
  n: number;
}

/**
 * The rows of `sel` (all rows when null) where the term is true. It may
 * overwrite `sel.idx` (keeping what it returns), except the shared identity.
 */
type Select = (b: Batch, sel: Selection | null) => Selection;

/**
 * A filter's predicate as a function from a batch to the rows that pass (valid until the next call: gather them first).
 */
export function compileFilter(e: BoundExpr): (b: Batch) => Selection {
  const s = selector(foldConstants(e, (x, b) => compileExpr(x)(b)));
  return (b) => s(b, null);
}

let identityRows = new Int32Array(0);
/** 0, 1, ..., n - 1: read only, shared. */
function identity(n: number): Int32Array {
  if (identityRows.length < n) {
    identityRows = new Int32Array(Math.max(n, 2 * identityRows.length));
    for (let i = 0; i < identityRows.length; i++) identityRows[i] = i;
  }
  return identityRows;
}
const all = (b: Batch, sel: Selection | null): Selection => sel ?? { idx: identity(b.length), n: b.length };
// A filter's selection is gathered before the next batch is filtered: the first
// term of each writes into this per-thread scratch, the next ones over it.
const firstTerm = new Int32Scratch(1 << 17, 1 << 22);
/** Where a term writes the rows it keeps: over its input, unless that is the shared identity. */
const outputFor = (s: Selection): Int32Array => (s.idx === identityRows ? firstTerm.get(s.n) : s.idx);

function selector(e: BoundExpr): Select {
  if (e.k === 'lit') return e.value === true ? all : () => ({ idx: new Int32Array(0), n: 0 });
  if (e.k === 'fn') {
    if (e.fn === 'and') {
      const terms = conjuncts(e);
      return (b, sel) => {
        let s = all(b, sel);
        for (const t of terms) {
          if (s.n === 0) break;
          s = t(b, s);
        }
        return s;
      };
    }
    if (e.fn === 'or') return anyOf(e.args.map(selector));
    const fast = comparison(e) ?? stringMatch(e);
    if (fast) return fast;
  }
  return computed(e);
}

/** The terms of nested conjunctions, range tests of one column merged into one (`lo <= x and x < hi`). */
function conjuncts(e: BoundExpr): Select[] {
  const flat: BoundExpr[] = [];
  const walk = (x: BoundExpr) => {
    if (x.k === 'fn' && x.fn === 'and') x.args.forEach(walk);
    else flat.push(x);
  };
  walk(e);
  const ranges = new Map<number, { at: number; r: Range }>();
  const terms: (Select | { col: number })[] = [];
  for (const x of flat) {
    const t = x.k === 'fn' ? columnRange(x) : null;
    if (!t || t.r.negate) {
      terms.push(selector(x));
      continue;
    }
    const m = ranges.get(t.col);
    if (m) m.r = intersect(m.r, t.r);
    else {
      ranges.set(t.col, { at: terms.length, r: t.r });
      terms.push({ col: t.col });
    }
  }
  // a column's merged range stands where its first test stood
  return terms.map((t) => (typeof t === 'function' ? t : rangeSelect(t.col, ranges.get(t.col)!.r)));
}

const maxOf = (a: bigint | null, b: bigint | null) => (a === null ? b : b === null ? a : a > b ? a : b);
const minOf = (a: bigint | null, b: bigint | null) => (a === null ? b : b === null ? a : a < b ? a : b);
const intersect = (a: Range, b: Range): Range => ({ lo: maxOf(a.lo, b.lo), hi: minOf(a.hi, b.hi), negate: false });

/** A disjunction: each term tried on the rows no earlier term took. */
function anyOf(terms: Select[]): Select {
  return (b, sel) => {
    const base = all(b, sel),
      taken = new Uint8Array(b.length);
    let rest: Selection = { idx: base.idx.slice(0, base.n), n: base.n };
    for (const t of terms) {
      if (rest.n === 0) break;
      const hit = t(b, { idx: rest.idx.slice(0, rest.n), n: rest.n });
      for (let k = 0; k < hit.n; k++) taken[hit.idx[k]] = 1;
      let m = 0;
      for (let k = 0; k < rest.n; k++) {
        const i = rest.idx[k];
        if (taken[i] === 0) rest.idx[m++] = i;
      }
      rest = { idx: rest.idx, n: m };
    }
    const out = outputFor(base);
    let m = 0;
    for (let k = 0; k < base.n; k++) {
      const i = base.idx[k];
      if (taken[i] === 1) out[m++] = i;
    }
    return { idx: out, n: m };
  };
}

/** Any other term: its kernels run on the selected rows of the columns it reads. */
function computed(e: BoundExpr): Select {
  const kernel = compileExpr(e),
    cols = [...exprCols(e, new Set())];
  return (b, sel) => {
    const s = all(b, sel),
      whole = s.n === b.length;
    let sub = b;
    if (!whole) {
      const columns = b.columns.slice();
      for (const c of cols) columns[c] = gather(b.columns[c], s.idx, s.n);
      sub = { length: s.n, columns };
    }
    const c = kernel(sub),
      v = c.values as Uint8Array,
      valid = c.valid,
      out = outputFor(s);
    let m = 0;
    for (let k = 0; k < s.n; k++) if (v[k] === 1 && (valid === null || valid[k] === 1)) out[m++] = s.idx[k];
    return { idx: out, n: m };
  };
}

const FLIP: Record<string, string> = { '<': '>', '<=': '>=', '>': '<', '>=': '<=', '=': '=', '!=': '!=' };
const INT_LIKE = new Set(['int8', 'int16', 'int32', 'uint8', 'uint16', 'uint32', 'date32']);
const WORDS64 = new Set(['int64', 'uint64', 'timestamp', 'decimal']);

/** Integer bounds of a range test: lo <= x <= hi (null: unbounded), the test negated for `!=`. */
interface Range {
  lo: bigint | null;
  hi: bigint | null;
  negate: boolean;
}

const EMPTY: Range = { lo: 1n, hi: 0n, negate: false };
const floorDiv = (x: bigint, d: bigint) => (x >= 0n ? x / d : -((-x + d - 1n) / d));
const ceilDiv = (x: bigint, d: bigint) => -floorDiv(-x, d);

/** x op c for integers x = (a column's scaled integer) and c = C / 10^k, as a range of x. */
function rangeOf(op: string, C: bigint, k: number): Range {
  const d = pow10(k),
    fl = floorDiv(C, d),
    ce = ceilDiv(C, d);
  switch (op) {
    case '<':
      return { lo: null, hi: ce - 1n, negate: false };
    case '<=':
      return { lo: null, hi: fl, negate: false };
    case '>':
      return { lo: fl + 1n, hi: null, negate: false };
    case '>=':
      return { lo: ce, hi: null, negate: false };
    // not a multiple of 10^k: no integer equals it (an empty range)
    default:
      return fl === ce ? { lo: fl, hi: fl, negate: op === '!=' } : { ...EMPTY, negate: op === '!=' };
  }
}

const CMPS = new Set(['<', '<=', '>', '>=', '=', '!=']);

/** A comparison the range loop serves, else null. */
function comparison(e: Extract<BoundExpr, { k: 'fn' }>): Select | null {
  if (!CMPS.has(e.fn)) return null;
  const [a, b] = e.args;
  const t = columnRange(e);
  if (t) return rangeSelect(t.col, t.r);
  if (a.k === 'col' && b.k === 'col' && a.type.id === b.type.id && INT_LIKE.has(a.type.id)) {
    // x op y as (x - y) op 0: exact for 32-bit values
    const r = rangeOf(e.fn, 0n, 0);
    return (batch, sel) => rangeDiff(batch.columns[a.col], batch.columns[b.col], r, all(batch, sel));
  }
  return null;
}

/**
 * Whether a column of type t compares with constant c in the range loop: exact numbers, or dates and timestamps alike.
 */
function comparable(t: DataType, c: DataType): boolean {
  if (isExact(t) && isExact(c)) return true;
  return (
    (t.id === 'date32' && c.id === 'date32') || (t.id === 'timestamp' && c.id === 'timestamp' && t.unit === c.unit)
  );
}

/** A comparison of a column with a constant as a range of the column's values, else null. */
function columnRange(e: Extract<BoundExpr, { k: 'fn' }>): { col: number; r: Range } | null {
  if (!CMPS.has(e.fn)) return null;
  const [a, b] = e.args;
  const [col, c, op] =
    a.k === 'col' && b.k === 'lit'
      ? [a, b, e.fn]
      : b.k === 'col' && a.k === 'lit'
        ? [b, a, FLIP[e.fn]]
        : [null, null, ''];
  if (col === null || c === null) return null;
  if (!comparable(col.type, c.type) || !(INT_LIKE.has(col.type.id) || WORDS64.has(col.type.id))) return null;
  if (c.value === null) return { col: col.col, r: EMPTY }; // null: never true
  if (typeof c.value !== 'bigint' && typeof c.value !== 'number') return null;
  // the column's value x at its scale against C / 10^k: both at the finer scale
  const sx = scaleOf(col.type),
    sc = scaleOf(c.type),
    s = Math.max(sx, sc);
  return { col: col.col, r: rangeOf(op, BigInt(c.value) * pow10(s - sc), s - sx) };
}

const rangeSelect =
  (col: number, r: Range): Select =>
  (b, sel) =>
    rangeConst(b.columns[col], r, all(b, sel));

const TWO32 = 4294967296;
const num = (x: bigint | null, inf: number) => (x === null ? inf : Number(x));

/**
 * The selected rows with lo <= x <= hi (or outside, negated), nulls never.
 * Values below 2^53 in magnitude are compared as float64 (exact: a bound
 * rounded to float64 keeps its order against them); larger 64- or 128-bit
 * values as bigint.
 */
function rangeConst(c: Column, r: Range, s: Selection): Selection {
  const lo = num(r.lo, -Infinity),
    hi = num(r.hi, Infinity),
    neg = r.negate,
    valid = c.valid,
    idx = s.idx,
    out = outputFor(s);
  let m = 0;
  if (INT_LIKE.has(c.type.id)) {
    // any 8-, 16- or 32-bit array: read as numbers alike
    return { idx: out, n: inRange32(c.values as Int32Array, valid, lo, hi, neg, idx, s.n, out) };
  }
  const words = 2 * lanes(c.type),
    unsigned = c.type.id === 'uint64';
  const w = new Int32Array(c.values.buffer, c.values.byteOffset, words * c.length);
  // signed 64-bit lanes within ±2^53 (decimals, timestamps): a loop of their own, to the first value beyond
  let k0 = 0;
  if (words === 2 && !unsigned) {
    m = inRange64(w, valid, lo, hi, neg, idx, s.n, out);
    if (stop.at === s.n) return { idx: out, n: m };
    k0 = stop.at;
  }
  for (let k = k0; k < s.n; k++) {
    const i = idx[k];
    if (valid !== null && valid[i] === 0) continue;
    const p = words * i,
      h = w[p + 1];
    let inside: boolean;
    if (
      unsigned
        ? h >>> 0 < 0x200000
        : h < 0x200000 && h >= -0x200000 && (words === 2 || (w[p + 2] === h >> 31 && w[p + 3] === h >> 31))
    ) {
      const x = (unsigned ? h >>> 0 : h) * TWO32 + (w[p] >>> 0);
      inside = x >= lo && x <= hi;
    } else {
      const x = bigAt(c, i);
      inside = (r.lo === null || x >= r.lo) && (r.hi === null || x <= r.hi);
    }
    if (inside !== neg) out[m++] = i;
  }
  return { idx: out, n: m };
}

/** Rows where x - y is within the range (two columns of one 32-bit type). */
function rangeDiff(a: Column, b: Column, r: Range, s: Selection): Selection {
  const lo = num(r.lo, -Infinity),
    hi = num(r.hi, Infinity),
    neg = r.negate;
  const out = outputFor(s);
  return {
    idx: out,
    n: diffInRange(a.values as Int32Array, b.values as Int32Array, a.valid, b.valid, lo, hi, neg, s.idx, s.n, out),
  };
}

// The loops of rangeConst and rangeDiff are functions of their own with
// nothing after the loop but a return: see groupIdsOfRows in agg/joinagg.ts.

function diffInRange(
  x: Int32Array,
  y: Int32Array,
  va: Uint8Array | null,
  vb: Uint8Array | null,
  lo: number,
  hi: number,
  neg: boolean,
  idx: Int32Array,
  n: number,
  out: Int32Array,
): number {
  let m = 0;
  for (let k = 0; k < n; k++) {
    const i = idx[k],
      d = x[i] - y[i];
    if ((d >= lo && d <= hi) !== neg && (va === null || va[i] === 1) && (vb === null || vb[i] === 1)) out[m++] = i;
  }
  return m;
}

const encoder = new TextEncoder();

/** A string column equal (or not) to a constant, or in a list of constants, else null. */
function stringMatch(e: Extract<BoundExpr, { k: 'fn' }>): Select | null {
  const [a, ...rest] = e.args;
  const isText = (x: BoundExpr): x is Extract<BoundExpr, { k: 'lit' }> => x.k === 'lit' && typeof x.value === 'string';
  if (a.k !== 'col' || a.type.id !== 'utf8') return null;
  if ((e.fn === '=' || e.fn === '!=') && isText(rest[0]))
    return bytesIn(a.col, [rest[0].value as string], e.fn === '!=');
  if (e.fn === '$in' && rest.length > 0 && rest.every(isText))
    return bytesIn(
      a.col,
      rest.map((x) => (x as { value: string }).value),
      false,
    );
  return null;
}

/** The selected rows whose string is one of `texts` (or none of them, negated), nulls never. */
function bytesIn(col: number, texts: string[], negate: boolean): Select {
  const wanted = texts.map((t) => encoder.encode(t));
  return (b, sel) => {
    const s = all(b, sel),
      c = b.columns[col],
      v = c.values as Uint8Array,
      o = c.offsets!,
      valid = c.valid,
      out = outputFor(s);
    let m = 0;
    for (let k = 0; k < s.n; k++) {
      const i = s.idx[k];
      if (valid !== null && valid[i] === 0) continue;
      const start = o[i],
        len = o[i + 1] - start;
      let hit = false;
      for (let t = 0; t < wanted.length && !hit; t++) {
        const w = wanted[t];
        if (w.length !== len) continue;
        let j = 0;
        while (j < len && v[start + j] === w[j]) j++;
        hit = j === len;
      }
      if (hit !== negate) out[m++] = i;
    }
    return { idx: out, n: m };
  };
}
