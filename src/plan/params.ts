// Plan parameters (shared/PLAN-SPEC.md, "Parameters and source overrides"): a
// pre-pass over the raw plan JSON, before validation, that gives each declared
// parameter its value and replaces every `{ "param": NAME }` with a literal.
import { PlanError, jsonPath } from '../errors.js';
import type { Plan } from './spec.js';

/** A parameter value as a caller gives it: text from the command line, or a JS value from the library. */
export type ParamInput = string | number | bigint | boolean;

/** A parsed value: its form as a JSON literal in a predicate, and as a typed literal expression. */
interface ParamValue {
  raw: string | number | boolean;
  type: string;
}

type P = (string | number)[];

/** Where the caller's values came from, for messages: `--param NAME` or `params.NAME` of the options. */
const paramOrigin = (name: string, fromCommandLine: boolean) =>
  fromCommandLine ? `--param ${name}` : `options.params.${name}`;

const INT_RANGE: Record<string, [bigint, bigint]> = {
  int8: [-(2n ** 7n), 2n ** 7n - 1n],
  int16: [-(2n ** 15n), 2n ** 15n - 1n],
  int32: [-(2n ** 31n), 2n ** 31n - 1n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n],
  uint8: [0n, 2n ** 8n - 1n],
  uint16: [0n, 2n ** 16n - 1n],
  uint32: [0n, 2n ** 32n - 1n],
  uint64: [0n, 2n ** 64n - 1n],
};

/**
 * Parse a value as the declared type; returns the literal or a reason it does
 * not fit. Large integers and decimals whose digits a JSON number would not
 * keep stay strings (the spec parses a string compared with a number as that number).
 */
function parseParamValue(v: ParamInput, type: string): ParamValue | string {
  const text = typeof v === 'string' ? v.trim() : String(v);
  const t = type.replace(/\s+/g, '');
  if (t === 'utf8') return { raw: typeof v === 'string' ? v : text, type: t };
  if (t === 'bool') {
    if (/^(true|false)$/i.test(text)) return { raw: text.toLowerCase() === 'true', type: t };
    return 'expected true or false';
  }
  if (t in INT_RANGE) {
    if (!/^[+-]?\d+$/.test(text)) return 'expected an integer';
    const b = BigInt(text);
    const [lo, hi] = INT_RANGE[t];
    if (b < lo || b > hi) return `out of range for ${t} (${lo} to ${hi})`;
    return { raw: Number.isSafeInteger(Number(b)) ? Number(b) : b.toString(), type: t };
  }
  if (t === 'float32' || t === 'float64') {
    const n = Number(text);
    if (text === '' || !Number.isFinite(n)) return 'expected a number';
    return { raw: n, type: t };
  }
  const dec = /^decimal\((\d+),(\d+)\)$/.exec(t);
  if (dec) {
    const [p, s] = [Number(dec[1]), Number(dec[2])];
    const m = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(text);
    if (!m || (m[2] === '' && !m[3])) return 'expected a decimal number such as 0.05';
    const int = m[2].replace(/^0+(?=\d)/, '') || '0';
    const frac = (m[3] ?? '').replace(/0+$/, '');
    if (frac.length > s) return `has more than ${s} digits after the point for ${type}`;
    if (int !== '0' && int.length > p - s) return `has more than ${p - s} digits before the point for ${type}`;
    const canon = `${m[1] === '-' ? '-' : ''}${int}${frac ? '.' + frac : ''}`;
    // a JSON number is read as the decimal of its shortest form: keep it a number when that is these digits
    const n = Number(canon);
    return { raw: String(n) === canon ? n : canon, type: t };
  }
  if (t === 'date') {
    const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
    if (m) {
      const d = new Date(Date.UTC(+m[1], +m[2] - 1, +m[3]));
      if (d.getUTCFullYear() === +m[1] && d.getUTCMonth() === +m[2] - 1 && d.getUTCDate() === +m[3])
        return { raw: text, type: t };
    }
    return 'expected a date YYYY-MM-DD';
  }
  if (t === 'timestamp') {
    if (
      /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?([zZ]|[+-]\d\d:?\d\d)?$/.test(text) &&
      !Number.isNaN(Date.parse(text.replace(' ', 'T')))
    ) {
      return { raw: text, type: t };
    }
    return 'expected an ISO date-time such as 2024-01-31T12:00:00';
  }
  return `unknown type ${type}`;
}

