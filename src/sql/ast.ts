// The parsed query: expressions and SELECT statements, every node with the
// position of its first token (lexer.ts) for messages that point at the text.
import type { Pos } from './lexer.js';

export type CmpOp = '=' | '!=' | '<' | '<=' | '>' | '>=';
export type IntervalUnit = 'day' | 'month' | 'year';

export type Expr =
  | { k: 'col'; table?: string; name: string; pos: Pos }
  | { k: 'num'; text: string; pos: Pos }
  | { k: 'str'; v: string; pos: Pos }
  | { k: 'bool'; v: boolean; pos: Pos }
  | { k: 'null'; pos: Pos }
  | { k: 'date'; v: string; pos: Pos }
  | { k: 'interval'; n: Expr; unit: IntervalUnit; pos: Pos }
  | { k: 'param'; name: string; pos: Pos }
  | { k: 'star'; table?: string; pos: Pos }
  | { k: 'bin'; op: '+' | '-' | '*' | '/' | '%' | '||'; l: Expr; r: Expr; pos: Pos }
  | { k: 'cmp'; op: CmpOp; l: Expr; r: Expr; pos: Pos }
  | { k: 'and' | 'or'; l: Expr; r: Expr; pos: Pos }
  | { k: 'not'; e: Expr; pos: Pos }
  | { k: 'neg'; e: Expr; pos: Pos }
  | { k: 'isnull'; e: Expr; not: boolean; pos: Pos }
  | { k: 'between'; e: Expr; lo: Expr; hi: Expr; not: boolean; pos: Pos }
  | { k: 'like'; e: Expr; pat: Expr; not: boolean; pos: Pos }
  | { k: 'inlist'; e: Expr; list: Expr[]; not: boolean; pos: Pos }
  | { k: 'insub'; e: Expr; q: Select; not: boolean; pos: Pos }
  | { k: 'exists'; q: Select; not: boolean; pos: Pos }
  | { k: 'subq'; q: Select; pos: Pos }
  /** filter: FILTER (WHERE ...) of an aggregate */
  | { k: 'call'; name: string; args: Expr[]; distinct: boolean; star: boolean; filter?: Expr; pos: Pos }
  | { k: 'case'; operand?: Expr; whens: { when: Expr; then: Expr }[]; else?: Expr; pos: Pos }
  | { k: 'cast'; e: Expr; to: string; pos: Pos }
  /** fn(...) OVER (...) or OVER name */
  | { k: 'window'; call: Extract<Expr, { k: 'call' }>; over: WindowSpec; pos: Pos };

/** A frame bound: n rows (or days: INTERVAL n DAY) before or after the current row, or a named end. */
export type FrameBound =
  | 'unbounded preceding'
  | 'current row'
  | 'unbounded following'
  | { preceding: number }
  | { following: number };
/** OVER (...): `name` a window of the WINDOW clause it starts from. */
export interface WindowSpec {
  name?: string;
  partitionBy: Expr[];
  orderBy: OrderItem[];
  frame?: { unit: 'rows' | 'range'; start: FrameBound; end: FrameBound };
  pos: Pos;
}

export interface SelectItem {
  e: Expr;
  alias?: string;
  text: string;
  pos: Pos;
}
export interface OrderItem {
  e: Expr;
  desc: boolean;
  nulls?: 'first' | 'last';
  pos: Pos;
}
export interface Cte {
  name: string;
  cols?: string[];
  q: Select;
  pos: Pos;
}

export type FromItem =
  | { k: 'table'; name: string; alias?: string; pos: Pos }
  /** `csv`: read_csv's options (the file is CSV whatever its name) */
  | { k: 'path'; path: string; csv?: { header?: boolean; delimiter?: string }; alias?: string; pos: Pos }
  | { k: 'sub'; q: Select; alias?: string; cols?: string[]; pos: Pos }
  | {
      k: 'join';
      type: 'inner' | 'left' | 'right' | 'full' | 'cross';
      l: FromItem;
      r: FromItem;
      on?: Expr;
      using?: string[];
      pos: Pos;
    };

export interface Select {
  with: Cte[];
  distinct: boolean;
  items: SelectItem[];
  from: FromItem[];
  where?: Expr;
  groupBy: Expr[];
  having?: Expr;
  orderBy: OrderItem[];
  /** WINDOW name AS (...), ... */
  windows?: Map<string, WindowSpec>;
  qualify?: Expr;
  limit?: number;
  offset?: number;
  pos: Pos;
  /** a set operation of two queries (then no select list, FROM or GROUP BY of its own; ORDER BY and LIMIT its) */
  set?: { op: 'union' | 'intersect' | 'except'; all: boolean; l: Select; r: Select };
  /** VALUES rows (then no select list or FROM) */
  values?: Expr[][];
  /** GROUP BY ROLLUP, CUBE or GROUPING SETS: the sets (groupBy holds each expression once) */
  groupingSets?: Expr[][];
}

/** A structural key of an expression (positions left out): equal keys, equal expressions. */
export function exprKey(e: unknown): string {
  return JSON.stringify(e, (k, v) => (k === 'pos' ? undefined : v));
}
