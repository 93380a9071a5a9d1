// Bound expressions, predicates and literals as Spark SQL text. Spark runs in ANSI
// mode (overflow and bad casts fail as ours do); where its types or rules differ
// (integer widths, floor of a double, x / 0 and x / -0.0, NaN / 0, a float or a
// decimal cast to an integer, round of a double, substr from 0 or of a negative
// length, a timestamp with a time zone as text), the text casts or cases to our
// answer, which is DuckDB's (PLAN-SPEC, Expressions; test/spark-sem.test.ts).
import { PlanError } from '../errors.js';
import { type DataType, decimalText, isFloat, isInteger } from '../kernels/column.js';
import type { DecimalValue } from '../kernels/decimal.js';
import type { BoundPredicate, Literal } from '../plan/bound.js';
import type { BoundExpr, Scalar } from '../expr/types.js';
import { formatDate, formatTimestamp } from '../io/output.js';

/**
 * The session settings the lowered SQL's meaning rests on, each pinned (a cluster may set any of them
 * otherwise): ANSI SQL (an overflow or a bad cast fails, as ours does), UTC, column names as written,
 * exact decimals (a result beyond 38 digits fails, it is not rounded), string literals with backslash
 * escapes (`str`, the LIKE escape), backquoted names as names (not regular expressions), no `${...}`
 * substitution in the text, `TIMESTAMP'...'` with a time zone and Parquet timestamps without one as
 * TIMESTAMP_NTZ (`sparkType`), strings compared by their bytes, double quotes as strings, negative
 * decimal scales off, no file skipped as corrupt or missing, dates before 1582 read as written,
 * files with a nanosecond timestamp column readable.
 */
export const SQL_SETTINGS: Readonly<Record<string, string>> = {
  'spark.sql.ansi.enabled': 'true',
  'spark.sql.session.timeZone': 'UTC',
  'spark.sql.caseSensitive': 'true',
  'spark.sql.decimalOperations.allowPrecisionLoss': 'false',
  'spark.sql.parser.escapedStringLiterals': 'false',
  'spark.sql.parser.quotedRegexColumnNames': 'false',
  'spark.sql.variable.substitute': 'false',
  'spark.sql.timestampType': 'TIMESTAMP_LTZ',
  'spark.sql.parquet.inferTimestampNTZ.enabled': 'true',
  'spark.sql.session.collation.default': 'UTF8_BINARY',
  'spark.sql.ansi.doubleQuotedIdentifiers': 'false',
  'spark.sql.ansi.enforceReservedKeywords': 'false',
  'spark.sql.legacy.allowNegativeScaleOfDecimal': 'false',
  'spark.sql.legacy.exponentLiteralAsDecimal.enabled': 'false',
  'spark.sql.files.ignoreCorruptFiles': 'false',
  'spark.sql.files.ignoreMissingFiles': 'false',
  'spark.sql.parquet.datetimeRebaseModeInRead': 'CORRECTED',
  'spark.sql.parquet.int96RebaseModeInRead': 'CORRECTED',
  // a file with a nanosecond timestamp column is read (Spark fails on the file otherwise, even when
  // the column is not read); a scan that reads such a column is refused at lowering (lower.ts)
  'spark.sql.legacy.parquet.nanosAsLong': 'true',
};

/** The names `col` gives the columns of the node being lowered (lower.ts Lowering.names); null: positional. */
let colNames: readonly string[] | null = null;

/** The name of column i inside the lowered SQL: the plan's (Lowering.names), else positional `__sjN`. */
export const col = (i: number) => colNames?.[i] ?? `__sj${i}`;

/** `f` with `col` naming columns by `names` (null: positional), as before afterwards. */
export function withColumns<T>(names: readonly string[] | null, f: () => T): T {
  const prev = colNames;
  colNames = names;
  try {
    return f();
  } finally {
    colNames = prev;
  }
}

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
      return `CAST(${str(Object.is(v, -0) ? '-0.0' : String(v))} AS ${sparkType(t)})`;
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
      return castExpr(e.arg, e.type);
    }
    case 'fn':
      return fn(e);
  }
}

