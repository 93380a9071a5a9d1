// Random operator trees for the fuzzer, each with the DuckDB SQL of the same
// query: scans, filters, projections, joins of every type on one or two key
// pairs, aggregates, sort + limit. Every generator returns the plan node, its
// SQL (a subquery whose output columns are named as skewjoin names them) and
// its schema; expressions (and decimal columns, tables.ts) are to be added as
// more generators over the same Gen shape: a project or filter generator
// that emits { "expr": ... } beside its SQL.
import type { Rand } from './random.js';
import { BIG, type Kind, type Table } from './tables.js';

export interface Col { name: string; kind: Kind }
export interface Gen { node: Record<string, unknown>; sql: string; schema: Col[]; /** rows come out in a defined order */ ordered: boolean }

const q = (name: string) => `"${name.replace(/"/g, '""')}"`;
const JOIN_TYPES = ['inner', 'left', 'right', 'full', 'semi', 'anti'] as const;
const JOIN_SQL: Record<(typeof JOIN_TYPES)[number], string> = {
  inner: 'JOIN', left: 'LEFT JOIN', right: 'RIGHT JOIN', full: 'FULL JOIN', semi: 'SEMI JOIN', anti: 'ANTI JOIN',
};

/** A literal of a column's kind (now and then null): [plan value, SQL text]. */
function literal(r: Rand, kind: Kind): [string | number | null, string] {
  if (r.chance(0.05)) return [null, 'NULL'];
  switch (kind) {
    case 'int': { const v = r.int(-5, 30); return [v, String(v)]; }
    case 'big': { const v = (BIG + BigInt(r.int(0, 6))).toString(); return [v, v]; }
    case 'float': { const v = r.int(0, 40) / 2; return [v, `${v}::DOUBLE`]; }
    case 'str': { const v = r.pick(['hot', 'v1', 'v3', 'v10', 'zz', '']); return [v, `'${v}'`]; }
  }
}

/** A predicate over `schema`: [plan predicate, SQL]. */
function predicate(r: Rand, schema: Col[], depth = 0): [object, string] {
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
  const cmp = r.pick(['=', '!=', '<', '<=', '>', '>='] as const);
  const [v, sv] = literal(r, c.kind);
  return [{ column: c.name, cmp, value: v }, `(${col} ${cmp === '!=' ? '<>' : cmp} ${sv})`];
}

function selectList(cols: { from: string; as: string }[]): string {
  return cols.map((c) => (c.from === c.as ? q(c.from) : `${c.from} AS ${q(c.as)}`)).join(', ');
}

export class PlanGen {
  private aliases = 0;
  constructor(private readonly r: Rand, private readonly tables: Table[]) {}

  private alias() { return `q${this.aliases++}`; }

  scan(): Gen {
    const t = this.r.pick(this.tables);
    const cols = this.r.chance(0.5) ? t.columns : this.r.some(t.columns, 2);
    const node = { op: 'scan', source: t.name, ...(cols === t.columns ? {} : { columns: cols.map((c) => c.name) }) };
    return { node, sql: `SELECT ${cols.map((c) => q(c.name)).join(', ')} FROM read_parquet('${t.file}')`, schema: cols, ordered: false };
  }

  /** A tree of at most `depth` levels below the root. */
  node(depth: number): Gen {
    if (depth <= 0) return this.scan();
    const roll = this.r.float();
    if (roll < 0.15) return this.scan();
    if (roll < 0.35) return this.filter(this.node(depth - 1));
    if (roll < 0.45) return this.project(this.node(depth - 1));
    if (roll < 0.75) return this.join(this.node(depth - 1), this.node(depth - 1)) ?? this.filter(this.node(depth - 1));
    if (roll < 0.82) return { ...this.sortLimit(this.node(depth - 1)), ordered: false }; // a limited input: the coordinator's rows feed a shuffle
    return this.aggregate(this.node(depth - 1));
  }

  filter(input: Gen): Gen {
    const [where, sql] = predicate(this.r, input.schema);
    const a = this.alias();
    return { node: { op: 'filter', input: input.node, where }, sql: `SELECT * FROM (${input.sql}) ${a} WHERE ${sql}`, schema: input.schema, ordered: false };
  }

  project(input: Gen): Gen {
    const picked = this.r.some(input.schema, 1);
    const out = picked.map((c, i) => ({ c, as: this.r.chance(0.3) ? `p${i}_${c.name}` : c.name }));
    const a = this.alias();
    return {
      node: { op: 'project', input: input.node, columns: out.map(({ c, as }) => (as === c.name ? c.name : { name: as, column: c.name })) },
      sql: `SELECT ${selectList(out.map(({ c, as }) => ({ from: q(c.name), as })))} FROM (${input.sql}) ${a}`,
      schema: out.map(({ c, as }) => ({ name: as, kind: c.kind })),
      ordered: false,
    };
  }

