// Before the plan is validated and its files inspected (zod, footers: a few
// hundred ms), start the worker pool when the run will need it, so that its
// threads load their modules and warm WebAssembly meanwhile. The guess reads
// the plan's JSON and the sizes of its files on disk; a glob, a missing file
// or an unreadable plan counts as large (the run itself reports any error).
// A source given on the command line (`--source NAME=PATH`) is measured at
// that path, relative to the current folder, not at the plan's: the TPC-H
// plans name small bundled files, and a run over SF 1 files through --source
// started its pool only when the plan had been loaded and the broadcast sides
// read on the calling thread (the threads ready ~0.45 s later, TPC-H q10).
// bin/skewjoin.js calls prestartFromArgs before the command line's modules
// load (their loading keeps one core busy, the threads' start-up takes the
// other); the command calls prestartPool again, which starts nothing twice.
// This module loads no zod and no Parquet module.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_IN_THREAD_BYTES } from '../plan/defaults.js';
import { warmPool } from '../runtime/pool.js';
import { parseBytes } from '../plan/bytes.js';

const isGlob = (p: string) => /[*?[\]{}]/.test(p);

let tried = false;

/**
 * `sources`: the command line's --source paths by name (relative to the current folder).
 * A plan object (compiled from SQL) has absolute paths.
 */
export function prestartPool(
  planFile: string | object,
  workersFlag: number | undefined,
  sources: Record<string, string | string[]> = {},
): void {
  if (tried) return;
  tried = true;
  let plan: any = planFile;
  if (typeof planFile === 'string')
    try {
      plan = JSON.parse(fs.readFileSync(planFile, 'utf8'));
    } catch {
      return;
    }
  const dir = typeof planFile === 'string' ? path.dirname(path.resolve(planFile)) : process.cwd();
  const files: string[] = [];
  let unknown = false;
  for (const [name, s] of Object.entries<any>(plan?.sources ?? {})) {
    const given = Object.hasOwn(sources, name);
    for (const p of given ? [sources[name]].flat() : [s?.parquet].flat()) {
      if (typeof p !== 'string' || isGlob(p)) {
        unknown = true;
        continue;
      }
      files.push(given ? path.resolve(p) : path.resolve(dir, p));
    }
  }
  let bytes = 0,
    largest = '',
    largestBytes = -1;
  for (const f of files) {
    try {
      const st = fs.statSync(f);
      if (st.isDirectory()) {
        // a folder of files: counted as large, one of its files to warm up on
        unknown = true;
        const one = fs.readdirSync(f).find((x) => x.endsWith('.parquet'));
        if (one && !largest) largest = path.join(f, one);
        continue;
      }
      const n = st.size;
      bytes += n;
      if (n > largestBytes) {
        largest = f;
        largestBytes = n;
      }
    } catch {
      unknown = true;
    }
  }
  let limit = DEFAULT_IN_THREAD_BYTES;
  try {
    limit = parseBytes('execution.inThreadBytes', plan?.execution?.inThreadBytes, DEFAULT_IN_THREAD_BYTES);
  } catch {
    /* validation reports it */
  }
  // files on disk are compressed: half the limit keeps the guess on the side of starting the pool
  if (!process.env.SKEWJOIN_FAULTS && !unknown && bytes <= limit / 2) return;
  if (!largest) return;
  const w =
    workersFlag ?? (Number.isInteger(plan?.execution?.workers) ? plan.execution.workers : os.availableParallelism());
  warmPool(w, largest);
}

/**
 * The guess from the raw arguments, for the common forms only: the plan file
 * first (`skewjoin plan.json [--workers n] ...`), or SQL (`skewjoin q.sql
 * --data DIR`, `skewjoin sql "SELECT ..."`: its inputs by sqlInputs, before the
 * SQL compiler loads; the pool was started only after compiling, ~0.14 s later
 * than a plan's on the ETL queries of scripts/etl-bench.mjs). Anything else (a
 * subcommand, `--explain` without `--analyze`, `--print-plan`, `--engine spark`,
 * a --workers value that is not a positive integer) is left to the command,
 * which knows its options.
 */
export function prestartFromArgs(args: string[]): void {
  const [planFile, ...rest] = args;
  if (!planFile || planFile.startsWith('-')) return;
  const sql = planFile === 'sql' || planFile.endsWith('.sql');
  if (!sql && !planFile.endsWith('.json')) return;
  if (rest.includes('--explain') && !rest.includes('--analyze')) return;
  if (rest.includes('--print-plan') || rest.includes('--plan')) return;
  if (optionValue(rest, '--engine') === 'spark') return;
  let workers: number | undefined;
  const i = rest.findIndex((a) => a === '--workers' || a.startsWith('--workers='));
  if (i >= 0) {
    const v = rest[i].includes('=') ? rest[i].slice('--workers='.length) : rest[i + 1];
    workers = Number(v);
    if (!Number.isInteger(workers) || workers < 1) return;
  }
  if (sql) {
    const text = planFile === 'sql' ? rest[0] : readText(planFile);
    if (typeof text === 'string') prestartPool({ sources: sqlInputs(text, optionValue(rest, '--data')) }, workers);
    return;
  }
  const sources: Record<string, string[]> = {};
  for (let k = 0; k < rest.length; k++) {
    const v =
      rest[k] === '--source'
        ? rest[k + 1]
        : rest[k].startsWith('--source=')
          ? rest[k].slice('--source='.length)
          : undefined;
    if (v === undefined) continue;
    const at = v.indexOf('=');
    if (at <= 0) return; // a malformed --source: the command reports it
    (sources[v.slice(0, at)] ??= []).push(v.slice(at + 1));
  }
  prestartPool(planFile, workers, sources);
}

/** The value of `--name VALUE` or `--name=VALUE` among the arguments (the last one given), if any. */
function optionValue(args: string[], name: string): string | undefined {
  let v: string | undefined;
  for (let k = 0; k < args.length; k++)
    if (args[k] === name) v = args[k + 1];
    else if (args[k].startsWith(`${name}=`)) v = args[k].slice(name.length + 1);
  return v;
}

function readText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined; // the command reports it
  }
}

/**
 * The files a SQL text may read, as a plan's sources for the guess (absolute paths): each table of the `--data`
 * folder whose name the text holds as a word (a column of the same name counts too: the guess errs on the side of
 * starting the pool), and each quoted path the text names (`'lineitem.parquet'`, `read_parquet('...')`, relative to
 * the current folder; a glob alone starts nothing, as in a plan: there is no file to warm up on). The SQL compiler
 * binds them for real.
 */
function sqlInputs(text: string, data: string | undefined): Record<string, { parquet: string }> {
  const out: Record<string, { parquet: string }> = {};
  const words = new Set((text.match(/[A-Za-z_][A-Za-z0-9_$]*/g) ?? []).map((w) => w.toLowerCase()));
  if (data !== undefined) {
    let entries: fs.Dirent[] = [];
    try {
      entries = fs.readdirSync(data, { withFileTypes: true });
    } catch {
      /* the compiler reports a missing folder */
    }
    for (const e of entries) {
      const name = e.isDirectory() ? e.name : e.name.replace(/\.(parquet|csv)$/i, '');
      if ((e.isDirectory() || name !== e.name) && words.has(name.toLowerCase()))
        out[`data:${e.name}`] = { parquet: path.resolve(data, e.name) };
    }
  }
  for (const m of text.matchAll(/'([^']+\.(?:parquet|csv)[^']*)'/gi))
    out[`path:${m[1]}`] = { parquet: path.resolve(m[1]) };
  return out;
}
