// Creating a missing folder one level at a time. Node's recursive mkdirSync
// loops forever where a level cannot be made and does not say so (under /proc:
// `--output /proc/nope/x.parquet` spun at full CPU); one level at a time, the
// first level that fails throws with its own path and code.
import fs from 'node:fs';
import path from 'node:path';

/** Make `dir` and every missing folder above it; an error names the level that could not be made. */
export function makeFolders(dir: string): void {
  const missing: string[] = [];
  for (let d = path.resolve(dir); !fs.existsSync(d); d = path.dirname(d)) {
    missing.push(d);
    if (path.dirname(d) === d) break;
  }
  for (const d of missing.reverse()) {
    try {
      fs.mkdirSync(d);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
}
