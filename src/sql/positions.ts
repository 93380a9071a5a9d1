// Where in the SQL text each piece of a compiled plan came from, so that an error the plan's binder raises at a
// JSON path (a comparison of a string with a number, CASE branches of two types, a function's argument) is told
// at the query's line and column, with the line and a caret under the spot, as syntax and name errors are.
import { PlanError } from '../errors.js';
import type { Pos } from './lexer.js';

const where = new WeakMap<object, Pos>();
const fieldsOf = new WeakMap<object, Record<string, Pos>>();

/** `o` came from the SQL at `pos`; `fields`: where some of its fields (a comparison's value, ...) came from. */
export function tagPos<T>(o: T, pos: Pos, fields?: Record<string, Pos | undefined>): T {
  if (o === null || typeof o !== 'object') return o;
  if (!where.has(o)) where.set(o, pos);
  if (fields) {
    const f = fieldsOf.get(o) ?? {};
    for (const [k, p] of Object.entries(fields)) if (p && !(k in f)) f[k] = p;
    fieldsOf.set(o, f);
  }
  return o;
}

/** JSON path (as errors.ts jsonPath writes it) to the SQL position of every tagged piece under `root`. */
export function indexPositions(root: unknown, at: string, out = new Map<string, Pos>()): Map<string, Pos> {
  if (root === null || typeof root !== 'object') return out;
  const p = where.get(root);
  if (p && !out.has(at)) out.set(at, p);
  const step = (k: string) => (Array.isArray(root) ? `${at}[${k}]` : `${at}.${k}`);
  for (const [k, fp] of Object.entries(fieldsOf.get(root) ?? {})) if (!out.has(step(k))) out.set(step(k), fp);
  for (const [k, v] of Object.entries(root)) if (v && typeof v === 'object') indexPositions(v, step(k), out);
  return out;
}

/** The SQL position of the nearest tagged piece at or above a JSON path, or undefined. */
function lookup(index: Map<string, Pos>, path: string): Pos | undefined {
  for (let p = path; p; p = p.replace(/(\.[^.[\]]*|\[\d+\])$/, '')) {
    const hit = index.get(p);
    if (hit) return hit;
    if (!/(\.[^.[\]]*|\[\d+\])$/.test(p)) break;
  }
  return undefined;
}

const typeErrors = new WeakMap<PlanError, Pos>();

/** A type error found while compiling the SQL: compileSql adds the line and the caret (typeErrorShown). */
export function sqlTypeError(pos: Pos, message: string): PlanError {
  const e = new PlanError(`line ${pos.line}, column ${pos.col}`, message);
  typeErrors.set(e, pos);
  return e;
}

/** A type error of sqlTypeError with the text's line and a caret under the spot; anything else as it is. */
export function typeErrorShown(e: unknown, text: string): unknown {
  const pos = e instanceof PlanError ? typeErrors.get(e) : undefined;
  return pos ? new PlanError((e as PlanError).path, (e as PlanError).detail + caret(text, pos)) : e;
}

/** The line of the text at `pos` and a caret under its column. */
function caret(text: string, pos: Pos): string {
  const line = text.split('\n')[pos.line - 1] ?? '';
  return `\n  ${line}\n  ${' '.repeat(Math.max(0, pos.col - 1))}^`;
}

/**
 * A PlanError at a JSON path of the plan compiled from `text`, told at the SQL's line and column instead; any other
 * error (or one with no position known) as it is.
 */
export function locate(e: unknown, text: string, index: Map<string, Pos>): unknown {
  if (!(e instanceof PlanError) || !/^(query|params)\b/.test(e.path)) return e;
  const pos = lookup(index, e.path);
  if (!pos) return e;
  return new PlanError(`line ${pos.line}, column ${pos.col}`, e.detail + caret(text, pos));
}
