// The fuzzer's values and predicates: literals (of every kind, some as plan
// parameters), predicates (column against a literal, like, between, or an
// expression against an expression) and numeric expressions (+ - *, abs,
// coalesce, case) over int and decimal columns, each with its DuckDB SQL.
// Integer expressions stay small (no int64 overflow); the 64-bit columns and
// floats stay out of arithmetic. Integer arithmetic is int64 in the engine:
// its SQL casts narrow operands to BIGINT, as coalesce and case cast them.
import type { Rand } from './random.js';
import { BIG, type Kind } from './tables.js';

/** A column of a generated node; `wide`: kept out of '*' (a 16-byte decimal, a computed value, an aggregate such as a count of a large join), so that products stay within int64 and 38 digits */
export interface Col {
  name: string;
  kind: Kind;
  wide?: boolean /** DuckDB type when not the kind's default (narrow integers, ...) */;
  type?: string;
}
export interface Expr {
  plan: object;
  sql: string;
  kind: 'int' | 'dec' /** has a wide column: kept out of '*' */;
  wide: boolean;
  /** a bare integer column narrower than int64 (or unsigned) */ narrow?: boolean;
}

type Value = string | number | boolean | null;

/** Plan parameters a generated plan declares: each literal made a parameter is added here. */
export class Params {
  readonly decl: Record<string, { type: string; default: string | number | boolean }> = {};
  /** values given at run time (the library's `params`) instead of the defaults */
  readonly given: Record<string, string> = {};
  constructor(private readonly r: Rand) {}
  /** A literal as a parameter (now and then): the plan value to use. */
  wrap(kind: Kind, v: Value): Value | { param: string } {
    const type = PARAM_TYPES[kind];
    if (v === null || typeof v === 'boolean' || !type || !this.r.chance(0.15)) return v;
    const name = `P${Object.keys(this.decl).length}`;
    const t = kind === 'dec' ? 'decimal(6,2)' : type;
    if (this.r.chance(0.5)) {
      this.decl[name] = { type: t };
      this.given[name] = String(v);
    } else this.decl[name] = { type: t, default: v };
    return { param: name };
  }
}
const PARAM_TYPES: Partial<Record<Kind, string>> = {
  int: 'int64',
  dec: 'decimal',
  str: 'utf8',
  date: 'date',
  ts: 'timestamp',
};

/** Integer arithmetic is int64 in the engine; DuckDB keeps narrow types (and their overflow): cast in SQL. */
const i64 = (e: Expr) => (e.kind === 'int' ? `(${e.sql})::BIGINT` : e.sql);
/** coalesce and case unify their arguments' types; narrow integers cast to int64 in both, so both agree. */
const unified = (e: Expr): Expr =>
  e.narrow ? { ...e, plan: { cast: e.plan, to: 'int64' }, sql: `CAST(${e.sql} AS BIGINT)`, narrow: false } : e;

const day = (n: number) => new Date(Date.UTC(1995, 0, 1 + n)).toISOString().slice(0, 10);
const hour = (n: number) => new Date(Date.UTC(1995, 0, 1, n)).toISOString().slice(0, 19).replace('T', ' ');

export const q = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** A literal of a column's kind (now and then null): [plan value, SQL text]. */
function literal(r: Rand, kind: Kind): [Value, string] {
  if (kind === 'big' && r.chance(0.3)) {
    const v = r.int(0, 35);
    return [v, String(v)];
  } // uint64's small keys
  if (r.chance(0.05)) return [null, 'NULL'];
  switch (kind) {
    case 'int': {
      const v = r.int(-5, 30);
      return [v, String(v)];
    }
    case 'big': {
      const v = (BIG + BigInt(r.int(0, 6))).toString();
      return [v, v];
    }
    case 'float': {
      const v = r.int(0, 40) / 2;
      return [v, `${v}::DOUBLE`];
    }
    case 'dec': {
      const v = r.int(-44, 44) / 4;
      return [v, String(v)];
    } // a JSON number with a fraction is a decimal, as in SQL
    case 'str': {
      const v = r.pick(['hot', 'v1', 'v3', 'v10', 'zz', '']);
      return [v, `'${v}'`];
    }
    case 'date': {
      const v = day(r.int(-2, 62));
      return [v, `DATE '${v}'`];
    }
    case 'ts': {
      const v = hour(r.int(-2, 50));
      return [v, `TIMESTAMP '${v}'`];
    }
    case 'bool': {
      const v = r.chance(0.5);
      return [v, String(v).toUpperCase()];
    }
  }
}

const numeric = (c: Col) => c.kind === 'int' || c.kind === 'dec';

