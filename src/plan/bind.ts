// Binding: resolve sources to files and row groups (plan/bind-sources.ts), columns to indices, check
// types, and compute each operator's output schema. Every mistake is a
// PlanError naming the JSON path of the field (or an InputError for files).
import type { SparkSources } from './uri.js';
import { type SourceInfo, loadSource, resolveSourceFiles } from './bind-sources.js';
import { bindPredicate, colIndex } from './bind-predicate.js';
import { bindWindow } from './bind-window.js';
import { bindSetOp, bindUnion, bindValues } from './bind-setops.js';
import { type SetOpOptions, joinPays } from './setop-joins.js';
import { Estimator } from './estimate.js';
import { type PlainAggregate, bindGrouped, needsGrouping } from './bind-grouping.js';
import { PlanError, jsonPath } from '../errors.js';
import { type DataType, type Field, type Schema, isDecimal, isFloat, isInteger, typeName } from '../kernels/column.js';
import { AGGREGATES } from '../agg/functions.js';
import { type BoundAggregate, type BoundNode, type FileSplit, type KeyNorm, joinSchema } from './bound.js';
import type { Plan, QueryNode } from './spec.js';
import { bindExpr } from '../expr/bind.js';
import type { BoundExpr } from '../expr/types.js';
import { integerDigits } from '../expr/types.js';

type P = (string | number)[];

/**
 * Bind a validated plan. `baseDir` is the plan file's folder; `overrides` gives some sources other files;
 * `uri` binds the sources Spark reads itself (`workers`: for a local Spark server it may start).
 */
export async function bindPlan(
  plan: Plan,
  baseDir: string,
  overrides?: Map<string, string[]>,
  uri?: { spark: SparkSources; workers: number },
  setOps: SetOpOptions = { broadcastBytes: 0, mode: 'cost' },
): Promise<BoundNode> {
  const sources = new Map<string, Promise<SourceInfo>>();
  const getSource = (name: string, at: P) => {
    if (!(name in plan.sources) && !overrides?.has(name)) {
      throw new PlanError(
        jsonPath(at),
        `unknown source "${name}"; sources are: ${Object.keys(plan.sources).join(', ') || '(none)'}`,
      );
    }
    let s = sources.get(name);
    if (!s) {
      const files = overrides?.get(name);
      const spec = plan.sources[name];
      const csv = spec && 'csv' in spec ? spec : undefined;
      s = (
        files
          ? Promise.resolve(files)
          : 'csv' in spec
            ? resolveSourceFiles(spec.csv, baseDir, ['sources', name, 'csv'])
            : resolveSourceFiles(spec.parquet, baseDir, ['sources', name, 'parquet'], uri?.spark)
      ).then((f) => loadSource(name, f, uri?.workers ?? 1, uri?.spark, csv));
      sources.set(name, s);
    }
    return s;
  };
  const counters = new Map<string, number>();
  const nextId = (op: string) => {
    const n = (counters.get(op) ?? 0) + 1;
    counters.set(op, n);
    return `${op}-${n}`;
  };
  // Assign ids top-down (pre-order) so that they read in plan order.
  const ids = new Map<QueryNode, string>();
  const assign = (q: QueryNode) => {
    ids.set(q, nextId(q.op));
    if ('input' in q) assign(q.input);
    if (q.op === 'union') q.inputs.forEach(assign);
    if (q.op === 'join' || q.op === 'intersect' || q.op === 'except') {
      assign(q.left);
      assign(q.right);
    }
  };
  assign(plan.query);
  // a distinct INTERSECT or EXCEPT is a semi or anti join where that is expected to pay (plan/setop-joins.ts), from
  // the footers' counts and ranges (no sample); on Spark (sources Spark reads) it stays an aggregate: Spark plans
  // its own joins
  const est = new Estimator(false);
  const small: Small = (q, l, r) => (uri ? Promise.resolve(false) : joinPays(q.op, l, r, setOps, est));
  return bindNode(plan.query, ['query'], getSource, (q) => ids.get(q)!, small);
}

