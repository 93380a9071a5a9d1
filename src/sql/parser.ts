// A recursive-descent parser for the SELECT subset of docs/sql.md. It refuses
// what it does not support by name (UNION, window functions, ...) at the
// position of the word, rather than failing somewhere after it.
// The token cursor is in sql/cursor.ts and the expression grammar in sql/parse-expr.ts.
import { type Cte, type Expr, type FromItem, type OrderItem, type Select, type SelectItem, exprKey } from './ast.js';
import { UNSUPPORTED } from './cursor.js';
import { type Pos, type Token, sqlError } from './lexer.js';
import { ExprParser } from './parse-expr.js';

const STATEMENTS = new Set(['insert', 'update', 'delete', 'create', 'drop']);

class Parser extends ExprParser {
  /** After AS a keyword is a name too (`max(d) AS last`). */
  private aliasName(): string {
    const t = this.t;
    if (t.kind === 'kw' && !UNSUPPORTED[t.text]) {
      this.i++;
      return t.text;
    }
    return this.name('an alias');
  }

  /** The whole text: one SELECT (a trailing semicolon allowed). */
  statement(): Select {
    const t = this.t;
    if ((t.kind === 'ident' && STATEMENTS.has(t.text)) || (t.kind === 'kw' && STATEMENTS.has(t.text))) {
      throw sqlError(t.pos, `${t.text.toUpperCase()} is not supported: only SELECT queries`);
    }
    const q = this.query();
    this.accept(';');
    if (this.t.kind !== 'eof') this.fail('the end of the query');
    return q;
  }

  /** `DESCRIBE x` (x a table name, a path in quotes, read_csv(...)): x; null when the text is no DESCRIBE. */
  describeStatement(): FromItem | null {
    if (!(this.t.kind === 'ident' && this.t.text === 'describe')) return null;
    this.next();
    const item = this.fromPrimary();
    this.accept(';');
    if ((this.t as Token).kind !== 'eof') this.fail('the end of the statement');
    return item;
  }

  protected query(): Select {
    const pos = this.t.pos;
    const ctes: Cte[] = [];
    if (this.accept('with')) {
      if (this.t.kind === 'ident' && this.t.text === 'recursive') {
        throw sqlError(this.t.pos, 'WITH RECURSIVE is not supported');
      }
      do {
        const p = this.t.pos;
        const name = this.name('a CTE name');
        const cols = this.isOp('(') ? this.nameList() : undefined;
        this.expect('as');
        this.expect('(');
        ctes.push({ name, cols, q: this.query(), pos: p });
        this.expect(')');
      } while (this.accept(','));
    }
    const s = this.tail(this.setExpr(pos));
    if (ctes.length) s.with = [...ctes, ...s.with];
    return s;
  }

  // Set operations: INTERSECT binds tighter than UNION and EXCEPT, which go left to right; an operand in
  // parentheses is a whole query (its own ORDER BY and LIMIT); ORDER BY and LIMIT after the last operand are the set's.
  private setExpr(pos: Pos): Select {
    let l = this.intersectTerm(pos);
    while (this.isKw('union') || this.isKw('except')) {
      const op = this.next().text as 'union' | 'except';
      const all = this.setQuantifier();
      l = setOf(op, all, l, this.intersectTerm(this.t.pos), pos);
    }
    return l;
  }

  private intersectTerm(pos: Pos): Select {
    let l = this.setOperand(pos);
    while (this.accept('intersect')) {
      const all = this.setQuantifier();
      l = setOf('intersect', all, l, this.setOperand(this.t.pos), pos);
    }
    return l;
  }

  private setQuantifier(): boolean {
    if (this.accept('all')) return true;
    this.accept('distinct');
    return false;
  }

  private setOperand(pos: Pos): Select {
    if (this.accept('(')) {
      const q = this.query();
      this.expect(')');
      return q;
    }
    if (this.accept('values')) {
      const values: Expr[][] = [];
      do {
        this.expect('(');
        const row = [this.expr()];
        while (this.accept(',')) row.push(this.expr());
        this.expect(')');
        values.push(row);
      } while (this.accept(','));
      return { with: [], distinct: false, items: [], from: [], groupBy: [], orderBy: [], pos, values };
    }
    return this.select(pos);
  }

