// Binding a function call of an expression (`{ "fn": name, "args": [...] }`): its arity, the types its arguments
// need, the casts that line them up and its result type. The rest of an expression is bound in expr/bind.ts.
import { type DataType, type Schema, isFloat, isInteger } from '../kernels/column.js';
import { MAX_PRECISION, decimalType } from '../kernels/decimal.js';
import type { Expr } from '../plan/spec.js';
import {
  type Lit,
  type P,
  adoptDate,
  castTo,
  comparable,
  describe,
  err,
  fn,
  isNullLit,
  lit,
  need,
} from './bind-rules.js';
import {
  BOOL,
  type BoundExpr,
  DATE,
  INT64,
  UTF8,
  asDecimal,
  floatOf,
  integerDigits,
  isNum,
  scaleOf,
  unify,
} from './types.js';

type Call = Extract<Expr, { fn: string }>;

const ARITH = new Set(['+', '-', '*', '/', '%']);
const CMPS = new Set(['=', '!=', '<', '<=', '>', '>=']);
const UNARY_NUM = new Set(['neg', 'abs', 'floor', 'ceil']);
const STR1 = new Set(['lower', 'upper', 'trim', 'length']);
const STR2 = new Set(['starts_with', 'ends_with', 'contains']);
const DATE1 = new Set(['year', 'month', 'day']);
const FUNCTIONS = [
  '+',
  '-',
  '*',
  '/',
  '%',
  'neg',
  'abs',
  'round',
  'floor',
  'ceil',
  'coalesce',
  'nullif',
  'concat',
  'substr',
  'lower',
  'upper',
  'length',
  'trim',
  'starts_with',
  'ends_with',
  'contains',
  'year',
  'month',
  'day',
  'date_add',
  'date_diff',
  '=',
  '!=',
  '<',
  '<=',
  '>',
  '>=',
  'and',
  'or',
  'not',
  'is_null',
];

function arity(name: string, n: number, min: number, max: number, at: P) {
  if (n < min || n > max) {
    const want = min === max ? `${min}` : max === Infinity ? `at least ${min}` : `${min} to ${max}`;
    throw err(at, `"${name}" takes ${want} argument${min === 1 && max === 1 ? '' : 's'}, got ${n}`);
  }
}

/** The result type of exact arithmetic (integers give int64; decimals as SQL: + - scale max, * scale s1 + s2). */
function exactArith(name: string, a: BoundExpr, b: BoundExpr, at: P): DataType {
  if (isInteger(a.type) && isInteger(b.type)) return INT64;
  const x = asDecimal(a),
    y = asDecimal(b);
  if (name === '*') {
    const s = x.scale! + y.scale!;
    if (s > MAX_PRECISION) throw err(at, `"*" result scale ${s} is beyond 38 digits`);
    return decimalType(Math.min(MAX_PRECISION, x.precision! + y.precision!), s);
  }
  const s = Math.max(x.scale!, y.scale!);
  return decimalType(Math.max(x.precision! - x.scale!, y.precision! - y.scale!) + s + 1, s);
}

/** How an argument is bound (expr/bind.ts bindExpr, passed in: the binder and its calls recurse into each other). */
type BindArg = (e: Expr, schema: Schema, at: P) => BoundExpr;

/** A function call bound: its arguments bound (`bindExpr`) and cast, its result type. */
export function bindFn(e: Call, schema: Schema, at: P, bindExpr: BindArg): BoundExpr {
  const name = e.fn;
  const raw = e.args ?? [];
  if (!FUNCTIONS.includes(name))
    throw err([...at, 'fn'], `unknown function "${name}"; functions are: ${FUNCTIONS.join(', ')}`);
  // The unit of date_add is a word, not a value.
  if (name === 'date_add') return bindDateAdd(raw, schema, at, bindExpr);
  const args = raw.map((a, i) => bindExpr(a, schema, [...at, 'args', i]));
  if (ARITH.has(name) || UNARY_NUM.has(name) || name === 'round') return bindNumeric(name, args, at);
  if (name === 'concat' || name === 'substr' || STR1.has(name) || STR2.has(name)) return bindText(name, args, at);
  if (DATE1.has(name) || name === 'date_diff') return bindDate(name, args, at);
  return bindLogic(name, args, at);
}

