// Names: the columns a query block sees (its FROM items', then the enclosing
// blocks' for correlated subqueries), unique plan-wide column ids, and
// messages that suggest the closest name.
import type { DataType } from '../kernels/column.js';
import type { Pos } from './lexer.js';
import { sqlError } from './lexer.js';
import type { Expr } from './ast.js';
import type { ColStats } from './catalog.js';
import { aggregateBySql } from '../agg/functions.js';

/** A column as the plan carries it (`id`, unique in the plan) and as SQL names it (`table`.`name`). */
export interface Col {
  id: string;
  name: string;
  table?: string;
  type?: DataType;
  nullable: boolean;
  /** footer statistics and the table's row count, for columns read straight from a file */
  stats?: ColStats & { rows: number };
  /** hidden from SELECT * (a USING column's second copy, a correlation key) */
  hidden?: boolean;
}

/** Hands out plan-wide unique column ids, so that no join ever sees a name on both sides. */
export class Namer {
  private used = new Set<string>();
  fresh(base: string): string {
    let id = base;
    for (let k = 2; this.used.has(id); k++) id = `${base}_${k}`;
    this.used.add(id);
    return id;
  }
}

function editDistance(a: string, b: string): number {
  const d = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = d[0];
    d[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const t = d[j];
      d[j] = Math.min(d[j] + 1, d[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = t;
    }
  }
  return d[b.length];
}

/** "; did you mean x?" for the closest candidate within a third of the name's length, else "". */
export function suggest(name: string, candidates: Iterable<string>): string {
  let best = '',
    dist = Infinity;
  for (const c of candidates) {
    const k = editDistance(name, c);
    if (k < dist) {
      dist = k;
      best = c;
    }
  }
  return best && dist <= Math.max(2, Math.floor(name.length / 3)) ? `; did you mean ${best}?` : '';
}

export class Scope {
  /** ids of enclosing blocks' columns this block (or a block inside it) used */
  readonly outerUsed = new Set<string>();
  constructor(
    readonly cols: Col[],
    readonly parent?: Scope,
  ) {}

  /** The column a reference names and how many blocks out it lives (0: this block). */
  resolve(ref: { table?: string; name: string; pos: Pos }): { col: Col; depth: number } {
    for (let s: Scope | undefined = this, depth = 0; s; s = s.parent, depth++) {
      if (ref.table !== undefined && !s.cols.some((c) => c.table === ref.table)) continue;
      const named = (c: Col) => c.name === ref.name && (ref.table === undefined ? !c.hidden : c.table === ref.table);
      const hits = s.cols.filter(named);
      if (hits.length > 1 && hits.some((h) => h.id !== hits[0].id)) {
        const where = hits.map((h) => h.table ?? '(subquery)').join(' and ');
        throw sqlError(ref.pos, `column reference "${ref.name}" is ambiguous: it is in ${where}`);
      }
      if (hits.length > 0) {
        for (let t: Scope | undefined = this, k = 0; t && k < depth; t = t.parent, k++) t.outerUsed.add(hits[0].id);
        return { col: hits[0], depth };
      }
      if (ref.table !== undefined) {
        const names = s.cols.filter((c) => c.table === ref.table).map((c) => c.name);
        throw sqlError(ref.pos, `column "${ref.name}" does not exist in ${ref.table}${suggest(ref.name, names)}`);
      }
    }
    if (ref.table !== undefined) {
      const tables = new Set<string>();
      for (let s: Scope | undefined = this; s; s = s.parent) for (const c of s.cols) if (c.table) tables.add(c.table);
      throw sqlError(ref.pos, `table "${ref.table}" is not in FROM${suggest(ref.table, tables)}`);
    }
    const names = new Set<string>();
    for (let s: Scope | undefined = this; s; s = s.parent) for (const c of s.cols) names.add(c.name);
    throw sqlError(ref.pos, `column "${ref.name}" does not exist${suggest(ref.name, names)}`);
  }
}

/** The columns an expression reads (not inside subqueries): ids of this block's, and of enclosing blocks'. */
export function refsOf(e: Expr, scope: Scope): { local: Set<string>; outer: Set<string>; sub: boolean; agg: boolean } {
  const out = { local: new Set<string>(), outer: new Set<string>(), sub: false, agg: false };
  const walk = (x: Expr) => {
    switch (x.k) {
      case 'col': {
        const r = scope.resolve(x);
        (r.depth === 0 ? out.local : out.outer).add(r.col.id);
        return;
      }
      case 'insub':
        out.sub = true;
        walk(x.e);
        return;
      case 'exists':
      case 'subq':
        out.sub = true;
        return;
      case 'call':
        if (isAggregateCall(x)) out.agg = true;
        x.args.forEach(walk);
        if (x.filter) walk(x.filter);
        return;
      default:
        for (const c of children(x)) walk(c);
    }
  };
  walk(e);
  return out;
}

export function isAggregateCall(e: Expr): boolean {
  return e.k === 'call' && (e.name === 'grouping' || aggregateBySql(e.name) !== undefined);
}

/** The direct sub-expressions of an expression (not subqueries' bodies). */
export function children(x: Expr): Expr[] {
  switch (x.k) {
    case 'bin':
    case 'cmp':
    case 'and':
    case 'or':
      return [x.l, x.r];
    case 'not':
    case 'neg':
    case 'isnull':
    case 'cast':
      return [x.e];
    case 'interval':
      return [x.n];
    case 'between':
      return [x.e, x.lo, x.hi];
    case 'like':
      return [x.e, x.pat];
    case 'inlist':
      return [x.e, ...x.list];
    case 'insub':
      return [x.e];
    case 'call':
      return x.filter ? [...x.args, x.filter] : x.args;
    case 'window':
      return [...x.call.args, ...x.over.partitionBy, ...x.over.orderBy.map((o) => o.e)];
    case 'case':
      return [
        ...(x.operand ? [x.operand] : []),
        ...x.whens.flatMap((w) => [w.when, w.then]),
        ...(x.else ? [x.else] : []),
      ];
    default:
      return [];
  }
}