/** Whether a distinct set operation is planned as a join (plan/setop-joins.ts). */
type Small = (q: Query<'intersect' | 'except'>, left: BoundNode, right: BoundNode) => Promise<boolean>;

function checkUnique(names: string[], at: P) {
  const seen = new Set<string>();
  names.forEach((n, i) => {
    if (seen.has(n)) throw new PlanError(jsonPath([...at, i]), `duplicate output column "${n}"`);
    seen.add(n);
  });
}

async function bindNode(
  q: QueryNode,
  at: P,
  getSource: (n: string, at: P) => Promise<SourceInfo>,
  idOf: (q: QueryNode) => string,
  small: Small,
): Promise<BoundNode> {
  const id = idOf(q);
  const rec = (child: QueryNode, key: string) => bindNode(child, [...at, key], getSource, idOf, small);
  switch (q.op) {
    case 'scan':
      return bindScan(q, at, id, await getSource(q.source, [...at, 'source']));
    case 'filter': {
      const input = await rec(q.input, 'input');
      return {
        id,
        kind: 'filter',
        schema: input.schema,
        input,
        pred: bindPredicate(q.where, input.schema, [...at, 'where']),
      };
    }
    case 'project':
      return bindProject(q, at, id, await rec(q.input, 'input'));
    case 'join': {
      if (q.on.length === 0 && q.type !== 'inner') {
        throw new PlanError(
          jsonPath([...at, 'on']),
          `an empty "on" (a cross join) needs type "inner", got "${q.type}"`,
        );
      }
      const [left, right] = await Promise.all([rec(q.left, 'left'), rec(q.right, 'right')]);
      return bindJoin(q, at, id, left, right);
    }
    case 'aggregate': {
      const input = await rec(q.input, 'input');
      if (!needsGrouping(q)) return bindAggregateNode(q, at, id, input);
      const plain: PlainAggregate = (i, groupBy, aggregates, nid) =>
        bindAggregateNode({ op: 'aggregate', input: q.input, groupBy, aggregates }, at, nid, i);
      return bindGrouped(q, at, id, input, plain);
    }
    case 'sort': {
      const input = await rec(q.input, 'input');
      const by = q.by.map((k, i) => ({
        col: colIndex(input.schema, k.column, [...at, 'by', i, 'column']),
        desc: k.desc ?? false,
        nullsFirst: k.nulls === 'first',
      }));
      return { id, kind: 'sort', schema: input.schema, input, by };
    }
    case 'limit': {
      const input = await rec(q.input, 'input');
      return { id, kind: 'limit', schema: input.schema, input, count: q.count, offset: q.offset ?? 0 };
    }
    case 'window':
      return bindWindow(q, at, id, await rec(q.input, 'input'));
    case 'union': {
      const inputs = await Promise.all(
        q.inputs.map((c, i) => bindNode(c, [...at, 'inputs', i], getSource, idOf, small)),
      );
      return bindUnion(q, at, id, inputs);
    }
    case 'intersect':
    case 'except': {
      const [left, right] = await Promise.all([rec(q.left, 'left'), rec(q.right, 'right')]);
      return bindSetOp(q, at, id, left, right, !q.all && (await small(q, left, right)));
    }
    case 'values':
      return bindValues(q, at, id);
  }
}

type Query<K extends QueryNode['op']> = Extract<QueryNode, { op: K }>;

