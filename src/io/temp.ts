// Temporary files of this process (output being written, spill files): kept
// in one list so that an interrupted run (SIGINT, SIGTERM) removes them all.
import fs from 'node:fs';

const live = new Set<string>();

/** Note a temporary file about to be created. */
export function trackTemp(file: string): void { live.add(file); }

/** The file was renamed or removed. */
export function untrackTemp(file: string): void { live.delete(file); }

/** Remove every temporary file still there (synchronously: called from a signal handler before exit). */
export function removeTemps(): void {
  for (const f of live) {
    try { fs.rmSync(f, { force: true, recursive: true }); } catch { /* best effort while exiting */ }
  }
  live.clear();
}
