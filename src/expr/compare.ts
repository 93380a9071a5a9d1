// Comparison kernels with SQL's three-valued results (0 false, 1 true, 2
// null). Exact numbers compare exactly at their common scale; strings by
// UTF-8 bytes (code point order); NaN equals NaN and sorts above every
// number, as in DuckDB.
import { type Column, floatOrder, isFloat } from '../kernels/column.js';
import { pow10 } from '../kernels/decimal.js';
import { scaleOf } from './types.js';
import { bigAt, exactNums, floats } from './vector.js';

const SAFE = 9007199254740991;

function holds(op: string, d: number): number {
  switch (op) {
    case '=':
      return d === 0 ? 1 : 0;
    case '!=':
      return d !== 0 ? 1 : 0;
    case '<':
      return d < 0 ? 1 : 0;
    case '<=':
      return d <= 0 ? 1 : 0;
    case '>':
      return d > 0 ? 1 : 0;
    default:
      return d >= 0 ? 1 : 0;
  }
}

/** Row-by-row order of two columns: negative, zero, positive (nulls are handled by the caller). */
function differ(a: Column, b: Column): (i: number) => number {
  const ta = a.type,
    tb = b.type;
  if (ta.id === 'utf8') {
    const av = a.values as Uint8Array,
      bv = b.values as Uint8Array,
      ao = a.offsets!,
      bo = b.offsets!;
    return (i) => {
      const a0 = ao[i],
        a1 = ao[i + 1],
        b0 = bo[i],
        b1 = bo[i + 1],
        m = Math.min(a1 - a0, b1 - b0);
      for (let k = 0; k < m; k++) {
        const d = av[a0 + k] - bv[b0 + k];
        if (d !== 0) return d;
      }
      return a1 - a0 - (b1 - b0);
    };
  }
  if (isFloat(ta) || isFloat(tb)) {
    const x = floats(a),
      y = floats(b);
    return (i) => floatOrder(x[i], y[i]);
  }
  if (ta.id === 'bool' || ta.id === 'date32' || ta.id === 'timestamp') {
    const x = a.values as any,
      y = b.values as any;
    return (i) => (x[i] < y[i] ? -1 : x[i] > y[i] ? 1 : 0);
  }
  // exact numbers at the finer scale
  const s = Math.max(scaleOf(ta), scaleOf(tb)),
    ka = s - scaleOf(ta),
    kb = s - scaleOf(tb);
  const x = exactNums(a),
    y = exactNums(b),
    fa = 10 ** ka,
    fb = 10 ** kb,
    Fa = pow10(ka),
    Fb = pow10(kb);
  return (i) => {
    const u = x[i] * fa,
      v = y[i] * fb;
    if (u <= SAFE && u >= -SAFE && v <= SAFE && v >= -SAFE) return u < v ? -1 : u > v ? 1 : 0;
    const p = bigAt(a, i) * Fa,
      q = bigAt(b, i) * Fb;
    return p < q ? -1 : p > q ? 1 : 0;
  };
}

export function compare(op: string, a: Column, b: Column): Uint8Array {
  const n = a.length,
    out = new Uint8Array(n),
    d = differ(a, b),
    va = a.valid,
    vb = b.valid;
  for (let i = 0; i < n; i++) {
    if ((va !== null && va[i] === 0) || (vb !== null && vb[i] === 0)) out[i] = 2;
    else out[i] = holds(op, d(i));
  }
  return out;
}

/** x in (v1, v2, ...): true on a match; else null if x or any value is null; else false. */
export function inList(x: Column, values: Column[]): Uint8Array {
  const n = x.length,
    out = new Uint8Array(n);
  const eqs = values.map((v) => compare('=', x, v));
  for (let i = 0; i < n; i++) {
    let r = 0;
    for (const e of eqs) {
      if (e[i] === 1) {
        r = 1;
        break;
      }
      if (e[i] === 2) r = 2;
    }
    out[i] = r;
  }
  return out;
}

/** and / or / not over three-valued results. */
export function logic(fn: string, parts: Uint8Array[]): Uint8Array {
  const n = parts[0].length;
  if (fn === 'not') {
    const x = parts[0],
      out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = x[i] === 2 ? 2 : x[i] ^ 1;
    return out;
  }
  const out = new Uint8Array(n).fill(fn === 'and' ? 1 : 0);
  const dominant = fn === 'and' ? 0 : 1;
  for (const x of parts) {
    for (let i = 0; i < n; i++) {
      if (out[i] === dominant || x[i] === dominant) out[i] = dominant;
      else if (x[i] === 2) out[i] = 2;
    }
  }
  return out;
}