function bindDateAdd(raw: NonNullable<Call['args']>, schema: Schema, at: P, bindExpr: BindArg): BoundExpr {
  const name = 'date_add';
  const argAt = (i: number): P => [...at, 'args', i];
  arity(name, raw.length, 2, 3, at);
  const u = raw[2] === undefined ? 'day' : 'value' in raw[2] ? raw[2].value : undefined;
  if (u !== 'day' && u !== 'month' && u !== 'year')
    throw err(argAt(2), `"date_add" unit must be "day", "month" or "year"`);
  const d = adoptDate(bindExpr(raw[0], schema, argAt(0)), argAt(0));
  const n = bindExpr(raw[1], schema, argAt(1));
  need(d.type.id === 'date32' || d.type.id === 'timestamp' || isNullLit(d), name, 'a date', d, argAt(0));
  need(isInteger(n.type), name, 'an integer count', n, argAt(1));
  return fn(name, [d, n, lit(u, UTF8)], isNullLit(d) ? DATE : d.type, at);
}

/** Arithmetic, neg, abs, floor, ceil and round: numbers in, their result type. */
function bindNumeric(name: string, args: BoundExpr[], at: P): BoundExpr {
  const argAt = (i: number): P => [...at, 'args', i];
  if (ARITH.has(name)) {
    arity(name, args.length, 2, 2, at);
    const days = dateArith(name, args, at);
    if (days) return days;
    args.forEach((a, i) => {
      if (!isNum(a.type) && !isNullLit(a))
        throw err(argAt(i), `"${name}" needs numbers, got ${describe(a)} (with ${describe(args[1 - i])})`);
    });
    const [a, b] = args;
    if (name === '/' || isFloat(a.type) || isFloat(b.type)) {
      // in float32 when a float32 meets no float64 (DuckDB: float32 + int is float32, each result rounded to it)
      const t = floatOf([a.type, b.type]);
      return fn(name, [castTo(a, t, argAt(0)), castTo(b, t, argAt(1))], t, at);
    }
    return fn(name, args, exactArith(name, a, b, at), at);
  }
  if (UNARY_NUM.has(name) || name === 'round') {
    arity(name, args.length, 1, name === 'round' ? 2 : 1, at);
    const [x] = args;
    need(isNum(x.type) || isNullLit(x), name, 'a number', x, argAt(0));
    if (name === 'round') {
      const d = args[1];
      if (d && !(d.k === 'lit' && typeof d.value === 'bigint'))
        throw err(argAt(1), `"round" digits must be an integer value, got ${describe(d)}`);
      const digits = d ? Number((d as Lit).value) : 0;
      const t =
        x.type.id === 'decimal' && digits < scaleOf(x.type)
          ? decimalType(x.type.precision! - x.type.scale! + Math.max(digits, 0) + 1, Math.max(digits, 0))
          : isInteger(x.type)
            ? INT64
            : x.type;
      return fn(name, [x, lit(BigInt(digits), INT64)], t, at);
    }
    if ((name === 'floor' || name === 'ceil') && x.type.id === 'decimal')
      return fn(name, args, decimalType(integerDigits(x.type) + 1, 0), at);
    return fn(name, args, isInteger(x.type) ? INT64 : x.type, at);
  }
  throw new Error(`internal: "${name}" is not a numeric function`);
}

/**
 * A date plus or minus a whole number of days is a date, a date minus a date the days between them (SQL, DuckDB);
 * else undefined.
 */
function dateArith(name: string, [a, b]: BoundExpr[], at: P): BoundExpr | undefined {
  const isDate = (x: BoundExpr) => x.type.id === 'date32' && !isNullLit(x);
  const isCount = (x: BoundExpr) => isInteger(x.type);
  const day = lit('day', UTF8);
  if (name === '+' && isDate(a) && isCount(b)) return fn('date_add', [a, b, day], DATE, at);
  if (name === '+' && isCount(a) && isDate(b)) return fn('date_add', [b, a, day], DATE, at);
  if (name === '-' && isDate(a) && isCount(b)) return fn('date_add', [a, fn('neg', [b], INT64, at), day], DATE, at);
  if (name === '-' && isDate(a) && isDate(b)) return fn('date_diff', [b, a], INT64, at);
  return undefined;
}

