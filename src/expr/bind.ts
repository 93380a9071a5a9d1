// Type-checking the plan's expressions: each JSON expression or predicate
// becomes a typed BoundExpr, with implicit conversions as explicit casts and
// literals parsed for the type they meet. Every mistake is a PlanError with
// the JSON path of the offending field.
import { PlanError, jsonPath } from '../errors.js';
import { type DataType, type Schema, isFloat, isInteger } from '../kernels/column.js';
import { MAX_PRECISION, decimalType, numberToDecimal } from '../kernels/decimal.js';
import type { Expr, Predicate } from '../plan/spec.js';
import { convertScalar } from './scalar.js';
import {
  BOOL,
  type BoundExpr,
  DATE,
  FLOAT64,
  INT64,
  UTF8,
  asDecimal,
  integerDigits,
  isExact,
  isNum,
  parseTypeName,
  planTypeName,
  scaleOf,
  unify,
} from './types.js';

type P = (string | number)[];
type Operand = string | number | boolean | null | Expr;

const err = (at: P, msg: string) => new PlanError(jsonPath(at), msg);

/** How an argument reads in an error: `utf8 column "l_comment"`, `utf8 value "x"`, `int64 expression`. */
function describe(e: BoundExpr): string {
  const t = planTypeName(e.type);
  if (e.k === 'col') return `${t} column "${e.name}"`;
  if (e.k === 'lit')
    return e.value === null
      ? 'null'
      : `${t} value ${JSON.stringify(typeof e.value === 'bigint' ? e.value.toString() : e.value)}`;
  return `${t} expression`;
}

type Lit = Extract<BoundExpr, { k: 'lit' }>;
const lit = (value: Lit['value'], type: DataType): Lit => ({ k: 'lit', value, type });
const isNullLit = (e: BoundExpr) => e.k === 'lit' && e.value === null;

