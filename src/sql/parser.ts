// A recursive-descent parser for the SELECT subset of docs/sql.md. It refuses
// what it does not support by name (UNION, window functions, ...) at the
// position of the word, rather than failing somewhere after it.
import { type Pos, type Token, sqlError, tokenize } from './lexer.js';
import type { CmpOp, Cte, Expr, FromItem, IntervalUnit, OrderItem, Select, SelectItem } from './ast.js';

const UNSUPPORTED: Record<string, string> = {
  union: 'UNION',
  intersect: 'INTERSECT',
  except: 'EXCEPT',
  over: 'window functions (OVER)',
  window: 'WINDOW',
  lateral: 'LATERAL',
  natural: 'NATURAL JOIN',
  qualify: 'QUALIFY',
  rollup: 'ROLLUP',
  cube: 'CUBE',
  grouping: 'GROUPING SETS',
  values: 'VALUES',
  ilike: 'ILIKE',
  fetch: 'FETCH',
};
const STATEMENTS = new Set(['insert', 'update', 'delete', 'create', 'drop']);

class Parser {
  private toks: Token[];
  private i = 0;
  constructor(private text: string) {
    this.toks = tokenize(text);
  }

  private get t(): Token {
    return this.toks[this.i];
  }
  private peek(k = 1): Token {
    return this.toks[Math.min(this.i + k, this.toks.length - 1)];
  }
  private isKw(w: string, t = this.t) {
    return t.kind === 'kw' && t.text === w;
  }
  private isOp(o: string, t = this.t) {
    return t.kind === 'op' && t.text === o;
  }
  private next(): Token {
    return this.toks[this.i++];
  }
  private accept(w: string): boolean {
    if (this.isKw(w) || this.isOp(w)) {
      this.i++;
      return true;
    }
    return false;
  }
  private describe(t: Token): string {
    if (t.kind === 'eof') return 'the end of the query';
    return t.kind === 'str' ? `'${t.text}'` : `"${t.text}"`;
  }
  private fail(what: string, t = this.t): never {
    if (t.kind === 'kw' && UNSUPPORTED[t.text]) throw sqlError(t.pos, `${UNSUPPORTED[t.text]} is not supported`);
    throw sqlError(t.pos, `syntax error: expected ${what}, got ${this.describe(t)}`);
  }
  private expect(w: string, what = `"${w.toUpperCase()}"`): Token {
    if (this.isKw(w) || this.isOp(w)) return this.next();
    return this.fail(what);
  }
  private name(what = 'a name'): string {
    const t = this.t;
    if (t.kind === 'ident' || t.kind === 'qident') {
      this.i++;
      return t.text;
    }
    return this.fail(what);
  }
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

