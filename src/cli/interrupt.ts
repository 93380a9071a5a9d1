// Ctrl-C (SIGINT) and SIGTERM on the command line: stop the worker threads,
// remove temporary output and spill files, exit 130 (PLAN-SPEC, Errors).
import { closePool } from '../runtime/pool.js';
import { runCleanups } from '../io/cleanup.js';

/** Longest wait for the worker threads to stop before exiting anyway. */
const STOP_MS = 2000;

let stopping = false;

/** Whether an interrupt is being handled: the failures it causes are not reported. */
export function interrupted(): boolean {
  return stopping;
}

/** @public bin/skewjoin.js loads it by a computed path */
export function exitOnInterrupt(err: NodeJS.WritableStream = process.stderr): void {
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    runCleanups();
    err.write(`skewjoin: interrupted (${signal})\n`);
    setTimeout(() => process.exit(130), STOP_MS).unref();
    void closePool()
      .catch(() => {})
      .finally(() => {
        runCleanups(); // anything created while the threads stopped
        process.exit(130);
      });
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}
