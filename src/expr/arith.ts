// Arithmetic kernels. Exact operands (integers, scaled decimals) are computed
// in float64 where every value and the result are safe integers, and in
// bigint otherwise, so no value is rounded and an overflow is raised, never
// wrapped. Floats follow IEEE (x / 0 is ±Infinity or NaN, as DuckDB); x % 0
// is null.
import { type Column, type DataType, isFloat } from '../kernels/column.js';
import { pow10 } from '../kernels/decimal.js';
import { rescale } from './scalar.js';
import { scaleOf } from './types.js';
import { ExactWriter, andValid, bigAt, exactNums, floats } from './vector.js';

const SAFE = 9007199254740991;
const BIG: Record<string, (x: bigint, y: bigint) => bigint> = {
  '+': (x, y) => x + y,
  '-': (x, y) => x - y,
  '*': (x, y) => x * y,
  '%': (x, y) => x % y,
};

/** In float64, or rounded to float32 after each operation when `type` is float32 (IEEE float32 arithmetic). */
function floatArith(op: string, a: Column, b: Column, type: DataType): Column {
  const n = a.length,
    x = floats(a),
    y = floats(b),
    out = type.id === 'float32' ? new Float32Array(n) : new Float64Array(n);
  let valid = andValid([a, b], n);
  switch (op) {
    case '+':
      for (let i = 0; i < n; i++) out[i] = x[i] + y[i];
      break;
    case '-':
      for (let i = 0; i < n; i++) out[i] = x[i] - y[i];
      break;
    case '*':
      for (let i = 0; i < n; i++) out[i] = x[i] * y[i];
      break;
    case '/':
      for (let i = 0; i < n; i++) out[i] = x[i] / y[i];
      break;
    default:
      for (let i = 0; i < n; i++) {
        if (y[i] === 0) {
          valid ??= new Uint8Array(n).fill(1);
          valid[i] = 0;
        } else out[i] = x[i] % y[i];
      }
  }
  return { type, length: n, values: out, valid };
}

export function arith(op: string, a: Column, b: Column, type: DataType, what: string): Column {
  if (isFloat(type)) return floatArith(op, a, b, type);
  const n = a.length;
  const so = scaleOf(type);
  // + - %: both operands at the result's scale; *: scales add up.
  const ka = op === '*' ? 0 : so - scaleOf(a.type),
    kb = op === '*' ? 0 : so - scaleOf(b.type);
  const fa = 10 ** ka,
    fb = 10 ** kb,
    Fa = pow10(ka),
    Fb = pow10(kb);
  const x = exactNums(a),
    y = exactNums(b);
  const out = new ExactWriter(type, n, what, andValid([a, b], n));
  const valid = () => (out.valid ??= new Uint8Array(n).fill(1));
  const big = BIG[op];
  for (let i = 0; i < n; i++) {
    if (out.valid !== null && out.valid[i] === 0) continue;
    const u = x[i] * fa,
      v = y[i] * fb;
    if (op === '%' && (v === 0 || (v !== v && bigAt(b, i) === 0n))) {
      valid()[i] = 0;
      continue;
    }
    if (u <= SAFE && u >= -SAFE && v <= SAFE && v >= -SAFE) {
      const r = op === '+' ? u + v : op === '-' ? u - v : op === '*' ? u * v : u % v;
      // exact operands give an exact result whenever it is a safe integer
      if (r <= SAFE && r >= -SAFE) {
        out.num(i, r);
        continue;
      }
    }
    out.big(i, big(bigAt(a, i) * Fa, bigAt(b, i) * Fb));
  }
  return out.column();
}

/** neg, abs, floor, ceil, round(x, digits). */
export function unary(fn: string, a: Column, type: DataType, what: string, digits = 0): Column {
  const n = a.length;
  if (isFloat(type)) {
    const x = floats(a),
      out = type.id === 'float32' ? new Float32Array(n) : new Float64Array(n),
      f = 10 ** Math.abs(digits);
    const g: (v: number) => number =
      fn === 'neg'
        ? (v) => -v
        : fn === 'abs'
          ? Math.abs
          : fn === 'floor'
            ? Math.floor
            : fn === 'ceil'
              ? Math.ceil
              : digits < 0
                ? // DuckDB: divided by 10^-digits, rounded half away from zero, multiplied back; 0 if not finite
                  (v) => {
                    const r = Math.sign(v) * Math.round(Math.abs(v) / f) * f;
                    return Number.isFinite(r) ? r : 0;
                  }
                : (v) => {
                    const r = (Math.sign(v) * Math.round(Math.abs(v) * f)) / f;
                    return Number.isFinite(r) ? r : v;
                  };
    for (let i = 0; i < n; i++) out[i] = g(x[i]);
    return { type, length: n, values: out, valid: a.valid };
  }
  const out = new ExactWriter(type, n, what, a.valid ? a.valid.slice(0, n) : null);
  const x = exactNums(a),
    sa = scaleOf(a.type),
    so = scaleOf(type);
  for (let i = 0; i < n; i++) {
    if (out.valid !== null && out.valid[i] === 0) continue;
    if ((fn === 'neg' || fn === 'abs') && x[i] === x[i]) {
      out.num(i, fn === 'neg' ? -x[i] : Math.abs(x[i]));
      continue;
    }
    const v = bigAt(a, i);
    let r: bigint;
    if (fn === 'neg') r = -v;
    else if (fn === 'abs') r = v < 0n ? -v : v;
    else if (fn === 'round') {
      // to `digits` places (negative: tens, hundreds), half away from zero, then at the result's scale
      const d = Math.min(digits, sa);
      r = rescale(rescale(v, sa, d), d, so);
    } else {
      const f = pow10(sa),
        q = v / f,
        rem = v % f;
      r = fn === 'floor' ? (rem < 0n ? q - 1n : q) : rem > 0n ? q + 1n : q;
    }
    out.big(i, r);
  }
  return out.column();
}
