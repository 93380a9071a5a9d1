// SQL expressions to the plan's expressions and predicates (PLAN-SPEC,
// "Expressions"): names to column ids, intervals to date_add, EXTRACT and
// SUBSTRING to functions, comparisons with a literal to the filter kernel's form.
import type { Expr as PExpr, Predicate } from '../plan/spec.js';
import { type DataType, typeName } from '../kernels/column.js';
import type { CmpOp, Expr } from './ast.js';
import { exprKey } from './ast.js';
import { sqlError } from './lexer.js';
import { sqlTypeError, tagPos } from './positions.js';
import { type Col, type Scope, isAggregateCall, suggest } from './scope.js';

const FUNCTIONS: Record<string, string> = {
  abs: 'abs',
  round: 'round',
  floor: 'floor',
  ceil: 'ceil',
  ceiling: 'ceil',
  coalesce: 'coalesce',
  ifnull: 'coalesce',
  nullif: 'nullif',
  concat: 'concat',
  substr: 'substr',
  lower: 'lower',
  upper: 'upper',
  length: 'length',
  char_length: 'length',
  trim: 'trim',
  starts_with: 'starts_with',
  prefix: 'starts_with',
  ends_with: 'ends_with',
  suffix: 'ends_with',
  contains: 'contains',
  year: 'year',
  month: 'month',
  day: 'day',
  date_add: 'date_add',
  date_diff: 'date_diff',
  is_null: 'is_null',
};
const CAST_TYPES: Record<string, string> = {
  boolean: 'bool',
  bool: 'bool',
  tinyint: 'int8',
  smallint: 'int16',
  integer: 'int32',
  int: 'int32',
  int4: 'int32',
  bigint: 'int64',
  int8: 'int64',
  real: 'float32',
  float: 'float32',
  float4: 'float32',
  double: 'float64',
  float8: 'float64',
  varchar: 'utf8',
  text: 'utf8',
  string: 'utf8',
  char: 'utf8',
  date: 'date',
  timestamp: 'timestamp',
  utinyint: 'uint8',
  usmallint: 'uint16',
  uinteger: 'uint32',
  ubigint: 'uint64',
};

/** The plan's type name of a column type, for parameters compared with it. */
function planTypeName(t: DataType | undefined): string | undefined {
  if (!t) return undefined;
  if (t.id === 'date32') return 'date';
  if (t.id === 'timestamp') return 'timestamp';
  return typeName(t).replace('large_utf8', 'utf8');
}

/** A decimal literal as SQL types it: 0.06 is decimal(3,2), 100.00 decimal(5,2). */
function numberValue(text: string): PExpr {
  if (/[eE]/.test(text)) return { value: Number(text), type: 'float64' };
  if (!text.includes('.')) {
    return Number.isSafeInteger(Number(text)) ? { value: Number(text) } : { value: text, type: 'int64' };
  }
  const [int, frac] = text.split('.');
  const digits = (int.replace(/^0+/, '') + frac).length;
  const scale = frac.length;
  return { value: text.startsWith('.') ? '0' + text : text, type: `decimal(${Math.max(digits, scale, 1)},${scale})` };
}

/** How a condition's expression reads in an error. */
const what = (e: Expr) =>
  e.k === 'col'
    ? `column "${e.name}"`
    : e.k === 'num'
      ? `value ${e.text}`
      : e.k === 'str'
        ? `value '${e.v}'`
        : 'expression';

/** Rewrites the translator applies first: an aggregate, group expression or subquery already computed as a column. */
export type Substitutions = Map<string, PExpr>;

export class Translator {
  constructor(
    readonly scope: Scope,
    readonly params: Map<string, string>,
    readonly subst: Substitutions = new Map(),
    /** where an aggregate may not stand: the message's reason */
    readonly noAggregates = 'aggregates are not allowed here',
  ) {}

  col(e: Extract<Expr, { k: 'col' }>): Col {
    return this.scope.resolve(e).col;
  }

