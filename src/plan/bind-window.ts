// Binding a `window` node (PLAN-SPEC "Operators", Windows): partition and order columns, each function's argument
// (a column, or an expression computed below the window), its frame (SQL's default when absent), its result type
// (DuckDB's: ranks and counts int64, percent_rank/cume_dist/avg float64, an integer sum int64, a decimal sum
// decimal(38,s)), and lag/lead's default cast to the argument's type.
import { PlanError, jsonPath } from '../errors.js';
import { bindExpr, castTo } from '../expr/bind.js';
import type { BoundExpr } from '../expr/types.js';
import { type DataType, type Schema, isNumeric, typeName } from '../kernels/column.js';
import type { BoundFrame, BoundNode, BoundWindowFn } from './bound.js';
import type { WindowFnSpec, WindowFrameSpec, WindowNode } from './spec.js';
import { WINDOW_FNS } from './window-fns.js';

type P = (string | number)[];

function colOf(schema: Schema, name: string, at: P): number {
  const i = schema.findIndex((f) => f.name === name);
  if (i < 0)
    throw new PlanError(
      jsonPath(at),
      `column "${name}" not found in input; columns are: ${schema.map((f) => f.name).join(', ')}`,
    );
  return i;
}

export function bindWindow(q: WindowNode, at: P, id: string, bound: BoundNode): BoundNode {
  const partitionBy = q.partitionBy.map((c, i) => colOf(bound.schema, c, [...at, 'partitionBy', i]));
  const orderBy = (q.orderBy ?? []).map((k, i) => ({
    col: colOf(bound.schema, k.column, [...at, 'orderBy', i, 'column']),
    desc: k.desc ?? false,
    nullsFirst: k.nulls === 'first',
  }));
  // arguments that are expressions, and lag/lead defaults, are computed below the window
  const exprs: BoundExpr[] = [];
  const computed = (e: BoundExpr) => bound.schema.length + exprs.push(e) - 1;
  const fns = q.functions.map((f, i): BoundWindowFn => {
    const p = [...at, 'functions', i];
    let col = -1;
    if ('expr' in f) col = computed(bindExpr(f.expr, bound.schema, [...p, 'expr']));
    else if (f.column !== undefined) col = colOf(bound.schema, f.column, [...p, 'column']);
    const argType =
      col < 0 ? null : col < bound.schema.length ? bound.schema[col].type : exprs[col - bound.schema.length].type;
    const spec = WINDOW_FNS[f.fn];
    if (spec.column === 'none' && col >= 0) throw new PlanError(jsonPath([...p, 'column']), `${f.fn} takes no column`);
    if (spec.column === 'required' && col < 0)
      throw new PlanError(jsonPath([...p, 'column']), `${f.fn} needs a column`);
    const n = countArg(f, p);
    let def = -1;
    if (f.default !== undefined && f.default !== null) {
      if (spec.n !== 'offset') throw new PlanError(jsonPath([...p, 'default']), `only lag and lead take a default`);
      def = computed(
        castTo(bindExpr({ value: f.default }, bound.schema, [...p, 'default']), argType!, [...p, 'default']),
      );
    }
    const frame = bindFrame(f.frame, orderBy.length > 0, p);
    if (frame.unit === 'range' && ((frame.start ?? 0) !== 0 || (frame.end ?? 0) !== 0)) {
      if (orderBy.length !== 1)
        throw new PlanError(jsonPath([...p, 'frame']), `a range frame with an offset needs exactly one orderBy key`);
      const t = bound.schema[orderBy[0].col].type;
      if (!isNumeric(t) && t.id !== 'date32')
        throw new PlanError(
          jsonPath([...p, 'frame']),
          `a range frame with an offset needs a numeric or date orderBy key; "${bound.schema[orderBy[0].col].name}" is ${typeName(t)}`,
        );
    }
    const distinct = f.distinct === true && distinctOf(f, col, p);
    return {
      fn: f.fn,
      col,
      as: f.as,
      type: resultType(f, argType, p),
      frame,
      n,
      def,
      ...(distinct ? { distinct } : {}),
    };
  });
  const input: BoundNode =
    exprs.length === 0
      ? bound
      : {
          id: `${id}.compute`,
          kind: 'compute',
          schema: [...bound.schema, ...exprs.map((e, k) => ({ name: `$expr${k}`, type: e.type }))],
          input: bound,
          exprs,
        };
  const schema = [...bound.schema, ...fns.map((f) => ({ name: f.as, type: f.type }))];
  const seen = new Set<string>();
  schema.forEach((f, i) => {
    if (seen.has(f.name))
      throw new PlanError(
        jsonPath([...at, 'functions', i - bound.schema.length, 'as']),
        `duplicate output column "${f.name}"`,
      );
    seen.add(f.name);
  });
  const fnFields = schema.slice(bound.schema.length);
  const node: BoundNode = {
    id,
    kind: 'window',
    schema: [...input.schema, ...fnFields],
    input,
    partitionBy,
    orderBy,
    fns,
  };
  if (exprs.length === 0) return node;
  // the computed columns are dropped above: the output is the input's columns and the functions'
  const w = input.schema.length;
  const indices = [...bound.schema.map((_, i) => i), ...fns.map((_, k) => w + k)];
  return { id: `${id}.columns`, kind: 'project', schema, input: node, indices };
}

