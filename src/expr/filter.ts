// Predicate evaluation with SQL's three-valued logic: each row is false (0),
// true (1) or null (2); only true rows pass a filter.
import type { BoundPredicate, Literal } from '../plan/bound.js';
import { type Batch, type Column, decimalAt, floatOrder, lanes } from '../kernels/column.js';
import { type DecimalValue, pow10 } from '../kernels/decimal.js';
import { compileExpr } from './compile.js';
import { strEqRows, strInRows } from './filter-strings.js';

const F = 0,
  T = 1,
  N = 2;
const encoder = new TextEncoder();

function compareBytes(a: Uint8Array, s: number, e: number, b: Uint8Array): number {
  const n = Math.min(e - s, b.length);
  for (let k = 0; k < n; k++) {
    const d = a[s + k] - b[k];
    if (d !== 0) return d;
  }
  return e - s - b.length;
}

/** A comparator of row i against a literal: negative, zero, positive. */
function cellComparator(c: Column, lit: Exclude<Literal, null>): (i: number) => number {
  const v = c.values as any;
  if (c.type.id === 'utf8') {
    const b = encoder.encode(String(lit));
    const o = c.offsets!;
    return (i) => compareBytes(v, o[i], o[i + 1], b);
  }
  if (c.type.id === 'decimal') {
    // Compared at the finer of the two scales, exactly.
    const d = lit as DecimalValue,
      cs = c.type.scale!,
      s = Math.max(cs, d.scale);
    const x = d.scaled * pow10(s - d.scale),
      f = pow10(s - cs);
    if (lanes(c.type) === 1 && f === 1n) return (i) => (v[i] < x ? -1 : v[i] > x ? 1 : 0);
    return (i) => {
      const y = decimalAt(c, i) * f;
      return y < x ? -1 : y > x ? 1 : 0;
    };
  }
  if (c.type.id === 'bool') {
    const x = lit ? 1 : 0;
    return (i) => v[i] - x;
  }
  if (typeof lit === 'bigint') return (i) => (v[i] < lit ? -1 : v[i] > lit ? 1 : 0);
  const x = Number(lit);
  if (typeof v[0] === 'bigint' || v instanceof BigInt64Array || v instanceof BigUint64Array) {
    return (i) => {
      const y = Number(v[i]);
      return y < x ? -1 : y > x ? 1 : 0;
    };
  }
  // NaN equals NaN and sorts above every number, as in DuckDB (floatOrder): `x > 5` holds for a NaN row
  return (i) => floatOrder(v[i] as number, x);
}

export function evalPredicate(b: Batch, p: BoundPredicate): Uint8Array {
  // Every loop over rows is a function of its own (see groupIdsOfRows in
  // agg/joinagg.ts): this one sees every predicate, comparator and column
  // shape, and held inline, each new comparator closure ("wrong call target")
  // recompiled it whole, loops and all (TPC-H q19: 23 compilations a run).
  const n = b.length;
  const out = new Uint8Array(n);
  switch (p.kind) {
    case 'isNull': {
      const c = b.columns[p.col];
      if (c.valid === null) return out.fill(p.isNull ? F : T);
      nullRows(out, c.valid, p.isNull, n);
      return out;
    }
    case 'cmp': {
      const c = b.columns[p.col];
      if (p.value === null) return out.fill(N);
      if (c.type.id === 'utf8' && (p.op === '=' || p.op === '!=')) {
        strEqRows(out, c.offsets!, c.values as Uint8Array, c.valid, encoder.encode(String(p.value)), p.op === '!=', n);
        return out;
      }
      cmpRows(out, c.valid, cellComparator(c, p.value), OPS.indexOf(p.op), n);
      return out;
    }
    case 'in': {
      const c = b.columns[p.col];
      if (c.type.id === 'utf8') {
        const lits = p.values.filter((v) => v !== null).map((v) => encoder.encode(String(v)));
        strInRows(out, c.offsets!, c.values as Uint8Array, c.valid, lits, p.values.includes(null), n);
        return out;
      }
      const cmps = p.values.filter((v) => v !== null).map((v) => cellComparator(c, v as Exclude<Literal, null>));
      inRows(
        out,
        c.valid,
        cmps,
        p.values.some((v) => v === null),
        n,
      );
      return out;
    }
    case 'not': {
      notRows(out, evalPredicate(b, p.pred), n);
      return out;
    }
    case 'and': {
      out.fill(T);
      for (const q of p.preds) andRows(out, evalPredicate(b, q), n);
      return out;
    }
    case 'expr': {
      const c = compileExpr(p.expr)(b);
      truthRows(out, c.values as Uint8Array, c.valid, n);
      return out;
    }
    case 'or': {
      out.fill(F);
      for (const q of p.preds) orRows(out, evalPredicate(b, q), n);
      return out;
    }
  }
}