  private param(name: string, hint: string | undefined): PExpr {
    if (!this.params.has(name) || (hint && this.params.get(name) === 'utf8?')) this.params.set(name, hint ?? 'utf8?');
    return { param: name };
  }

  /** The type of a plain column reference, for typing the other side of a comparison. */
  hintOf(e: Expr): string | undefined {
    if (e.k === 'col') return planTypeName(this.col(e).type);
    if (e.k === 'date') return 'date';
    if (e.k === 'str') return 'utf8';
    if (e.k === 'bin' && e.op !== '||') return this.hintOf(e.l) ?? this.hintOf(e.r);
    return undefined;
  }

  /** The plan's expression for e, tagged with its position in the text (sql/positions.ts). */
  expr(e: Expr, hint?: string): PExpr {
    const s = this.subst.get(exprKey(e));
    // a substitution is shared: each use gets its own copy, so that it has its own position
    if (s) return tagPos({ ...s }, e.pos);
    return tagPos(this.exprOf(e, hint), e.pos);
  }

  private exprOf(e: Expr, hint?: string): PExpr {
    switch (e.k) {
      case 'col':
        return { column: this.col(e).id };
      case 'num':
        return numberValue(e.text);
      case 'str':
        return { value: e.v };
      case 'bool':
        return { value: e.v };
      case 'null':
        return { value: null };
      case 'date':
        return { value: e.v, type: 'date' };
      case 'param':
        return this.param(e.name, hint);
      case 'interval':
        throw sqlError(e.pos, 'an INTERVAL must be added to or subtracted from a date');
      case 'star':
        throw sqlError(e.pos, '* stands only in SELECT or count(*)');
      case 'neg':
        if (e.e.k === 'num') return numberValue(e.e.text.startsWith('-') ? e.e.text.slice(1) : '-' + e.e.text);
        return { fn: 'neg', args: [this.expr(e.e, hint)] };
      case 'bin':
        return this.binary(e, hint);
      case 'cmp': {
        const h = this.hintOf(e.l) ?? this.hintOf(e.r);
        return { fn: e.op, args: [this.expr(e.l, h), this.expr(e.r, h)] };
      }
      case 'and':
      case 'or':
        return { fn: e.k, args: [this.expr(e.l), this.expr(e.r)] };
      case 'not':
        return { fn: 'not', args: [this.expr(e.e)] };
      case 'isnull': {
        const x: PExpr = { fn: 'is_null', args: [this.expr(e.e)] };
        return e.not ? { fn: 'not', args: [x] } : x;
      }
      case 'like':
      case 'between':
      case 'inlist': {
        const p = this.pred(e);
        return {
          case: [
            { when: p, then: { value: true } },
            { when: { not: p }, then: { value: false } },
          ],
        };
      }
      case 'call':
        return this.call(e, hint);
      case 'case':
        return this.caseWhen(e, hint);
      case 'cast':
        return this.cast(e);
      case 'window':
        throw sqlError(e.pos, 'window functions are allowed in SELECT, QUALIFY and ORDER BY only');
      case 'insub':
      case 'exists':
      case 'subq':
        throw sqlError(
          e.pos,
          'a subquery is supported here only as a condition of WHERE or HAVING joined by AND, or as a scalar value',
        );
    }
  }

  private caseWhen(e: Extract<Expr, { k: 'case' }>, hint?: string): PExpr {
    const whens = e.whens.map((w) => ({
      when: this.pred(e.operand ? { k: 'cmp', op: '=', l: e.operand, r: w.when, pos: w.when.pos } : w.when),
      then: this.expr(w.then, hint),
    }));
    return e.else ? { case: whens, else: this.expr(e.else, hint) } : { case: whens };
  }

