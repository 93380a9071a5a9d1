// Predicate evaluation with SQL's three-valued logic: each row is false (0),
// true (1) or null (2); only true rows pass a filter.
import type { BoundPredicate, Literal } from '../plan/bound.js';
import { type Batch, type Column, decimalAt, lanes } from './column.js';
import { type DecimalValue, pow10 } from './decimal.js';
import { compileExpr } from '../expr/compile.js';

const F = 0, T = 1, N = 2;
const encoder = new TextEncoder();

function compareBytes(a: Uint8Array, s: number, e: number, b: Uint8Array): number {
  const n = Math.min(e - s, b.length);
  for (let k = 0; k < n; k++) {
    const d = a[s + k] - b[k];
    if (d !== 0) return d;
  }
  return (e - s) - b.length;
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
    const d = lit as DecimalValue, cs = c.type.scale!, s = Math.max(cs, d.scale);
    const x = d.scaled * pow10(s - d.scale), f = pow10(s - cs);
    if (lanes(c.type) === 1 && f === 1n) return (i) => (v[i] < x ? -1 : v[i] > x ? 1 : 0);
    return (i) => { const y = decimalAt(c, i) * f; return y < x ? -1 : y > x ? 1 : 0; };
  }
  if (c.type.id === 'bool') {
    const x = lit ? 1 : 0;
    return (i) => v[i] - x;
  }
  if (typeof lit === 'bigint') return (i) => (v[i] < lit ? -1 : v[i] > lit ? 1 : 0);
  const x = Number(lit);
  if (typeof v[0] === 'bigint' || v instanceof BigInt64Array || v instanceof BigUint64Array) {
    return (i) => { const y = Number(v[i]); return y < x ? -1 : y > x ? 1 : 0; };
  }
  return (i) => { const y = v[i]; return y < x ? -1 : y > x ? 1 : y === x ? 0 : NaN; };
}

function cmpHolds(op: string, d: number): boolean {
  switch (op) {
    case '=': return d === 0;
    case '!=': return d !== 0;
    case '<': return d < 0;
    case '<=': return d <= 0;
    case '>': return d > 0;
    default: return d >= 0;
  }
}

export function evalPredicate(b: Batch, p: BoundPredicate): Uint8Array {
  const n = b.length;
  const out = new Uint8Array(n);
  switch (p.kind) {
    case 'isNull': {
      const c = b.columns[p.col];
      for (let i = 0; i < n; i++) {
        const isNull = c.valid !== null && c.valid[i] === 0;
        out[i] = isNull === p.isNull ? T : F;
      }
      return out;
    }
    case 'cmp': {
      const c = b.columns[p.col];
      if (p.value === null) return out.fill(N);
      const cmp = cellComparator(c, p.value);
      const valid = c.valid;
      for (let i = 0; i < n; i++) {
        if (valid !== null && valid[i] === 0) out[i] = N;
        else {
          const d = cmp(i);
          out[i] = d !== d ? (p.op === '!=' ? T : F) : cmpHolds(p.op, d) ? T : F; // NaN compares unequal
        }
      }
      return out;
    }
    case 'in': {
      const c = b.columns[p.col];
      const cmps = p.values.filter((v) => v !== null).map((v) => cellComparator(c, v as Exclude<Literal, null>));
      const hasNullValue = p.values.some((v) => v === null);
      const valid = c.valid;
      for (let i = 0; i < n; i++) {
        if (valid !== null && valid[i] === 0) { out[i] = N; continue; }
        let r = hasNullValue ? N : F;
        for (const cmp of cmps) if (cmp(i) === 0) { r = T; break; }
        out[i] = r;
      }
      return out;
    }
    case 'not': {
      const x = evalPredicate(b, p.pred);
      for (let i = 0; i < n; i++) out[i] = x[i] === N ? N : x[i] ^ 1;
      return out;
    }
    case 'and': {
      out.fill(T);
      for (const q of p.preds) {
        const x = evalPredicate(b, q);
        for (let i = 0; i < n; i++) {
          if (out[i] === F || x[i] === F) out[i] = F;
          else if (x[i] === N) out[i] = N;
        }
      }
      return out;
    }
    case 'expr': {
      const c = compileExpr(p.expr)(b), v = c.values as Uint8Array, valid = c.valid;
      for (let i = 0; i < n; i++) out[i] = valid !== null && valid[i] === 0 ? N : v[i];
      return out;
    }
    case 'or': {
      out.fill(F);
      for (const q of p.preds) {
        const x = evalPredicate(b, q);
        for (let i = 0; i < n; i++) {
          if (out[i] === T || x[i] === T) out[i] = T;
          else if (x[i] === N) out[i] = N;
        }
      }
      return out;
    }
  }
}

/** Indices of the rows for which the predicate is true. */
export function selectRows(b: Batch, p: BoundPredicate): { idx: Int32Array; n: number } {
  const r = evalPredicate(b, p);
  const idx = new Int32Array(b.length);
  return { idx, n: trueRows(r, idx, b.length) };
}

/** The rows whose truth value is true into idx; returns how many (a loop alone in its function: see groupIdsOfRows in agg/joinagg.ts). */
function trueRows(r: Uint8Array, idx: Int32Array, len: number): number {
  let n = 0;
  for (let i = 0; i < len; i++) if (r[i] === T) idx[n++] = i;
  return n;
}