/** The value of every declared parameter: the caller's, else the default; every mistake a PlanError naming it. */
function resolveParams(
  declared: Record<string, { type: string; default?: string | number | boolean }>,
  given: Record<string, ParamInput>,
  fromCommandLine: boolean,
): Map<string, ParamValue> {
  const names = Object.keys(declared);
  for (const n of Object.keys(given)) {
    if (!(n in declared)) {
      throw new PlanError(
        paramOrigin(n, fromCommandLine),
        `the plan declares no parameter "${n}"; ` +
          `${names.length ? `its parameters are: ${names.join(', ')}` : 'it has no params'}`,
      );
    }
  }
  const out = new Map<string, ParamValue>();
  for (const [n, d] of Object.entries(declared)) {
    const fromCaller = n in given;
    const v = fromCaller ? given[n] : d.default;
    if (v === undefined) {
      const how = fromCommandLine ? `--param ${n}=VALUE` : `options.params.${n}`;
      throw new PlanError(
        jsonPath(['params', n]),
        `parameter "${n}" (${d.type}) has no value and no default; give ${how}`,
      );
    }
    const r = parseParamValue(v, d.type);
    if (typeof r === 'string') {
      const at = fromCaller ? paramOrigin(n, fromCommandLine) : jsonPath(['params', n, 'default']);
      throw new PlanError(
        at,
        `value ${JSON.stringify(typeof v === 'bigint' ? String(v) : v)} of parameter "${n}" is not of type ` +
          `${d.type}: ${r}`,
      );
    }
    out.set(n, r);
  }
  return out;
}

// A `{ "param" }` held directly by one of these keys (or as an item of their
// lists) stands for a predicate's JSON literal; anywhere else for an expression.
const LITERAL_KEYS = new Set(['value', 'in', 'like', 'between']);

const isParamRef = (x: object): x is { param: unknown } => Object.keys(x).length === 1 && 'param' in x;

function substitute(
  node: unknown,
  at: P,
  key: string | number,
  values: Map<string, ParamValue>,
  declared: string[],
): unknown {
  if (Array.isArray(node)) return node.map((x, i) => substitute(x, [...at, i], key, values, declared));
  if (node === null || typeof node !== 'object') return node;
  if (isParamRef(node)) {
    const n = node.param;
    if (typeof n !== 'string' || !values.has(n)) {
      const list = declared.length ? `the plan declares: ${declared.join(', ')}` : 'the plan has no params';
      throw new PlanError(jsonPath([...at, 'param']), `parameter ${JSON.stringify(n)} is not declared; ${list}`);
    }
    const v = values.get(n)!;
    return typeof key === 'string' && LITERAL_KEYS.has(key) ? v.raw : { value: v.raw, type: v.type };
  }
  return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, substitute(v, [...at, k], k, values, declared)]));
}

/**
 * Resolve the plan's parameters (`declared`: its `params`, checked by the caller) and return a copy of the raw
 * plan with every parameter reference in `query` replaced (the caller's object is not changed). Anything that is
 * not a plan object is returned as is for validation to reject.
 */
export function applyParams(
  raw: unknown,
  declared: NonNullable<Plan['params']>,
  given: Record<string, ParamInput> = {},
  fromCommandLine = false,
): unknown {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return raw;
  const plan = raw as Record<string, unknown>;
  const values = resolveParams(declared, given, fromCommandLine);
  if (!('query' in plan)) return raw;
  return { ...plan, query: substitute(plan.query, ['query'], 'query', values, Object.keys(declared)) };
}