  private cast(e: Extract<Expr, { k: 'cast' }>): PExpr {
    const m = /^(\w+)(\((\d+)(,(\d+))?\))?$/.exec(e.to)!;
    const base = m[1];
    let to = CAST_TYPES[base];
    if (base === 'decimal' || base === 'numeric') to = `decimal(${m[3] ?? 18},${m[5] ?? (m[3] ? 0 : 3)})`;
    if (!to) {
      throw sqlError(e.pos, `CAST to ${e.to.toUpperCase()} is not supported${suggest(base, Object.keys(CAST_TYPES))}`);
    }
    if (base === 'varchar' || base === 'char') to = 'utf8';
    return { cast: this.expr(e.e), to };
  }

  private binary(e: Extract<Expr, { k: 'bin' }>, hint?: string): PExpr {
    // the plan's concat is SQL's ||: a null operand gives null
    if (e.op === '||') return { fn: 'concat', args: [this.expr(e.l, 'utf8'), this.expr(e.r, 'utf8')] };
    const iv = e.r.k === 'interval' ? e.r : e.l.k === 'interval' ? e.l : undefined;
    if (iv) {
      const date = iv === e.r ? e.l : e.r;
      if (e.op !== '+' && !(e.op === '-' && iv === e.r)) {
        throw sqlError(
          e.pos,
          `an INTERVAL can only be added to a date or subtracted from one, not used with "${e.op}"`,
        );
      }
      let n = this.expr(iv.n, 'int64');
      if (e.op === '-') {
        n = 'value' in n && typeof n.value === 'number' ? { value: -n.value } : { fn: 'neg', args: [n] };
      }
      const args = [this.expr(date, 'date'), n];
      return { fn: 'date_add', args: iv.unit === 'day' ? args : [...args, { value: iv.unit }] };
    }
    const h = hint ?? this.hintOf(e.l) ?? this.hintOf(e.r);
    return { fn: e.op, args: [this.expr(e.l, h), this.expr(e.r, h)] };
  }

  private call(e: Extract<Expr, { k: 'call' }>, hint?: string): PExpr {
    if (isAggregateCall(e)) throw sqlError(e.pos, `${e.name}(): ${this.noAggregates}`);
    const fn = FUNCTIONS[e.name];
    if (!fn) {
      throw sqlError(
        e.pos,
        `function ${e.name}() does not exist or is not supported${suggest(e.name, Object.keys(FUNCTIONS))}`,
      );
    }
    if (e.star || e.distinct) throw sqlError(e.pos, `${e.name}(${e.star ? '*' : 'DISTINCT ...'}) is not supported`);
    const argHint = (i: number) => (fn === 'date_add' && i === 0 ? 'date' : fn === 'date_add' ? 'int64' : hint);
    const args = e.args.map((a, i) => this.expr(a, argHint(i)));
    // DuckDB's concat() skips null arguments (all null: ''), where the plan's concat, SQL's ||, gives null
    if (fn === 'concat')
      return { fn, args: args.map((a) => ({ fn: 'coalesce', args: [{ cast: a, to: 'utf8' }, { value: '' }] })) };
    return { fn, args };
  }

  /** The subject of a predicate form: a column, or an expression. */
  private subject(e: Expr): { column: string } | { expr: PExpr } {
    const s = this.subst.get(exprKey(e));
    if (s && 'column' in s) return { column: s.column };
    if (!s && e.k === 'col') return { column: this.col(e).id };
    return { expr: s ?? this.expr(e) };
  }

  /** A literal where the filter kernel takes one (a value or a parameter), or undefined. */
  private literal(e: Expr, hint: string | undefined): string | number | boolean | null | { param: string } | undefined {
    if (this.subst.has(exprKey(e))) return undefined;
    switch (e.k) {
      case 'num': {
        const v = numberValue(e.text);
        return 'value' in v && v.type !== 'float64' && v.type !== 'int64' ? Number(e.text) : undefined;
      }
      case 'neg':
        return e.e.k === 'num' && !/[eE]/.test(e.e.text) ? -Number(e.e.text) : undefined;
      case 'str':
        return e.v;
      case 'bool':
        return e.v;
      case 'date':
        return hint === 'date' ? e.v : undefined;
      case 'param':
        return this.param(e.name, hint) as { param: string };
      default:
        return undefined;
    }
  }