  /** ORDER BY and LIMIT of a query: a plain SELECT's or a set's own, else over the query as a subquery. */
  private tail(q: Select): Select {
    const orderBy: OrderItem[] = [];
    let limit: number | undefined, offset: number | undefined;
    if (this.accept('order')) {
      this.expect('by');
      do orderBy.push(this.orderItem());
      while (this.accept(','));
    }
    for (;;) {
      if (this.accept('limit')) limit = this.count('LIMIT');
      else if (this.accept('offset')) {
        offset = this.count('OFFSET');
        this.accept('rows') || this.accept('row');
      } else break;
    }
    if (this.t.kind === 'kw' && UNSUPPORTED[this.t.text]) this.fail('');
    if (orderBy.length === 0 && limit === undefined && offset === undefined) return q;
    const taken = q.orderBy.length > 0 || q.limit !== undefined || q.offset !== undefined || q.values !== undefined;
    const s: Select = taken
      ? {
          with: [],
          distinct: false,
          items: [{ e: { k: 'star', pos: q.pos }, text: '*', pos: q.pos }],
          from: [{ k: 'sub', q, alias: '__query', pos: q.pos }],
          groupBy: [],
          orderBy: [],
          pos: q.pos,
        }
      : q;
    return { ...s, orderBy, limit, offset };
  }

  private nameList(): string[] {
    this.expect('(');
    const out = [this.name()];
    while (this.accept(',')) out.push(this.name());
    this.expect(')');
    return out;
  }

  private select(pos: Pos): Select {
    if (this.isOp('(')) this.fail('SELECT');
    this.expect('select', 'SELECT');
    const distinct = this.accept('distinct');
    if (!distinct) this.accept('all');
    const items: SelectItem[] = [];
    do items.push(this.selectItem());
    while (this.accept(','));
    const s: Select = { with: [], distinct, items, from: [], groupBy: [], orderBy: [], pos };
    if (this.accept('from')) {
      do s.from.push(this.fromItem());
      while (this.accept(','));
    }
    if (this.accept('where')) s.where = this.expr();
    if (this.accept('group')) {
      this.expect('by');
      if (this.isKw('all')) throw sqlError(this.t.pos, 'GROUP BY ALL is not supported');
      const items: { sets: Expr[][]; plain: boolean }[] = [];
      do items.push(this.groupItem());
      while (this.accept(','));
      const seen = new Set<string>();
      for (const e of items.flatMap((i) => i.sets.flat())) {
        if (!seen.has(exprKey(e))) s.groupBy.push(e);
        seen.add(exprKey(e));
      }
      // the sets of several items: every combination of one set of each
      if (!items.every((i) => i.plain))
        s.groupingSets = items.reduce<Expr[][]>((acc, i) => acc.flatMap((a) => i.sets.map((b) => [...a, ...b])), [[]]);
    }
    if (this.accept('having')) s.having = this.expr();
    if (this.accept('window')) {
      s.windows = new Map();
      do {
        const name = this.name('a window name');
        this.expect('as');
        this.expect('(');
        s.windows.set(name, this.windowSpec());
        this.expect(')');
      } while (this.accept(','));
    }
    if (this.accept('qualify')) s.qualify = this.expr();
    return s;
  }

  /** One item of GROUP BY: an expression, ROLLUP (...), CUBE (...) or GROUPING SETS (...), as its sets. */
  private groupItem(): { sets: Expr[][]; plain: boolean } {
    const list = () => {
      this.expect('(');
      const out: Expr[] = [];
      if (!this.isOp(')')) {
        do out.push(this.expr());
        while (this.accept(','));
      }
      this.expect(')');
      return out;
    };
    if (this.accept('rollup')) {
      const l = list();
      return { sets: l.map((_, k) => l.slice(0, l.length - k)).concat([[]]), plain: false };
    }
    if (this.accept('cube')) {
      const l = list();
      const sets: Expr[][] = [];
      for (let m = (1 << l.length) - 1; m >= 0; m--) sets.push(l.filter((_, j) => m & (1 << (l.length - 1 - j))));
      return { sets, plain: false };
    }
    if (this.isKw('grouping') && this.t.kind === 'kw' && this.peek().text === 'sets') {
      this.i += 2;
      this.expect('(');
      const sets: Expr[][] = [];
      do sets.push(this.isOp('(') ? list() : [this.expr()]);
      while (this.accept(','));
      this.expect(')');
      return { sets, plain: false };
    }
    return { sets: [[this.expr()]], plain: true };
  }

  private selectItem(): SelectItem {
    const start = this.t;
    const e = this.expr();
    const text = this.text.slice(start.pos.offset, this.toks[this.i - 1].end).replace(/\s+/g, ' ');
    let alias: string | undefined;
    if (this.accept('as')) alias = this.aliasName();
    else if (this.t.kind === 'ident' || this.t.kind === 'qident') alias = this.name();
    return { e, alias, text, pos: start.pos };
  }

  protected orderItem(): OrderItem {
    const pos = this.t.pos;
    const e = this.expr();
    const desc = this.accept('desc');
    if (!desc) this.accept('asc');
    let nulls: 'first' | 'last' | undefined;
    if (this.accept('nulls')) {
      if (this.accept('first')) nulls = 'first';
      else {
        this.expect('last', 'FIRST or LAST');
        nulls = 'last';
      }
    }
    return { e, desc, nulls, pos };
  }

