// Worker thread entry: runs one task and moves its result buffers back
// without copying. A thread whose parquet-wasm module trapped says so and
// runs nothing more (the pool replaces it); fault injection kills it here.
import { threadId } from 'node:worker_threads';
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { errorPayload } from '../errors.js';
import { wasmPoisoned } from '../io/wasm.js';
import type { WorkMessage, WorkReply } from './pool.js';
import { resultBuffers } from '../physical/task.js';
import { runTask } from './task.js';
import { type WarmTask, isWarmTask, warm } from './warm.js';
import { trace } from '../trace.js';

trace('worker: modules loaded');

// The pool hands each thread its next task while this one runs (pool.ts,
// concurrentTasksPerWorker 2), so that a thread goes from one task to the
// next without a round trip to the coordinator; they run one after the other,
// each timed alone.
let running: Promise<unknown> = Promise.resolve();

export default function work(msg: WorkMessage | WarmTask): Promise<unknown> {
  const run = running.then(() => workOne(msg));
  running = run.then(
    () => undefined,
    () => undefined,
  );
  return run;
}

async function workOne(msg: WorkMessage | WarmTask): Promise<unknown> {
  if (isWarmTask(msg)) return warm(msg.warm);
  const { task, crash, started } = msg;
  if (wasmPoisoned()) return { ok: false, refused: true, thread: threadId } satisfies WorkReply;
  // from here on the task is this thread's: if the thread dies, the attempt counts (pool.ts)
  Atomics.store(started, 0, 1);
  if (crash) process.exit(1);
  try {
    const result = await runTask(task);
    const buffers = resultBuffers(result);
    const reply: WorkReply = { ok: true, result, poisoned: wasmPoisoned() };
    return move({
      get [transferableSymbol]() {
        return buffers;
      },
      get [valueSymbol]() {
        return reply;
      },
    } as any);
  } catch (e) {
    return { ok: false, error: errorPayload(e), poisoned: wasmPoisoned(), thread: threadId } satisfies WorkReply;
  }
}