/**
 * A cast as ours: a float to an integer rounds half to even (Spark truncates; `rint` is Java's
 * half-even), a decimal to an integer half away from zero (Spark truncates; its `round` of a
 * decimal is half up), a timestamp with a time zone as text ends in "+00", as DuckDB writes it
 * (the session is in UTC; Spark writes no zone).
 */
function castExpr(arg: BoundExpr, to: DataType): string {
  const a = expr(arg);
  if (arg.type.id === 'utf8' && to.id !== 'utf8') return parsed(a, to);
  // a float to a decimal as DuckDB's: x * 10^scale in double arithmetic rounded half away from zero (Spark's round of
  // a double rounds its exact value), read back at the scale (Spark's cast reads the double's shortest text: 1.01)
  if (to.id === 'decimal' && isFloat(arg.type)) {
    const f = DOUBLE(`1e${to.scale}`);
    const scaled = `CAST(signum(${a}) * round(abs(${a}) * ${f}, 0) AS DECIMAL(38,0))`;
    return `CAST(concat(CAST(${scaled} AS STRING), 'E-${to.scale}') AS DECIMAL(${to.precision},${to.scale}))`;
  }
  if (isInteger(to) && isFloat(arg.type)) return cast(`rint(${a})`, to);
  if (isInteger(to) && arg.type.id === 'decimal' && (arg.type.scale ?? 0) > 0) return cast(`round(${a}, 0)`, to);
  if (to.id === 'utf8' && arg.type.id === 'timestamp' && arg.type.tz) return `concat(${cast(a, to)}, '+00')`;
  return cast(a, to);
}

/**
 * The texts our casts read (src/expr/scalar.ts, kernels/decimal.ts parseDecimal): Spark's casts read
 * more ('2024' as a date, ' t' as true, full-width digits, '1.5d' as a double) and fewer
 * ('2.5' as an integer). Text that matches is cast as ours reads it (an integer through an exact
 * decimal, rounded half away from zero; a timestamp through one with a time zone, so that an offset
 * counts, in UTC); other text fails, as ours does, as a cast of text that never converts (an
 * input error, exit 3, that quotes the value).
 */
const NUMBER_TEXT = '^\\s*[+-]?(\\d+\\.?\\d*|\\.\\d+)([eE][+-]?\\d+)?\\s*$';
const DATE_TEXT = '^\\s*(-?\\d+)([-/ \\\\])(\\d{1,2})\\2(\\d{1,2})(?!\\d)(?! \\()';
const TEXT: Partial<Record<DataType['id'], string>> = {
  // DuckDB's words (src/expr/scalar.ts), nothing around them
  bool: '^(?i)(t|true|y|yes|1|f|false|n|no|0)$',
  // DuckDB's float text: `_` between digits, inf/infinity/nan in any case, a `+` before the sign
  float32:
    '^\\s*[+]?(-?(\\d+(_\\d+)*(\\.(\\d+(_\\d+)*)?)?|\\.\\d+(_\\d+)*)([eE][+-]?\\d+(_\\d+)*)?|(?i)-?(inf|infinity|nan))\\s*$',
  decimal: NUMBER_TEXT,
  // DuckDB's date text: the year, a separator repeated between a month and a day of one or two digits, then no digit
  date32: DATE_TEXT,
  timestamp: '^\\s*\\d{4}-\\d{2}-\\d{2}([T ]\\d{2}:\\d{2}(:\\d{2}(\\.\\d+)?)?)?([zZ]|[+-]\\d\\d:?\\d\\d)?\\s*$',
};

function parsed(a: string, to: DataType): string {
  const re = TEXT[to.id === 'float64' ? 'float32' : to.id] ?? NUMBER_TEXT;
  let value: string;
  if (isInteger(to)) value = cast(`round(CAST(${a} AS DECIMAL(38,18)), 0)`, to);
  else if (to.id === 'timestamp' && !to.tz) value = cast(`CAST(${a} AS TIMESTAMP)`, to);
  else if (to.id === 'bool') value = `(lower(${a}) IN ('t', 'true', 'y', 'yes', '1'))`;
  else if (isFloat(to)) {
    // Spark reads inf, infinity and nan in any case; the `+` before a sign and the `_` go first
    const t = `regexp_replace(regexp_replace(trim(${a}), '^[+]', ''), '_', '')`;
    value = cast(`regexp_replace(${t}, '(?i)^(-?)inf$', '$1infinity')`, to);
  } else if (to.id === 'date32') {
    const part = (k: number) => `CAST(regexp_extract(${a}, ${str(DATE_TEXT)}, ${k}) AS INT)`;
    value = `make_date(${part(1)}, ${part(3)}, ${part(4)})`;
  } else value = cast(a, to);
  const name = to.id === 'decimal' ? `decimal(${to.precision},${to.scale})` : to.id === 'date32' ? 'date' : to.id;
  return (
    `(CASE WHEN ${a} IS NULL OR ${a} RLIKE ${str(re)} THEN ${value} ` +
    `ELSE ${cast(`concat('value "', ${a}, '" cannot be cast to ${name}')`, to)} END)`
  );
}

