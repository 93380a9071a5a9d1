// Random operator trees for the fuzzer, each with the DuckDB SQL of the same
// query: scans, filters, projections, joins of every type on one or two key
// pairs (across types: integer widths, decimals, timestamp units), cross
// joins, aggregates, sort + limit, a limit without a sort at the top, windows (a top-N per partition among them),
// set operations and grouping sets. Every generator returns the plan node, its
// SQL (a subquery whose output columns are named as skewjoin names them) and
// its schema. Expressions and predicates (computed columns, expression
// comparisons, aggregates over an expression) come from expr.ts, the other
// computed columns (division, string, date and cast functions) from scalar.ts.
import { type Col, Params, expr, predicate, q } from './expr.js';
import type { Rand } from './random.js';
import { scalar } from './scalar.js';
import { type Kind, type Table, scanSql } from './tables.js';

export interface Gen {
  node: Record<string, unknown>;
  sql: string;
  schema: Col[] /** rows come out in a defined order */;
  ordered: boolean;
  /** a limit without a sort at the top: its rows are any `count` of the SQL's (after `offset`) */
  subset?: { count: number; offset: number };
}

const JOIN_TYPES = ['inner', 'left', 'right', 'full', 'semi', 'anti'] as const;
const JOIN_SQL: Record<(typeof JOIN_TYPES)[number], string> = {
  inner: 'JOIN',
  left: 'LEFT JOIN',
  right: 'RIGHT JOIN',
  full: 'FULL JOIN',
  semi: 'SEMI JOIN',
  anti: 'ANTI JOIN',
};

// integers of any width and sign, 64-bit ones and decimals join each other by value
const numKey = (k: Kind) => k === 'int' || k === 'dec' || k === 'big';
const keysMatch = (a: Kind, b: Kind) => a === b || (numKey(a) && numKey(b));
const keyable = (c: Col) => c.kind !== 'float' && c.kind !== 'bool';

function selectList(cols: { from: string; as: string }[]): string {
  return cols.map((c) => (c.from === c.as ? q(c.from) : `${c.from} AS ${q(c.as)}`)).join(', ');
}

export class PlanGen {
  private aliases = 0;
  /** joins whose key pairs differ in type (integer widths, decimal scales, int with decimal, timestamp units) */
  crossTypeJoins = 0;
  /** the parameters the plan declares (expr.ts turns some literals into them) */
  readonly params: Params;
  constructor(
    private readonly r: Rand,
    private readonly tables: Table[],
  ) {
    this.params = new Params(r);
  }

  private alias() {
    return `q${this.aliases++}`;
  }

  /** The plan document around a drawn tree: every table as a source, the parameters the tree declares. */
  planOf(g: Gen) {
    const { decl } = this.params;
    return {
      version: 1,
      sources: Object.fromEntries(this.tables.map((t) => [t.name, { parquet: t.file }])),
      ...(Object.keys(decl).length ? { params: decl } : {}),
      query: g.node,
    };
  }

  /** Run options with the parameter values given at run time (none: the defaults). */
  withParams<T extends object>(opts: T): T & { params?: Record<string, string> } {
    const { given } = this.params;
    return { ...opts, ...(Object.keys(given).length ? { params: given } : {}) };
  }

  /** A scan of some columns of a table (`most`: of a non-empty table of at most that many rows). */
  scan(most = 0): Gen {
    const t = this.r.pick(most ? this.tables.filter((x) => x.rows > 0 && x.rows <= most) : this.tables);
    // all 23 columns now and then; mostly a few (join results stay narrow enough to compare quickly)
    const cols = this.r.chance(0.15) ? t.columns : this.r.some(t.columns, 2, 8);
    const node = { op: 'scan', source: t.name, ...(cols === t.columns ? {} : { columns: cols.map((c) => c.name) }) };
    return {
      node,
      sql: `SELECT ${cols.map(scanSql).join(', ')} FROM read_parquet('${t.file}')`,
      schema: cols,
      ordered: false,
    };
  }

  /** A tree of at most `depth` levels below the root. */
  node(depth: number): Gen {
    if (depth <= 0) return this.scan();
    const roll = this.r.float();
    if (roll < 0.15) return this.scan();
    if (roll < 0.35) return this.filter(this.node(depth - 1));
    if (roll < 0.45) return this.project(this.node(depth - 1));
    if (roll < 0.72) return this.join(this.node(depth - 1), this.node(depth - 1)) ?? this.filter(this.node(depth - 1));
    if (roll < 0.75) return this.join(this.small(), this.small(), true)!; // a cross join, of inputs small enough
    if (roll < 0.82) return { ...this.sortLimit(this.node(depth - 1)), ordered: false }; // a limited input: the coordinator's rows feed a shuffle
    // an aggregate over a join now and then: eager aggregation below the join (scheduler/executor.ts runAggregate)
    if (roll < 0.88)
      return this.aggregate(this.join(this.node(depth - 1), this.node(depth - 1)) ?? this.node(depth - 1));
    return this.aggregate(this.node(depth - 1));
  }

  /**
   * Three or four inputs joined by inner joins on their keys (a cross join now and then), a filter between them
   * now and then, maybe aggregated on top: trees the join order reorders by cost (plan/join-order.ts).
   */
  chainQuery(): Gen {
    // non-empty inputs, one of at most 120 rows and the others of 40 (the joined rows stay few enough to compare)
    const input = (most = 40) => (this.r.chance(0.25) ? this.filter(this.scan(most)) : this.scan(most));
    for (let tries = 0; tries < 20; tries++) {
      const first = input(120);
      let last = input();
      let g = this.join(first, last, false, true);
      if (!g) continue;
      for (let k = 0, n = this.r.int(1, 2); k < n; k++) {
        if (this.r.chance(0.2)) g = this.filter(g);
        const cross = this.r.chance(0.1);
        const next = cross ? this.small() : input();
        const joined = cross ? this.join(g, next, true) : this.join(g, next, false, true);
        if (joined) [g, last] = [joined, next];
      }
      if (this.r.chance(0.5)) return g;
      // half of them by the last input's join key, summing the others' columns (aggregation before the join)
      return (this.r.chance(0.5) && this.eagerAggregate(g, last)) || this.aggregate(g);
    }
    return this.query();
  }

