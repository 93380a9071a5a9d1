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

/** Where the lexer is in the text, and the line it is on. */
interface LexState {
  text: string;
  i: number;
  line: number;
  lineStart: number;
}

const posAt = (s: LexState, at: number): Pos => ({ line: s.line, col: at - s.lineStart + 1, offset: at });

export function tokenize(text: string): Token[] {
  const s: LexState = { text, i: 0, line: 1, lineStart: 0 };
  const out: Token[] = [];
  while (s.i < text.length) if (!skipBlank(s)) out.push(token(s));
  out.push({ kind: 'eof', text: '', pos: posAt(s, s.i), end: s.i });
  return out;
}

/** A newline, blank or comment at the cursor skipped (true), or nothing there (false). */
function skipBlank(s: LexState): boolean {
  const text = s.text,
    c = text[s.i];
  if (c === '\n') {
    s.i++;
    s.line++;
    s.lineStart = s.i;
    return true;
  }
  if (c === ' ' || c === '\t' || c === '\r') {
    s.i++;
    return true;
  }
  if (c === '-' && text[s.i + 1] === '-') {
    while (s.i < text.length && text[s.i] !== '\n') s.i++;
    return true;
  }
  if (c === '/' && text[s.i + 1] === '*') {
    const start = posAt(s, s.i);
    const end = text.indexOf('*/', s.i + 2);
    if (end < 0) throw sqlError(start, 'unterminated comment');
    for (; s.i < end + 2; s.i++)
      if (text[s.i] === '\n') {
        s.line++;
        s.lineStart = s.i + 1;
      }
    return true;
  }
  return false;
}

/** The token at the cursor, the cursor moved past it. */
function token(s: LexState): Token {
  const text = s.text,
    i = s.i,
    c = text[i];
  const p = posAt(s, i);
  let t: Token;
  if (/[A-Za-z_]/.test(c)) {
    let j = i + 1;
    while (j < text.length && /[A-Za-z0-9_$]/.test(text[j])) j++;
    const word = text.slice(i, j).toLowerCase();
    t = { kind: KEYWORDS.has(word) ? 'kw' : 'ident', text: word, pos: p, end: j };
  } else if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(text[i + 1] ?? ''))) {
    const m = /^(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?/.exec(text.slice(i))!;
    t = { kind: 'num', text: m[0], pos: p, end: i + m[0].length };
  } else if (c === "'" || c === '"') {
    t = quoted(s, p);
  } else if (c === '$') {
    const m = /^\$([A-Za-z_][A-Za-z0-9_]*)/.exec(text.slice(i));
    if (!m) throw sqlError(p, 'expected a parameter name after "$" (such as $date)');
    t = { kind: 'param', text: m[1], pos: p, end: i + m[0].length };
  } else {
    const op = OPS.find((o) => text.startsWith(o, i));
    if (!op) throw sqlError(p, `unexpected character "${c}"`);
    t = { kind: 'op', text: op, pos: p, end: i + op.length };
  }
  s.i = t.end;
  return t;
}

/** A string ('...') or quoted name ("...") at p, a doubled quote inside it standing for one. */
function quoted(s: LexState, p: Pos): Token {
  const text = s.text,
    c = text[s.i];
  let j = s.i + 1,
    v = '';
  for (;;) {
    if (j >= text.length) throw sqlError(p, `unterminated ${c === "'" ? 'string' : 'quoted name'}`);
    if (text[j] === c) {
      if (text[j + 1] === c) {
        v += c;
        j += 2;
        continue;
      }
      break;
    }
    if (text[j] === '\n') {
      s.line++;
      s.lineStart = j + 1;
    }
    v += text[j++];
  }
  return { kind: c === "'" ? 'str' : 'qident', text: v, pos: p, end: j + 1 };
}
