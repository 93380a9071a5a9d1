// A plan written by hand checked against the plan's schema (plan/spec.ts, zod): the first bad field named with
// the value received and what was expected (PLAN-SPEC, Errors). Loaded only for such plans (plan/load.ts):
// zod and the schema take 30 ms to load.
import type { z } from 'zod';
import { PlanError, jsonPath } from '../errors.js';
import { expectedAt, shown, valueAt } from './expected.js';
import { type Plan, ParamsSchema, PlanSchema } from './spec.js';

type P = (string | number)[];

/** The value at a path of the plan object, as the message shows it. */
function received(root: unknown, p: PropertyKey[]): string {
  const v = valueAt(root, p);
  return v === undefined ? 'missing' : JSON.stringify(v);
}

/** `"median" is not one of count, sum, ...`: the value received and the allowed ones (PLAN-SPEC, Errors). */
function notOneOf(root: unknown, p: PropertyKey[], allowed: readonly unknown[]): string {
  const got = received(root, p);
  const list = allowed.map((x) => (typeof x === 'string' ? x : JSON.stringify(x))).join(', ');
  return got === 'missing'
    ? `missing; one of ${list}`
    : allowed.length === 1
      ? `expected ${list}, got ${got}`
      : `${got} is not one of ${list}`;
}

/** `expected a sort key such as {...}, got "amount"`, where the field is one plan/expected.ts describes. */
function expectedMessage(root: unknown, p: PropertyKey[]): string | undefined {
  const form = expectedAt(root, p);
  if (!form) return undefined;
  const v = valueAt(root, p);
  return v === undefined ? `missing: expected ${form}` : `expected ${form}, got ${shown(v)}`;
}

function describeIssue(
  root: unknown,
  issue: z.core.$ZodIssue,
  base: PropertyKey[] = [],
): { path: string; message: string } {
  const p = [...base, ...issue.path];
  if (issue.code === 'invalid_value') return { path: jsonPath(p), message: notOneOf(root, p, issue.values) };
  const options = (issue as { options?: unknown[] }).options;
  if (issue.code === 'invalid_union' && issue.errors.length === 0 && Array.isArray(options)) {
    return { path: jsonPath(p), message: notOneOf(root, p, options) }; // an unknown discriminator ("op")
  }
  if (issue.code === 'invalid_union' && issue.errors.length > 0) {
    // Report the branch that got furthest: the one whose first issue is deepest, at a field given rather than
    // missing (a CSV source's bad `header`, not the `parquet` it lacks)
    let best: z.core.$ZodIssue | undefined,
      bestScore = -1;
    for (const branch of issue.errors) {
      const first = branch[0];
      if (!first || first.code === 'unrecognized_keys') continue;
      const score = 2 * first.path.length + (valueAt(root, [...p, ...first.path]) === undefined ? 0 : 1);
      if (score > bestScore) [best, bestScore] = [first, score];
    }
    if (best && best.path.length > 0) return describeIssue(root, best, p);
    const message =
      expectedMessage(root, p) ??
      (issue.message === 'Invalid input' ? 'does not match any allowed form' : issue.message);
    return { path: jsonPath(p), message };
  }
  if (issue.code === 'unrecognized_keys')
    return { path: jsonPath(p), message: `unknown field(s): ${issue.keys.join(', ')}` };
  if (issue.code === 'invalid_type') {
    const message =
      expectedMessage(root, p) ??
      `expected ${issue.expected === 'tuple' ? 'a list' : `a ${issue.expected}`}, got ${shown(valueAt(root, p))}`;
    return { path: jsonPath(p), message };
  }
  return { path: jsonPath(p), message: issue.message };
}

/** Validate a plan object against the v1 schema; throws a PlanError naming the first bad field. */
export function validatePlan(obj: unknown): Plan {
  const r = PlanSchema.safeParse(obj);
  if (r.success) return r.data;
  const { path: p, message } = describeIssue(obj, r.error.issues[0]);
  throw new PlanError(p || '(plan)', message);
}

/**
 * The parameters a raw plan declares (`params`), checked; {} for none or for what is not a plan object (which
 * validatePlan then rejects).
 */
export function declaredParams(raw: unknown): NonNullable<Plan['params']> {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return {};
  const parsed = ParamsSchema.optional().safeParse((raw as Record<string, unknown>).params);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const detail = issue.code === 'unrecognized_keys' ? `unknown field(s): ${issue.keys.join(', ')}` : issue.message;
    throw new PlanError(jsonPath(['params', ...(issue.path as P)]), detail);
  }
  return parsed.data ?? {};
}
