// Ctrl-C (SIGINT) and SIGTERM on the command line: stop the worker threads,
// remove temporary output and spill files, exit 130 (PLAN-SPEC, Errors).
// A closed standard output (`skewjoin q.sql --output - | head -1`, also the
// table and `--help` piped into head) stops the same way, quietly, exit 0:
// the reader has what it wanted (exit 0 rather than 141, as a shell's
// `set -o pipefail` would otherwise fail the pipeline).
import { closePool } from '../runtime/pool.js';
import { runCleanups } from '../io/cleanup.js';

/** Longest wait for the worker threads to stop before exiting anyway. */
const STOP_MS = 2000;

let stopping = false;

/** Whether an interrupt is being handled: the failures it causes are not reported. */
export function interrupted(): boolean {
  return stopping;
}

/** Stop the query: cleanups now, the worker threads stopped, exit with `code`. */
function stopAndExit(code: number): void {
  stopping = true;
  runCleanups();
  setTimeout(() => process.exit(code), STOP_MS).unref();
  void closePool()
    .catch(() => {})
    .finally(() => {
      runCleanups(); // anything created while the threads stopped
      process.exit(code);
    });
}

/** @public bin/skewjoin.js loads it by a computed path */
export function exitOnInterrupt(err: NodeJS.WritableStream = process.stderr): void {
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    err.write(`skewjoin: interrupted (${signal})\n`);
    stopAndExit(130);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  exitOnClosedPipe();
}

/**
 * Standard output or error closed by its reader (EPIPE): stop at once, exit 0, nothing printed. Another
 * write error on them (a full disk under `> file`) is said on stderr when it still can be, exit 1.
 */
function exitOnClosedPipe(): void {
  for (const s of [process.stdout, process.stderr]) {
    s.on('error', (e: NodeJS.ErrnoException) => {
      if (stopping) return;
      if (e.code !== 'EPIPE') {
        try {
          if (s !== process.stderr) process.stderr.write(`skewjoin: error: cannot write standard output: ${e.code}\n`);
        } catch {
          /* nowhere left to say it */
        }
      }
      stopAndExit(e.code === 'EPIPE' ? 0 : 1);
    });
  }
}
