// Source overrides (shared/PLAN-SPEC.md, "Parameters and source overrides"):
// `--source NAME=PATH` or the library's `sources` replace a declared source's
// files with a file, a glob, or a folder (every *.parquet below it).
import fs from 'node:fs';
import path from 'node:path';
import { globFiles, isPattern } from './glob.js';
import { InputError, PlanError, jsonPath } from '../errors.js';
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

/** The paths `--data DIR` tries for table `name`, in order. */
const dataCandidates = (dir: string, name: string) => [
  path.join(dir, `${name}.parquet`),
  path.join(dir, name) + path.sep,
  path.join(dir, `${name}.csv`),
];

/**
 * The files `--data DIR` (`options.data`) binds table `name` to: DIR/name.parquet, else every *.parquet below
 * DIR/name/, else DIR/name.csv; null when DIR holds none of them.
 */
export async function dataFiles(dir: string, name: string): Promise<string[] | null> {
  const [pq, folder, csv] = dataCandidates(dir, name);
  const isFile = (p: string) => fs.statSync(p, { throwIfNoEntry: false })?.isFile() ?? false;
  if (isFile(pq)) return [pq];
  if (fs.statSync(folder, { throwIfNoEntry: false })?.isDirectory()) {
    const found = await globFiles('**/*.parquet', folder);
    if (found.length) return found;
  }
  return isFile(csv) ? [csv] : null;
}

/** What `--data DIR` tried for a table it did not find, for messages. */
export const dataTried = (dir: string, name: string, fromCommandLine: boolean) =>
  `${fromCommandLine ? '--data' : 'options.data'} ${dir} has none of ${dataCandidates(dir, name).join(', ')}`;

/** Every source name a plan's scans read, with the JSON path of the scan's `source` field. */
function scannedSources(q: unknown, at: (string | number)[], out: Map<string, (string | number)[]>): void {
  if (!q || typeof q !== 'object') return;
  if (Array.isArray(q)) {
    q.forEach((x, i) => scannedSources(x, [...at, i], out));
    return;
  }
  const o = q as Record<string, unknown>;
  if (o.op === 'scan' && typeof o.source === 'string' && !out.has(o.source)) out.set(o.source, [...at, 'source']);
  for (const [k, v] of Object.entries(o)) if (v && typeof v === 'object') scannedSources(v, [...at, k], out);
}

/**
 * The files `--data DIR` gives the sources a plan scans that `given` (--source) does not: a table found in DIR
 * replaces a declared source's files; one not declared and not found is a plan error at its scan, saying what was
 * tried.
 */
export async function dataSources(
  plan: { sources: Record<string, unknown>; query: unknown },
  dir: string,
  given: ReadonlySet<string>,
  fromCommandLine: boolean,
): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  const scans = new Map<string, (string | number)[]>();
  scannedSources(plan.query, ['query'], scans);
  for (const [name, at] of scans) {
    if (given.has(name)) continue;
    const files = await dataFiles(dir, name);
    if (files) out.set(name, files);
    else if (!(name in plan.sources)) {
      const declared = Object.keys(plan.sources).join(', ') || '(none)';
      throw new PlanError(
        jsonPath(at),
        `unknown source "${name}"; sources are: ${declared}; ${dataTried(dir, name, fromCommandLine)}`,
      );
    }
  }
  return out;
}