/**
 * Whether `"distinct": true` changes the function: count, sum and avg of a column, over any frame (as DuckDB takes
 * them); min and max give the same answer without it (false). Other functions refuse it, as DuckDB does.
 */
function distinctOf(f: WindowFnSpec, col: number, p: P): boolean {
  const d = WINDOW_FNS[f.fn].distinct;
  if (d === 'same') return false;
  if (d === null)
    throw new PlanError(
      jsonPath([...p, 'distinct']),
      `"distinct": true is for count, sum, avg, min and max; ${f.fn} is not an aggregate`,
    );
  if (col < 0) throw new PlanError(jsonPath([...p, 'distinct']), `${f.fn} with "distinct": true needs a column`);
  return true;
}

function countArg(f: WindowFnSpec, p: P): number {
  const n = WINDOW_FNS[f.fn].n;
  if (n === 'buckets' || n === 'nth') {
    if (f.n === undefined || f.n < 1)
      throw new PlanError(
        jsonPath([...p, 'n']),
        `${f.fn} needs "n", a whole number of at least 1; got ${f.n ?? 'none'}`,
      );
    return f.n;
  }
  if (f.n !== undefined) throw new PlanError(jsonPath([...p, 'n']), `only ntile and nth_value take "n"`);
  if (f.offset !== undefined && n !== 'offset')
    throw new PlanError(jsonPath([...p, 'offset']), `only lag and lead take an offset`);
  return f.offset ?? 1;
}

function bindFrame(f: WindowFrameSpec | undefined, ordered: boolean, p: P): BoundFrame {
  if (!f) return ordered ? { unit: 'range', start: null, end: 0 } : { unit: 'rows', start: null, end: null };
  const bound = (b: WindowFrameSpec['start'], key: 'start' | 'end'): number | null => {
    if (b === 'current row') return 0;
    if (typeof b === 'object') return 'preceding' in b ? -b.preceding : b.following;
    if ((b === 'unbounded following') === (key === 'start'))
      throw new PlanError(jsonPath([...p, 'frame', key]), `a frame cannot ${key} at "${b}"`);
    return null;
  };
  return { unit: f.unit, start: bound(f.start, 'start'), end: bound(f.end, 'end') };
}

function resultType(f: WindowFnSpec, t: DataType | null, p: P): DataType {
  const type = WINDOW_FNS[f.fn].type(t);
  if (typeof type === 'string') throw new PlanError(jsonPath([...p, 'column']), `${f.fn} needs ${type}`);
  return type;
}
