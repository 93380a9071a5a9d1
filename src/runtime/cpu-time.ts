// The calling thread's CPU time, for task statistics: on a shared machine a
// task's wall time also counts the time its thread waited for a core, which
// says nothing about the task's work. Linux only: /proc/thread-self/schedstat
// (ns on a CPU), read on the calling thread since the read is synchronous.
import fs from 'node:fs';

let available = process.platform === 'linux';
const nap = new Int32Array(new SharedArrayBuffer(4));

/**
 * ms this thread has run on a CPU, or undefined where the clock is not
 * available. The kernel adds the running slice to that figure only at a
 * scheduler tick or a switch (up to 4 ms stale): a 50 µs sleep first makes
 * the switch, so the reading is exact to about that much.
 */
export function threadCpuMs(): number | undefined {
  if (!available) return undefined;
  try {
    Atomics.wait(nap, 0, 0, 0.05);
    const text = fs.readFileSync('/proc/thread-self/schedstat', 'latin1');
    const ns = Number(text.slice(0, text.indexOf(' ')));
    if (Number.isFinite(ns)) return ns / 1e6;
  } catch {
    /* no schedstats in this kernel */
  }
  available = false;
  return undefined;
}
