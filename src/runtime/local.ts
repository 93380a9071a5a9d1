// Where a run's tasks execute: inputs below `inThreadBytes` on the calling
// thread (no worker start-up, no cold threads: for a small query that is most
// of its time), the rest on the worker pool. SKEWJOIN_FAULTS (fault injection,
// exercised through the pool's workers) always takes the pool. A WebAssembly
// panic on the calling thread leaves its Parquet module unusable: from then
// on this process runs every task on the pool.
import { isWasmTrap } from '../io/wasm.js';
import type { TaskResult, TaskSpec } from '../physical/task.js';
import { runTask } from './task.js';

/**
 * Parquet bytes (uncompressed) of one scan task on the calling thread: a
 * file's row groups are read together up to this (plan/map-splits.ts
 * mergeScans). Measured on the quick start (7 row groups of one 2 MB file):
 * see docs/design/cold-start.md.
 */
export const IN_THREAD_TASK_BYTES = 16 * 1024 * 1024;

let poisoned = false;

/** Whether a run reading `inputBytes` executes on the calling thread. */
export function runsInThread(inputBytes: number, limit: number): boolean {
  return !poisoned && !process.env.SKEWJOIN_FAULTS && inputBytes <= limit;
}

/** A trap in WebAssembly (a Rust panic is `unreachable`), also when a reader wrapped it into an InputError. */
export function isWasmPanic(e: unknown): boolean {
  return isWasmTrap(e) || /\b(unreachable|RuntimeError)\b/.test(String((e as Error)?.message ?? e));
}

// One task at a time: a scan's columns are views into the module's memory until
// the task releases them, and another task's decode could grow (detach) that memory.
let queue: Promise<unknown> = Promise.resolve();

/** Run a task on this thread, after those before it; after a WebAssembly panic, later runs take the pool. */
export function runInThread(task: TaskSpec, run: (t: TaskSpec) => Promise<TaskResult> = runTask): Promise<TaskResult> {
  const r = queue.then(async () => {
    // a turn of the event loop between tasks: a task that decodes without WebAssembly's async calls never leaves
    // the thread, and a Ctrl-C (cli/interrupt.ts) or a closed pipe must be heard before the run's end
    await new Promise<void>((resolve) => setImmediate(resolve));
    try {
      return await run(task);
    } catch (e) {
      if (isWasmPanic(e)) poisoned = true;
      throw e;
    }
  });
  queue = r.catch(() => undefined);
  return r;
}