  /** The plan's predicate for e, tagged with its position in the text. */
  pred(e: Expr): Predicate {
    return tagPos(this.predOf(e), e.pos);
  }

  private predOf(e: Expr): Predicate {
    switch (e.k) {
      case 'and':
        return { and: [...this.flat(e, 'and')] };
      case 'or':
        return { or: [...this.flat(e, 'or')] };
      case 'not':
        return { not: this.pred(e.e) };
      case 'cmp':
        return this.compare(e.op, e.l, e.r);
      case 'isnull':
        return tagPos({ ...this.subject(e.e), isNull: !e.not }, e.pos, { column: e.e.pos });
      case 'like': {
        const lit = e.pat.k === 'str' ? e.pat.v : undefined;
        const p = { ...this.subject(e.e), like: lit ?? this.expr(e.pat, 'utf8') } as Predicate;
        tagPos(p, e.pos, { column: e.e.pos, like: e.pat.pos });
        return e.not ? { not: p } : p;
      }
      case 'between': {
        const h = this.hintOf(e.e);
        const bound = (b: Expr) => this.literal(b, h) ?? this.expr(b, h);
        const between = tagPos([bound(e.lo), bound(e.hi)], e.pos, { 0: e.lo.pos, 1: e.hi.pos });
        const p = tagPos({ ...this.subject(e.e), between } as Predicate, e.pos, { column: e.e.pos });
        return e.not ? { not: p } : p;
      }
      case 'inlist': {
        const h = this.hintOf(e.e);
        const vals = e.list.map((x) => this.literal(x, h));
        const list = tagPos(
          vals as (string | number | boolean | null | { param: string })[],
          e.pos,
          Object.fromEntries(e.list.map((x, i) => [i, x.pos])),
        );
        const p: Predicate = vals.every((v) => v !== undefined)
          ? tagPos({ ...this.subject(e.e), in: list }, e.pos, { column: e.e.pos })
          : { or: e.list.map((x) => tagPos(this.compare('=', e.e, x), x.pos)) };
        return e.not ? { not: p } : p;
      }
      case 'bool':
        return { expr: { value: e.v }, cmp: '=', value: true };
      default: {
        // a condition that is not a bool (`NOT id`, `WHERE price`): said so, not as a comparison with true
        const t =
          e.k === 'num'
            ? ((numberValue(e.text) as { type?: string }).type ?? 'int64')
            : e.k === 'col' || e.k === 'bin' || e.k === 'str'
              ? this.hintOf(e)
              : undefined;
        if (t !== undefined && t !== 'bool')
          throw sqlTypeError(e.pos, `a condition must be a bool, got ${t} ${what(e)}`);
        return { ...this.subject(e), cmp: '=', value: true };
      }
    }
  }

  private *flat(e: Expr, k: 'and' | 'or'): Generator<Predicate> {
    if (e.k === k) {
      yield* this.flat(e.l, k);
      yield* this.flat(e.r, k);
    } else yield this.pred(e);
  }

  private compare(op: CmpOp, l: Expr, r: Expr): Predicate {
    const h = this.hintOf(l) ?? this.hintOf(r);
    const flip: Record<CmpOp, CmpOp> = { '=': '=', '!=': '!=', '<': '>', '<=': '>=', '>': '<', '>=': '<=' };
    const lv = this.literal(r, h);
    if (lv !== undefined && lv !== null)
      return tagPos({ ...this.subject(l), cmp: op, value: lv }, r.pos, { column: l.pos, value: r.pos });
    const rv = this.literal(l, h);
    if (rv !== undefined && rv !== null)
      return tagPos({ ...this.subject(r), cmp: flip[op], value: rv }, l.pos, { column: r.pos, value: l.pos });
    return { left: this.expr(l, h), cmp: op, right: this.expr(r, h) };
  }
}
