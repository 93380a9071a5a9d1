// The fuzzer's values and predicates: literals, predicates (column against a
// literal, or an expression against an expression) and numeric expressions
// (+ - *, abs, coalesce, case) over int and decimal columns, each with its
// DuckDB SQL. Integer expressions stay small (no int64 overflow); the 64-bit
// column and floats stay out of arithmetic.
import type { Rand } from './random.js';
import { BIG, type Kind } from './tables.js';

/** A column of a generated node; `wide`: kept out of '*' (a 16-byte decimal, a computed value, an aggregate such as a count of a large join), so that products stay within int64 and 38 digits */
export interface Col { name: string; kind: Kind; wide?: boolean }
export interface Expr { plan: object; sql: string; kind: 'int' | 'dec'; /** has a wide column: kept out of '*' */ wide: boolean }

export const q = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** A literal of a column's kind (now and then null): [plan value, SQL text]. */
export function literal(r: Rand, kind: Kind): [string | number | null, string] {
  if (r.chance(0.05)) return [null, 'NULL'];
  switch (kind) {
    case 'int': { const v = r.int(-5, 30); return [v, String(v)]; }
    case 'big': { const v = (BIG + BigInt(r.int(0, 6))).toString(); return [v, v]; }
    case 'float': { const v = r.int(0, 40) / 2; return [v, `${v}::DOUBLE`]; }
    case 'dec': { const v = r.int(-44, 44) / 4; return [v, String(v)]; } // a JSON number with a fraction is a decimal, as in SQL
    case 'str': { const v = r.pick(['hot', 'v1', 'v3', 'v10', 'zz', '']); return [v, `'${v}'`]; }
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
    return { plan: { column: c.name }, sql: q(c.name), kind: c.kind as 'int' | 'dec', wide: !!c.wide };
  }
  if (roll < 0.4) {
    const kind = r.pick(['int', 'dec'] as const);
    const [v, s] = literal(r, kind);
    if (v === null) return { plan: { value: null }, sql: 'NULL::INTEGER', kind: 'int', wide: false };
    return { plan: { value: v }, sql: `(${s})`, kind: Number.isInteger(v) ? 'int' : 'dec', wide: false };
  }
  const kindOf = (es: Expr[]) => (es.some((e) => e.kind === 'dec') ? 'dec' : 'int');
  const wideOf = (es: Expr[]) => es.some((e) => e.wide);
  if (roll < 0.7) {
    const a = sub(), b = sub();
    const op = a.wide || b.wide ? r.pick(['+', '-'] as const) : r.pick(['+', '-', '*'] as const);
    return { plan: { fn: op, args: [a.plan, b.plan] }, sql: `(${a.sql} ${op} ${b.sql})`, kind: kindOf([a, b]), wide: wideOf([a, b]) };
  }
  if (roll < 0.78) {
    const a = sub();
    return { plan: { fn: 'abs', args: [a.plan] }, sql: `abs(${a.sql})`, kind: a.kind, wide: a.wide };
  }
  if (roll < 0.89) {
    const args = Array.from({ length: r.int(2, 3) }, sub);
    return { plan: { fn: 'coalesce', args: args.map((a) => a.plan) }, sql: `coalesce(${args.map((a) => a.sql).join(', ')})`, kind: kindOf(args), wide: wideOf(args) };
  }
  const [when, wsql] = predicate(r, schema, 2);
  const then = sub();
  const other = r.chance(0.7) ? sub() : null;
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
export function predicate(r: Rand, schema: Col[], depth = 0): [object, string] {
  const roll = r.float();
  if (depth < 2 && roll < 0.25) {
    const n = r.int(2, 3);
    const parts = Array.from({ length: n }, () => predicate(r, schema, depth + 1));
    const op = r.pick(['and', 'or'] as const);
    return [{ [op]: parts.map((p) => p[0]) }, `(${parts.map((p) => p[1]).join(` ${op.toUpperCase()} `)})`];
  }
  if (depth < 2 && roll < 0.32) {
    const [p, s] = predicate(r, schema, depth + 1);
    return [{ not: p }, `(NOT ${s})`];
  }
  if (roll > 0.88) {
    // column against column of the same kind (any kind), or numeric expression against expression
    const cmp = r.pick(CMPS);
    const c = r.pick(schema);
    const same = schema.filter((x) => x.kind === c.kind && x !== c);
    if (same.length && r.chance(0.5)) {
      const d = r.pick(same);
      return [{ left: { column: c.name }, cmp, right: { column: d.name } }, `(${q(c.name)} ${cmpSql(cmp)} ${q(d.name)})`];
    }
    const a = expr(r, schema, 1), b = expr(r, schema, 1);
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
  if (form < 0.35) {
    const vals = Array.from({ length: r.int(1, 4) }, () => literal(r, c.kind));
    return [{ column: c.name, in: vals.map((v) => v[0]) }, `(${col} IN (${vals.map((v) => v[1]).join(', ')}))`];
  }
  const cmp = r.pick(CMPS);
  const [v, sv] = literal(r, c.kind);
  return [{ column: c.name, cmp, value: v }, `(${col} ${cmpSql(cmp)} ${sv})`];
}
