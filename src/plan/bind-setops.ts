// Set operations bound onto few operators: `union` (all) and `values` are sources of their own; a distinct union
// is an aggregate by every column over the union of all rows; `intersect` and `except` are a union of the two
// inputs tagged by side, counted per side by an aggregate by every column (so nulls are equal), then filtered
// (distinct) or each row repeated as often as SQL's bag semantics say (ALL); a distinct EXCEPT keeps one state
// per group, the largest side tag. A distinct INTERSECT or EXCEPT whose right side is expected small is a semi or
// anti join and a distinct instead (plan/setop-joins.ts).
import { PlanError, jsonPath } from '../errors.js';
import { type Field, typeName } from '../kernels/column.js';
import { bindExpr, castTo } from '../expr/bind.js';
import { lit, sameType } from '../expr/bind-rules.js';
import { type BoundExpr, unify } from '../expr/types.js';
import type { BoundNode } from './bound.js';
import { bindPredicate } from './bind-predicate.js';
import { joinedSetOp } from './setop-joins.js';
import type { Predicate, SetOpNode, UnionNode, ValuesNode } from './spec.js';

type P = (string | number)[];

/** The input with computed columns appended, then projected onto `schema` (indices into input + computed). */
export function reshape(
  input: BoundNode,
  exprs: BoundExpr[],
  indices: number[],
  schema: Field[],
  id: string,
): BoundNode {
  const computed: BoundNode = exprs.length
    ? {
        id: `${id}.compute`,
        kind: 'compute',
        input,
        exprs,
        schema: [...input.schema, ...exprs.map((e, k) => ({ name: `$expr${k}`, type: e.type }))],
      }
    : input;
  return { id, kind: 'project', input: computed, indices, schema };
}

/** All rows of the inputs, columns by position named as the first input's, types widened (int < decimal < float). */
function unionAll(inputs: BoundNode[], at: (i: number) => P, id: string): Extract<BoundNode, { kind: 'union' }> {
  const first = inputs[0].schema;
  inputs.forEach((n, i) => {
    if (n.schema.length !== first.length)
      throw new PlanError(
        jsonPath(at(i)),
        `union input ${i} has ${n.schema.length} column(s) (${n.schema.map((f) => f.name).join(', ')}); ` +
          `input 0 has ${first.length} (${first.map((f) => f.name).join(', ')})`,
      );
  });
  const schema: Field[] = first.map((f, j) => {
    // a column of untyped NULLs (`SELECT NULL AS x`) takes the others' type, as in SQL
    const cols = inputs.map(
      (n): BoundExpr =>
        nullsOnly(n, j)
          ? { k: 'lit', value: null, type: n.schema[j].type }
          : { k: 'col', col: j, type: n.schema[j].type, name: n.schema[j].name },
    );
    // one type throughout stays (float32, narrow integers); else SQL's widening
    const same = cols.every((c) => sameType(c.type, f.type));
    const t = same ? f.type : unify(cols);
    if (!t) {
      const i = Math.max(
        1,
        cols.findIndex((c) => unify([cols[0], c]) === null),
      );
      throw new PlanError(
        jsonPath(at(i)),
        `union column ${j + 1} ("${f.name}"): input ${i} gives ${typeName(cols[i].type)} ("${inputs[i].schema[j].name}"), ` +
          `input 0 gives ${typeName(f.type)}; these types do not mix`,
      );
    }
    return { name: f.name, type: t };
  });
  const converted = inputs.map((n, i) => {
    const exprs: BoundExpr[] = [];
    const indices = schema.map((f, j) => {
      const c: BoundExpr = { k: 'col', col: j, type: n.schema[j].type, name: n.schema[j].name };
      const e = nullsOnly(n, j) && !sameType(c.type, f.type) ? lit(null, f.type) : castTo(c, f.type, at(i));
      if (e === c) return j;
      exprs.push(e);
      return n.schema.length + exprs.length - 1;
    });
    return reshape(n, exprs, indices, schema, `${id}.in${i}`);
  });
  return { id, kind: 'union', schema, inputs: converted };
}