  private fromItem(): FromItem {
    let l = this.fromPrimary();
    for (;;) {
      const pos = this.t.pos;
      let type: 'inner' | 'left' | 'right' | 'full' | 'cross';
      if (this.isKw('natural')) this.fail('');
      if (this.accept('cross')) type = 'cross';
      else if (this.accept('inner')) type = 'inner';
      else if (this.accept('left')) type = 'left';
      else if (this.accept('right')) type = 'right';
      else if (this.accept('full')) type = 'full';
      else if (this.isKw('join')) type = 'inner';
      else return l;
      if (type !== 'cross' && type !== 'inner') this.accept('outer');
      this.expect('join', 'JOIN');
      const r = this.fromPrimary();
      if (type === 'cross') {
        l = { k: 'join', type, l, r, pos };
        continue;
      }
      if (this.accept('on')) l = { k: 'join', type, l, r, on: this.expr(), pos };
      else if (this.accept('using')) l = { k: 'join', type, l, r, using: this.nameList(), pos };
      else this.fail('ON or USING');
    }
  }

  private alias(): { alias?: string; cols?: string[] } {
    let alias: string | undefined;
    if (this.accept('as')) alias = this.aliasName();
    else if (this.t.kind === 'ident' || this.t.kind === 'qident') alias = this.name();
    const cols = alias !== undefined && this.isOp('(') ? this.nameList() : undefined;
    return { alias, cols };
  }

  private fromPrimary(): FromItem {
    const pos = this.t.pos;
    if (this.isKw('lateral')) this.fail('');
    if (this.accept('(')) {
      if (!this.isKw('select') && !this.isKw('with') && !this.isKw('values') && !this.isOp('('))
        this.fail('SELECT (a subquery)');
      const q = this.query();
      this.expect(')');
      return { k: 'sub', q, ...this.alias(), pos };
    }
    if (this.t.kind === 'str') {
      const path = this.next().text;
      return { k: 'path', path, ...this.noCols(this.alias()), pos };
    }
    const name = this.name('a table name');
    if (this.isOp('(')) {
      if (name !== 'read_parquet' && name !== 'read_csv' && name !== 'read_csv_auto') {
        throw sqlError(pos, `table function ${name}() is not supported (only read_parquet and read_csv)`);
      }
      this.next();
      if ((this.t as Token).kind !== 'str') this.fail("a path in quotes, such as 'data/*.parquet'");
      const path = this.next().text;
      const csv = name === 'read_parquet' ? undefined : this.csvOptions();
      this.expect(')');
      return { k: 'path', path, ...(csv ? { csv } : {}), ...this.noCols(this.alias()), pos };
    }
    if (this.isOp('.')) {
      throw sqlError(this.t.pos, `schema-qualified table names are not supported: use ${name}'s table name alone`);
    }
    return { k: 'table', name, ...this.noCols(this.alias()), pos };
  }

  /** read_csv's options after the path: `header = true`, `delim = ';'` (also `delimiter`, `sep`). */
  private csvOptions(): { header?: boolean; delimiter?: string } {
    const o: { header?: boolean; delimiter?: string } = {};
    while (this.accept(',')) {
      const at = this.t;
      const key = this.name('an option name (header, delim)').toLowerCase();
      this.expect('=');
      const v = this.t as Token;
      if (key === 'header' && (this.isKw('true') || this.isKw('false'))) o.header = this.next().text === 'true';
      else if ((key === 'delim' || key === 'delimiter' || key === 'sep') && v.kind === 'str')
        o.delimiter = this.next().text;
      else throw sqlError(at.pos, `read_csv option ${key} is not supported (only header = true|false, delim = 'c')`);
    }
    return o;
  }

  private noCols(a: { alias?: string; cols?: string[] }) {
    if (a.cols) throw sqlError(this.toks[this.i - 1].pos, 'column aliases are supported on subqueries only');
    return { alias: a.alias };
  }
}

const setOf = (op: 'union' | 'intersect' | 'except', all: boolean, l: Select, r: Select, pos: Pos): Select => ({
  with: [],
  distinct: false,
  items: [],
  from: [],
  groupBy: [],
  orderBy: [],
  pos,
  set: { op, all, l, r },
});

export function parseSql(text: string): Select {
  return new Parser(text).statement();
}

/** `DESCRIBE 'file'`, `DESCRIBE read_csv('file')`, `DESCRIBE table`: what it describes; null for any other text. */
export function parseDescribe(text: string): FromItem | null {
  return new Parser(text).describeStatement();
}
