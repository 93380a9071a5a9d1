// Cardinality estimates for join ordering: a table's rows from its footers,
// times the selectivity of its filters (integer and date ranges from the
// footers' min/max; fixed guesses otherwise), and joins by distinct keys.
import type { Expr } from './ast.js';
import type { Col, Scope } from './scope.js';

const DAY_MS = 86400000;
const GUESS = { eq: 0.1, range: 1 / 3, between: 0.25, like: 0.2, prefix: 0.1, other: 0.5 };

/** Distinct values of a column read from a file: its integer range, at most its table's rows. */
function distinct(c: Col | undefined, fallback: number): number {
  const s = c?.stats;
  if (!s) return fallback;
  if (s.min !== undefined && s.max !== undefined) return Math.max(1, Math.min(s.rows, s.max - s.min + 1));
  return s.rows;
}

/** A constant's value on the footers' scale (days for dates), when the planner can tell it. */
function constant(e: Expr): number | undefined {
  if (e.k === 'num') return Number(e.text);
  if (e.k === 'neg') {
    const v = constant(e.e);
    return v === undefined ? undefined : -v;
  }
  if (e.k === 'date') return Date.parse(e.v + 'T00:00:00Z') / DAY_MS;
  if (e.k === 'bin' && (e.op === '+' || e.op === '-') && e.r.k === 'interval') {
    const d = constant(e.l),
      n = constant(e.r.n);
    if (d === undefined || n === undefined) return undefined;
    return d + (e.op === '+' ? 1 : -1) * n * { day: 1, month: 30.4, year: 365.25 }[e.r.unit];
  }
  return undefined;
}

function rangeFraction(c: Col | undefined, lo: number | undefined, hi: number | undefined): number | undefined {
  const s = c?.stats;
  if (!s || s.min === undefined || s.max === undefined || s.max <= s.min) return undefined;
  const a = Math.max(s.min, lo ?? s.min),
    b = Math.min(s.max, hi ?? s.max);
  return Math.max(0.001, Math.min(1, (b - a) / (s.max - s.min)));
}

/** The fraction of rows a condition over one table keeps. */
export function selectivity(e: Expr, scope: Scope): number {
  const colOf = (x: Expr) => (x.k === 'col' ? scope.resolve(x).col : undefined);
  switch (e.k) {
    case 'and':
      return selectivity(e.l, scope) * selectivity(e.r, scope);
    case 'or':
      return 1 - (1 - selectivity(e.l, scope)) * (1 - selectivity(e.r, scope));
    case 'not':
      return 1 - selectivity(e.e, scope);
    case 'cmp': {
      const [c, k, op] = colOf(e.l) ? [colOf(e.l), constant(e.r), e.op] : [colOf(e.r), constant(e.l), flip(e.op)];
      if (!c || (e.l.k === 'col' && e.r.k === 'col')) return GUESS.other;
      if (op === '=') return c.stats ? 1 / distinct(c, 10) : GUESS.eq;
      if (op === '!=') return 0.9;
      if (k === undefined) return GUESS.range;
      const f = op === '<' || op === '<=' ? rangeFraction(c, undefined, k) : rangeFraction(c, k, undefined);
      return f ?? GUESS.range;
    }
    case 'between': {
      const f = rangeFraction(colOf(e.e), constant(e.lo), constant(e.hi));
      return e.not ? 1 - (f ?? GUESS.between) : (f ?? GUESS.between);
    }
    case 'like': {
      const s = e.pat.k === 'str' && !/^[%_]/.test(e.pat.v) ? GUESS.prefix : GUESS.like;
      return e.not ? 1 - s : s;
    }
    case 'inlist': {
      const c = colOf(e.e);
      const s = Math.min(1, e.list.length * (c?.stats ? 1 / distinct(c, 10) : GUESS.eq));
      return e.not ? 1 - s : s;
    }
    case 'isnull': {
      const c = colOf(e.e);
      const f = c?.stats && Number.isFinite(c.stats.nulls) ? c.stats.nulls / Math.max(1, c.stats.rows) : 0.05;
      return e.not ? 1 - f : f;
    }
    default:
      return GUESS.other;
  }
}

function flip(op: string): string {
  return ({ '<': '>', '<=': '>=', '>': '<', '>=': '<=' } as Record<string, string>)[op] ?? op;
}

/**
 * Rows of a join on key pairs: |A| x |B| / d, d the larger side's distinct
 * keys, at most the smaller table's rows (a foreign key has no more distinct
 * values than the table it points to: lineitem's l_orderkey range against orders).
 */
export function joinRows(a: number, b: number, pairs: [Col, Col][], baseA: number, baseB: number): number {
  if (pairs.length === 0) return a * b;
  const da = Math.min(
    baseA,
    pairs.reduce((p, [x]) => p * distinct(x, baseA), 1),
  );
  const db = Math.min(
    baseB,
    pairs.reduce((p, [, y]) => p * distinct(y, baseB), 1),
  );
  const d = Math.max(1, Math.min(Math.max(da, db), Math.min(baseA, baseB)));
  return (a * b) / d;
}