/** Whether column j of n is an untyped NULL literal's (a projection of `NULL`, or a values column of nulls only). */
function nullsOnly(n: BoundNode, j: number): boolean {
  switch (n.kind) {
    case 'project':
      return nullsOnly(n.input, n.indices[j]);
    case 'compute': {
      const w = n.input.schema.length;
      if (j < w) return nullsOnly(n.input, j);
      const e = n.exprs[j - w];
      return e.k === 'lit' && e.value === null;
    }
    case 'values':
      return n.rows.length > 0 && n.rows.every((r) => r[j].k === 'lit' && r[j].value === null);
    default:
      return false;
  }
}

/** Rows without repeats: an aggregate by every column (nulls equal). */
function distinct(input: BoundNode, id: string): BoundNode {
  return { id, kind: 'aggregate', input, schema: input.schema, groupBy: input.schema.map((_, j) => j), aggs: [] };
}

export function bindUnion(q: UnionNode, at: P, id: string, inputs: BoundNode[]): BoundNode {
  if (q.all) return unionAll(inputs, (i) => [...at, 'inputs', i], id);
  return distinct(
    unionAll(inputs, (i) => [...at, 'inputs', i], `${id}.all`),
    id,
  );
}

/** A column appended to a node: its columns, then the expression's (named `name`). */
function withColumn(n: BoundNode, e: BoundExpr, name: string, id: string): BoundNode {
  const schema = [...n.schema, { name, type: e.type }];
  return reshape(
    n,
    [e],
    schema.map((_, j) => j),
    schema,
    id,
  );
}

const SIDE = '$side',
  ROWS = '$rows',
  RIGHT = '$right',
  COPIES = '$copies';

/**
 * INTERSECT and EXCEPT: both inputs tagged ($side 0 left, 1 right), grouped by every column with the rows of each
 * group ($rows) and those of the right ($right); distinct keeps the groups both sides (intersect) or only the left
 * (except: grouped with the largest tag only, kept where it is 0) have, ALL repeats each min(left, right) or
 * left - right times.
 */
