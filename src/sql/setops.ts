// Set operations and VALUES in SQL: UNION [ALL], INTERSECT [ALL] and EXCEPT [ALL] of two queries (columns by
// position, named as the left's), with the set's ORDER BY (an output name or position) and LIMIT; VALUES rows of
// literals as a table (columns col0, col1, ... as DuckDB names them; a FROM alias may rename them).
import type { QueryNode } from '../plan/spec.js';
import type { Expr, Select } from './ast.js';
import type { Ctx, Rel } from './context.js';
import { sqlError } from './lexer.js';
import { type Col, Scope } from './scope.js';
import { Translator } from './translate.js';

type Cell = Extract<QueryNode, { op: 'values' }>['rows'][number][number];

export function planSetOp(ctx: Ctx, q: Select, top: boolean): Rel {
  const { op, all, l, r } = q.set!;
  const left = ctx.planSelect(l, undefined),
    right = ctx.planSelect(r, undefined);
  const lc = left.cols.filter((c) => !c.hidden),
    rc = right.cols.filter((c) => !c.hidden);
  if (lc.length !== rc.length)
    throw sqlError(
      q.pos,
      `each side of ${op.toUpperCase()} needs the same number of columns; the left has ${lc.length}, the right ${rc.length}`,
    );
  const node: QueryNode =
    op === 'union' ? { op, all, inputs: [left.node, right.node] } : { op, all, left: left.node, right: right.node };
  const cols: Col[] = lc.map((c) => ({ id: c.id, name: c.name, nullable: true }));
  const rows = op === 'union' ? left.rows + right.rows : left.rows;
  return finish(q, { node, cols, rows, baseRows: rows }, top);
}

/** A VALUES list: each cell a literal (a number, string, boolean, date or null, a sign allowed). */
export function planValues(ctx: Ctx, q: Select, top: boolean): Rel {
  const rows = q.values!;
  const width = rows[0].length;
  const tr = new Translator(new Scope([]), ctx.params);
  const cells = rows.map((row, i) => {
    if (row.length !== width)
      throw sqlError(row[0]?.pos ?? q.pos, `VALUES row ${i + 1} has ${row.length} value(s); the first has ${width}`);
    return row.map((e) => cell(tr, e));
  });
  const cols: Col[] = Array.from({ length: width }, (_, j) => {
    const name = `col${j}`;
    return { id: top ? name : ctx.namer.fresh(name), name, nullable: true };
  });
  const node: QueryNode = { op: 'values', columns: cols.map((c) => c.id), rows: cells };
  return { node, cols, rows: rows.length, baseRows: rows.length };
}

function cell(tr: Translator, e: Expr): Cell {
  const x = tr.expr(e);
  if ('value' in x) return x.type === undefined ? x.value : { value: x.value, type: x.type };
  throw sqlError(e.pos, 'VALUES holds literals only (numbers, strings, booleans, dates, NULL)');
}

/** ORDER BY (output names or positions) and LIMIT over a set or VALUES; at the top, SQL's names. */
function finish(q: Select, rel: Rel, top: boolean): Rel {
  let node = rel.node;
  if (q.orderBy.length) {
    const by = q.orderBy.map((o) => {
      let c: Col | undefined;
      if (o.e.k === 'num' && /^\d+$/.test(o.e.text)) c = rel.cols[Number(o.e.text) - 1];
      else if (o.e.k === 'col' && !o.e.table) c = rel.cols.find((k) => k.name === (o.e as { name: string }).name);
      if (!c)
        throw sqlError(o.pos, 'ORDER BY of a UNION, INTERSECT or EXCEPT must name an output column or its position');
      return { column: c.id, ...(o.desc ? { desc: true } : {}), ...(o.nulls ? { nulls: o.nulls } : {}) };
    });
    node = { op: 'sort', input: node, by };
  }
  if (q.limit !== undefined || q.offset !== undefined)
    node = {
      op: 'limit',
      input: node,
      count: q.limit ?? Number.MAX_SAFE_INTEGER,
      ...(q.offset ? { offset: q.offset } : {}),
    };
  if (!top) return { ...rel, node };
  // the top level: the left input's names, made unique
  const names = new Set<string>();
  const out = rel.cols.map((c) => {
    let name = c.name;
    for (let k = 1; names.has(name); k++) name = `${c.name}_${k}`;
    names.add(name);
    return { ...c, id: name, name };
  });
  const columns = rel.cols.map((c, j) => (c.id === out[j].id ? c.id : { name: out[j].id, column: c.id }));
  return { ...rel, node: { op: 'project', input: node, columns }, cols: out };
}
