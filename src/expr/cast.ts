// Casts: numbers between exact and float forms in vector loops; everything
// else (strings parsed as numbers or dates, numbers as text) row by row
// through convertScalar. A value that does not convert is an input-data
// error (exit 3) naming the value.
import { InputError } from '../errors.js';
import { type Column, type DataType, isFloat, isInteger } from '../kernels/column.js';
import { pow10 } from '../kernels/decimal.js';
import { convertScalar, rescale } from './scalar.js';
import { isExact, planTypeName } from './types.js';
import { ExactWriter, bigAt, exactNums, floats, fromScalars, scalarAt } from './vector.js';

const DAY_IN: Record<string, bigint> = {
  second: 86400n,
  millisecond: 86400000n,
  microsecond: 86400000000n,
  nanosecond: 86400000000000n,
};

export function castColumn(c: Column, to: DataType, what: string): Column {
  const n = c.length;
  if (isFloat(to) && (isExact(c.type) || isFloat(c.type))) {
    const f = floats(c);
    return { type: to, length: n, values: to.id === 'float64' ? f : Float32Array.from(f), valid: c.valid };
  }
  if ((to.id === 'decimal' || to.id === 'int64') && isExact(c.type) && (to.id === 'decimal' || isInteger(c.type))) {
    const from = c.type.scale ?? 0,
      s = to.scale ?? 0,
      k = s - from;
    const out = new ExactWriter(to, n, what, c.valid ? c.valid.slice(0, n) : null);
    const x = exactNums(c),
      f = 10 ** Math.max(k, 0),
      limit = to.id === 'decimal' ? 10 ** to.precision! : Infinity;
    for (let i = 0; i < n; i++) {
      if (out.valid !== null && out.valid[i] === 0) continue;
      const r = x[i] * f;
      if (k >= 0 && r === r && Math.abs(r) <= 9007199254740991 && Math.abs(r) < limit) {
        out.num(i, r);
        continue;
      }
      const v = rescale(bigAt(c, i), from, s);
      if (to.id === 'decimal' && (v >= pow10(to.precision!) || -v >= pow10(to.precision!)))
        throw cannot(c, i, to, what);
      out.big(i, v);
    }
    return out.column();
  }
  if (c.type.id === 'date32' && to.id === 'timestamp') {
    // a day's midnight in the timestamp's unit (exact: days are below 2^31)
    const perDay = DAY_IN[to.unit!],
      d = c.values as Int32Array,
      out = new BigInt64Array(n);
    for (let i = 0; i < n; i++) out[i] = BigInt(d[i]) * perDay;
    return { type: to, length: n, values: out, valid: c.valid };
  }
  const vals = new Array(n);
  for (let i = 0; i < n; i++) {
    const v = convertScalar(scalarAt(c, i), c.type, to);
    if (v === undefined) throw cannot(c, i, to, what);
    vals[i] = v;
  }
  return fromScalars(to, vals);
}

function cannot(c: Column, i: number, to: DataType, what: string): InputError {
  const v = convertScalar(scalarAt(c, i), c.type, { id: 'utf8' });
  return new InputError(`${what}: value ${JSON.stringify(v)} cannot be cast to ${planTypeName(to)}`);
}