function bindScan(q: Query<'scan'>, at: P, id: string, src: SourceInfo): BoundNode {
  const fileCols = src.files[0].columns;
  const names = q.columns ?? fileCols.map((c) => c.name);
  const unreadable: Record<string, { file: string; type: string }> = {};
  const schema: Field[] = names.map((n, i) => {
    const c = fileCols.find((x) => x.name === n);
    if (!c) {
      throw new PlanError(
        jsonPath([...at, 'columns', i]),
        `column "${n}" not found in source "${q.source}"; columns are: ${fileCols.map((x) => x.name).join(', ')}`,
      );
    }
    if (typeof c.type === 'string') {
      unreadable[n] = { file: src.files[0].path, type: c.type };
      return { name: n, type: { id: 'int32' } }; // placeholder; pruning raises the error if it is read
    }
    return { name: n, type: c.type };
  });
  if (q.columns) checkUnique(q.columns, [...at, 'columns']);
  const splits: FileSplit[] = [];
  for (const f of src.files) {
    if (f.csv) {
      const { delimiter, columns } = f.csv;
      for (const c of f.csv.chunks) {
        const csv = { delimiter, columns, start: c.start, end: c.end, line: c.line };
        splits.push({ path: f.path, rowGroups: [], rows: c.rows, bytes: c.end - c.start, csv });
      }
    } else if (f.wholeFile)
      splits.push({ path: f.path, rowGroups: [], rows: 0, bytes: f.rowGroupBytes[0], wholeFile: true });
    else
      f.rowGroupRows.forEach((rows, g) =>
        splits.push({ path: f.path, rowGroups: [g], rows, bytes: f.rowGroupBytes[g] }),
      );
  }
  return {
    id,
    kind: 'scan',
    schema,
    source: q.source,
    splits,
    ...(Object.keys(unreadable).length ? { unreadable } : {}),
  };
}

function bindProject(q: Query<'project'>, at: P, id: string, input: BoundNode): BoundNode {
  // Computed columns come from a compute node below the projection, after the input's columns.
  const exprs: BoundExpr[] = [];
  const indices: number[] = [];
  const schema: Field[] = q.columns.map((c, i) => {
    if (typeof c !== 'string' && 'expr' in c) {
      const e = bindExpr(c.expr, input.schema, [...at, 'columns', i, 'expr']);
      indices.push(input.schema.length + exprs.length);
      exprs.push(e);
      return { name: c.name, type: e.type };
    }
    const [out, src, p] =
      typeof c === 'string' ? [c, c, [...at, 'columns', i]] : [c.name, c.column, [...at, 'columns', i, 'column']];
    const j = colIndex(input.schema, src, p);
    indices.push(j);
    return { name: out, type: input.schema[j].type };
  });
  checkUnique(
    schema.map((f) => f.name),
    [...at, 'columns'],
  );
  return { id, kind: 'project', schema, input: computeNode(input, exprs, `${id}.compute`), indices };
}

