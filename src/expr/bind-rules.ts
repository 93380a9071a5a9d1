// The typing rules the expression binder (expr/bind.ts) and its function calls (expr/bind-fn.ts) share: literals
// read for the type they meet, casts, comparisons, and the error at a JSON path. A leaf: it binds no expression.
import { PlanError, jsonPath } from '../errors.js';
import { type DataType, isFloat, isInteger } from '../kernels/column.js';
import { MAX_PRECISION, decimalType, numberToDecimal } from '../kernels/decimal.js';
import { convertScalar } from './scalar.js';
import {
  BOOL,
  type BoundExpr,
  DATE,
  FLOAT64,
  INT64,
  UTF8,
  floatOf,
  isExact,
  isNum,
  planTypeName,
  unify,
} from './types.js';

export type P = (string | number)[];

export const err = (at: P, msg: string) => new PlanError(jsonPath(at), msg);

/**
 * How an argument reads in an error: `utf8 column "l_comment"`, `utf8 value "x"`, `int64 expression`; a literal's
 * value as it is written (`decimal(2,1) value 1.5`, `DATE '1995-01-01'`), not as it is held (15, 9131).
 */
export function describe(e: BoundExpr): string {
  const t = planTypeName(e.type);
  if (e.k === 'col') return `${t} column "${e.name}"`;
  if (e.k === 'lit') {
    if (e.value === null) return 'null';
    if (e.type.id === 'date32' || e.type.id === 'timestamp')
      return `${t.toUpperCase()} '${convertScalar(e.value, e.type, UTF8)}'`;
    if (typeof e.value === 'string') return `${t} value ${JSON.stringify(e.value)}`;
    return `${t} value ${convertScalar(e.value, e.type, UTF8)}`;
  }
  return `${t} expression`;
}

export type Lit = Extract<BoundExpr, { k: 'lit' }>;
export const lit = (value: Lit['value'], type: DataType): Lit => ({ k: 'lit', value, type });
export const isNullLit = (e: BoundExpr) => e.k === 'lit' && e.value === null;

/** A JSON literal with its own type (`0.06` is decimal(3,2), `7` int64, a string utf8). */
export function literal(v: string | number | boolean | null, at: P): Lit {
  if (v === null) return lit(null, INT64);
  if (typeof v === 'boolean') return lit(v, BOOL);
  if (typeof v === 'string') return lit(v, UTF8);
  if (!Number.isFinite(v)) throw err(at, `value ${v} is not a finite number`);
  if (Number.isInteger(v) && Math.abs(v) < 2 ** 63) return lit(BigInt(v), INT64);
  const d = numberToDecimal(v);
  const digits = Math.max(d.scale + 1, (d.scaled < 0n ? -d.scaled : d.scaled).toString().length);
  if (digits > MAX_PRECISION) return lit(v, FLOAT64);
  return lit(d.scaled, decimalType(digits, d.scale));
}

/** Convert an expression to a type: a literal is converted now (an error names it), anything else gets a cast. */
export function castTo(e: BoundExpr, t: DataType, at: P): BoundExpr {
  if (sameType(e.type, t)) return e;
  if (e.k === 'lit') {
    const v = convertScalar(e.value, e.type, t);
    if (v === undefined) throw err(at, `${describe(e)} cannot be read as ${planTypeName(t)}`);
    return lit(v, t);
  }
  return { k: 'cast', arg: e, type: t, what: jsonPath(at) };
}

/** Whether two types are one: the same id, precision and scale, and unit for timestamps. */
export const sameType = (a: DataType, b: DataType) =>
  a.id === b.id && a.precision === b.precision && a.scale === b.scale && (a.id !== 'timestamp' || a.unit === b.unit);

/** A string literal next to a date, timestamp or number is read as that type. */
function adoptLiteral(e: BoundExpr, other: BoundExpr, at: P): BoundExpr {
  if (e.k !== 'lit' || e.type.id !== 'utf8' || typeof e.value !== 'string') return e;
  const t = other.type;
  if (t.id === 'date32' || t.id === 'timestamp' || isNum(t) || t.id === 'bool')
    return castTo(e, isExact(t) && !isInteger(t) ? decimalFor(e, at) : t, at);
  return e;
}

/** A numeric string literal as a decimal of its own digits (compared exactly with a decimal). */
function decimalFor(e: Lit, at: P): DataType {
  const d = convertScalar(e.value, UTF8, decimalType(MAX_PRECISION, 18));
  if (d === undefined) throw err(at, `${describe(e)} is not a number`);
  const text = String(e.value).trim();
  const frac = /\.(\d*)/.exec(text)?.[1]?.length ?? 0;
  const digits = text.replace(/[^0-9]/g, '').replace(/^0+/, '').length;
  return decimalType(Math.max(digits, frac + 1), Math.min(frac, MAX_PRECISION));
}

/** Both sides of a comparison in comparable types (exact numbers stay exact; next to a float, floatOf's). */
export function comparable(a0: BoundExpr, b0: BoundExpr, at: P, atB: P, op: string): [BoundExpr, BoundExpr] {
  const a = adoptLiteral(a0, b0, at),
    b = adoptLiteral(b0, a0, atB);
  if (isNullLit(a) || isNullLit(b)) return [a, b];
  if (isNum(a.type) && isNum(b.type)) {
    if (isFloat(a.type) || isFloat(b.type)) {
      const t = floatOf([a.type, b.type]);
      return [castTo(a, t, at), castTo(b, t, atB)];
    }
    return [a, b];
  }
  // a date next to a timestamp is that timestamp's midnight, as in SQL
  if (a.type.id === 'date32' && b.type.id === 'timestamp') return [castTo(a, b.type, at), b];
  if (a.type.id === 'timestamp' && b.type.id === 'date32') return [a, castTo(b, a.type, atB)];
  if (a.type.id === 'timestamp' && b.type.id === 'timestamp' && a.type.unit !== b.type.unit) {
    // timestamps of two units compare at the finer one, as join keys do (plan/bind.ts keyNorms)
    const fine = TS_UNITS.indexOf(a.type.unit!) > TS_UNITS.indexOf(b.type.unit!) ? a.type : b.type;
    return [castTo(a, fine, at), castTo(b, fine, atB)];
  }
  if (unify([a, b]) === null) throw err(atB, `"${op}" cannot compare ${describe(a)} with ${describe(b)}`);
  return [a, b];
}

const TS_UNITS = ['second', 'millisecond', 'microsecond', 'nanosecond'];

export function fn(name: string, args: BoundExpr[], type: DataType, at: P): BoundExpr {
  return { k: 'fn', fn: name, args, type, what: `${jsonPath(at)} ("${name}")` };
}

export function need(ok: boolean, name: string, what: string, e: BoundExpr, at: P) {
  if (!ok) throw err(at, `"${name}" needs ${what}, got ${describe(e)}`);
}

/**
 * Casts the engine performs: strings to and from anything; numbers and bools among themselves; dates and timestamps
 * among themselves.
 */
export function castable(from: DataType, to: DataType): boolean {
  if (from.id === 'utf8' || to.id === 'utf8') return true;
  const kind = (t: DataType) => (isNum(t) || t.id === 'bool' ? 'number' : 'time');
  return kind(from) === kind(to);
}

/** A string literal where a date is needed is read as a date. */
export function adoptDate(e: BoundExpr, at: P): BoundExpr {
  return e.k === 'lit' && e.type.id === 'utf8' ? castTo(e, DATE, at) : e;
}
