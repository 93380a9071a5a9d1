// The command line's option values (cli/main.ts): whole numbers, numbers,
// sizes, lists and NAME=VALUE assignments, each refused in words naming its flag.
import { InvalidArgumentError } from 'commander';
import type { PlanError } from '../errors.js';
import { parseSize } from '../plan/bytes.js';

export function int(name: string, min = 1) {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`${name} must be an integer >= ${min}`);
    return n;
  };
}
/** `1.2,1.5`: `bench --s`. */
export function sList(v: string): number[] {
  const xs = v.split(',').map((x) => Number(x.trim()));
  if (xs.some((x) => !Number.isFinite(x) || x < 0))
    throw new InvalidArgumentError(`--s must be Zipf exponents >= 0, comma-separated (e.g. 1.2,1.5); got "${v}"`);
  return xs;
}

/** `16,64,256`, or `none` for an empty list: `bench --simulate-workers`. */
export function workerList(v: string): number[] {
  if (v.trim() === 'none') return [];
  const xs = v.split(',').map((x) => Number(x.trim()));
  if (xs.length === 0 || xs.some((n) => !Number.isInteger(n) || n < 1 || n > 4096)) {
    throw new InvalidArgumentError(
      `--simulate-workers must be worker counts from 1 to 4096, comma-separated (e.g. 16,64,256), or none; got "${v}"`,
    );
  }
  return [...new Set(xs)].sort((a, b) => a - b);
}
export function num(name: string, min = 0) {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n < min) throw new InvalidArgumentError(`${name} must be a number >= ${min}`);
    return n;
  };
}
/** A size flag in bytes, read as every size option is (plan/bytes.ts); `memory`: a budget (no bare tiny numbers). */
export function size(name: string, memory = false) {
  return (v: string) => {
    try {
      return parseSize(name, v, memory);
    } catch (e) {
      throw new InvalidArgumentError(`${name} ${(e as PlanError).detail}`);
    }
  };
}

/**
 * `NAME=VALUE` split at the first `=`; a repeated option collects into a record (a repeated source name into
 * a list).
 */
export function assignment(flag: string, list: boolean) {
  return (v: string, acc: Record<string, string | string[]> = {}) => {
    const i = v.indexOf('=');
    if (i <= 0) throw new InvalidArgumentError(`${flag} must be NAME=${list ? 'PATH' : 'VALUE'}, got "${v}"`);
    const [k, x] = [v.slice(0, i), v.slice(i + 1)];
    const prev = acc[k];
    return { ...acc, [k]: list && prev !== undefined ? [...(Array.isArray(prev) ? prev : [prev]), x] : x };
  };
}
