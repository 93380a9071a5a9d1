// The SQL parser's cursor over the tokens (sql/lexer.ts): looking at and taking
// tokens, and the errors it raises. A word the dialect refuses (UNION, window
// functions, ...) is named at its position rather than reported as a syntax error.
import { type Token, sqlError, tokenize } from './lexer.js';

/** Words the dialect refuses, with the name an error gives them. */
export const UNSUPPORTED: Record<string, string> = {
  lateral: 'LATERAL',
  natural: 'NATURAL JOIN',
  ilike: 'ILIKE',
  fetch: 'FETCH',
};

export class TokenCursor {
  protected toks: Token[];
  protected i = 0;
  constructor(protected text: string) {
    this.toks = tokenize(text);
  }

  protected get t(): Token {
    return this.toks[this.i];
  }
  protected peek(k = 1): Token {
    return this.toks[Math.min(this.i + k, this.toks.length - 1)];
  }
  protected isKw(w: string, t = this.t) {
    return t.kind === 'kw' && t.text === w;
  }
  protected isOp(o: string, t = this.t) {
    return t.kind === 'op' && t.text === o;
  }
  protected next(): Token {
    return this.toks[this.i++];
  }
  protected accept(w: string): boolean {
    if (this.isKw(w) || this.isOp(w)) {
      this.i++;
      return true;
    }
    return false;
  }
  protected describe(t: Token): string {
    if (t.kind === 'eof') return 'the end of the query';
    return t.kind === 'str' ? `'${t.text}'` : `"${t.text}"`;
  }
  protected fail(what: string, t = this.t): never {
    if (t.kind === 'kw' && UNSUPPORTED[t.text]) throw sqlError(t.pos, `${UNSUPPORTED[t.text]} is not supported`);
    throw sqlError(t.pos, `syntax error: expected ${what}, got ${this.describe(t)}`);
  }
  protected expect(w: string, what = `"${w.toUpperCase()}"`): Token {
    if (this.isKw(w) || this.isOp(w)) return this.next();
    return this.fail(what);
  }
  protected name(what = 'a name'): string {
    const t = this.t;
    if (t.kind === 'ident' || t.kind === 'qident') {
      this.i++;
      return t.text;
    }
    return this.fail(what);
  }
  protected count(what: string): number {
    const t = this.t;
    if (t.kind !== 'num' || !/^\d+$/.test(t.text)) this.fail(`a whole number after ${what}`);
    this.i++;
    return Number(t.text);
  }
}