/** concat, substr and the string functions. */
function bindText(name: string, args: BoundExpr[], at: P): BoundExpr {
  const argAt = (i: number): P => [...at, 'args', i];
  if (name === 'concat') {
    arity(name, args.length, 1, Infinity, at);
    return fn(
      name,
      args.map((a, i) => (isNullLit(a) ? lit(null, UTF8) : castTo(a, UTF8, argAt(i)))),
      UTF8,
      at,
    );
  }
  if (name === 'substr') {
    arity(name, args.length, 2, 3, at);
    need(args[0].type.id === 'utf8' || isNullLit(args[0]), name, 'a string', args[0], argAt(0));
    for (let i = 1; i < args.length; i++) need(isInteger(args[i].type), name, 'an integer', args[i], argAt(i));
    return fn(name, args, UTF8, at);
  }
  if (STR1.has(name) || STR2.has(name)) {
    arity(name, args.length, STR1.has(name) ? 1 : 2, STR1.has(name) ? 1 : 2, at);
    args.forEach((a, i) => need(a.type.id === 'utf8' || isNullLit(a), name, 'a string', a, argAt(i)));
    return fn(name, args, name === 'length' ? INT64 : STR2.has(name) ? BOOL : UTF8, at);
  }
  throw new Error(`internal: "${name}" is not a text function`);
}

/** year, month, day and date_diff. */
function bindDate(name: string, args: BoundExpr[], at: P): BoundExpr {
  const argAt = (i: number): P => [...at, 'args', i];
  if (DATE1.has(name)) {
    arity(name, args.length, 1, 1, at);
    const d = adoptDate(args[0], argAt(0));
    need(d.type.id === 'date32' || d.type.id === 'timestamp' || isNullLit(d), name, 'a date', d, argAt(0));
    return fn(name, [d], INT64, at);
  }
  if (name === 'date_diff') {
    arity(name, args.length, 2, 2, at);
    const ds = args.map((a, i) => adoptDate(a, argAt(i)));
    ds.forEach((d, i) => need(d.type.id === 'date32' || isNullLit(d), name, 'a date', d, argAt(i)));
    return fn(name, ds, INT64, at);
  }
  throw new Error(`internal: "${name}" is not a date function`);
}

/** coalesce, nullif, comparisons, and, or, not and is_null. */
function bindLogic(name: string, args: BoundExpr[], at: P): BoundExpr {
  const argAt = (i: number): P => [...at, 'args', i];
  if (name === 'coalesce') {
    arity(name, args.length, 1, Infinity, at);
    const t = unify(args);
    if (t === null) throw err(at, `"coalesce" arguments do not share a type: ${args.map(describe).join(', ')}`);
    return fn(
      name,
      args.map((a, i) => castTo(a, t, argAt(i))),
      t,
      at,
    );
  }
  if (name === 'nullif') {
    arity(name, args.length, 2, 2, at);
    const [a, b] = comparable(args[0], args[1], argAt(0), argAt(1), name);
    return fn(name, [a, b], args[0].type, at);
  }
  if (CMPS.has(name)) {
    arity(name, args.length, 2, 2, at);
    return fn(name, comparable(args[0], args[1], argAt(0), argAt(1), name), BOOL, at);
  }
  if (name === 'and' || name === 'or' || name === 'not') {
    arity(name, args.length, 1, name === 'not' ? 1 : Infinity, at);
    args.forEach((a, i) => need(a.type.id === 'bool' || isNullLit(a), name, 'a bool', a, argAt(i)));
    return fn(name, args, BOOL, at);
  }
  arity(name, args.length, 1, 1, at); // is_null
  return fn(name, args, BOOL, at);
}
