// FROM: the block's tables (scans, subqueries, CTEs, outer joins) as the bases
// of its join graph, inner and cross joins flattened into it, their ON and
// USING conditions beside the WHERE's. The join order is sql/join-order.ts's.
import type { QueryNode } from '../plan/spec.js';
import type { Expr, FromItem } from './ast.js';
import { collectIds, splitAnd } from './conditions.js';
import type { Ctx, Rel } from './context.js';
import { type Base, joinGraph } from './join-order.js';
import { sqlError } from './lexer.js';
import { type Col, Scope, suggest } from './scope.js';
import { keyTypes, keyable } from './keys.js';

/** A table read from its files, its columns under fresh ids (renamed by a projection when a name is taken). */
function scanRel(ctx: Ctx, item: Extract<FromItem, { k: 'table' | 'path' }>, table: string): Rel {
  const info = item.k === 'path' ? ctx.catalog.pathTable(item.path)! : ctx.catalog.table(item.name)!;
  ctx.usedSources.add(info.source);
  const cols: Col[] = info.columns.map((c) => {
    const s = info.stats.get(c.name);
    return {
      id: ctx.namer.fresh(c.name),
      name: c.name.toLowerCase(),
      table,
      ...(typeof c.type === 'string' ? {} : { type: c.type }),
      nullable: !(s && s.nulls === 0),
      ...(s ? { stats: { ...s, rows: info.rows } } : {}),
    };
  });
  const scan: QueryNode = { op: 'scan', source: info.source, columns: info.columns.map((c) => c.name) };
  const renamed = cols.some((c, i) => c.id !== info.columns[i].name);
  const node: QueryNode = renamed
    ? {
        op: 'project',
        input: scan,
        columns: cols.map((c, i) => {
          const file = info.columns[i].name;
          return c.id === file ? c.id : { name: c.id, column: file };
        }),
      }
    : scan;
  return { node, cols, rows: info.rows, baseRows: info.rows };
}

/** A subquery's or CTE's result under the names FROM gives it. */
function renameRel(rel: Rel, table: string, names: string[] | undefined, pos: Expr['pos']): Rel {
  if (names && names.length > rel.cols.filter((c) => !c.hidden).length) {
    throw sqlError(pos, `${table} has ${rel.cols.length} columns but ${names.length} names are given`);
  }
  let k = 0;
  return { ...rel, cols: rel.cols.map((c) => (c.hidden ? c : { ...c, table, name: names?.[k++] ?? c.name })) };
}

/** Plan one FROM item; inner and cross joins flatten into `bases` and `conds`. */
export function planFromItem(ctx: Ctx, item: FromItem, bases: Base[], conds: Expr[], parent: Scope | undefined): void {
  const add = (rel: Rel) => bases.push({ rel, conds: [], applies: [], factor: 1 });
  switch (item.k) {
    case 'table': {
      const cte = ctx.ctes.get(item.name);
      if (cte) {
        const saved = ctx.ctes;
        ctx.ctes = new Map([...saved].filter(([n]) => n !== item.name)); // a CTE does not see itself
        try {
          add(renameRel(ctx.planSelect(cte.q, undefined), item.alias ?? item.name, cte.cols, item.pos));
        } finally {
          ctx.ctes = saved;
        }
        return;
      }
      if (!ctx.catalog.table(item.name)) {
        const known = [...ctx.catalog.names(), ...ctx.ctes.keys()];
        const { how, tried } = ctx.catalog.bindHint(item.name);
        const hint =
          known.length === 0
            ? `; bind it with ${how}`
            : suggest(item.name, known) || `; tables are: ${known.join(', ')}; bind it with ${how}`;
        throw sqlError(item.pos, `table "${item.name}" does not exist${hint}${tried}`);
      }
      add(scanRel(ctx, item, item.alias ?? item.name));
      return;
    }
    case 'path':
      add(scanRel(ctx, item, item.alias ?? ctx.catalog.pathTable(item.path)!.source));
      return;
    case 'sub': {
      if (!item.alias) throw sqlError(item.pos, 'a subquery in FROM needs an alias');
      add(renameRel(ctx.planSelect(item.q, undefined), item.alias, item.cols, item.pos));
      return;
    }
    case 'join':
      if (item.type === 'inner' || item.type === 'cross') {
        planFromItem(ctx, item.l, bases, conds, parent);
        planFromItem(ctx, item.r, bases, conds, parent);
        conds.push(...splitAnd(item.on)); // split at AND as WHERE is: equalities between sides become join keys
        if (item.using) {
          for (const u of item.using) conds.push(usingEq(u, bases, item.pos));
        }
        return;
      }
      add(outerJoin(ctx, item, parent));
  }
}