  /** A few columns of a small table, maybe filtered: an input of a cross join. */
  small(): Gen {
    const t = this.r.pick(this.tables.filter((x) => x.rows <= 120));
    const cols = this.r.some(t.columns, 1, 4);
    const g = {
      node: { op: 'scan', source: t.name, columns: cols.map((c) => c.name) },
      sql: `SELECT ${cols.map(scanSql).join(', ')} FROM read_parquet('${t.file}')`,
      schema: cols,
      ordered: false,
    };
    return this.r.chance(0.5) ? this.filter(g) : g;
  }

  filter(input: Gen): Gen {
    const [where, sql] = predicate(this.r, input.schema, 0, this.params);
    const a = this.alias();
    return {
      node: { op: 'filter', input: input.node, where },
      sql: `SELECT * FROM (${input.sql}) ${a} WHERE ${sql}`,
      schema: input.schema,
      ordered: false,
    };
  }

  project(input: Gen): Gen {
    const picked = this.r.some(input.schema, 1);
    const out: { plan: string | object; from: string; col: Col }[] = picked.map((c, i) => {
      const as = this.r.chance(0.3) ? `p${i}_${c.name}` : c.name;
      return { plan: as === c.name ? c.name : { name: as, column: c.name }, from: q(c.name), col: { ...c, name: as } };
    });
    const a = this.alias();
    // computed columns: arithmetic, abs, coalesce, case over int and decimal columns
    for (let j = 0, n = this.r.chance(0.7) ? this.r.int(1, 2) : 0; j < n; j++) {
      const name = `${a}_e${j}`;
      if (this.r.chance(0.5)) {
        const s = scalar(this.r, input.schema);
        if (s)
          out.splice(this.r.int(0, out.length), 0, {
            plan: { name, expr: s.plan },
            from: s.sql,
            col: { name, ...s.col },
          });
        continue;
      }
      const e = expr(this.r, input.schema);
      if (!e) break;
      out.splice(this.r.int(0, out.length), 0, {
        plan: { name, expr: e.plan },
        from: e.sql,
        col: { name, kind: e.kind, wide: true },
      });
    }
    return {
      node: { op: 'project', input: input.node, columns: out.map((o) => o.plan) },
      sql: `SELECT ${selectList(out.map((o) => ({ from: o.from, as: o.col.name })))} FROM (${input.sql}) ${a}`,
      schema: out.map((o) => o.col),
      ordered: false,
    };
  }