  private query(): Select {
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
    const s = this.select(pos);
    s.with = ctes;
    return s;
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
      do s.groupBy.push(this.expr());
      while (this.accept(','));
    }
    if (this.accept('having')) s.having = this.expr();
    if (this.accept('order')) {
      this.expect('by');
      do s.orderBy.push(this.orderItem());
      while (this.accept(','));
    }
    for (;;) {
      if (this.accept('limit')) s.limit = this.count('LIMIT');
      else if (this.accept('offset')) {
        s.offset = this.count('OFFSET');
        this.accept('rows') || this.accept('row');
      } else break;
    }
    if (this.t.kind === 'kw' && UNSUPPORTED[this.t.text]) this.fail('');
    return s;
  }

  private count(what: string): number {
    const t = this.t;
    if (t.kind !== 'num' || !/^\d+$/.test(t.text)) this.fail(`a whole number after ${what}`);
    this.i++;
    return Number(t.text);
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

  private orderItem(): OrderItem {
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
      if (!this.isKw('select') && !this.isKw('with')) this.fail('SELECT (a subquery)');
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
      if (name !== 'read_parquet') throw sqlError(pos, `table function ${name}() is not supported (only read_parquet)`);
      this.next();
      if ((this.t as Token).kind !== 'str') this.fail("a path in quotes, such as 'data/*.parquet'");
      const path = this.next().text;
      this.expect(')');
      return { k: 'path', path, ...this.noCols(this.alias()), pos };
    }
    if (this.isOp('.')) {
      throw sqlError(this.t.pos, `schema-qualified table names are not supported: use ${name}'s table name alone`);
    }
    return { k: 'table', name, ...this.noCols(this.alias()), pos };
  }

  private noCols(a: { alias?: string; cols?: string[] }) {
    if (a.cols) throw sqlError(this.toks[this.i - 1].pos, 'column aliases are supported on subqueries only');
    return { alias: a.alias };
  }

  // Expressions, by precedence: OR < AND < NOT < comparison/IS/IN/LIKE/BETWEEN < || < + - < * / % < unary < primary.
  expr(): Expr {
    return this.or();
  }

  private or(): Expr {
    let l = this.and();
    while (this.isKw('or')) {
      const pos = this.next().pos;
      l = { k: 'or', l, r: this.and(), pos };
    }
    return l;
  }
  private and(): Expr {
    let l = this.not();
    while (this.isKw('and')) {
      const pos = this.next().pos;
      l = { k: 'and', l, r: this.not(), pos };
    }
    return l;
  }
  private not(): Expr {
    if (this.isKw('not') && !this.isKw('exists', this.peek())) {
      const pos = this.next().pos;
      return { k: 'not', e: this.not(), pos };
    }
    return this.predicate();
  }

  private predicate(): Expr {
    const l = this.concat();
    const pos = this.t.pos;
    const cmp = ['=', '<>', '!=', '<', '<=', '>', '>='].find((o) => this.isOp(o));
    if (cmp) {
      this.next();
      if (this.isKw('all') || (this.t.kind === 'ident' && (this.t.text === 'any' || this.t.text === 'some'))) {
        throw sqlError(this.t.pos, `${this.t.text.toUpperCase()} (a quantified comparison) is not supported`);
      }
      const op = (cmp === '<>' ? '!=' : cmp) as CmpOp;
      return { k: 'cmp', op, l, r: this.concat(), pos };
    }
    if (this.accept('is')) {
      const not = this.accept('not');
      this.expect('null', 'NULL');
      return { k: 'isnull', e: l, not, pos };
    }
    const negated = this.isKw('not') && ['between', 'like', 'in', 'ilike'].some((w) => this.isKw(w, this.peek()));
    if (negated) this.next();
    const not = negated;
    if (this.accept('between')) {
      const lo = this.concat();
      this.expect('and', 'AND');
      return { k: 'between', e: l, lo, hi: this.concat(), not, pos };
    }
    if (this.accept('like')) {
      if (this.t.kind === 'ident' && this.t.text === 'escape') {
        throw sqlError(this.t.pos, 'LIKE ... ESCAPE is not supported');
      }
      const pat = this.concat();
      if (this.t.kind === 'ident' && this.t.text === 'escape') {
        throw sqlError(this.t.pos, 'LIKE ... ESCAPE is not supported');
      }
      return { k: 'like', e: l, pat, not, pos };
    }
    if (this.accept('in')) {
      this.expect('(');
      if (this.isKw('select') || this.isKw('with')) {
        const q = this.query();
        this.expect(')');
        return { k: 'insub', e: l, q, not, pos };
      }
      const list = [this.expr()];
      while (this.accept(',')) list.push(this.expr());
      this.expect(')');
      return { k: 'inlist', e: l, list, not, pos };
    }
    if (not || this.isKw('ilike')) this.fail('BETWEEN, LIKE or IN');
    return l;
  }

  private concat(): Expr {
    let l = this.additive();
    while (this.isOp('||')) {
      const pos = this.next().pos;
      l = { k: 'bin', op: '||', l, r: this.additive(), pos };
    }
    return l;
  }
  private additive(): Expr {
    let l = this.term();
    while (this.isOp('+') || this.isOp('-')) {
      const t = this.next();
      l = { k: 'bin', op: t.text as '+' | '-', l, r: this.term(), pos: t.pos };
    }
    return l;
  }
  private term(): Expr {
    let l = this.unary();
    while (this.isOp('*') || this.isOp('/') || this.isOp('%')) {
      const t = this.next();
      l = { k: 'bin', op: t.text as '*' | '/' | '%', l, r: this.unary(), pos: t.pos };
    }
    return l;
  }
  private unary(): Expr {
    if (this.isOp('-')) {
      const pos = this.next().pos;
      return { k: 'neg', e: this.unary(), pos };
    }
    if (this.isOp('+')) {
      this.next();
      return this.unary();
    }
    const e = this.primary();
    if (this.isOp('::')) throw sqlError(this.t.pos, 'the :: cast is not supported: write CAST(x AS type)');
    return e;
  }

  private primary(): Expr {
    const t = this.t;
    const pos = t.pos;
    switch (t.kind) {
      case 'num':
        this.i++;
        return { k: 'num', text: t.text, pos };
      case 'str':
        this.i++;
        return { k: 'str', v: t.text, pos };
      case 'param':
        this.i++;
        return { k: 'param', name: t.text, pos };
      case 'op':
        if (t.text === '*') {
          this.i++;
          return { k: 'star', pos };
        }
        if (t.text === '(') {
          this.i++;
          if (this.isKw('select') || this.isKw('with')) {
            const q = this.query();
            this.expect(')');
            return { k: 'subq', q, pos };
          }
          const e = this.expr();
          if (this.isOp(',')) throw sqlError(this.t.pos, 'row values (a, b) are not supported');
          this.expect(')');
          return e;
        }
        break;
      case 'kw':
        return this.keywordPrimary(t);
      case 'ident':
      case 'qident':
        return this.identPrimary();
    }
    return this.fail('an expression');
  }

  private keywordPrimary(t: Token): Expr {
    const pos = t.pos;
    switch (t.text) {
      case 'null':
        this.i++;
        return { k: 'null', pos };
      case 'true':
      case 'false':
        this.i++;
        return { k: 'bool', v: t.text === 'true', pos };
      case 'exists':
        this.i++;
        return { k: 'exists', q: this.parenQuery(), not: false, pos };
      case 'not':
        this.i++;
        this.expect('exists');
        return { k: 'exists', q: this.parenQuery(), not: true, pos };
      case 'date': {
        this.i++;
        if (this.t.kind !== 'str') this.fail("a date in quotes after DATE, such as DATE '1995-03-15'");
        const v = this.next();
        if (!/^\d{4}-\d{2}-\d{2}$/.test(v.text) || Number.isNaN(Date.parse(v.text + 'T00:00:00Z'))) {
          throw sqlError(v.pos, `DATE '${v.text}' is not a date YYYY-MM-DD`);
        }
        return { k: 'date', v: v.text, pos };
      }
      case 'timestamp':
        throw sqlError(pos, 'TIMESTAMP literals are not supported: compare with a string');
      case 'interval':
        return this.interval();
      case 'case':
        return this.caseExpr();
      case 'cast': {
        this.i++;
        this.expect('(');
        const e = this.expr();
        this.expect('as', 'AS');
        const to = this.typeName();
        this.expect(')');
        return { k: 'cast', e, to, pos };
      }
      case 'extract': {
        this.i++;
        this.expect('(');
        const f = this.t;
        if (f.kind !== 'ident' && f.kind !== 'kw') this.fail('YEAR, MONTH or DAY');
        this.i++;
        const field = f.text;
        if (!['year', 'month', 'day'].includes(field)) {
          throw sqlError(f.pos, `EXTRACT(${field.toUpperCase()} ...) is not supported: YEAR, MONTH or DAY`);
        }
        this.expect('from', 'FROM');
        const e = this.expr();
        this.expect(')');
        return { k: 'call', name: field, args: [e], distinct: false, star: false, pos };
      }
      case 'substring': {
        this.i++;
        this.expect('(');
        const args = [this.expr()];
        if (this.accept('from')) {
          args.push(this.expr());
          if (this.accept('for')) args.push(this.expr());
        } else {
          while (this.accept(',')) args.push(this.expr());
        }
        this.expect(')');
        return { k: 'call', name: 'substr', args, distinct: false, star: false, pos };
      }
      case 'left':
      case 'right':
        return this.identPrimary();
    }
    return this.fail('an expression');
  }

  private parenQuery(): Select {
    this.expect('(');
    const q = this.query();
    this.expect(')');
    return q;
  }

  private interval(): Expr {
    const pos = this.next().pos;
    let n: Expr;
    let unitTok: Token | undefined;
    if (this.t.kind === 'str') {
      const s = this.next();
      const m = /^\s*(-?\d+)\s*([a-z]+)?\s*$/i.exec(s.text);
      if (!m) throw sqlError(s.pos, `INTERVAL '${s.text}' is not a whole number of days, months or years`);
      n = { k: 'num', text: m[1], pos: s.pos };
      if (m[2]) unitTok = { ...s, text: m[2].toLowerCase() };
    } else {
      n = this.primary();
    }
    if (!unitTok) {
      if (this.t.kind !== 'ident' && this.t.kind !== 'kw') this.fail('DAY, MONTH or YEAR');
      unitTok = this.next();
    }
    const unit = unitTok.text.replace(/s$/, '');
    if (!['day', 'month', 'year'].includes(unit)) {
      throw sqlError(unitTok.pos, `INTERVAL unit ${unitTok.text.toUpperCase()} is not supported: DAY, MONTH or YEAR`);
    }
    // the specification's "day (3)": a leading-field precision, which changes nothing here
    if (this.isOp('(') && this.peek().kind === 'num' && this.isOp(')', this.peek(2))) this.i += 3;
    return { k: 'interval', n, unit: unit as IntervalUnit, pos };
  }

  private caseExpr(): Expr {
    const pos = this.next().pos;
    const operand = this.isKw('when') ? undefined : this.expr();
    const whens: { when: Expr; then: Expr }[] = [];
    while (this.accept('when')) {
      const when = this.expr();
      this.expect('then', 'THEN');
      whens.push({ when, then: this.expr() });
    }
    if (whens.length === 0) this.fail('WHEN');
    const e = this.accept('else') ? this.expr() : undefined;
    this.expect('end', 'END');
    return { k: 'case', operand, whens, else: e, pos };
  }

  private identPrimary(): Expr {
    const t = this.next();
    const pos = t.pos;
    if (this.isOp('(') && t.kind !== 'qident') {
      this.next();
      const name = t.text;
      if (this.accept(')')) return this.afterCall({ k: 'call', name, args: [], distinct: false, star: false, pos });
      if (this.isOp('*') && this.isOp(')', this.peek())) {
        this.i += 2;
        return this.afterCall({ k: 'call', name, args: [], distinct: false, star: true, pos });
      }
      const distinct = this.accept('distinct');
      if (!distinct) this.accept('all');
      const args = [this.expr()];
      while (this.accept(',')) args.push(this.expr());
      this.expect(')');
      return this.afterCall({ k: 'call', name, args, distinct, star: false, pos });
    }
    if (this.isOp('.')) {
      this.next();
      if (this.isOp('*')) {
        this.next();
        return { k: 'star', table: t.text, pos };
      }
      const name = this.name('a column name');
      if (this.isOp('.')) {
        throw sqlError(this.t.pos, 'names with more than two parts (schema.table.column) are not supported');
      }
      return { k: 'col', table: t.text, name, pos };
    }
    return { k: 'col', name: t.text, pos };
  }

  private afterCall(e: Expr): Expr {
    if (this.isKw('over')) this.fail('');
    if (this.t.kind === 'ident' && this.t.text === 'filter' && this.isOp('(', this.peek())) {
      throw sqlError(this.t.pos, 'FILTER (WHERE ...) on aggregates is not supported');
    }
    return e;
  }

  private typeName(): string {
    const t = this.t;
    if (t.kind !== 'ident' && t.kind !== 'kw') this.fail('a type name');
    this.i++;
    let name = t.text;
    if (name === 'double' && this.t.kind === 'ident' && this.t.text === 'precision') this.i++;
    if (this.isOp('(')) {
      this.next();
      const args = [this.count('the type')];
      while (this.accept(',')) args.push(this.count('the type'));
      this.expect(')');
      name += `(${args.join(',')})`;
    }
    return name;
  }
}

export function parseSql(text: string): Select {
  return new Parser(text).statement();
}