/** A JSON literal with its own type (`0.06` is decimal(3,2), `7` int64, a string utf8). */
function literal(v: string | number | boolean | null, at: P): Lit {
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
function castTo(e: BoundExpr, t: DataType, at: P): BoundExpr {
  if (sameType(e.type, t)) return e;
  if (e.k === 'lit') {
    const v = convertScalar(e.value, e.type, t);
    if (v === undefined) throw err(at, `${describe(e)} cannot be read as ${planTypeName(t)}`);
    return lit(v, t);
  }
  return { k: 'cast', arg: e, type: t, what: jsonPath(at) };
}

const sameType = (a: DataType, b: DataType) =>
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

/** Both sides of a comparison in comparable types (exact numbers stay exact; next to a float, float64). */
function comparable(a0: BoundExpr, b0: BoundExpr, at: P, atB: P, op: string): [BoundExpr, BoundExpr] {
  const a = adoptLiteral(a0, b0, at),
    b = adoptLiteral(b0, a0, atB);
  if (isNullLit(a) || isNullLit(b)) return [a, b];
  if (isNum(a.type) && isNum(b.type)) {
    if (isFloat(a.type) || isFloat(b.type)) return [castTo(a, FLOAT64, at), castTo(b, FLOAT64, atB)];
    return [a, b];
  }
  if (a.type.id === 'timestamp' && b.type.id === 'timestamp' && a.type.unit !== b.type.unit) {
    // timestamps of two units compare at the finer one, as join keys do (plan/bind.ts keyNorms)
    const fine = TS_UNITS.indexOf(a.type.unit!) > TS_UNITS.indexOf(b.type.unit!) ? a.type : b.type;
    return [castTo(a, fine, at), castTo(b, fine, atB)];
  }
  if (unify([a, b]) === null) throw err(atB, `"${op}" cannot compare ${describe(a)} with ${describe(b)}`);
  return [a, b];
}

const TS_UNITS = ['second', 'millisecond', 'microsecond', 'nanosecond'];

function fn(name: string, args: BoundExpr[], type: DataType, at: P): BoundExpr {
  return { k: 'fn', fn: name, args, type, what: `${jsonPath(at)} ("${name}")` };
}

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

function need(ok: boolean, name: string, what: string, e: BoundExpr, at: P) {
  if (!ok) throw err(at, `"${name}" needs ${what}, got ${describe(e)}`);
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

export function bindExpr(e: Expr, schema: Schema, at: P): BoundExpr {
  if ('column' in e) {
    const i = schema.findIndex((f) => f.name === e.column);
    if (i < 0)
      throw err(
        [...at, 'column'],
        `column "${e.column}" not found in input; columns are: ${schema.map((f) => f.name).join(', ')}`,
      );
    return { k: 'col', col: i, type: schema[i].type, name: e.column };
  }
  if ('param' in e)
    throw err(
      [...at, 'param'],
      `parameter "${e.param}" has no value (parameters are replaced before the plan is bound)`,
    );
  if ('value' in e) {
    if (e.type === undefined) return literal(e.value, [...at, 'value']);
    const t = parseTypeName(e.type);
    if (!t) throw err([...at, 'type'], `unknown type "${e.type}"`);
    if (e.value === null) return lit(null, t);
    const src = literal(e.value, [...at, 'value']);
    const v = convertScalar(src.value, src.type, t);
    if (v === undefined)
      throw err([...at, 'value'], `value ${JSON.stringify(e.value)} cannot be read as ${planTypeName(t)}`);
    return lit(v, t);
  }
  if ('cast' in e) {
    const t = parseTypeName(e.to);
    if (!t) throw err([...at, 'to'], `unknown type "${e.to}"`);
    const arg = bindExpr(e.cast, schema, [...at, 'cast']);
    if (isNullLit(arg)) return lit(null, t);
    if (!castable(arg.type, t)) throw err([...at, 'cast'], `cannot cast ${describe(arg)} to ${planTypeName(t)}`);
    return castTo(arg, t, [...at, 'cast']);
  }
  if ('case' in e) {
    const whens = e.case.map((c, i) => bindPredicateExpr(c.when, schema, [...at, 'case', i, 'when']));
    const thens = e.case.map((c, i) => bindExpr(c.then, schema, [...at, 'case', i, 'then']));
    const els = e.else === undefined ? null : bindExpr(e.else, schema, [...at, 'else']);
    const all = els ? [...thens, els] : thens;
    const t = unify(all);
    if (t === null) throw err(at, `case branches do not share a type: ${all.map(describe).join(', ')}`);
    return {
      k: 'case',
      whens,
      type: t,
      thens: thens.map((x, i) => castTo(x, t, [...at, 'case', i, 'then'])),
      else: els && castTo(els, t, [...at, 'else']),
    };
  }
  const name = e.fn;
  const raw = e.args ?? [];
  const argAt = (i: number): P => [...at, 'args', i];
  if (!FUNCTIONS.includes(name))
    throw err([...at, 'fn'], `unknown function "${name}"; functions are: ${FUNCTIONS.join(', ')}`);
  // The unit of date_add is a word, not a value.
  if (name === 'date_add') {
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
  const args = raw.map((a, i) => bindExpr(a, schema, argAt(i)));
  if (ARITH.has(name)) {
    arity(name, args.length, 2, 2, at);
    args.forEach((a, i) => need(isNum(a.type) || isNullLit(a), name, 'numbers', a, argAt(i)));
    const [a, b] = args;
    if (name === '/' || isFloat(a.type) || isFloat(b.type))
      return fn(name, [castTo(a, FLOAT64, argAt(0)), castTo(b, FLOAT64, argAt(1))], FLOAT64, at);
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
      return fn(name, [x, lit(BigInt(digits), INT64)], isFloat(x.type) ? FLOAT64 : t, at);
    }
    if ((name === 'floor' || name === 'ceil') && x.type.id === 'decimal')
      return fn(name, args, decimalType(integerDigits(x.type) + 1, 0), at);
    return fn(name, args, isInteger(x.type) ? INT64 : isFloat(x.type) ? FLOAT64 : x.type, at);
  }
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

/** Casts the engine performs: strings to and from anything; numbers and bools among themselves; dates and timestamps among themselves. */
function castable(from: DataType, to: DataType): boolean {
  if (from.id === 'utf8' || to.id === 'utf8') return true;
  const kind = (t: DataType) => (isNum(t) || t.id === 'bool' ? 'number' : 'time');
  return kind(from) === kind(to);
}

/** A string literal where a date is needed is read as a date. */
function adoptDate(e: BoundExpr, at: P): BoundExpr {
  return e.k === 'lit' && e.type.id === 'utf8' ? castTo(e, DATE, at) : e;
}

function operand(v: Operand, schema: Schema, at: P): BoundExpr {
  if (v !== null && typeof v === 'object') return bindExpr(v, schema, at);
  return literal(v, at);
}

/** A predicate as a bool expression (SQL three-valued logic: null is not true). */
export function bindPredicateExpr(p: Predicate, schema: Schema, at: P): BoundExpr {
  if ('and' in p || 'or' in p) {
    const k = 'and' in p ? 'and' : 'or';
    const list = 'and' in p ? p.and : (p as { or: Predicate[] }).or;
    return fn(
      k,
      list.map((q, i) => bindPredicateExpr(q, schema, [...at, k, i])),
      BOOL,
      at,
    );
  }
  if ('not' in p) return fn('not', [bindPredicateExpr(p.not, schema, [...at, 'not'])], BOOL, at);
  if ('left' in p) {
    const l = bindExpr(p.left, schema, [...at, 'left']),
      r = bindExpr(p.right, schema, [...at, 'right']);
    return fn(p.cmp, comparable(l, r, [...at, 'left'], [...at, 'right'], p.cmp), BOOL, at);
  }
  const subjAt: P = 'column' in p ? [...at, 'column'] : [...at, 'expr'];
  const x = 'column' in p ? bindExpr({ column: p.column }, schema, at) : bindExpr(p.expr, schema, subjAt);
  if ('isNull' in p) {
    const e = fn('is_null', [x], BOOL, at);
    return p.isNull ? e : fn('not', [e], BOOL, at);
  }
  if ('cmp' in p) {
    const v = operand(p.value as Operand, schema, [...at, 'value']);
    return fn(p.cmp, comparable(x, v, subjAt, [...at, 'value'], p.cmp), BOOL, at);
  }
  if ('in' in p) {
    const vals = p.in.map((v, i) => operand(v as Operand, schema, [...at, 'in', i]));
    const items = vals.map((v, i) => comparable(x, v, subjAt, [...at, 'in', i], 'in')[1]);
    const t = unify([x, ...items]);
    if (t === null) throw err([...at, 'in'], `"in" values do not fit ${describe(x)}`);
    const sameAll = isNum(t) && !isFloat(t) ? items : items.map((v, i) => castTo(v, t, [...at, 'in', i]));
    return fn('$in', [isFloat(t) ? castTo(x, t, subjAt) : x, ...sameAll], BOOL, at);
  }
  if ('like' in p) {
    const pat = operand(p.like, schema, [...at, 'like']);
    need(x.type.id === 'utf8' || isNullLit(x), 'like', 'a string', x, subjAt);
    need(pat.type.id === 'utf8' || isNullLit(pat), 'like', 'a string pattern', pat, [...at, 'like']);
    return fn('$like', [x, pat], BOOL, at);
  }
  const [lo, hi] = p.between.map((v, i) => operand(v, schema, [...at, 'between', i]));
  const [a1, b1] = comparable(x, lo, subjAt, [...at, 'between', 0], 'between');
  const [a2, b2] = comparable(x, hi, subjAt, [...at, 'between', 1], 'between');
  return fn('and', [fn('>=', [a1, b1], BOOL, at), fn('<=', [a2, b2], BOOL, at)], BOOL, at);
}
