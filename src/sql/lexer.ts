// SQL tokens with their line and column, so that every error can point at the
// text. Identifiers fold to lower case unless double-quoted, as in DuckDB.
import { PlanError } from '../errors.js';

export interface Pos {
  line: number;
  col: number;
  offset: number;
}

type TokKind = 'ident' | 'qident' | 'kw' | 'num' | 'str' | 'op' | 'param' | 'eof';
export interface Token {
  kind: TokKind;
  text: string;
  pos: Pos;
  end: number;
}

/** Words that cannot be a bare alias or column name. */
const KEYWORDS = new Set([
  'select',
  'distinct',
  'all',
  'from',
  'where',
  'group',
  'by',
  'having',
  'order',
  'asc',
  'desc',
  'nulls',
  'first',
  'last',
  'limit',
  'offset',
  'with',
  'as',
  'join',
  'inner',
  'left',
  'right',
  'full',
  'outer',
  'cross',
  'on',
  'using',
  'natural',
  'and',
  'or',
  'not',
  'in',
  'exists',
  'between',
  'like',
  'ilike',
  'is',
  'null',
  'true',
  'false',
  'case',
  'when',
  'then',
  'else',
  'end',
  'cast',
  'date',
  'interval',
  'extract',
  'substring',
  'union',
  'intersect',
  'except',
  'over',
  'window',
  'lateral',
  'qualify',
  'rollup',
  'cube',
  'grouping',
  'for',
  'timestamp',
  'values',
  'insert',
  'update',
  'delete',
  'create',
  'drop',
  'fetch',
]);

/** A SQL error at a position of the text: exit 2, the path is "line L, column C". */
export function sqlError(pos: Pos, message: string): PlanError {
  return new PlanError(`line ${pos.line}, column ${pos.col}`, message);
}

const OPS = ['<>', '!=', '<=', '>=', '||', '::', '=', '<', '>', '+', '-', '*', '/', '%', '(', ')', ',', '.', ';'];

export function tokenize(text: string): Token[] {
  const out: Token[] = [];
  let i = 0,
    line = 1,
    lineStart = 0;
  const pos = (at: number): Pos => ({ line, col: at - lineStart + 1, offset: at });
  while (i < text.length) {
    const c = text[i];
    if (c === '\n') {
      i++;
      line++;
      lineStart = i;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r') {
      i++;
      continue;
    }
    if (c === '-' && text[i + 1] === '-') {
      while (i < text.length && text[i] !== '\n') i++;
      continue;
    }
    if (c === '/' && text[i + 1] === '*') {
      const start = pos(i);
      const end = text.indexOf('*/', i + 2);
      if (end < 0) throw sqlError(start, 'unterminated comment');
      for (; i < end + 2; i++)
        if (text[i] === '\n') {
          line++;
          lineStart = i + 1;
        }
      continue;
    }
    const p = pos(i);
    if (/[A-Za-z_]/.test(c)) {
      let j = i + 1;
      while (j < text.length && /[A-Za-z0-9_$]/.test(text[j])) j++;
      const word = text.slice(i, j).toLowerCase();
      out.push({ kind: KEYWORDS.has(word) ? 'kw' : 'ident', text: word, pos: p, end: j });
      i = j;
      continue;
    }
    if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(text[i + 1] ?? ''))) {
      const m = /^(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/.exec(text.slice(i))!;
      out.push({ kind: 'num', text: m[0], pos: p, end: i + m[0].length });
      i += m[0].length;
      continue;
    }
    if (c === "'" || c === '"') {
      let j = i + 1,
        s = '';
      for (;;) {
        if (j >= text.length) throw sqlError(p, `unterminated ${c === "'" ? 'string' : 'quoted name'}`);
        if (text[j] === c) {
          if (text[j + 1] === c) {
            s += c;
            j += 2;
            continue;
          }
          break;
        }
        if (text[j] === '\n') {
          line++;
          lineStart = j + 1;
        }
        s += text[j++];
      }
      out.push({ kind: c === "'" ? 'str' : 'qident', text: s, pos: p, end: j + 1 });
      i = j + 1;
      continue;
    }
    if (c === '$') {
      const m = /^\$([A-Za-z_][A-Za-z0-9_]*)/.exec(text.slice(i));
      if (!m) throw sqlError(p, 'expected a parameter name after "$" (such as $date)');
      out.push({ kind: 'param', text: m[1], pos: p, end: i + m[0].length });
      i += m[0].length;
      continue;
    }
    const op = OPS.find((o) => text.startsWith(o, i));
    if (!op) throw sqlError(p, `unexpected character "${c}"`);
    out.push({ kind: 'op', text: op, pos: p, end: i + op.length });
    i += op.length;
  }
  out.push({ kind: 'eof', text: '', pos: pos(i), end: i });
  return out;
}
