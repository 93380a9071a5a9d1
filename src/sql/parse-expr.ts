// The expression grammar of the SQL parser (sql/parser.ts holds the statements):
// precedence climbing from OR down to the primaries (literals, CASE, CAST,
// EXTRACT, INTERVAL, calls, columns, subqueries). A subquery is parsed by the
// statement grammar through query().
import type { CmpOp, Expr, FrameBound, IntervalUnit, OrderItem, Select, WindowSpec } from './ast.js';
import { TokenCursor } from './cursor.js';
import { type Token, sqlError } from './lexer.js';

export abstract class ExprParser extends TokenCursor {
  /** A whole query (WITH ... SELECT ...), inside parentheses here. */
  protected abstract query(): Select;
  /** An ORDER BY item (an OVER clause has them too). */
  protected abstract orderItem(): OrderItem;

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
      case 'grouping':
        if (this.isOp('(', this.peek())) return this.identPrimary();
        break;
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

  /** Inside OVER ( ... ) or WINDOW w AS ( ... ): [name] [PARTITION BY ...] [ORDER BY ...] [frame]. */
  protected windowSpec(): WindowSpec {
    const pos = this.t.pos;
    const spec: WindowSpec = { partitionBy: [], orderBy: [], pos };
    if ((this.t.kind === 'ident' || this.t.kind === 'qident') && !this.isWord('partition') && !this.isWord('range'))
      spec.name = this.name();
    if (this.acceptWord('partition')) {
      this.expect('by');
      do spec.partitionBy.push(this.expr());
      while (this.accept(','));
    }
    if (this.accept('order')) {
      this.expect('by');
      do spec.orderBy.push(this.orderItem());
      while (this.accept(','));
    }
    const unit = this.acceptWord('rows') ? 'rows' : this.acceptWord('range') ? 'range' : null;
    if (unit) {
      if (this.isWord('groups')) throw sqlError(this.t.pos, 'GROUPS frames are not supported; use ROWS or RANGE');
      if (this.acceptWord('between')) {
        const start = this.frameBound();
        this.expect('and');
        spec.frame = { unit, start, end: this.frameBound() };
      } else spec.frame = { unit, start: this.frameBound(), end: 'current row' };
      if (this.acceptWord('exclude')) throw sqlError(this.toks[this.i - 1].pos, 'EXCLUDE in a frame is not supported');
    } else if (this.isWord('groups')) throw sqlError(this.t.pos, 'GROUPS frames are not supported; use ROWS or RANGE');
    return spec;
  }

  private frameBound(): FrameBound {
    if (this.acceptWord('unbounded')) {
      if (this.acceptWord('preceding')) return 'unbounded preceding';
      if (this.acceptWord('following')) return 'unbounded following';
      this.fail('PRECEDING or FOLLOWING');
    }
    if (this.acceptWord('current')) {
      if (!this.acceptWord('row')) this.fail('ROW');
      return 'current row';
    }
    let n: number;
    if (this.accept('interval')) {
      // INTERVAL n DAY or INTERVAL 'n' DAY / 'n days': a date key's offset in days
      const t = this.next();
      const m = /^\s*(\d+)\s*(days?)?\s*$/i.exec(t.text);
      if ((t.kind !== 'num' && t.kind !== 'str') || !m) this.fail('a whole number of days', t);
      if (!m[2] && !this.acceptWord('day') && !this.acceptWord('days'))
        this.fail('DAY (only day intervals bound a frame)');
      n = Number(m[1]);
    } else n = this.count('a frame bound');
    if (this.acceptWord('preceding')) return { preceding: n };
    if (this.acceptWord('following')) return { following: n };
    return this.fail('PRECEDING or FOLLOWING');
  }

  private isWord(w: string): boolean {
    return (this.t.kind === 'ident' || this.t.kind === 'kw') && this.t.text === w;
  }
  protected acceptWord(w: string): boolean {
    if (!this.isWord(w)) return false;
    this.i++;
    return true;
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

  private afterCall(e: Extract<Expr, { k: 'call' }>): Expr {
    // percentile_cont(q) WITHIN GROUP (ORDER BY x): quantile_cont(x, q) (and _disc)
    if (this.isWord('within')) {
      const at = this.next().pos;
      const fn = { percentile_cont: 'quantile_cont', percentile_disc: 'quantile_disc' }[e.name];
      if (!fn) throw sqlError(at, `WITHIN GROUP takes percentile_cont or percentile_disc, not ${e.name}()`);
      this.expect('group', 'GROUP');
      this.expect('(');
      this.expect('order', 'ORDER');
      this.expect('by', 'BY');
      const x = this.expr();
      if (this.isWord('desc')) throw sqlError(this.t.pos, `${e.name}() WITHIN GROUP takes ORDER BY ascending only`);
      this.acceptWord('asc');
      this.expect(')');
      e.name = fn;
      e.args = [x, ...e.args];
    }
    if (this.t.kind === 'ident' && this.t.text === 'filter' && this.isOp('(', this.peek())) {
      this.i += 2;
      this.expect('where', 'WHERE');
      e.filter = this.expr();
      this.expect(')');
      if (this.isKw('over')) throw sqlError(this.t.pos, 'FILTER (WHERE ...) on a window function is not supported');
    }
    if (this.isKw('over')) {
      const pos = this.next().pos;
      if (this.t.kind === 'ident' || this.t.kind === 'qident')
        return { k: 'window', call: e, over: { name: this.name(), partitionBy: [], orderBy: [], pos }, pos: e.pos };
      this.expect('(');
      const over = this.windowSpec();
      this.expect(')');
      return { k: 'window', call: e, over, pos: e.pos };
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
