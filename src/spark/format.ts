// The lowered SQL laid out for reading: one clause a line (SELECT, FROM, WHERE, GROUP BY,
// ORDER BY, LIMIT, each JOIN and its ON), a subquery indented by its depth. Only whitespace
// changes: string literals ('...', backslash escapes) and `identifiers` are left whole, and
// the keywords inside a function's parentheses (CASE, CAST) stay on their line.

const CLAUSE =
  /^(SELECT|FROM|WHERE|GROUP BY|ORDER BY|LIMIT|INSERT OVERWRITE DIRECTORY|UNION ALL|(?:INNER|LEFT OUTER|RIGHT OUTER|FULL OUTER|LEFT SEMI|LEFT ANTI|CROSS) JOIN|ON)\b/;

/** The SQL with a line break before each clause of a query, subqueries indented two spaces a level. */
export function formatSql(sql: string): string {
  let out = '';
  let depth = 0;
  // per open parenthesis: whether it opens a subquery (its clauses go on lines of their own)
  const parens: boolean[] = [];
  const inQuery = () => parens.length === 0 || parens[parens.length - 1];
  const newline = () => {
    out = out.trimEnd();
    if (out) out += `\n${'  '.repeat(depth)}`;
  };
  let i = 0;
  while (i < sql.length) {
    const c = sql[i];
    if (c === "'" || c === '`') {
      let j = i + 1;
      while (j < sql.length && sql[j] !== c) j += c === "'" && sql[j] === '\\' ? 2 : 1;
      // a doubled backquote is one inside an identifier
      while (c === '`' && sql[j + 1] === '`') {
        j += 2;
        while (j < sql.length && sql[j] !== '`') j++;
      }
      out += sql.slice(i, j + 1);
      i = j + 1;
      continue;
    }
    if (c === '(') {
      const sub = /^\(\s*SELECT\b/.test(sql.slice(i, i + 12));
      parens.push(sub);
      out += '(';
      i++;
      if (sub) {
        depth++;
        newline();
        while (sql[i] === ' ') i++;
      }
      continue;
    }
    if (c === ')') {
      if (parens.pop()) {
        depth--;
        newline();
      }
      out += ')';
      i++;
      continue;
    }
    const prev = sql[i - 1];
    if (inQuery() && (i === 0 || prev === ' ') && /[A-Z]/.test(c)) {
      const m = CLAUSE.exec(sql.slice(i, i + 40));
      if (m && !(m[1] === 'SELECT' && out.endsWith('('))) {
        newline();
        out += m[1];
        i += m[1].length;
        continue;
      }
    }
    out += c;
    i++;
  }
  return out;
}
