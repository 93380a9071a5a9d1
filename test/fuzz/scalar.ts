// The fuzzer's computed columns beyond exact arithmetic: division and
// remainder, round, string, date and cast functions, each with its DuckDB SQL
// and the kind and type of its result. Divisors are non-zero literals: DuckDB
// 1.5 gives NULL for a division by zero where the spec says ±Infinity or NaN.
import { type Col, expr, q } from './expr.js';
import type { Rand } from './random.js';

export interface Scalar {
  plan: object;
  sql: string;
  col: Omit<Col, 'name'>;
}

const col = (c: Col) => ({ column: c.name });
const value = (v: string | number) => ({ value: v });

/** A computed column of some other kind than exact arithmetic; null when the schema has nothing it applies to. */
export function scalar(r: Rand, schema: Col[]): Scalar | null {
  const forms = [division, remainder, rounded, text, dates, cast];
  for (let tries = 0; tries < 4; tries++) {
    const s = r.pick(forms)(r, schema);
    if (s) return s;
  }
  return null;
}

function division(r: Rand, schema: Col[]): Scalar | null {
  const e = expr(r, schema, 1);
  if (!e) return null;
  const d = r.pick([3, -4, 2.5, 7]);
  const sql = `(CAST(${e.sql} AS DOUBLE) / ${d}::DOUBLE)`;
  return { plan: { fn: '/', args: [e.plan, value(d)] }, sql, col: { kind: 'float', wide: true } };
}

function remainder(r: Rand, schema: Col[]): Scalar | null {
  const e = expr(r, schema, 1);
  if (!e || e.kind !== 'int') return null;
  const d = r.pick([3, -4, 7]);
  const sql = `((${e.sql})::BIGINT % ${d})`;
  return { plan: { fn: '%', args: [e.plan, value(d)] }, sql, col: { kind: 'int', wide: true } };
}

function rounded(r: Rand, schema: Col[]): Scalar | null {
  const fs = schema.filter((c) => c.kind === 'float');
  if (fs.length === 0) return null;
  const c = r.pick(fs),
    d = r.int(0, 2);
  const fn = r.pick(['round', 'floor', 'ceil', 'abs', 'neg'] as const);
  const plan = fn === 'round' ? { fn, args: [col(c), value(d)] } : { fn, args: [col(c)] };
  // a float32 stays float32 (DuckDB's, and the engine's, typing), a float64 stays float64
  const f32 = c.type === 'FLOAT';
  const x = f32 ? q(c.name) : `CAST(${q(c.name)} AS DOUBLE)`;
  const sql = fn === 'round' ? `round(${x}, ${d})` : fn === 'neg' ? `(-${x})` : `${fn}(${x})`;
  return { plan, sql, col: { kind: 'float', wide: true, ...(f32 ? { type: 'FLOAT' } : {}) } };
}

function text(r: Rand, schema: Col[]): Scalar | null {
  const ss = schema.filter((c) => c.kind === 'str');
  if (ss.length === 0) return null;
  const c = r.pick(ss),
    s = q(c.name);
  const ints = schema.filter((x) => x.kind === 'int');
  switch (r.int(0, 6)) {
    case 0: {
      const fn = r.pick(['lower', 'upper', 'trim'] as const);
      return { plan: { fn, args: [col(c)] }, sql: `${fn}(${s})`, col: { kind: 'str' } };
    }
    case 1:
      return { plan: { fn: 'length', args: [col(c)] }, sql: `length(${s})`, col: { kind: 'int', wide: true } };
    case 2: {
      const start = r.int(1, 3);
      if (r.chance(0.5)) {
        const plan = { fn: 'substr', args: [col(c), value(start)] };
        return { plan, sql: `substr(${s}, ${start})`, col: { kind: 'str' } };
      }
      const n = r.int(0, 2);
      const plan = { fn: 'substr', args: [col(c), value(start), value(n)] };
      return { plan, sql: `substr(${s}, ${start}, ${n})`, col: { kind: 'str' } };
    }
    case 3: {
      // the engine's concat is SQL's ||: a null argument gives null
      const other = ints.length ? r.pick(ints) : c;
      return {
        plan: { fn: 'concat', args: [col(c), value('-'), other === c ? col(c) : { cast: col(other), to: 'utf8' }] },
        sql: `(${s} || '-' || CAST(${q(other.name)} AS VARCHAR))`,
        col: { kind: 'str' },
      };
    }
    default: {
      const fn = r.pick(['starts_with', 'ends_with', 'contains'] as const);
      const arg = r.pick(['v', '1', 'o', 'ho', '']);
      return { plan: { fn, args: [col(c), value(arg)] }, sql: `${fn}(${s}, '${arg}')`, col: { kind: 'bool' } };
    }
  }
}

function dates(r: Rand, schema: Col[]): Scalar | null {
  const ds = schema.filter((c) => c.kind === 'date' || c.kind === 'ts');
  if (ds.length === 0) return null;
  const c = r.pick(ds),
    s = q(c.name);
  const roll = r.int(0, 2);
  if (roll === 0) {
    const fn = r.pick(['year', 'month', 'day'] as const);
    return { plan: { fn, args: [col(c)] }, sql: `${fn}(${s})`, col: { kind: 'int', wide: true } };
  }
  if (roll === 1 || c.kind === 'ts') {
    const n = r.int(-40, 40),
      unit = r.pick(['day', 'month', 'year'] as const);
    const type = c.kind === 'date' ? 'DATE' : (c.type ?? 'TIMESTAMP');
    return {
      plan: { fn: 'date_add', args: [col(c), value(n), value(unit)] },
      sql: `CAST(${s} + INTERVAL (${n}) ${unit.toUpperCase()} AS ${type})`,
      col: { kind: c.kind, type },
    };
  }
  const others = schema.filter((x) => x.kind === 'date');
  const o = r.pick(others);
  const sql = `date_diff('day', ${s}, ${q(o.name)})`;
  return { plan: { fn: 'date_diff', args: [col(c), col(o)] }, sql, col: { kind: 'int', wide: true } };
}

function cast(r: Rand, schema: Col[]): Scalar | null {
  const c = r.pick(schema),
    s = q(c.name);
  switch (c.kind) {
    case 'int': {
      const [to, type, kind] = r.pick([
        ['float64', 'DOUBLE', 'float'],
        ['utf8', 'VARCHAR', 'str'],
        ['decimal(12,2)', 'DECIMAL(12,2)', 'dec'],
      ] as const);
      const res = { kind, wide: true, ...(kind === 'dec' ? { type } : {}) };
      return { plan: { cast: col(c), to }, sql: `CAST(${s} AS ${type})`, col: res };
    }
    case 'dec': {
      return { plan: { cast: col(c), to: 'float64' }, sql: `CAST(${s} AS DOUBLE)`, col: { kind: 'float', wide: true } };
    }
    case 'date': {
      const [to, type] = r.pick([
        ['timestamp', 'TIMESTAMP'],
        ['utf8', 'VARCHAR'],
      ] as const);
      const res = to === 'utf8' ? { kind: 'str' as const } : { kind: 'ts' as const };
      return { plan: { cast: col(c), to }, sql: `CAST(${s} AS ${type})`, col: res };
    }
    case 'ts': {
      return { plan: { cast: col(c), to: 'date' }, sql: `CAST(${s} AS DATE)`, col: { kind: 'date', type: 'DATE' } };
    }
    case 'bool': {
      return { plan: { cast: col(c), to: 'int64' }, sql: `CAST(${s} AS BIGINT)`, col: { kind: 'int', wide: true } };
    }
    default:
      return null;
  }
}