/** The comparison operators, by their index in cmpRows. */
const OPS = ['=', '!=', '<', '<=', '>', '>='];

function nullRows(out: Uint8Array, valid: Uint8Array, isNull: boolean, n: number): void {
  for (let i = 0; i < n; i++) out[i] = (valid[i] === 0) === isNull ? T : F;
}

/** Each row against a literal by `cmp`; op: an index of OPS. */
function cmpRows(out: Uint8Array, valid: Uint8Array | null, cmp: (i: number) => number, op: number, n: number): void {
  for (let i = 0; i < n; i++) {
    if (valid !== null && valid[i] === 0) {
      out[i] = N;
      continue;
    }
    const d = cmp(i);
    const holds =
      d !== d
        ? op === 1
        : op === 0
          ? d === 0
          : op === 1
            ? d !== 0
            : op === 2
              ? d < 0
              : op === 3
                ? d <= 0
                : op === 4
                  ? d > 0
                  : d >= 0;
    out[i] = holds ? T : F;
  }
}

function inRows(
  out: Uint8Array,
  valid: Uint8Array | null,
  cmps: ((i: number) => number)[],
  hasNullValue: boolean,
  n: number,
): void {
  for (let i = 0; i < n; i++) {
    if (valid !== null && valid[i] === 0) {
      out[i] = N;
      continue;
    }
    let r = hasNullValue ? N : F;
    for (let k = 0; k < cmps.length; k++)
      if (cmps[k](i) === 0) {
        r = T;
        break;
      }
    out[i] = r;
  }
}

function notRows(out: Uint8Array, x: Uint8Array, n: number): void {
  for (let i = 0; i < n; i++) out[i] = x[i] === N ? N : x[i] ^ 1;
}

// Three-valued AND and OR by table (index 3a + b), with no branch on a row's values: filters that keep
// about half their rows mispredicted the branches every other row.
const AND = Uint8Array.from([F, F, F, F, T, N, F, N, N]);
const OR = Uint8Array.from([F, T, N, T, T, T, N, T, N]);

function andRows(out: Uint8Array, x: Uint8Array, n: number): void {
  const t = AND;
  for (let i = 0; i < n; i++) out[i] = t[3 * out[i] + x[i]];
}

function orRows(out: Uint8Array, x: Uint8Array, n: number): void {
  const t = OR;
  for (let i = 0; i < n; i++) out[i] = t[3 * out[i] + x[i]];
}

/** A boolean column's values as truth values (null rows: N). */
function truthRows(out: Uint8Array, v: Uint8Array, valid: Uint8Array | null, n: number): void {
  for (let i = 0; i < n; i++) out[i] = valid !== null && valid[i] === 0 ? N : v[i];
}

/** Indices of the rows for which the predicate is true. */
export function selectRows(b: Batch, p: BoundPredicate): { idx: Int32Array; n: number } {
  const r = evalPredicate(b, p);
  const idx = new Int32Array(b.length);
  return { idx, n: trueRows(r, idx, b.length) };
}

/**
 * The rows whose truth value is true into idx; returns how many (a loop alone in its function: see groupIdsOfRows in
 * agg/joinagg.ts).
 */
function trueRows(r: Uint8Array, idx: Int32Array, len: number): number {
  let n = 0;
  // every row written, the count advanced by its test (no branch on it); idx has room for every row
  for (let i = 0; i < len; i++) {
    idx[n] = i;
    n += +(r[i] === T);
  }
  return n;
}
