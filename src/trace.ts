// Phase timestamps on stderr when SKEWJOIN_TRACE is set: milliseconds since
// the process started and the thread, so that where a run's time goes (start-up,
// reading a side, building a table, the first task) shows without a profiler.
import { threadId } from 'node:worker_threads';

const on = !!process.env.SKEWJOIN_TRACE;

export function trace(what: string): void {
  if (on) process.stderr.write(`[trace ${(process.uptime() * 1000).toFixed(1).padStart(7)} ms t${threadId}] ${what}\n`);
}