export function bindSetOp(
  q: SetOpNode,
  at: P,
  id: string,
  left: BoundNode,
  right: BoundNode,
  smallRight = false,
): BoundNode {
  const side = (i: number): P => [...at, i === 0 ? 'left' : 'right'];
  if (left.schema.length !== right.schema.length) unionAll([left, right], side, id); // its error
  if (smallRight && !q.all) {
    const [l, r] = unionAll([left, right], side, id).inputs;
    const joined = joinedSetOp(q.op === 'except' ? 'anti' : 'semi', id, l, r, distinct);
    if (joined) return joined;
  }
  // one byte a row: the tag goes through the shuffle beside every row (8 bytes as an int64: EXCEPT of JCC-H SF 10's
  // 23M o_custkey rows, ...)
  const tag = (n: BoundNode, side: number, key: string) =>
    withColumn(n, { k: 'lit', value: side, type: { id: 'int8' } }, SIDE, `${id}.${key}`);
  const both = unionAll([tag(left, 0, 'left'), tag(right, 1, 'right')], side, `${id}.union`);
  const width = left.schema.length;
  const keys = both.schema.slice(0, width);
  if (keys.some((f) => f.name === SIDE || f.name === ROWS || f.name === RIGHT || f.name === COPIES))
    throw new PlanError(jsonPath([...at, 'left']), `column names starting with "$" are reserved here`);
  const c = (name: string) => ({ column: name });
  const project = (n: BoundNode): BoundNode => ({
    id,
    kind: 'project',
    input: n,
    indices: keys.map((_, j) => j),
    schema: keys,
  });
  if (q.op === 'except' && !q.all) {
    // one state per group: whether the right side has the row (max of $side); a group without it is the left's
    const seen: BoundNode = {
      id: `${id}.count`,
      kind: 'aggregate',
      input: both,
      groupBy: keys.map((_, j) => j),
      aggs: [{ fn: 'max', col: width, as: RIGHT, type: { id: 'int8' } }],
      schema: [...keys, { name: RIGHT, type: { id: 'int8' } }],
    };
    const pred = bindPredicate({ column: RIGHT, cmp: '=', value: 0 }, seen.schema, [...at, 'op']);
    return project({ id: `${id}.filter`, kind: 'filter', input: seen, pred, schema: seen.schema });
  }
  const counted: BoundNode = {
    id: `${id}.count`,
    kind: 'aggregate',
    input: both,
    groupBy: keys.map((_, j) => j),
    aggs: [
      { fn: 'count', col: -1, as: ROWS, type: { id: 'int64' } },
      { fn: 'sum', col: width, as: RIGHT, type: { id: 'int64' } },
    ],
    schema: [...keys, { name: ROWS, type: { id: 'int64' } }, { name: RIGHT, type: { id: 'int64' } }],
  };
  const leftRows = { fn: '-', args: [c(ROWS), c(RIGHT)] };
  if (!q.all) {
    const where: Predicate = {
      and: [
        { column: RIGHT, cmp: '>', value: 0 },
        { left: c(RIGHT), cmp: '<', right: c(ROWS) },
      ],
    };
    const pred = bindPredicate(where, counted.schema, [...at, 'op']);
    return project({ id: `${id}.filter`, kind: 'filter', input: counted, pred, schema: counted.schema });
  }
  const copies =
    q.op === 'intersect'
      ? { case: [{ when: { left: c(RIGHT), cmp: '<' as const, right: leftRows }, then: c(RIGHT) }], else: leftRows }
      : { fn: '-', args: [leftRows, c(RIGHT)] };
  const withCopies = withColumn(counted, bindExpr(copies, counted.schema, [...at, 'op']), COPIES, `${id}.copies`);
  return project({
    id: `${id}.repeat`,
    kind: 'repeat',
    input: withCopies,
    col: withCopies.schema.length - 1,
    schema: withCopies.schema,
  });
}

/** A literal table: each column's type the cells' common one (or the given type), every cell cast to it. */
export function bindValues(q: ValuesNode, at: P, id: string): BoundNode {
  const n = q.columns.length;
  if (q.types && q.types.length !== n)
    throw new PlanError(jsonPath([...at, 'types']), `${q.types.length} type(s) for ${n} column(s)`);
  const cells = q.rows.map((r, i) => {
    if (r.length !== n)
      throw new PlanError(jsonPath([...at, 'rows', i]), `row ${i} has ${r.length} value(s); columns are ${n}`);
    return r.map((v, j) => {
      const cell = v !== null && typeof v === 'object' ? v : q.types ? { value: v, type: q.types[j] } : { value: v };
      return bindExpr(cell, [], [...at, 'rows', i, j]);
    });
  });
  const schema: Field[] = q.columns.map((name, j) => {
    const col = cells.map((r) => r[j]);
    const t = q.types ? bindExpr({ value: null, type: q.types[j] }, [], [...at, 'types', j]).type : unify(col);
    if (!t) {
      const i = col.findIndex((e) => unify([col[0], e]) === null);
      throw new PlanError(
        jsonPath([...at, 'rows', i, j]),
        `column "${name}": ${typeName(col[i].type)} does not mix with ${typeName(col[0].type)} (row 0)`,
      );
    }
    return { name, type: t };
  });
  const seen = new Set<string>();
  q.columns.forEach((c, j) => {
    if (seen.has(c)) throw new PlanError(jsonPath([...at, 'columns', j]), `duplicate output column "${c}"`);
    seen.add(c);
  });
  const rows = cells.map((r, i) => r.map((e, j) => castTo(e, schema[j].type, [...at, 'rows', i, j])));
  return { id, kind: 'values', schema, rows };
}