function bindJoin(q: Query<'join'>, at: P, id: string, left0: BoundNode, right0: BoundNode): BoundNode {
  const leftKeys: number[] = [],
    rightKeys: number[] = [];
  const leftNorms: KeyNorm[] = [],
    rightNorms: KeyNorm[] = [];
  // a float key against an exact one (an integer, a decimal): the exact side cast to the float type, a column of its
  // own (as SQL compares them: DuckDB casts to the common type), so that they join as float keys
  const casts: [BoundExpr[], BoundExpr[]] = [[], []];
  const onFloat = (side: 0 | 1, i: number, input: BoundNode, other: DataType): number => {
    const f = input.schema[i];
    if (!isFloat(other) || isFloat(f.type) || !(isInteger(f.type) || isDecimal(f.type))) return i;
    const to: DataType = { id: other.id === 'float32' ? 'float32' : 'float64' };
    const what = `${jsonPath([...at, 'on'])} ("${f.name}" as ${typeName(to)})`;
    casts[side].push({ k: 'cast', arg: { k: 'col', col: i, type: f.type, name: f.name }, type: to, what });
    return input.schema.length + casts[side].length - 1;
  };
  const pairs = q.on.map(([l, r], i) => {
    const li = colIndex(left0.schema, l, [...at, 'on', i, 0], 'left input');
    const ri = colIndex(right0.schema, r, [...at, 'on', i, 1], 'right input');
    return [onFloat(0, li, left0, right0.schema[ri].type), onFloat(1, ri, right0, left0.schema[li].type)] as const;
  });
  // each cast column named for what it holds (`--explain`: "on f = cast(id as float64)")
  const withCasts = (input: BoundNode, exprs: BoundExpr[], nid: string): BoundNode =>
    exprs.length === 0
      ? input
      : {
          id: nid,
          kind: 'compute',
          schema: [
            ...input.schema,
            ...exprs.map((e) => ({
              name: `cast(${(e as { arg: { name: string } }).arg.name} as ${typeName(e.type)})`,
              type: e.type,
            })),
          ],
          input,
          exprs,
        };
  const left = withCasts(left0, casts[0], `${id}.left-keys`),
    right = withCasts(right0, casts[1], `${id}.right-keys`);
  pairs.forEach(([li, ri], i) => {
    const [ln, rn] = keyNorms(left.schema[li], right.schema[ri], [...at, 'on', i]);
    leftKeys.push(li);
    rightKeys.push(ri);
    leftNorms.push(ln);
    rightNorms.push(rn);
  });
  const schema = q.type === 'semi' || q.type === 'anti' ? [...left.schema] : joinSchema(left.schema, right.schema);
  const fixed = q.reorder === false ? { fixed: true } : {};
  const join: BoundNode = {
    id,
    kind: 'join',
    type: q.type,
    schema,
    left,
    right,
    leftKeys,
    rightKeys,
    leftNorms,
    rightNorms,
    ...fixed,
  };
  if (casts[0].length + casts[1].length === 0) return join;
  // the cast key columns dropped again: the join's output is its inputs' columns
  const keep = (n: number, from: number) => Array.from({ length: n }, (_, k) => from + k);
  const indices = [
    ...keep(left0.schema.length, 0),
    ...(q.type === 'semi' || q.type === 'anti' ? [] : keep(right0.schema.length, left.schema.length)),
  ];
  return { id: `${id}.keys`, kind: 'project', schema: indices.map((k) => schema[k]), input: join, indices };
}

function bindAggregateNode(q: Query<'aggregate'>, at: P, id: string, bound: BoundNode): BoundNode {
  if (!q.groupBy) throw new PlanError(jsonPath([...at, 'groupBy']), 'an aggregate needs groupBy (or groupingSets)');
  const groupBy = q.groupBy.map((g, i) => colIndex(bound.schema, g, [...at, 'groupBy', i]));
  // Aggregates over expressions read computed columns appended below the aggregate.
  const exprs: BoundExpr[] = [];
  const specs = q.aggregates.map((a, i) => {
    if (a.fn === 'grouping') throw new PlanError(jsonPath([...at, 'aggregates', i]), 'internal: grouping() unbound');
    if (!('expr' in a)) return a;
    const e = bindExpr(a.expr, bound.schema, [...at, 'aggregates', i, 'expr']);
    exprs.push(e);
    return { fn: a.fn, column: `$expr${exprs.length - 1}`, as: a.as, ...(a.q !== undefined ? { q: a.q } : {}) };
  });
  const input = computeNode(bound, exprs, `${id}.compute`);
  const aggs: BoundAggregate[] = specs.map((a, i) => bindAggregate(a, input.schema, [...at, 'aggregates', i]));
  const schema: Field[] = [...groupBy.map((g) => input.schema[g]), ...aggs.map((a) => ({ name: a.as, type: a.type }))];
  checkUnique(
    schema.map((f) => f.name),
    [...at, 'aggregates'],
  );
  return { id, kind: 'aggregate', schema, input, groupBy, aggs };
}

const UNIT_RANK = { second: 0, millisecond: 1, microsecond: 2, nanosecond: 3 } as const;