  /** A join on one or two key pairs of the same kind (or decimal with int, matched by value); null when the sides share no kind of key. */
  join(left: Gen, right: Gen, cross = false, inner = false): Gen | null {
    const pairs: [Col, Col][] = [];
    for (const l of cross ? [] : this.r.shuffle(left.schema.filter(keyable))) {
      // a chain's keys: integers or strings with integers or strings, whose values meet (joined rows to compare)
      const meets = (c: Col) => !inner || (c.kind === l.kind && (c.kind === 'int' || c.kind === 'str'));
      const rs = right.schema.filter(
        (c) => keyable(c) && keysMatch(l.kind, c.kind) && meets(c) && !pairs.some((p) => p[1] === c),
      );
      if (rs.length) pairs.push([l, this.r.pick(rs)]);
      if (pairs.length === (this.r.chance(0.35) ? 2 : 1)) break;
    }
    if (pairs.length === 0 && !cross) return null;
    const type = cross || inner ? 'inner' : this.r.pick(JOIN_TYPES);
    if (pairs.some(([l, r]) => l.kind !== r.kind || (l.type ?? l.kind) !== (r.type ?? r.kind))) this.crossTypeJoins++;
    const [la, ra] = [this.alias(), this.alias()];
    const on = cross ? 'TRUE' : pairs.map(([l, r]) => `${la}.${q(l.name)} = ${ra}.${q(r.name)}`).join(' AND ');
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
        schema.push({ ...c, name });
      }
    }
    return {
      node: { op: 'join', type, left: left.node, right: right.node, on: pairs.map(([l, r]) => [l.name, r.name]) },
      sql: `SELECT ${selectList(cols)} FROM (${left.sql}) ${la} ${JOIN_SQL[type]} (${right.sql}) ${ra} ON ${on}`,
      schema,
      ordered: false,
    };
  }

  /**
   * An aggregate of `input`: by `by`, else by one or two of its columns or none. `plain`: functions with partial
   * states over columns only (no count_distinct, no expression).
   */
  aggregate(input: Gen, by?: Col[], plain = false): Gen {
    const groupBy = by ?? (this.r.chance(0.2) ? [] : this.r.some(input.schema, 1, 2));
    const aggs: { plan: object; sql: string; col: Col }[] = [];
    const prefix = this.alias();
    for (let i = 0, n = this.r.int(1, 4); i < n; i++) {
      const as = `${prefix}_${i}`;
      const c = this.r.pick(input.schema);
      const numeric = input.schema.filter((x) => x.kind === 'int' || x.kind === 'float');
      const drawn = this.r.pick([
        'count',
        'count*',
        'sum',
        'avg',
        'min',
        'max',
        'count_distinct',
        'sum',
        'expr',
      ] as const);
      const fn = plain && drawn === 'count_distinct' ? 'count' : plain && drawn === 'expr' ? 'sum' : drawn;
      if (fn === 'expr') {
        // an aggregate over an expression: sum (exact, decimal(38, s) for decimals), min or max
        const e = expr(this.r, input.schema);
        const f = this.r.pick(['sum', 'sum', 'min', 'max'] as const);
        if (e)
          aggs.push({
            plan: { fn: f, expr: e.plan, as },
            sql: `${f}(${e.sql}) AS ${q(as)}`,
            col: { name: as, kind: e.kind, wide: true },
          });
      } else if (fn === 'count*')
        aggs.push({
          plan: { fn: 'count', as },
          sql: `count(*) AS ${q(as)}`,
          col: { name: as, kind: 'int', wide: true },
        });
      else if (fn === 'count' || fn === 'count_distinct') {
        aggs.push({
          plan: { fn, column: c.name, as },
          sql: `count(${fn === 'count' ? '' : 'DISTINCT '}${q(c.name)}) AS ${q(as)}`,
          col: { name: as, kind: 'int', wide: true },
        });
      } else if (fn === 'min' || fn === 'max') {
        aggs.push({
          plan: { fn, column: c.name, as },
          sql: `${fn}(${q(c.name)}) AS ${q(as)}`,
          col: { ...c, name: as },
        });
      } else if (fn === 'sum' && c.kind === 'dec') {
        aggs.push({
          plan: { fn, column: c.name, as },
          sql: `sum(${q(c.name)}) AS ${q(as)}`,
          col: { name: as, kind: 'dec', wide: true },
        });
      } else if (numeric.length) {
        // sums of 64-bit values above 2^53 would overflow on joined rows: sums and averages take small ints and floats
        const x = this.r.pick(numeric);
        const kind: Kind = fn === 'avg' || x.kind === 'float' ? 'float' : 'int';
        aggs.push({
          plan: { fn, column: x.name, as },
          sql: `${fn}(${q(x.name)}) AS ${q(as)}`,
          col: { name: as, kind, wide: true },
        });
      }
    }
    if (aggs.length === 0)
      aggs.push({
        plan: { fn: 'count', as: `${prefix}_n` },
        sql: `count(*) AS ${q(`${prefix}_n`)}`,
        col: { name: `${prefix}_n`, kind: 'int', wide: true },
      });
    const a = this.alias();
    const g = groupBy.map((c) => q(c.name)).join(', ');
    return {
      node: {
        op: 'aggregate',
        input: input.node,
        groupBy: groupBy.map((c) => c.name),
        aggregates: aggs.map((x) => x.plan),
      },
      sql: `SELECT ${[...groupBy.map((c) => q(c.name)), ...aggs.map((x) => x.sql)].join(', ')} FROM (${input.sql}) ${a}${g ? ` GROUP BY ${g}` : ''}`,
      schema: [...groupBy, ...aggs.map((x) => x.col)],
      ordered: false,
    };
  }

  /**
   * An aggregate over a join grouped by the key its right input `right` joins on (and maybe another of its columns),
   * over the left side's columns: decimal sums, sums of small integers, count(*), min/max (TPC-H q10's shape:
   * plan/eager-push.ts sums the left side per key below the join); null where the join has no key or the left side
   * no decimal column. Drawn as 'eager decimal sum'.
   */
  eagerAggregate(g: Gen, right: Gen): Gen | null {
    const on = g.node.on as [string, string][] | undefined;
    if (g.node.op !== 'join' || g.node.type !== 'inner' || !on?.length) return null;
    const width = g.schema.length - right.schema.length;
    const key = g.schema[width + right.schema.findIndex((c) => c.name === on[0][1])];
    const xs = g.schema.slice(0, width);
    const decs = xs.filter((c) => c.kind === 'dec');
    if (!key || decs.length === 0) return null;
    const more = g.schema.slice(width).filter((c) => c !== key);
    const groupBy = [key, ...(more.length && this.r.chance(0.4) ? [this.r.pick(more)] : [])];
    const prefix = this.alias();
    const aggs: { plan: object; sql: string; col: Col }[] = [];
    const add = (fn: string, c: Col | null, col: Col) => {
      const as = `${prefix}_${aggs.length}`;
      aggs.push({
        plan: c ? { fn, column: c.name, as } : { fn, as },
        sql: `${fn}(${c ? q(c.name) : '*'}) AS ${q(as)}`,
        col: { ...col, name: as },
      });
    };
    for (const c of this.r.some(decs, 1, 2)) add('sum', c, { name: '', kind: 'dec', wide: true });
    const small = xs.filter((c) => c.kind === 'int');
    if (small.length && this.r.chance(0.5)) add('sum', this.r.pick(small), { name: '', kind: 'int', wide: true });
    if (this.r.chance(0.5)) add('count', null, { name: '', kind: 'int', wide: true });
    if (this.r.chance(0.4)) {
      const c = this.r.pick(xs);
      add(this.r.pick(['min', 'max']), c, c);
    }
    this.draw('eager decimal sum');
    const a = this.alias();
    const gsql = groupBy.map((c) => q(c.name)).join(', ');
    return {
      node: {
        op: 'aggregate',
        input: g.node,
        groupBy: groupBy.map((c) => c.name),
        aggregates: aggs.map((x) => x.plan),
      },
      sql: `SELECT ${[...groupBy.map((c) => q(c.name)), ...aggs.map((x) => x.sql)].join(', ')} FROM (${g.sql}) ${a} GROUP BY ${gsql}`,
      schema: [...groupBy, ...aggs.map((x) => x.col)],
      ordered: false,
    };
  }

  /** Sort by every column (a total order, so the rows a limit keeps are defined), maybe then a limit. */
  sortLimit(input: Gen): Gen {
    const by = this.r
      .shuffle(input.schema)
      .map((c) => ({ column: c.name, desc: this.r.chance(0.5), nulls: this.r.pick(['first', 'last'] as const) }));
    const order = by.map((b) => `${q(b.column)} ${b.desc ? 'DESC' : 'ASC'} NULLS ${b.nulls.toUpperCase()}`).join(', ');
    const sort = { op: 'sort', input: input.node, by };
    const a = this.alias();
    if (this.r.chance(0.3))
      return {
        node: sort,
        sql: `SELECT * FROM (${input.sql}) ${a} ORDER BY ${order}`,
        schema: input.schema,
        ordered: true,
      };
    const count = this.r.int(0, 40),
      offset = this.r.chance(0.3) ? this.r.int(1, 10) : 0;
    return {
      node: { op: 'limit', input: sort, count, ...(offset ? { offset } : {}) },
      sql: `SELECT * FROM (${input.sql}) ${a} ORDER BY ${order} LIMIT ${count}${offset ? ` OFFSET ${offset}` : ''}`,
      schema: input.schema,
      ordered: true,
    };
  }

  /**
   * A query reading one subtree twice (a view read twice, computed once: physical/repeats.ts): joined with itself,
   * with an aggregate over itself (on keys, or crossed with a one-row total: TPC-H q17's and q11's shapes), or under
   * both inputs of a join each behind a filter. Its readers use other columns of it, so pruning makes the copies'
   * scans differ (plan/share.ts).
   */
  repeated(): Gen {
    if (this.r.chance(0.2)) return this.siblings();
    const g = this.node(this.r.int(1, 2));
    const roll = this.r.float();
    if (roll < 0.3) return this.join(g, g) ?? this.aggregate(g);
    if (roll < 0.6) return this.join(this.aggregate(g), g) ?? this.join(this.total(g), g, true)!;
    if (roll < 0.8) return this.join(this.total(g), g, true)!;
    return this.join(this.filter(g), this.project(g)) ?? this.aggregate(g);
  }

  /**
   * Rows of a table with a key in two aggregates of one table's scan by that key, each over its own filter (or none)
   * and maybe filtered after (HAVING): two semi joins in a row (TPC-H q21's EXISTS and NOT EXISTS shape:
   * plan/siblings.ts computes the two aggregates as one, each filter a FILTER of its functions, and the two semi joins
   * as one).
   */
  siblings(): Gen {
    const t = this.r.pick(this.tables.filter((x) => x.rows > 0));
    const key = this.r.pick(t.columns.filter((c) => c.kind === 'int' || c.kind === 'str'));
    const cols = [
      key,
      ...this.r.some(
        t.columns.filter((c) => c !== key),
        1,
        5,
      ),
    ];
    const scanOf = (table: Table, cs: Col[]): Gen => ({
      node: { op: 'scan', source: table.name, columns: cs.map((c) => c.name) },
      sql: `SELECT ${cs.map(scanSql).join(', ')} FROM read_parquet('${table.file}')`,
      schema: cs,
      ordered: false,
    });
    const place = () => {
      const scan = scanOf(t, cols);
      const agg = this.aggregate(this.r.chance(0.8) ? this.filter(scan) : scan, [key], true);
      return this.r.chance(0.5) ? this.filter(agg) : agg;
    };
    const u = this.r.pick(this.tables);
    let g = scanOf(u, [
      key,
      ...this.r.some(
        u.columns.filter((c) => c.name !== key.name),
        1,
        4,
      ),
    ]);
    for (let k = 0; k < 2; k++) {
      const p = place();
      const [la, ra] = [this.alias(), this.alias()];
      g = {
        node: { op: 'join', type: 'semi', left: g.node, right: p.node, on: [[key.name, key.name]] },
        sql: `SELECT * FROM (${g.sql}) ${la} SEMI JOIN (${p.sql}) ${ra} ON ${la}.${q(key.name)} = ${ra}.${q(key.name)}`,
        schema: g.schema,
        ordered: false,
      };
    }
    this.draw('siblings');
    return g;
  }

  /** A one-row aggregate of a subtree (a scalar subquery). */
  private total(input: Gen): Gen {
    const a = this.alias();
    const numeric = input.schema.filter((x) => x.kind === 'int' || x.kind === 'float');
    const c = numeric.length ? this.r.pick(numeric) : null;
    const agg = c ? { fn: 'max', column: c.name, as: `${a}_t` } : { fn: 'count', as: `${a}_t` };
    return {
      node: { op: 'aggregate', input: input.node, groupBy: [], aggregates: [agg] },
      sql: `SELECT ${c ? `max(${q(c.name)})` : 'count(*)'} AS ${q(`${a}_t`)} FROM (${input.sql}) ${a}`,
      schema: [c ? { ...c, name: `${a}_t` } : { name: `${a}_t`, kind: 'int', wide: true }],
      ordered: false,
    };
  }

  /** Set operations and grouping drawn so far (the fuzzer holds them to floors). */
  readonly drawn: Record<string, number> = {};
  draw(k: string) {
    this.drawn[k] = (this.drawn[k] ?? 0) + 1;
  }

  /**
   * A query of set operations or aggregates beyond the plain ones: UNION [ALL], INTERSECT [ALL] or EXCEPT [ALL]
   * of two trees (columns of the same kind and type by position), or DISTINCT and FILTER aggregates, maybe over
   * ROLLUP grouping sets with grouping().
   */
  setQuery(): Gen {
    const side = () => (this.r.chance(0.2) ? this.values() : this.node(this.r.int(0, 2)));
    const g = this.r.chance(0.6) ? this.setOp(side(), side()) : null;
    const out = g ?? this.grouped(this.node(this.r.int(0, 2)));
    return this.r.chance(0.25) ? this.sortLimit(out) : out;
  }

  setOp(left: Gen, right: Gen): Gen | null {
    const pairs: [Col, Col][] = [];
    // decimals past 18 digits (sums, the 16-byte column) stay out: at 38 digits DuckDB's widening of two scales
    // drops the larger scale (DECIMAL(38,2) with DECIMAL(30,4) gives DECIMAL(38,2)), the engine keeps it
    const pairable = (c: Col) => !(c.kind === 'dec' && c.wide);
    for (const l of this.r.shuffle(left.schema.filter(pairable))) {
      const rs = right.schema.filter(
        (c) => pairable(c) && c.kind === l.kind && c.type === l.type && !pairs.some((p) => p[1] === c),
      );
      if (rs.length) pairs.push([l, this.r.pick(rs)]);
      if (pairs.length === this.r.int(1, 3)) break;
    }
    if (pairs.length === 0) return null;
    const op = this.r.pick(['union', 'union', 'intersect', 'except'] as const);
    const all = this.r.chance(0.5);
    this.draw(`${op}${all ? ' all' : ''}`);
    const a = this.alias();
    const names = pairs.map((_, j) => `${a}_c${j}`);
    const side = (g: Gen, k: 0 | 1) => ({
      op: 'project',
      input: g.node,
      columns: pairs.map((p, j) => ({ name: names[j], column: p[k].name })),
    });
    const sideSql = (g: Gen, k: 0 | 1) =>
      `SELECT ${pairs.map((p, j) => `${q(p[k].name)} AS ${q(names[j])}`).join(', ')} FROM (${g.sql}) ${this.alias()}`;
    const node =
      op === 'union'
        ? { op, all, inputs: [side(left, 0), side(right, 1)] }
        : { op, all, left: side(left, 0), right: side(right, 1) };
    return {
      node,
      sql: `SELECT * FROM ((${sideSql(left, 0)}) ${op.toUpperCase()}${all ? ' ALL' : ''} (${sideSql(right, 1)})) ${a}`,
      schema: pairs.map((p, j) => ({ ...p[0], name: names[j] })),
      ordered: false,
    };
  }

  /** Distinct and filtered aggregates, by one or two keys or by their ROLLUP (with grouping()). */
  private grouped(input: Gen): Gen {
    const keys = this.r.chance(0.2) ? [] : this.r.some(input.schema, 1, 2);
    const rollup = keys.length > 0 && this.r.chance(0.35);
    if (rollup) this.draw('grouping sets');
    const prefix = this.alias();
    const numeric = input.schema.filter((x) => x.kind === 'int' || x.kind === 'float');
    const aggs: { plan: object; sql: string; col: Col }[] = [];
    for (let i = 0, n = this.r.int(1, 4); i < n; i++) {
      const as = `${prefix}_${i}`;
      const [where, whereSql] = this.r.chance(0.3) ? predicate(this.r, input.schema) : [null, ''];
      const filter = where ? { filter: where } : {};
      const f = where ? ` FILTER (WHERE ${whereSql})` : '';
      if (where) this.draw('filter');
      const fn = this.r.pick(['count', 'sum', 'avg', 'min', 'count*'] as const);
      if (fn === 'count*') {
        aggs.push({
          plan: { fn: 'count', as, ...filter },
          sql: `count(*)${f} AS ${q(as)}`,
          col: { name: as, kind: 'int', wide: true },
        });
        continue;
      }
      const c =
        fn === 'sum' || fn === 'avg' ? (numeric.length ? this.r.pick(numeric) : null) : this.r.pick(input.schema);
      if (!c) continue;
      this.draw(`${fn} distinct`);
      const kind: Kind =
        fn === 'count' ? 'int' : fn === 'avg' || c.kind === 'float' ? 'float' : fn === 'min' ? c.kind : 'int';
      aggs.push({
        plan: { fn, column: c.name, distinct: true, as, ...filter },
        sql: `${fn}(DISTINCT ${q(c.name)})${f} AS ${q(as)}`,
        col: fn === 'min' ? { ...c, name: as } : { name: as, kind, wide: true },
      });
    }
    if (aggs.length === 0)
      aggs.push({
        plan: { fn: 'count', as: `${prefix}_n` },
        sql: `count(*) AS ${q(`${prefix}_n`)}`,
        col: { name: `${prefix}_n`, kind: 'int', wide: true },
      });
    if (rollup) {
      const as = `${prefix}_g`;
      aggs.push({
        plan: { fn: 'grouping', columns: keys.map((k) => k.name), as },
        sql: `grouping(${keys.map((k) => q(k.name)).join(', ')}) AS ${q(as)}`,
        col: { name: as, kind: 'int', wide: true },
      });
    }
    const names = keys.map((k) => k.name);
    const by = keys.map((k) => q(k.name)).join(', ');
    const sets = names.map((_, k) => names.slice(0, names.length - k)).concat([[]]);
    return {
      node: {
        op: 'aggregate',
        input: input.node,
        ...(rollup ? { groupingSets: sets } : { groupBy: names }),
        aggregates: aggs.map((x) => x.plan),
      },
      sql: `SELECT ${[...keys.map((k) => q(k.name)), ...aggs.map((x) => x.sql)].join(', ')} FROM (${input.sql}) ${this.alias()}${by ? ` GROUP BY ${rollup ? `ROLLUP (${by})` : by}` : ''}`,
      schema: [...keys, ...aggs.map((x) => x.col)],
      ordered: false,
    };
  }

  /**
   * A query with a window: over a tree (or a values list), maybe filtered after it (QUALIFY's shape), aggregated,
   * sorted or put under a set operation.
   */
  windowQuery(): Gen {
    const input = this.r.chance(0.1) ? this.values() : this.node(this.r.int(0, 2));
    let g = this.window(input);
    if (this.r.chance(0.3)) g = this.window(g); // windows stacked
    const roll = this.r.float();
    if (roll < 0.2) return this.filter(g);
    if (roll < 0.3) return this.aggregate(g);
    if (roll < 0.4) return this.setOp(g, this.node(this.r.int(0, 1))) ?? g;
    if (roll < 0.55) return this.sortLimit(g);
    return g;
  }

  /**
   * A top-N per window partition (plan/window-topn.ts, physical/window/topn.ts): `topN` over a tree or a `values`
   * list (over another window now and then), maybe aggregated or sorted above. Its window's input SQL is kept in
   * `topNInputs` (the fuzzer counts its rows: did the map tasks prune?).
   */
  topNQuery(): Gen {
    // mostly a table's rows with a hot key (the map tasks have rows to prune), sometimes filtered first
    const roll = this.r.float();
    const input =
      roll < 0.1
        ? this.values()
        : roll < 0.55
          ? this.hotScan()
          : roll < 0.7
            ? this.filter(this.hotScan())
            : this.node(this.r.int(0, 2));
    const g = this.topN(this.r.chance(0.2) ? this.window(input) : input);
    const top = this.r.float();
    if (top < 0.15) return this.aggregate(g);
    if (top < 0.35) return this.sortLimit(g);
    return g;
  }

  /** A few columns of a non-empty table (the largest half the time), most often with one of its hot keys (k, s). */
  private hotScan(): Gen {
    const full = this.tables.filter((x) => x.rows > 0);
    const t = this.r.chance(0.5) ? full.reduce((a, b) => (b.rows > a.rows ? b : a)) : this.r.pick(full);
    const hot = t.columns.filter((c) => c.name === 'k' || c.name === 's');
    const cols = [...new Set([...(this.r.chance(0.8) ? [this.r.pick(hot)] : []), ...this.r.some(t.columns, 1, 6)])];
    return {
      node: { op: 'scan', source: t.name, columns: cols.map((c) => c.name) },
      sql: `SELECT ${cols.map(scanSql).join(', ')} FROM read_parquet('${t.file}')`,
      schema: cols,
      ordered: false,
    };
  }

  /** The SQL of the input of each window `topN` drew. */
  readonly topNInputs: string[] = [];

  /**
   * A window of row_number, rank and dense_rank only, under a filter keeping the first N of its partitions by one of
   * them: `f = N`, `f <= N`, `f < N` or `N >= f` (N up to 5; alone or beside another conjunct), with a projection
   * between now and then. Partitioned by a hot key (k: 40% of rows, s: a third; map tasks keeping a quarter of their
   * rows or less prune them), by others (many small partitions: map tasks keep more and do not prune) or by nothing;
   * ordered by every column (equal rows only are tied) or by one or two ties-heavy keys, when a row_number's rows are
   * any of the tied ones: the output is then cut to the partition keys, order keys and functions (at most one
   * row_number), whose values the choice cannot change.
   */
  topN(input: Gen): Gen {
    this.topNInputs.push(input.sql);
    const hot = input.schema.filter((c) => c.name === 'k' || c.name === 's' || /_s$|_i$/.test(c.name));
    const roll = this.r.float();
    const partitionCols =
      hot.length && roll < 0.6
        ? [this.r.pick(hot)]
        : roll < 0.75
          ? []
          : this.r.some(input.schema.filter(keyable), 1, 2);
    const total = this.r.chance(0.4);
    const orderCols = total ? this.r.shuffle(input.schema) : this.r.some(input.schema, 1, 2);
    const orderBy = orderCols.map((c) => ({
      column: c.name,
      desc: this.r.chance(0.4),
      nulls: this.r.pick(['first', 'last'] as const),
    }));
    const prefix = this.alias();
    const fns: { fn: string; as: string }[] = [];
    for (let i = 0, n = this.r.int(1, 3); i < n; i++) {
      let fn = this.r.pick(['row_number', 'rank', 'dense_rank']);
      if (fn === 'row_number' && !total && fns.some((f) => f.fn === 'row_number')) fn = 'rank';
      fns.push({ fn, as: `${prefix}_r${i}` });
    }
    const over = [
      partitionCols.length ? `PARTITION BY ${partitionCols.map((c) => q(c.name)).join(', ')}` : '',
      `ORDER BY ${orderBy.map((b) => `${q(b.column)} ${b.desc ? 'DESC' : 'ASC'} NULLS ${b.nulls.toUpperCase()}`).join(', ')}`,
    ]
      .filter(Boolean)
      .join(' ');
    const fnCols: Col[] = fns.map((f) => ({ name: f.as, kind: 'int', wide: true }));
    const a = this.alias();
    let g: Gen = {
      node: {
        op: 'window',
        input: input.node,
        partitionBy: partitionCols.map((c) => c.name),
        orderBy,
        functions: fns.map((f) => ({ fn: f.fn, as: f.as })),
      },
      sql: `SELECT *, ${fns.map((f) => `${f.fn}() OVER (${over}) AS ${q(f.as)}`).join(', ')} FROM (${input.sql}) ${a}`,
      schema: [...input.schema, ...fnCols],
      ordered: false,
    };
    const target = this.r.pick(fns);
    // tied rows a row_number may take any of: only the columns they agree on are kept
    const cut = !total && fns.some((f) => f.fn === 'row_number');
    const agreed = [...new Set([...partitionCols, ...orderCols]), ...fnCols];
    const project = (from: Gen): Gen => {
      const keep = cut ? agreed : this.r.shuffle(from.schema).filter((c) => c.name === target.as || this.r.chance(0.5));
      const b = this.alias();
      return {
        node: { op: 'project', input: from.node, columns: keep.map((c) => c.name) },
        sql: `SELECT ${keep.map((c) => q(c.name)).join(', ')} FROM (${from.sql}) ${b}`,
        schema: keep,
        ordered: false,
      };
    };
    // the projection below the filter (the rewrite looks through it) or above it
    const below = cut ? this.r.chance(0.5) : this.r.chance(0.25);
    const above = cut ? !below : !below && this.r.chance(0.25);
    if (below) g = project(g);
    const form = this.r.pick(['=', '<=', '<', '>='] as const);
    // N from 1 to 5, small ones more often (`f < N`: N - 1 rows)
    const n = this.r.pick([1, 1, 2, 2, 3, 4, 5]) + (form === '<' ? 1 : 0);
    this.draw(`top-n ${target.fn} ${form === '>=' ? 'N >= f' : `f ${form} N`}`);
    if (cut) this.draw('top-n row_number over ties');
    const col = q(target.as);
    let [where, whereSql]: [object, string] =
      form === '>='
        ? [{ left: { value: n }, cmp: '>=', right: { column: target.as } }, `(${n} >= ${col})`]
        : [{ column: target.as, cmp: form, value: n }, `(${col} ${form} ${n})`];
    if (this.r.chance(0.25)) {
      // (after a cut row_number: on the columns tied rows agree on)
      const [p, ps] = predicate(this.r, cut ? agreed : g.schema, 1, this.params);
      [where, whereSql] = [{ and: this.r.chance(0.5) ? [where, p] : [p, where] }, `(${whereSql} AND ${ps})`];
    }
    const f = this.alias();
    g = {
      node: { op: 'filter', input: g.node, where },
      sql: `SELECT * FROM (${g.sql}) ${f} WHERE ${whereSql}`,
      schema: g.schema,
      ordered: false,
    };
    return above ? project(g) : g;
  }

  /** A `values` list of an int64 and a string column (duplicates and nulls), as DuckDB's VALUES with casts. */
  values(): Gen {
    const a = this.alias();
    const names = [`${a}_i`, `${a}_s`];
    const rows: (number | string | null)[][] = [];
    for (let i = 0, n = this.r.int(1, 12); i < n; i++)
      rows.push([
        this.r.chance(0.15) ? null : this.r.pick([7, 7, 0, 1, 2, 3, -5]),
        this.r.chance(0.15) ? null : this.r.pick(['hot', 'hot', 'v1', 'v2', 'x']),
      ]);
    this.draw('values');
    const lit = (v: number | string | null, t: string) =>
      v === null ? `NULL::${t}` : typeof v === 'string' ? `'${v}'::${t}` : `${v}::${t}`;
    return {
      node: { op: 'values', columns: names, rows, types: ['int64', 'utf8'] },
      sql: `SELECT * FROM (VALUES ${rows.map((r) => `(${lit(r[0], 'BIGINT')}, ${lit(r[1], 'VARCHAR')})`).join(', ')}) ${a}(${names.map(q).join(', ')})`,
      schema: [
        { name: names[0], kind: 'int' },
        { name: names[1], kind: 'str' },
      ],
      ordered: false,
    };
  }

  /**
   * A window over `input`: partitioned by a hot key (k or s, when the input has them) or others or nothing, ordered
   * by one or two ties-heavy keys (then only functions whose answer ties do not change: ranks, RANGE frames) or by
   * every column (a total order up to equal rows: any function, ROWS frames, lag/lead, ntile, first/last/nth_value).
   * Some windows hold only the functions a hot partition can be split for (row_number, ranks, ntile, percent_rank, cume_dist, cumulative frames).
   */
  window(input: Gen): Gen {
    const hot = input.schema.filter((c) => c.name === 'k' || c.name === 's' || /_s$|_i$/.test(c.name));
    const partitionBy =
      hot.length && this.r.chance(0.6)
        ? [this.r.pick(hot)]
        : this.r.chance(0.2)
          ? []
          : this.r.some(input.schema.filter(keyable), 1, 2);
    const noOrder = this.r.chance(0.08);
    const total = !noOrder && this.r.chance(0.5);
    const orderCols = noOrder ? [] : total ? this.r.shuffle(input.schema) : this.r.some(input.schema, 1, 2);
    const orderBy = orderCols.map((c) => ({
      column: c.name,
      desc: this.r.chance(0.4),
      nulls: this.r.pick(['first', 'last'] as const),
    }));
    const splittable = !noOrder && this.r.chance(0.5);
    if (splittable) this.draw('window splittable');
    // RANGE offsets: over one BIGINT key
    const rangeKey = orderCols.length === 1 && orderCols[0].kind === 'int' && !orderCols[0].type;
    const numeric = input.schema.filter((x) => x.kind === 'int' || x.kind === 'float' || x.kind === 'dec');
    const prefix = this.alias();
    const fns: { plan: Record<string, unknown>; sql: string; col: Col }[] = [];
    const bound = (b: string | { preceding: number } | { following: number }) =>
      typeof b === 'string'
        ? b.toUpperCase()
        : 'preceding' in b
          ? `${b.preceding} PRECEDING`
          : `${b.following} FOLLOWING`;
    type B = string | { preceding: number } | { following: number };
    const frameOf = (): { unit: 'rows' | 'range'; start: B; end: B } | undefined => {
      if (noOrder) return undefined;
      // bounded ROWS frames: read from the neighbouring pieces (sometimes farther than a piece holds)
      const far = () => (this.r.chance(0.2) ? this.r.int(4, 40) : this.r.int(0, 3));
      if (splittable && total && this.r.chance(0.35))
        return this.r.pick<{ unit: 'rows'; start: B; end: B }[]>([
          { unit: 'rows', start: { preceding: far() }, end: { following: far() } },
          { unit: 'rows', start: { preceding: far() + 1 }, end: 'current row' },
          { unit: 'rows', start: 'current row', end: { following: far() } },
          { unit: 'rows', start: { following: 1 }, end: { following: far() + 1 } },
        ]);
      if (splittable)
        return this.r.chance(0.5)
          ? undefined
          : {
              unit: total ? this.r.pick(['rows', 'range'] as const) : 'range',
              start: 'unbounded preceding',
              end: 'current row',
            };
      const n = () => this.r.int(0, 3);
      const unit = total && (!rangeKey || this.r.chance(0.6)) ? 'rows' : 'range';
      if (unit === 'range' && !rangeKey) {
        const [start, end] = this.r.pick([
          ['unbounded preceding', 'current row'],
          ['current row', 'unbounded following'],
          ['unbounded preceding', 'unbounded following'],
          ['current row', 'current row'],
        ] as const);
        return { unit, start, end };
      }
      const [start, end] = this.r.pick<[B, B]>([
        ['unbounded preceding', 'current row'],
        [{ preceding: n() }, { following: n() }],
        [{ preceding: n() + 1 }, 'current row'],
        ['current row', { following: n() }],
        [{ following: 1 }, { following: n() + 1 }],
        [{ preceding: n() + 1 }, { preceding: 1 }],
        ['unbounded preceding', 'unbounded following'],
        ['current row', 'unbounded following'],
      ]);
      return { unit, start, end };
    };
    for (let i = 0, n = this.r.int(1, 4); i < n; i++) {
      const as = `${prefix}_w${i}`;
      const ranks = [
        'rank',
        'dense_rank',
        'percent_rank',
        'cume_dist',
        ...(splittable && total ? ['row_number', 'ntile'] : []),
      ];
      const ordered =
        total && !splittable ? ['row_number', 'ntile', 'lag', 'lead', 'first_value', 'last_value', 'nth_value'] : [];
      const fn = this.r.pick([
        ...(noOrder ? ['rank'] : ranks),
        ...(total && splittable ? ['first_value', 'lag', 'lead'] : []),
        ...ordered,
        'count',
        'count*',
        'sum',
        'sum',
        'min',
        'max',
        'avg',
      ]);
      const push = (plan: Record<string, unknown>, args: string, col: Col, framed = true) => {
        const frame = framed ? frameOf() : undefined;
        const f = frame ? ` ${frame.unit.toUpperCase()} BETWEEN ${bound(frame.start)} AND ${bound(frame.end)}` : '';
        fns.push({
          plan: { ...plan, as, ...(frame ? { frame } : {}) },
          sql: `${plan.fn}(${args}) OVER (__OVER__${f}) AS ${q(as)}`,
          col: { ...col, name: as },
        });
      };
      const intCol: Col = { name: as, kind: 'int', wide: true };
      if (fn === 'rank' || fn === 'dense_rank' || fn === 'row_number') push({ fn }, '', intCol, false);
      else if (fn === 'percent_rank' || fn === 'cume_dist')
        push({ fn }, '', { name: as, kind: 'float', wide: true }, false);
      else if (fn === 'ntile') {
        const k = this.r.pick([1, 2, 3, 5, 50]);
        push({ fn, n: k }, `${k}`, intCol, false);
      } else if (fn === 'lag' || fn === 'lead') {
        const c = this.r.pick(input.schema);
        const offset = this.r.chance(0.15) ? this.r.int(4, 40) : this.r.int(0, 3);
        const dflt = c.kind === 'int' && !c.type && this.r.chance(0.5);
        push(
          { fn, column: c.name, offset, ...(dflt ? { default: 0 } : {}) },
          `${q(c.name)}, ${offset}${dflt ? ', 0' : ''}`,
          c,
          undefined,
        );
      } else if (fn === 'first_value' || fn === 'last_value' || fn === 'nth_value') {
        const c = this.r.pick(input.schema);
        const k = this.r.int(1, 3);
        push(
          { fn, column: c.name, ...(fn === 'nth_value' ? { n: k } : {}) },
          `${q(c.name)}${fn === 'nth_value' ? `, ${k}` : ''}`,
          c,
        );
      } else if (fn === 'count*') push({ fn: 'count' }, '*', intCol);
      else if (fn === 'count') {
        const c = this.r.pick(input.schema);
        push({ fn, column: c.name }, q(c.name), intCol);
      } else if (fn === 'min' || fn === 'max') {
        const c = this.r.pick(input.schema);
        push({ fn, column: c.name }, q(c.name), c);
      } else if (numeric.length) {
        // sums of small ints, floats and decimals (64-bit values above 2^53 would overflow)
        const c = this.r.pick(numeric);
        const kind: Kind = fn === 'avg' || c.kind === 'float' ? 'float' : c.kind;
        push({ fn, column: c.name }, q(c.name), { name: as, kind, wide: true });
      }
    }
    if (fns.length === 0)
      fns.push({
        plan: { fn: 'rank', as: `${prefix}_w` },
        sql: `rank() OVER (__OVER__) AS ${q(`${prefix}_w`)}`,
        col: { name: `${prefix}_w`, kind: 'int', wide: true },
      });
    this.draw('window');
    const over = [
      partitionBy.length ? `PARTITION BY ${partitionBy.map((c) => q(c.name)).join(', ')}` : '',
      orderBy.length
        ? `ORDER BY ${orderBy.map((b) => `${q(b.column)} ${b.desc ? 'DESC' : 'ASC'} NULLS ${b.nulls.toUpperCase()}`).join(', ')}`
        : '',
    ]
      .filter(Boolean)
      .join(' ');
    const a = this.alias();
    return {
      node: {
        op: 'window',
        input: input.node,
        partitionBy: partitionBy.map((c) => c.name),
        orderBy,
        functions: fns.map((f) => f.plan),
      },
      sql: `SELECT *, ${fns.map((f) => f.sql.replace('__OVER__', over)).join(', ')} FROM (${input.sql}) ${a}`,
      schema: [...input.schema, ...fns.map((f) => f.col)],
      ordered: false,
    };
  }

  /** A whole query: a tree, sometimes sorted (and limited) at the top or above a join's input. */
  query(): Gen {
    const g = this.node(this.r.int(1, 3));
    if (this.r.chance(0.06)) {
      // a limit without a sort: any rows of the input, as many as the limit allows
      const count = this.r.int(0, 30),
        offset = this.r.chance(0.3) ? this.r.int(1, 10) : 0;
      return {
        ...g,
        node: { op: 'limit', input: g.node, count, ...(offset ? { offset } : {}) },
        subset: { count, offset },
      };
    }
    return this.r.chance(0.3) ? this.sortLimit(g) : g;
  }
}
