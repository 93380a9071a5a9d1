// Packages only `skewjoin bench` uses (the charting stack, DuckDB): devDependencies, so that the
// library installs without them. Loaded here on demand; when missing, the error names the exact
// versions to install, read from this package's own package.json.
import fs from 'node:fs';
import { ExecutionError } from '../errors.js';

/** The version this package was built and tested with (its devDependencies), or '' when unknown. */
function pinned(name: string): string {
  try {
    // dist/bench/*.js and dist/bundle/*.js both sit two folders below the package root
    const pkg = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    return pkg.devDependencies?.[name] ?? pkg.dependencies?.[name] ?? '';
  } catch {
    return '';
  }
}

/** The npm command that installs these packages at the pinned versions. */
function installHint(names: string[]): string {
  return `npm i -E ${names.map((n) => (pinned(n) ? `${n}@${pinned(n)}` : n)).join(' ')}`;
}

function notFound(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException)?.code;
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
}

/** Load optional packages; `why` says what needs them. */
export async function loadOptional<T>(names: string[], why: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (e) {
    if (!notFound(e)) throw e;
    const list = names.join(' and ');
    throw new ExecutionError(`${why} needs ${list}, which a library install leaves out: ${installHint(names)}`);
  }
}

/** Which of these packages cannot be loaded from here. */
async function missing(names: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const n of names) {
    try {
      await import(n);
    } catch (e) {
      if (!notFound(e)) throw e;
      out.push(n);
    }
  }
  return out;
}

/** Before a benchmark measures anything: the packages it compares and draws with, or one error naming all missing. */
export async function requireBenchPackages(): Promise<void> {
  const gone = await missing(['@duckdb/node-api', 'vega', 'vega-lite']);
  if (gone.length === 0) return;
  const list = gone.length === 1 ? gone[0] : `${gone.slice(0, -1).join(', ')} and ${gone.at(-1)}`;
  throw new ExecutionError(
    `skewjoin bench compares with DuckDB and draws its report with vega-lite; it needs ${list}, ` +
      `which a library install leaves out: ${installHint(gone)}`,
  );
}

/** vega and vega-lite, which draw the benchmark's report. */
export function chartingStack(): Promise<[typeof import('vega'), typeof import('vega-lite')]> {
  const load = () => Promise.all([import('vega'), import('vega-lite')]);
  return loadOptional(['vega', 'vega-lite'], 'drawing the benchmark report (report.html)', load);
}