  /** A join on one or two key pairs of the same kind; null when the sides share no kind of key. */
  join(left: Gen, right: Gen): Gen | null {
    const keyable = (c: Col) => c.kind !== 'float';
    const pairs: [Col, Col][] = [];
    for (const l of this.r.shuffle(left.schema.filter(keyable))) {
      const rs = right.schema.filter((c) => c.kind === l.kind && !pairs.some((p) => p[1] === c));
      if (rs.length) pairs.push([l, this.r.pick(rs)]);
      if (pairs.length === (this.r.chance(0.35) ? 2 : 1)) break;
    }
    if (pairs.length === 0) return null;
    const type = this.r.pick(JOIN_TYPES);
    const [la, ra] = [this.alias(), this.alias()];
    const on = pairs.map(([l, r]) => `${la}.${q(l.name)} = ${ra}.${q(r.name)}`).join(' AND ');
    const cols = left.schema.map((c) => ({ from: `${la}.${q(c.name)}`, as: c.name }));
    const schema = [...left.schema];
    if (type !== 'semi' && type !== 'anti') {
      // skewjoin's naming of right columns whose name is taken: _right, then _right2, ...
      const taken = new Set(schema.map((c) => c.name));
      for (const c of right.schema) {
        let name = c.name;
        if (taken.has(name)) {
          name = `${c.name}_right`;
          for (let k = 2; taken.has(name); k++) name = `${c.name}_right${k}`;
        }
        taken.add(name);
        cols.push({ from: `${ra}.${q(c.name)}`, as: name });
        schema.push({ name, kind: c.kind });
      }
    }
    return {
      node: { op: 'join', type, left: left.node, right: right.node, on: pairs.map(([l, r]) => [l.name, r.name]) },
      sql: `SELECT ${selectList(cols)} FROM (${left.sql}) ${la} ${JOIN_SQL[type]} (${right.sql}) ${ra} ON ${on}`,
      schema,
      ordered: false,
    };
  }

  aggregate(input: Gen): Gen {
    const groupBy = this.r.chance(0.2) ? [] : this.r.some(input.schema, 1, 2);
    const aggs: { plan: object; sql: string; col: Col }[] = [];
    const prefix = this.alias();
    for (let i = 0, n = this.r.int(1, 4); i < n; i++) {
      const as = `${prefix}_${i}`;
      const c = this.r.pick(input.schema);
      const numeric = input.schema.filter((x) => x.kind === 'int' || x.kind === 'float');
      const fn = this.r.pick(['count', 'count*', 'sum', 'avg', 'min', 'max', 'count_distinct'] as const);
      if (fn === 'count*') aggs.push({ plan: { fn: 'count', as }, sql: `count(*) AS ${q(as)}`, col: { name: as, kind: 'int' } });
      else if (fn === 'count' || fn === 'count_distinct') {
        aggs.push({ plan: { fn, column: c.name, as }, sql: `count(${fn === 'count' ? '' : 'DISTINCT '}${q(c.name)}) AS ${q(as)}`, col: { name: as, kind: 'int' } });
      } else if (fn === 'min' || fn === 'max') {
        aggs.push({ plan: { fn, column: c.name, as }, sql: `${fn}(${q(c.name)}) AS ${q(as)}`, col: { name: as, kind: c.kind } });
      } else if (numeric.length) {
        // sums of 64-bit values above 2^53 would overflow on joined rows: sums and averages take small ints and floats
        const x = this.r.pick(numeric);
        const kind: Kind = fn === 'avg' || x.kind === 'float' ? 'float' : 'int';
        aggs.push({ plan: { fn, column: x.name, as }, sql: `${fn}(${q(x.name)}) AS ${q(as)}`, col: { name: as, kind } });
      }
    }
    if (aggs.length === 0) aggs.push({ plan: { fn: 'count', as: `${prefix}_n` }, sql: `count(*) AS ${q(`${prefix}_n`)}`, col: { name: `${prefix}_n`, kind: 'int' } });
    const a = this.alias();
    const g = groupBy.map((c) => q(c.name)).join(', ');
    return {
      node: { op: 'aggregate', input: input.node, groupBy: groupBy.map((c) => c.name), aggregates: aggs.map((x) => x.plan) },
      sql: `SELECT ${[...groupBy.map((c) => q(c.name)), ...aggs.map((x) => x.sql)].join(', ')} FROM (${input.sql}) ${a}${g ? ` GROUP BY ${g}` : ''}`,
      schema: [...groupBy, ...aggs.map((x) => x.col)],
      ordered: false,
    };
  }

  /** Sort by every column (a total order, so the rows a limit keeps are defined), maybe then a limit. */
  sortLimit(input: Gen): Gen {
    const by = this.r.shuffle(input.schema).map((c) => ({ column: c.name, desc: this.r.chance(0.5), nulls: this.r.pick(['first', 'last'] as const) }));
    const order = by.map((b) => `${q(b.column)} ${b.desc ? 'DESC' : 'ASC'} NULLS ${b.nulls.toUpperCase()}`).join(', ');
    const sort = { op: 'sort', input: input.node, by };
    const a = this.alias();
    if (this.r.chance(0.3)) return { node: sort, sql: `SELECT * FROM (${input.sql}) ${a} ORDER BY ${order}`, schema: input.schema, ordered: true };
    const count = this.r.int(0, 40), offset = this.r.chance(0.3) ? this.r.int(1, 10) : 0;
    return {
      node: { op: 'limit', input: sort, count, ...(offset ? { offset } : {}) },
      sql: `SELECT * FROM (${input.sql}) ${a} ORDER BY ${order} LIMIT ${count}${offset ? ` OFFSET ${offset}` : ''}`,
      schema: input.schema,
      ordered: true,
    };
  }

  /** A whole query: a tree, sometimes sorted (and limited) at the top or above a join's input. */
  query(): Gen {
    const g = this.node(this.r.int(1, 3));
    return this.r.chance(0.3) ? this.sortLimit(g) : g;
  }
}