function usingEq(name: string, bases: Base[], pos: Expr['pos']): Expr {
  const holders = bases.filter((b) => b.rel.cols.some((c) => c.name === name && !c.hidden));
  if (holders.length < 2) throw sqlError(pos, `USING column "${name}" is not on both sides of the join`);
  const t = (b: Base) => b.rel.cols.find((c) => c.name === name)!.table;
  const last = holders[holders.length - 1];
  last.rel.cols = last.rel.cols.map((c) => (c.name === name ? { ...c, hidden: true } : c));
  const l: Expr = { k: 'col', table: t(holders[0]), name, pos },
    r: Expr = { k: 'col', table: t(last), name, pos };
  return { k: 'cmp', op: '=', l, r, pos };
}

/** LEFT, RIGHT or FULL joins keep their place: each side is planned alone, the ON equalities become keys. */
function outerJoin(ctx: Ctx, item: Extract<FromItem, { k: 'join' }>, parent: Scope | undefined): Rel {
  const side = (x: FromItem) => {
    const bases: Base[] = [],
      conds: Expr[] = [];
    planFromItem(ctx, x, bases, conds, parent);
    return { bases, conds };
  };
  const l = side(item.l),
    r = side(item.r);
  const lcols = l.bases.flatMap((b) => b.rel.cols),
    rcols = r.bases.flatMap((b) => b.rel.cols);
  const scope = new Scope([...lcols, ...rcols], parent);
  const lids = new Set(lcols.map((c) => c.id)),
    rids = new Set(rcols.map((c) => c.id));
  const on: [string, string][] = [];
  const conds = splitAnd(item.on);
  const colType = (x: Expr) => scope.resolve(x as Extract<Expr, { k: 'col' }>).col.type;
  if (item.using) {
    for (const u of item.using) {
      const a = lcols.find((c) => c.name === u && !c.hidden),
        b = rcols.find((c) => c.name === u && !c.hidden);
      if (!a || !b) throw sqlError(item.pos, `USING column "${u}" is not on both sides of the join`);
      on.push([a.id, b.id]);
      if (item.type !== 'full') b.hidden = true;
    }
  }
  const preserved = { left: 'l', right: 'r', full: '' }[item.type as 'left' | 'right' | 'full'];
  for (const c of conds) {
    const refs = new Set<string>();
    collectIds(c, scope, refs);
    const inL = [...refs].every((x) => lids.has(x)),
      inR = [...refs].every((x) => rids.has(x));
    if (c.k === 'cmp' && c.op === '=' && c.l.k === 'col' && c.r.k === 'col' && keyable(colType(c.l), colType(c.r))) {
      const a = scope.resolve(c.l).col.id,
        b = scope.resolve(c.r).col.id;
      if (lids.has(a) && rids.has(b)) {
        on.push([a, b]);
        continue;
      }
      if (rids.has(a) && lids.has(b)) {
        on.push([b, a]);
        continue;
      }
    }
    if (preserved !== undefined && c.k === 'cmp' && c.op === '=' && c.l.k === 'col' && c.r.k === 'col' && !inL && !inR)
      throw keyTypes(c, colType(c.l), colType(c.r));
    if (inR && preserved === 'l') {
      r.conds.push(c);
      continue;
    }
    if (inL && preserved === 'r') {
      l.conds.push(c);
      continue;
    }
    throw sqlError(
      c.pos,
      `this ON condition of a ${item.type.toUpperCase()} JOIN is not supported: only equalities ` +
        'between the two sides, and conditions on the side whose unmatched rows are dropped',
    );
  }
  if (on.length === 0) {
    throw sqlError(item.pos, `a ${item.type.toUpperCase()} JOIN needs at least one equality between its sides`);
  }
  const left = joinGraph(ctx, l.bases, l.conds, new Scope(lcols, parent));
  const right = joinGraph(ctx, r.bases, r.conds, new Scope(rcols, parent));
  const nullable = (cs: Col[], yes: boolean) => cs.map((c) => (yes ? { ...c, nullable: true, stats: undefined } : c));
  const cols = [...nullable(left.cols, item.type !== 'left'), ...nullable(right.cols, item.type !== 'right')];
  const rows = item.type === 'left' ? left.rows : item.type === 'right' ? right.rows : left.rows + right.rows;
  const node: QueryNode = { op: 'join', type: item.type as 'left', left: left.node, right: right.node, on };
  return { node, cols, rows, baseRows: rows };
}
