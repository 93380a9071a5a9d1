// Before the plan is validated and its files inspected (zod, footers: a few
// hundred ms), start the worker pool when the run will need it, so that its
// threads load their modules and warm WebAssembly meanwhile. The guess reads
// the plan's JSON and the sizes of its files on disk; a glob, a missing file
// or an unreadable plan counts as large (the run itself reports any error).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_IN_THREAD_BYTES } from '../exec/local.js';
import { warmPool } from '../exec/pool.js';
import { parseBytes } from '../plan/spec.js';

const isGlob = (p: string) => /[*?[\]{}]/.test(p);

export function prestartPool(planFile: string, workersFlag: number | undefined): void {
  let plan: any;
  try { plan = JSON.parse(fs.readFileSync(planFile, 'utf8')); } catch { return; }
  const dir = path.dirname(path.resolve(planFile));
  const files: string[] = [];
  let unknown = false;
  for (const s of Object.values<any>(plan?.sources ?? {})) {
    for (const p of [s?.parquet].flat()) {
      if (typeof p !== 'string' || isGlob(p)) { unknown = true; continue; }
      files.push(path.resolve(dir, p));
    }
  }
  let bytes = 0, largest = '', largestBytes = -1;
  for (const f of files) {
    try {
      const n = fs.statSync(f).size;
      bytes += n;
      if (n > largestBytes) { largest = f; largestBytes = n; }
    } catch { unknown = true; }
  }
  let limit = DEFAULT_IN_THREAD_BYTES;
  try { limit = parseBytes(plan?.execution?.inThreadBytes, DEFAULT_IN_THREAD_BYTES); } catch { /* validation reports it */ }
  // files on disk are compressed: half the limit keeps the guess on the side of starting the pool
  if (!process.env.SKEWJOIN_FAULTS && !unknown && bytes <= limit / 2) return;
  if (!largest) return;
  const w = workersFlag ?? (Number.isInteger(plan?.execution?.workers) ? plan.execution.workers : os.availableParallelism());
  warmPool(w, largest);
}
