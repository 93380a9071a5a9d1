// A plan's predicates bound: simple comparisons, IN lists and null tests over a column with their literals read
// as the column's type (plan/bind.ts); anything else through the expression binder (expr/bind.ts).
import { PlanError, jsonPath } from '../errors.js';
import { type DataType, type Field, type Schema, isFloat, isInteger, typeName } from '../kernels/column.js';
import { numberToDecimal, parseDecimal } from '../kernels/decimal.js';
import { bindPredicateExpr } from '../expr/bind.js';
import type { BoundPredicate, Literal } from './bound.js';
import type { Predicate } from './spec.js';

type P = (string | number)[];

/** The index of the column `name` in `schema`, or a PlanError at `at` listing the columns there are. */
export function colIndex(schema: Schema, name: string, at: P, what = 'input'): number {
  const i = schema.findIndex((f) => f.name === name);
  if (i < 0) {
    throw new PlanError(
      jsonPath(at),
      `column "${name}" not found in ${what}; columns are: ${schema.map((f) => f.name).join(', ')}`,
    );
  }
  return i;
}

/** Whether a predicate has only the forms the column-and-literal filter kernel evaluates. */
function simple(p: Predicate): boolean {
  if ('and' in p) return p.and.every(simple);
  if ('or' in p) return p.or.every(simple);
  if ('not' in p) return simple(p.not);
  const plain = (v: unknown) => v === null || typeof v !== 'object';
  return 'column' in p && ('isNull' in p || ('cmp' in p && plain(p.value)) || ('in' in p && p.in.every(plain)));
}

export function bindPredicate(p: Predicate, schema: Schema, at: P): BoundPredicate {
  if (!simple(p)) return { kind: 'expr', expr: bindPredicateExpr(p, schema, at) };
  if ('and' in p) return { kind: 'and', preds: p.and.map((x, i) => bindPredicate(x, schema, [...at, 'and', i])) };
  if ('or' in p) return { kind: 'or', preds: p.or.map((x, i) => bindPredicate(x, schema, [...at, 'or', i])) };
  if ('not' in p) return { kind: 'not', pred: bindPredicate(p.not, schema, [...at, 'not']) };
  const q = p as Extract<Predicate, { column: string }>;
  const col = colIndex(schema, q.column, [...at, 'column']);
  const f = schema[col];
  if ('isNull' in q) return { kind: 'isNull', col, isNull: q.isNull };
  type V = string | number | boolean | null;
  if ('in' in q) return { kind: 'in', col, values: q.in.map((v, i) => bindLiteral(v as V, f, 'in', [...at, 'in', i])) };
  const c = q as Extract<Predicate, { cmp: string; column: string }>;
  return { kind: 'cmp', col, op: c.cmp, value: bindLiteral(c.value as V, f, c.cmp, [...at, 'value']) };
}

const NS_PER_UNIT = { second: 1000000000n, millisecond: 1000000n, microsecond: 1000n, nanosecond: 1n } as const;

/** The type a JSON literal has on its own (PLAN-SPEC, "Literals"). */
const jsonType = (v: string | number | boolean) =>
  typeof v === 'string' ? 'utf8' : typeof v === 'boolean' ? 'bool' : Number.isInteger(v) ? 'int64' : 'decimal';

/**
 * A JSON literal in the representation of the column it is compared with. A number next to a date or timestamp
 * is refused (DuckDB: "an explicit cast is required"), never read as a day or microsecond count.
 */
function bindLiteral(v: string | number | boolean | null, f: Field, op: string, at: P): Literal {
  if (v === null) return null;
  const t: DataType = f.type;
  const name = t.id === 'date32' ? 'date' : t.id === 'timestamp' ? 'timestamp' : typeName(t);
  const bad = (why = '') =>
    new PlanError(
      jsonPath(at),
      `"${op}" cannot compare ${name} column "${f.name}" with ${jsonType(v)} value ${JSON.stringify(v)}${why}`,
    );
  if (isInteger(t)) {
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) throw bad();
      return t.id === 'int64' || t.id === 'uint64' ? (Number.isInteger(v) ? BigInt(v) : v) : v;
    }
    if (typeof v === 'string' && /^-?\d+$/.test(v.trim())) {
      const b = BigInt(v.trim());
      return t.id === 'int64' || t.id === 'uint64' ? b : Number(b);
    }
    throw bad();
  }
  if (isFloat(t)) {
    let x: number;
    if (typeof v === 'number') x = v;
    else if (typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v))) x = Number(v);
    else throw bad();
    // compared as a float32, as SQL compares a float32 column with a number (`r > 0.3`: not the float32 nearest 0.3)
    return t.id === 'float32' ? Math.fround(x) : x;
  }
  if (t.id === 'decimal') {
    const d =
      typeof v === 'number'
        ? Number.isFinite(v)
          ? numberToDecimal(v)
          : null
        : typeof v === 'string'
          ? parseDecimal(v)
          : null;
    if (d) return d;
    throw bad();
  }
  if (t.id === 'utf8') {
    if (typeof v === 'string') return v;
    throw bad();
  }
  if (t.id === 'bool') {
    if (typeof v === 'boolean') return v;
    throw bad();
  }
  if (t.id === 'date32') {
    if (typeof v === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(v)) {
      const ms = Date.parse(v + 'T00:00:00Z');
      if (!Number.isNaN(ms)) return Math.round(ms / 86400000);
    }
    throw bad(': use "YYYY-MM-DD"');
  }
  // timestamp
  if (typeof v === 'string') {
    const iso = /[zZ]|[+-]\d\d:?\d\d$/.test(v) ? v : v.replace(' ', 'T') + 'Z';
    const ms = Date.parse(iso);
    if (!Number.isNaN(ms)) {
      const frac = /\.(\d+)/.exec(v)?.[1] ?? '';
      const belowMs = BigInt((frac + '000000000').slice(3, 9)); // ns below the millisecond
      const ns = BigInt(ms) * 1000000n + belowMs;
      return ns / NS_PER_UNIT[t.unit!];
    }
  }
  throw bad(': use an ISO date-time such as "2024-01-31T12:00:00Z"');
}
