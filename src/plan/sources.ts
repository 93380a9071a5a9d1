// Source overrides (shared/PLAN-SPEC.md, "Parameters and source overrides"):
// `--source NAME=PATH` or the library's `sources` replace a declared source's
// files with a file, a glob, or a folder (every *.parquet below it).
import fs from 'node:fs';
import path from 'node:path';
import { globFiles, isPattern } from './glob.js';
import { InputError, PlanError } from '../errors.js';
import { isUri } from './uri.js';

const origin = (name: string, fromCommandLine: boolean) =>
  fromCommandLine ? `--source ${name}` : `options.sources.${name}`;

/**
 * The Parquet files one PATH stands for, absolute and sorted; an InputError when there are none.
 * A URI stays as it is, and with `sparkReads` so does a path not found here (Spark reads them: plan/uri.ts).
 */
async function filesOf(p: string, baseDir: string, label: string, sparkReads: boolean): Promise<string[]> {
  if (isUri(p)) return [p];
  const abs = path.resolve(baseDir, p);
  if (await isPattern(p)) {
    const found = await globFiles(abs);
    if (found.length === 0 && sparkReads) return [abs];
    if (found.length === 0) throw new InputError(`${label}: glob "${p}" matches no file`, abs);
    return found;
  }
  let st: fs.Stats;
  try {
    st = fs.statSync(abs);
  } catch {
    if (sparkReads) return [abs];
    throw new InputError(`${label}: no file or folder ${abs}`, abs);
  }
  if (!st.isDirectory()) return [abs];
  const found = await globFiles('**/*.parquet', abs);
  if (found.length === 0) throw new InputError(`${label}: folder ${abs} holds no *.parquet file`, abs);
  return found;
}

/**
 * The files of every overridden source, by name. Relative paths resolve
 * against `baseDir` (the current folder for the command line).
 */
export async function resolveSourceOverrides(
  declared: readonly string[],
  given: Record<string, string | string[]>,
  baseDir: string,
  fromCommandLine: boolean,
  sparkReads = false,
): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const [name, v] of Object.entries(given)) {
    if (!declared.includes(name)) {
      throw new PlanError(
        origin(name, fromCommandLine),
        `the plan declares no source "${name}"; its sources are: ${declared.join(', ') || '(none)'}`,
      );
    }
    const list = Array.isArray(v) ? v : [v];
    if (list.length === 0 || list.some((x) => typeof x !== 'string' || x === '')) {
      throw new PlanError(origin(name, fromCommandLine), 'expected a path, a glob, a folder or a list of them');
    }
    const label = `${origin(name, fromCommandLine)}=${list.join(',')}`;
    out.set(name, (await Promise.all(list.map((p) => filesOf(p, baseDir, label, sparkReads)))).flat());
  }
  return out;
}
