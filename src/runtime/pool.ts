// The worker pool: piscina threads kept alive across stages and queries of
// one process (the first Parquet decode in a fresh thread is slow), closed
// when idle so that a process can exit. One attempt of a task runs here;
// retries are runtime/retry.ts's. piscina loads with the first pool: a run on
// the calling thread (runtime/local.ts) never needs it.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { Piscina } from 'piscina';
import { type ErrorPayload, reviveError } from '../errors.js';
import type { TaskResult, TaskSpec } from '../physical/task.js';
import { trace } from '../trace.js';

/**
 * The worker's entry: the bundle's single CommonJS file where it is beside this module (dist/bundle, the command
 * line: scripts/bundle.mjs says why), else this folder's worker module (the library, dist/runtime).
 */
function workerFile(): string {
  const cjs = new URL('./worker.cjs', import.meta.url);
  return fs.existsSync(cjs) ? cjs.href : new URL('./worker.js', import.meta.url).href;
}

let pool: Piscina | null = null;
let poolSize = 0;
let PiscinaClass: typeof Piscina | null = null;

// piscina (CommonJS) required, not imported: an import() resolves only after the module graph the caller goes on
// to import (the command line's, 1 MB) has loaded, and the threads started 20 ms later
const require = createRequire(import.meta.url);

export async function getPool(workers: number): Promise<Piscina> {
  PiscinaClass ??= (require('piscina') as typeof import('piscina')).Piscina;
  // no await from here on: concurrent callers share one pool
  if (pool && poolSize === workers) return pool;
  if (pool) void destroy(pool);
  pool = new PiscinaClass({
    filename: workerFile(),
    minThreads: workers,
    maxThreads: workers,
    idleTimeout: 10_000,
    // a thread's next task waits in the thread (worker.ts runs them in turn): no round trip between tasks
    concurrentTasksPerWorker: 2,
  });
  // A worker that dies while idle is replaced by piscina; without a listener its 'error' would end the process.
  pool.on('error', () => {});
  poolSize = workers;
  trace(`pool: ${workers} threads started`);
  return pool;
}

// the pool whose threads have finished a task (a warm-up or a real one): they have loaded their modules
let ready: Piscina | null = null;
// the warm-up of the pool started ahead (warmPool): one promise per thread, done when one more has warmed up
let warming: Promise<void>[] = [];

/** Whether the pool is up and its threads have started (finished a task): work sent to it now waits for no start-up. */
export const poolReady = () => pool !== null && ready === pool;
/** Whether worker threads are started (ready or still warming): their start-up is paid already. */
export const poolStarted = () => pool !== null;

/**
 * When each of the pool's threads will be ready: now, as the warm-up under way goes, or never (empty: no pool is
 * starting).
 */
export function whenPoolReady(workers: number): Promise<void>[] {
  if (poolReady()) return Array.from({ length: workers }, () => Promise.resolve());
  return pool !== null ? warming : [];
}

/** Start the pool now and let each thread warm up on a file the run will read (runtime/warm.ts). */
export function warmPool(workers: number, file: string): void {
  const started = getPool(workers);
  const each = Array.from({ length: workers }, () =>
    started
      .then((p) => p.run({ warm: file }))
      .then(
        () => undefined,
        () => undefined,
      ),
  );
  // the k-th warm-up to finish: k threads are ready (piscina gives a warm-up to each thread as it starts)
  warming = each.map(
    (_, k) =>
      new Promise<void>((resolve) => {
        let done = 0;
        for (const w of each)
          void w.then(() => {
            if (++done === k + 1) resolve();
          });
      }),
  );
  void Promise.all(each)
    .then(() => started)
    .then(
      (p) => {
        if (pool === p) ready = p;
      },
      () => undefined,
    );
}

/**
 * Close the worker threads (the CLI calls this before exiting). Threads still
 * warming up (loading their modules) are let finish first, for up to 3 s:
 * Node 20 aborts the whole process (SIGABRT, an assertion in its ES module
 * loader) when a thread is terminated while it loads a module, which a plan
 * error right after the command line's guess started the pool hit about once
 * in 160 runs.
 */
/** Other engines' resources that closePool also releases (a local Spark server: spark/engine.ts). */
const closers = new Set<() => Promise<void>>();
export function onClosePool(f: () => Promise<void>): void {
  closers.add(f);
}

export async function closePool(): Promise<void> {
  const others = [...closers];
  closers.clear();
  await Promise.all(others.map((f) => f().catch(() => undefined)));
  const p = pool;
  pool = null;
  if (!p) return;
  if (ready !== p && warming.length > 0) {
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, WARMING_WAIT_MS);
      timer.unref();
    });
    await Promise.race([Promise.all(warming), limit]);
    clearTimeout(timer);
  }
  await destroy(p);
}

/** How long closePool waits for warm-ups under way. */
const WARMING_WAIT_MS = 3000;

/**
 * A failed query closes the pool while tasks are in flight: their late replies
 * are reported by piscina as 'error' events, which must not crash the process now.
 */
function destroy(p: Piscina): Promise<void> {
  p.on('error', () => undefined);
  return p.destroy();
}

/** Replace the pool: its threads stop, the tasks on them fail, and the next task starts a new pool. */
export function resetPool(): void {
  const p = pool;
  pool = null;
  if (p) void p.destroy().catch(() => {});
}

/**
 * What worker.ts receives: the task, whether it must die instead (fault
 * injection), and a flag the thread sets when it takes the task up.
 */
export interface WorkMessage {
  task: TaskSpec;
  crash?: boolean;
  started: Int32Array;
}

/**
 * What worker.ts answers. `poisoned`: the thread's parquet-wasm module trapped
 * (io/wasm.ts) and the thread must go; `refused`: a poisoned thread was handed
 * a task and did not run it.
 */
export type WorkReply =
  | { ok: true; result: TaskResult; poisoned?: boolean }
  | { ok: false; error: ErrorPayload; poisoned?: boolean; thread: number }
  | { ok: false; refused: true; thread: number };

/** An attempt that did not come back: its worker died, or the pool was closed under it (`closed`). */
export class WorkerLost extends Error {
  constructor(
    message: string,
    readonly closed: boolean,
  ) {
    super(message);
  }
}

function retire(p: Piscina, thread: number) {
  void p.threads.find((w) => w.threadId === thread)?.terminate();
}

/** Run one attempt of a task on the pool; a task error is rethrown typed, a lost worker as WorkerLost. */
export async function attemptOnPool(workers: number, task: TaskSpec, crash = false): Promise<TaskResult> {
  // A thread holds its next task while it runs one (concurrentTasksPerWorker):
  // when it dies, the task still waiting there never started, and goes again
  // without counting as an attempt (a few times at most: a pool whose threads
  // die before they start anything is lost all the same).
  let unstarted = 0;
  for (;;) {
    const p = await getPool(workers);
    const started = new Int32Array(new SharedArrayBuffer(4));
    let r: WorkReply;
    try {
      // Inputs are not transferred: the coordinator keeps them for a retry (shuffle blocks are shared memory anyway).
      r = (await p.run({ task, crash, started } satisfies WorkMessage)) as WorkReply;
    } catch (e) {
      const closed = pool !== p;
      if (!closed && Atomics.load(started, 0) === 0 && ++unstarted <= 4 * workers) continue;
      throw new WorkerLost(String((e as Error)?.message ?? e), closed);
    }
    ready = p;
    if ('refused' in r) {
      retire(p, r.thread);
      continue;
    }
    if (r.poisoned) retire(p, r.ok ? r.result.thread! : r.thread);
    if (!r.ok) throw reviveError(r.error);
    return r.result;
  }
}