function keyNorms(l: Field, r: Field, at: P): [KeyNorm, KeyNorm] {
  const a = l.type,
    b = r.type;
  if (isInteger(a) && isInteger(b)) {
    // uint64 against a signed integer: by value in 128 bits (2^64 - 1 has the bits of -1 as a 64-bit word)
    const signed = (t: DataType) => t.id === 'int8' || t.id === 'int16' || t.id === 'int32' || t.id === 'int64';
    if ((a.id === 'uint64' && signed(b)) || (b.id === 'uint64' && signed(a))) {
      return [
        { kind: 'dec', mul: 0, wide: true },
        { kind: 'dec', mul: 0, wide: true },
      ];
    }
    return [{ kind: 'int' }, { kind: 'int' }];
  }
  if ((isDecimal(a) || isInteger(a)) && (isDecimal(b) || isInteger(b))) {
    // Compared by value at the finer scale; wide when the common form may exceed 18 digits.
    const scale = Math.max(a.scale ?? 0, b.scale ?? 0);
    const wide = Math.max(integerDigits(a), integerDigits(b)) + scale > 18;
    return [
      { kind: 'dec', mul: scale - (a.scale ?? 0), wide },
      { kind: 'dec', mul: scale - (b.scale ?? 0), wide },
    ];
  }
  if (isFloat(a) && isFloat(b)) return [{ kind: 'float' }, { kind: 'float' }];
  if (a.id === 'utf8' && b.id === 'utf8') return [{ kind: 'str' }, { kind: 'str' }];
  if (a.id === 'date32' && b.id === 'date32') return [{ kind: 'int' }, { kind: 'int' }];
  if (a.id === 'timestamp' && b.id === 'timestamp') {
    const ra = UNIT_RANK[a.unit!],
      rb = UNIT_RANK[b.unit!];
    const scale = (d: number) => (d > 0 ? { kind: 'int' as const, scale: 1000 ** d } : { kind: 'int' as const });
    return [scale(rb - ra), scale(ra - rb)];
  }
  throw new PlanError(
    jsonPath(at),
    `cannot join left column "${l.name}" (${typeName(a)}) with right column "${r.name}" (${typeName(b)}): key types are not comparable`,
  );
}

/** The input with computed columns appended (named $expr0, ...), or the input itself when there are none. */
function computeNode(input: BoundNode, exprs: BoundExpr[], id: string): BoundNode {
  if (exprs.length === 0) return input;
  const schema = [...input.schema, ...exprs.map((e, k) => ({ name: `$expr${k}`, type: e.type }))];
  return { id, kind: 'compute', schema, input, exprs };
}

function bindAggregate(
  a: { fn: BoundAggregate['fn']; column?: string; as: string; q?: number },
  schema: Schema,
  at: P,
): BoundAggregate {
  const def = AGGREGATES[a.fn];
  const q = typeof def.q === 'number' ? def.q : a.q;
  if (def.q === 'param' && q === undefined)
    throw new PlanError(jsonPath([...at, 'q']), `${a.fn} needs "q", the fraction from 0 to 1`);
  if (def.q !== 'param' && a.q !== undefined)
    throw new PlanError(jsonPath([...at, 'q']), `${a.fn} takes no "q" (got ${a.q})`);
  const more = q === undefined ? {} : { q };
  if (a.column === undefined) {
    const type = def.type(null);
    if (type === null) throw new PlanError(jsonPath([...at, 'column']), `${a.fn} needs a column`);
    return { fn: a.fn, col: -1, as: a.as, type, ...more };
  }
  const col = colIndex(schema, a.column, [...at, 'column']);
  const t = schema[col].type;
  const type = def.type(t);
  if (type === null)
    throw new PlanError(jsonPath([...at, 'column']), `${a.fn} needs ${def.needs}; "${a.column}" is ${typeName(t)}`);
  return { fn: a.fn, col, as: a.as, type, ...(isDecimal(t) ? { decimal: true } : {}), ...more };
}
