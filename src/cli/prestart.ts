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
 * The guess from the raw arguments, for the common form only: the plan file
 * first (`skewjoin plan.json [--workers n] ...`). Anything else (a
 * subcommand, `--explain` without `--analyze`, a --workers value that is not
 * a positive integer) is left to the command, which knows its options.
 */
export function prestartFromArgs(args: string[]): void {
  const [planFile, ...rest] = args;
  if (!planFile || planFile.startsWith('-') || !planFile.endsWith('.json')) return;
  if (rest.includes('--explain') && !rest.includes('--analyze')) return;
  let workers: number | undefined;
  const i = rest.findIndex((a) => a === '--workers' || a.startsWith('--workers='));
  if (i >= 0) {
    const v = rest[i].includes('=') ? rest[i].slice('--workers='.length) : rest[i + 1];
    workers = Number(v);
    if (!Number.isInteger(workers) || workers < 1) return;
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