/** A numeric expression over `schema` (null when it has no int or decimal column). */
export function expr(r: Rand, schema: Col[], depth = 0): Expr | null {
  const cols = schema.filter(numeric);
  if (cols.length === 0) return null;
  const roll = r.float();
  const sub = () => expr(r, schema, depth + 1)!;
  if (depth >= 2 || roll < 0.3) {
    const c = r.pick(cols);
    return {
      plan: { column: c.name },
      sql: q(c.name),
      kind: c.kind as 'int' | 'dec',
      wide: !!c.wide,
      narrow: c.kind === 'int' && c.type !== undefined,
    };
  }
  if (roll < 0.4) {
    const kind = r.pick(['int', 'dec'] as const);
    const [v, s] = literal(r, kind);
    // no null literal in arithmetic: DuckDB folds NULL::BIGINT * x to an INTEGER null (sum: HUGEINT), the engine types it
    if (v === null) return { plan: { value: 0 }, sql: '(0::BIGINT)', kind: 'int', wide: false };
    // a JSON integer is int64 (DuckDB reads 1 as INTEGER)
    return {
      plan: { value: v },
      sql: Number.isInteger(v) ? `(${s}::BIGINT)` : `(${s})`,
      kind: Number.isInteger(v) ? 'int' : 'dec',
      wide: false,
    };
  }
  const kindOf = (es: Expr[]) => (es.some((e) => e.kind === 'dec') ? 'dec' : 'int');
  const wideOf = (es: Expr[]) => es.some((e) => e.wide);
  if (roll < 0.7) {
    const a = sub(),
      b = sub();
    const op = a.wide || b.wide ? r.pick(['+', '-'] as const) : r.pick(['+', '-', '*'] as const);
    const both = a.kind === 'int' && b.kind === 'int';
    const sql = both ? `(${i64(a)} ${op} ${i64(b)})` : `(${a.sql} ${op} ${b.sql})`;
    return { plan: { fn: op, args: [a.plan, b.plan] }, sql, kind: kindOf([a, b]), wide: wideOf([a, b]) };
  }
  if (roll < 0.78) {
    const a = sub();
    return { plan: { fn: 'abs', args: [a.plan] }, sql: `abs(${i64(a)})`, kind: a.kind, wide: a.wide };
  }
  if (roll < 0.89) {
    const args = Array.from({ length: r.int(2, 3) }, sub).map(unified);
    return {
      plan: { fn: 'coalesce', args: args.map((a) => a.plan) },
      sql: `coalesce(${args.map((a) => a.sql).join(', ')})`,
      kind: kindOf(args),
      wide: wideOf(args),
    };
  }
  const [when, wsql] = predicate(r, schema, 2);
  const then = unified(sub());
  const other = r.chance(0.7) ? unified(sub()) : null;
  const all = other ? [then, other] : [then];
  return {
    plan: { case: [{ when, then: then.plan }], ...(other ? { else: other.plan } : {}) },
    sql: `(CASE WHEN ${wsql} THEN ${then.sql}${other ? ` ELSE ${other.sql}` : ''} END)`,
    kind: kindOf(all),
    wide: wideOf(all),
  };
}

const CMPS = ['=', '!=', '<', '<=', '>', '>='] as const;
const cmpSql = (c: (typeof CMPS)[number]) => (c === '!=' ? '<>' : c);

/** A predicate over `schema`: [plan predicate, SQL]. */
export function predicate(r: Rand, schema: Col[], depth = 0, P?: Params): [object, string] {
  const roll = r.float();
  const lit = (kind: Kind): [Value | { param: string }, string] => {
    const [v, sv] = literal(r, kind);
    return [P ? P.wrap(kind, v) : v, sv];
  };
  if (depth < 2 && roll < 0.25) {
    const n = r.int(2, 3);
    const parts = Array.from({ length: n }, () => predicate(r, schema, depth + 1, P));
    const op = r.pick(['and', 'or'] as const);
    return [{ [op]: parts.map((p) => p[0]) }, `(${parts.map((p) => p[1]).join(` ${op.toUpperCase()} `)})`];
  }
  if (depth < 2 && roll < 0.32) {
    const [p, s] = predicate(r, schema, depth + 1, P);
    return [{ not: p }, `(NOT ${s})`];
  }
  if (roll > 0.88) {
    // column against column of the same kind (any kind), or numeric expression against expression
    const cmp = r.pick(CMPS);
    const c = r.pick(schema);
    const same = schema.filter((x) => x.kind === c.kind && x !== c);
    if (same.length && r.chance(0.5)) {
      const d = r.pick(same);
      return [
        { left: { column: c.name }, cmp, right: { column: d.name } },
        `(${q(c.name)} ${cmpSql(cmp)} ${q(d.name)})`,
      ];
    }
    const a = expr(r, schema, 1),
      b = expr(r, schema, 1);
    if (a && b) {
      if (r.chance(0.3)) {
        // "expr" where "column" stands: an expression against a literal
        const [v, sv] = literal(r, b.kind);
        return [{ expr: a.plan, cmp, value: v }, `(${a.sql} ${cmpSql(cmp)} ${sv})`];
      }
      return [{ left: a.plan, cmp, right: b.plan }, `(${a.sql} ${cmpSql(cmp)} ${b.sql})`];
    }
  }
  const c = r.pick(schema);
  const col = q(c.name);
  const form = r.float();
  if (form < 0.15) {
    const isNull = r.chance(0.5);
    return [{ column: c.name, isNull }, `(${col} IS ${isNull ? '' : 'NOT '}NULL)`];
  }
  if (form < 0.3) {
    const vals = Array.from({ length: r.int(1, 4) }, () => lit(c.kind));
    return [{ column: c.name, in: vals.map((v) => v[0]) }, `(${col} IN (${vals.map((v) => v[1]).join(', ')}))`];
  }
  if (form < 0.42 && c.kind === 'str') {
    const pat = r.pick(['v1%', '%1', 'h_t', '%o%', 'v_', '%', 'V%', '']);
    const plan = P ? P.wrap('str', pat) : pat;
    return [{ column: c.name, like: plan }, `(${col} LIKE '${pat}')`];
  }
  if (form < 0.5 && c.kind !== 'bool' && c.kind !== 'float') {
    const [lo, slo] = lit(c.kind),
      [hi, shi] = lit(c.kind);
    return [{ column: c.name, between: [lo, hi] }, `(${col} BETWEEN ${slo} AND ${shi})`];
  }
  const cmp = r.pick(CMPS);
  const [v, sv] = lit(c.kind);
  return [{ column: c.name, cmp, value: v }, `(${col} ${cmpSql(cmp)} ${sv})`];
}