const DOUBLE = (x: string) => `CAST('${x}' AS DOUBLE)`;

/**
 * The characters whose case Spark (Java's full case mapping: ß → SS, ﬁ → FI, final Σ → ς, İ → i̇) maps otherwise than
 * ours and DuckDB's (one code point at a time, src/expr/text.ts), as a regular-expression class.
 */
function caseClass(upper: boolean): string {
  let out = '';
  for (let c = 0; c < 0x10000; c++) {
    if (c >= 0xd800 && c <= 0xdfff) continue;
    const ch = String.fromCharCode(c);
    if ((upper ? ch.toUpperCase() : ch.toLowerCase()).length !== 1) out += `\\x{${c.toString(16)}}`;
  }
  return `[${out}${upper ? '' : '\\x{3a3}'}]`;
}
const CASE_CLASS = { upper: caseClass(true), lower: caseClass(false) };

/** upper() or lower() in Spark, refused at run time for a value whose case Spark would map otherwise than ours. */
function caseMapped(fn: 'upper' | 'lower', a: string): string {
  return (
    `(CASE WHEN ${a} RLIKE ${str(CASE_CLASS[fn])} THEN ` +
    `CAST(raise_error(concat('${fn}() of "', ${a}, '" on Spark maps its case otherwise than DuckDB')) AS STRING) ` +
    `ELSE ${fn}(${a}) END)`
  );
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
    // DuckDB's x / 0 where ANSI Spark fails: NaN for 0 / 0 and NaN / 0 (Spark's NaN > 0 holds: NaN
    // is above every number there), else ±Infinity by the signs of x and of the zero (-0.0 is the one
    // zero written with a minus: Spark's atan2 and signum do not tell). Both arguments are doubles (bind.ts).
    case '/':
      return (
        `(CASE WHEN ${a[0]} IS NULL OR ${a[1]} IS NULL THEN CAST(NULL AS DOUBLE) WHEN ${a[1]} = 0 THEN ` +
        `(CASE WHEN isnan(${a[0]}) OR ${a[0]} = 0 THEN ${DOUBLE('NaN')} ` +
        `WHEN (${a[0]} > 0) <> startswith(CAST(${a[1]} AS STRING), '-') THEN ${DOUBLE('Infinity')} ` +
        `ELSE ${DOUBLE('-Infinity')} END) ` +
        `ELSE ${a[0]} / ${a[1]} END)`
      );
    case '%': {
      const mod = isFloat(t) ? `(${a[0]} % ${a[1]})` : exact('%');
      return `(CASE WHEN ${a[1]} = 0 THEN ${cast('NULL', t)} ELSE ${mod} END)`;
    }
    case 'neg':
      return isInteger(t) ? `(- CAST(${a[0]} AS BIGINT))` : cast(`(- ${a[0]})`, t);
    case 'abs':
      return isInteger(t) ? `abs(CAST(${a[0]} AS BIGINT))` : cast(`abs(${a[0]})`, t);
    case 'round': {
      const digits = Number((e.args[1] as { value: bigint }).value);
      if (!isFloat(t)) return cast(`round(${a[0]}, ${digits})`, t);
      // ours (and DuckDB's) rounds x * 10^digits, a double, half away from zero; Spark's round of a double
      // rounds its decimal text (round(1.005, 2): 1.01 there, 1.0 here)
      const inf = DOUBLE('Infinity');
      if (digits < 0) {
        // DuckDB's: divided by 10^-digits, rounded, multiplied back; NaN and infinities give 0
        const f = DOUBLE(String(10 ** -digits));
        const r = `signum(${a[0]}) * round(abs(${a[0]}) / ${f}, 0) * ${f}`;
        return cast(`CASE WHEN isnan(${a[0]}) OR abs(${a[0]}) = ${inf} OR abs(${r}) = ${inf} THEN 0 ELSE ${r} END`, t);
      }
      const f = DOUBLE(String(10 ** digits));
      return cast(
        `CASE WHEN isnan(${a[0]}) OR abs(${a[0]}) = ${inf} THEN ${a[0]} ` +
          `ELSE signum(${a[0]}) * round(abs(${a[0]}) * ${f}, 0) / ${f} END`,
        t,
      );
    }
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
      return substr(e, a);
    case 'lower':
    case 'upper':
      return caseMapped(e.fn, a[0]);
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

/**
 * DuckDB's substr(s, start, length): start counted from 1, from the end when negative; a negative
 * length takes the characters before start. Spark's substring agrees for a start of 1 or more, or a
 * negative one, with a length of 0 or more (literals: the plain call); otherwise (start 0, a negative
 * or a computed length) the characters [from, to) are computed here, clamped to the string, in
 * BIGINT, and Spark's substring takes them from `from` (>= 1).
 */
function substr(e: Extract<BoundExpr, { k: 'fn' }>, a: string[]): string {
  const lit = (x: BoundExpr | undefined) => (x?.k === 'lit' && x.value !== null ? Number(x.value) : undefined);
  const start = lit(e.args[1]),
    len = e.args[2] ? lit(e.args[2]) : -1;
  const small = (x: number) => Math.abs(x) < 2 ** 30;
  if (start !== undefined && small(start) && (e.args[2] === undefined || (len !== undefined && small(len)))) {
    if (start !== 0 && (e.args[2] === undefined || len! >= 0))
      return `substring(${a[0]}, ${start}${e.args[2] === undefined ? '' : `, ${len}`})`;
    if (e.args[2] === undefined) return `substring(${a[0]}, 1)`; // from 0: the whole string
    if (start > 0 || (start === 0 && len! >= 0)) {
      // [from, to) known here (Spark's substring stops at the string's end); empty: '' (null for null)
      const to = len! < 0 ? start : start + len!,
        from = Math.max(1, len! < 0 ? start + len! : start);
      return `substring(${a[0]}, ${from}, ${Math.max(0, to - from)})`;
    }
  }
  const n = `CAST(char_length(${a[0]}) AS BIGINT)`;
  const st = `(CASE WHEN CAST(${a[1]} AS BIGINT) < 0 THEN ${n} + CAST(${a[1]} AS BIGINT) + 1 ELSE CAST(${a[1]} AS BIGINT) END)`;
  let from: string, to: string;
  if (e.args[2] === undefined) {
    from = st;
    to = `${n} + 1`;
  } else {
    const l = `CAST(${a[2]} AS BIGINT)`;
    from = `(CASE WHEN ${l} < 0 THEN ${st} + ${l} ELSE ${st} END)`;
    to = `(CASE WHEN ${l} < 0 THEN ${st} ELSE ${st} + ${l} END)`;
  }
  const f = `greatest(${from}, 1)`,
    t = `least(${to}, ${n} + 1)`;
  return `(CASE WHEN ${t} <= ${f} THEN '' ELSE substring(${a[0]}, CAST(${f} AS INT), CAST(${t} - ${f} AS INT)) END)`;
}

function dateAdd(e: Extract<BoundExpr, { k: 'fn' }>, a: string[]): string {
  const unit = (e.args[2] as { value: string }).value;
  const n = `CAST(${a[1]} AS INT)`;
  if (e.type.id === 'timestamp') return `timestampadd(${unit.toUpperCase()}, ${n}, ${a[0]})`;
  if (unit === 'day') return `date_add(${a[0]}, ${n})`;
  return `add_months(${a[0]}, ${unit === 'year' ? `${n} * 12` : n})`;
}

/** `c AS name`, or `c` alone where it already carries that name. */
export const alias = (c: string, name: string) => (c === name || c.endsWith(`.${name}`) ? c : `${c} AS ${name}`);
