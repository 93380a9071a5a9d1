// Bound expressions, predicates and literals as Spark SQL text. Spark runs in ANSI
// mode (overflow and bad casts fail as ours do); where its types or rules differ
// (integer widths, floor of a double, x / 0), the text casts or cases to our answer.
import { PlanError } from '../errors.js';
import { type DataType, decimalText, isFloat, isInteger } from '../kernels/column.js';
import type { DecimalValue } from '../kernels/decimal.js';
import type { BoundPredicate, Literal } from '../plan/bound.js';
import type { BoundExpr, Scalar } from '../expr/types.js';
import { formatDate, formatTimestamp } from '../io/output.js';

/** The name of input column i inside the lowered SQL (positional, so that no plan name can clash). */
export const col = (i: number) => `__sj${i}`;

/** A Spark identifier: backquoted, backquotes doubled. */
export const ident = (s: string) => '`' + s.replace(/`/g, '``') + '`';

/** A Spark string literal (backslash escapes are on by default). */
export const str = (s: string) => "'" + s.replace(/\\/g, '\\\\').replace(/'/g, "\\'") + "'";

/** The Spark type that holds our type's values (Spark has no unsigned integers: the next wider signed one). */
export function sparkType(t: DataType): string {
  switch (t.id) {
    case 'bool':
      return 'BOOLEAN';
    case 'int8':
      return 'TINYINT';
    case 'int16':
    case 'uint8':
      return 'SMALLINT';
    case 'int32':
    case 'uint16':
      return 'INT';
    case 'int64':
    case 'uint32':
      return 'BIGINT';
    case 'uint64':
      return 'DECIMAL(20,0)';
    case 'float32':
      return 'FLOAT';
    case 'float64':
      return 'DOUBLE';
    case 'decimal':
      return `DECIMAL(${Math.min(t.precision!, 38)},${t.scale})`;
    case 'utf8':
      return 'STRING';
    case 'date32':
      return 'DATE';
    case 'timestamp':
      return t.tz ? 'TIMESTAMP' : 'TIMESTAMP_NTZ';
  }
}

const cast = (sql: string, t: DataType) => `CAST(${sql} AS ${sparkType(t)})`;

/** A literal of our representation (bound expressions: bigint for int64/decimal/timestamp, days for dates). */
export function literal(v: Scalar | DecimalValue, t: DataType): string {
  if (v === null) return `CAST(NULL AS ${sparkType(t)})`;
  if (typeof v === 'object')
    return `CAST(${str(decimalText(v.scaled, v.scale))} AS DECIMAL(${decimalDigits(v)},${v.scale}))`;
  switch (t.id) {
    case 'bool':
      return v ? 'TRUE' : 'FALSE';
    case 'utf8':
      return str(String(v));
    case 'date32':
      return `DATE'${formatDate(Number(v))}'`;
    case 'timestamp': {
      const text = formatTimestamp(BigInt(v as bigint), t.unit ?? 'microsecond', null).replace('T', ' ');
      return `${t.tz ? 'TIMESTAMP' : 'TIMESTAMP_NTZ'}'${text}'`;
    }
    case 'decimal':
      return cast(str(decimalText(BigInt(v as bigint), t.scale!)), t);
    case 'float32':
    case 'float64':
      return `CAST(${str(String(v))} AS ${sparkType(t)})`;
    default:
      // integers: a fractional number compared with an integer column stays a double, as in our engine
      if (typeof v === 'number' && !Number.isInteger(v)) return `CAST(${str(String(v))} AS DOUBLE)`;
      if (t.id === 'int64' && typeof v === 'bigint' && v > -(2n ** 63n)) return `${v}L`;
      return cast(String(v), t);
  }
}

function decimalDigits(d: DecimalValue): number {
  const digits = (d.scaled < 0n ? -d.scaled : d.scaled).toString().length;
  return Math.min(38, Math.max(digits, d.scale + 1));
}

/** A bound predicate's literal (in the representation of the column it is compared with). */
function predLiteral(v: Literal, t: DataType): string {
  if (v !== null && typeof v === 'object') return literal(v, t);
  if (isFloat(t) && typeof v !== 'boolean') return literal(Number(v), t);
  return literal(v as Scalar, t);
}

const CMP: Record<string, string> = { '=': '=', '!=': '<>', '<': '<', '<=': '<=', '>': '>', '>=': '>=' };

export function predicate(p: BoundPredicate, types: DataType[]): string {
  switch (p.kind) {
    case 'cmp':
      return `(${col(p.col)} ${CMP[p.op]} ${predLiteral(p.value, types[p.col])})`;
    case 'in':
      return `(${col(p.col)} IN (${p.values.map((v) => predLiteral(v, types[p.col])).join(', ')}))`;
    case 'isNull':
      return `(${col(p.col)} IS ${p.isNull ? '' : 'NOT '}NULL)`;
    case 'and':
    case 'or':
      return `(${p.preds.map((q) => predicate(q, types)).join(` ${p.kind.toUpperCase()} `)})`;
    case 'not':
      return `(NOT ${predicate(p.pred, types)})`;
    case 'expr':
      return expr(p.expr);
  }
}

/** The JSON path in a bound expression's `what` ("query.input.where.args[0] ("+")"). */
const pathOf = (what: string) => what.replace(/ \(".*"\)$/, '');

export function expr(e: BoundExpr): string {
  switch (e.k) {
    case 'col':
      return col(e.col);
    case 'lit':
      return literal(e.value, e.type);
    case 'case': {
      const ws = e.whens.map((w, i) => `WHEN ${expr(w)} THEN ${expr(e.thens[i])}`).join(' ');
      return `(CASE ${ws}${e.else ? ` ELSE ${expr(e.else)}` : ''} END)`;
    }
    case 'cast': {
      if (isFloat(e.arg.type) && e.type.id === 'utf8') {
        throw new PlanError(
          e.what,
          'Spark writes floating-point numbers as text differently (1.0E10, not 10000000000.0): ' +
            'cast to a decimal first, or run with --engine local',
        );
      }
      return cast(expr(e.arg), e.type);
    }
    case 'fn':
      return fn(e);
  }
}

function fn(e: Extract<BoundExpr, { k: 'fn' }>): string {
  const a = e.args.map(expr);
  const t = e.type;
  const exact = (op: string) =>
    isInteger(t) ? `(CAST(${a[0]} AS BIGINT) ${op} CAST(${a[1]} AS BIGINT))` : cast(`(${a[0]} ${op} ${a[1]})`, t);
  switch (e.fn) {
    case '+':
    case '-':
    case '*':
      return isFloat(t) ? `(${a[0]} ${e.fn} ${a[1]})` : exact(e.fn);
    // DuckDB's x / 0 (±Infinity, NaN) where ANSI Spark fails; both arguments are doubles (bind.ts)
    case '/':
      return (
        `(CASE WHEN ${a[0]} IS NULL OR ${a[1]} IS NULL THEN CAST(NULL AS DOUBLE) WHEN ${a[1]} = 0 THEN ` +
        `(CASE WHEN ${a[0]} > 0 THEN CAST('Infinity' AS DOUBLE) WHEN ${a[0]} < 0 THEN CAST('-Infinity' AS DOUBLE) ` +
        `ELSE CAST('NaN' AS DOUBLE) END) ELSE ${a[0]} / ${a[1]} END)`
      );
    case '%': {
      const mod = isFloat(t) ? `(${a[0]} % ${a[1]})` : exact('%');
      return `(CASE WHEN ${a[1]} = 0 THEN ${cast('NULL', t)} ELSE ${mod} END)`;
    }
    case 'neg':
      return isInteger(t) ? `(- CAST(${a[0]} AS BIGINT))` : cast(`(- ${a[0]})`, t);
    case 'abs':
      return isInteger(t) ? `abs(CAST(${a[0]} AS BIGINT))` : cast(`abs(${a[0]})`, t);
    case 'round':
      return cast(`round(${a[0]}, ${Number((e.args[1] as { value: bigint }).value)})`, t);
    case 'floor':
    case 'ceil':
      // Spark's floor of a double is a BIGINT; a double beyond 2^52 (or NaN, ±Infinity) is its own floor
      return isFloat(t)
        ? `(CASE WHEN abs(${a[0]}) < 4503599627370496D THEN CAST(${e.fn}(${a[0]}) AS DOUBLE) ELSE ${a[0]} END)`
        : cast(`${e.fn}(${a[0]})`, t);
    case 'coalesce':
      return `coalesce(${a.join(', ')})`;
    case 'nullif':
      return `nullif(${a[0]}, ${a[1]})`;
    case 'concat':
      return `concat(${a.join(', ')})`; // a null argument makes the result null, as here
    case 'substr':
      return `substring(${a[0]}, CAST(${a[1]} AS INT)${a[2] ? `, CAST(${a[2]} AS INT)` : ''})`;
    case 'lower':
    case 'upper':
    case 'trim':
      return `${e.fn}(${a[0]})`;
    case 'length':
      return `CAST(char_length(${a[0]}) AS BIGINT)`;
    case 'starts_with':
      return `startswith(${a[0]}, ${a[1]})`;
    case 'ends_with':
      return `endswith(${a[0]}, ${a[1]})`;
    case 'contains':
      return `contains(${a[0]}, ${a[1]})`;
    case 'year':
    case 'month':
      return `CAST(${e.fn}(${a[0]}) AS BIGINT)`;
    case 'day':
      return `CAST(dayofmonth(${a[0]}) AS BIGINT)`;
    case 'date_add':
      return dateAdd(e, a);
    case 'date_diff':
      return `CAST(datediff(${a[1]}, ${a[0]}) AS BIGINT)`;
    case '=':
    case '!=':
    case '<':
    case '<=':
    case '>':
    case '>=':
      return `(${a[0]} ${CMP[e.fn]} ${a[1]})`;
    case 'and':
    case 'or':
      return `(${a.join(` ${e.fn.toUpperCase()} `)})`;
    case 'not':
      return `(NOT ${a[0]})`;
    case 'is_null':
      return `(${a[0]} IS NULL)`;
    case '$in':
      return `(${a[0]} IN (${a.slice(1).join(', ')}))`;
    // no escape character: our LIKE has none (a backslash is itself)
    case '$like':
      return `(${a[0]} LIKE ${a[1]} ESCAPE '\\u0001')`;
  }
  throw new PlanError(pathOf(e.what), `function "${e.fn}" has no Spark form`);
}

function dateAdd(e: Extract<BoundExpr, { k: 'fn' }>, a: string[]): string {
  const unit = (e.args[2] as { value: string }).value;
  const n = `CAST(${a[1]} AS INT)`;
  if (e.type.id === 'timestamp') return `timestampadd(${unit.toUpperCase()}, ${n}, ${a[0]})`;
  if (unit === 'day') return `date_add(${a[0]}, ${n})`;
  return `add_months(${a[0]}, ${unit === 'year' ? `${n} * 12` : n})`;
}
