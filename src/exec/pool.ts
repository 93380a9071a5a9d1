// The worker pool: piscina threads kept alive across stages and queries of
// one process (the first Parquet decode in a fresh thread is slow), closed
// when idle so that a process can exit.
import { Piscina } from 'piscina';
import { type ErrorPayload, reviveError } from '../errors.js';
import { buffersOf } from '../kernels/column.js';
import type { TaskResult, TaskSpec } from './task.js';

let pool: Piscina | null = null;
let poolSize = 0;

export function getPool(workers: number): Piscina {
  if (pool && poolSize === workers) return pool;
  if (pool) void destroy(pool);
  pool = new Piscina({
    filename: new URL('./worker.js', import.meta.url).href,
    minThreads: workers,
    maxThreads: workers,
    idleTimeout: 10_000,
    concurrentTasksPerWorker: 1,
  });
  poolSize = workers;
  return pool;
}

/** Close the worker threads (the CLI calls this before exiting). */
export async function closePool(): Promise<void> {
  const p = pool;
  pool = null;
  if (p) await destroy(p);
}

/**
 * A failed query closes the pool while tasks are in flight: their late replies
 * are reported by piscina as 'error' events, which must not crash the process now.
 */
function destroy(p: Piscina): Promise<void> {
  p.on('error', () => undefined);
  return p.destroy();
}

/** The batches a task consumes, to transfer rather than copy. */
function inputBuffers(t: TaskSpec): ArrayBuffer[] {
  const s = t.source;
  if (s.kind === 'batches') return [...buffersOf(s.batches)];
  if (s.kind === 'join') return [...buffersOf([...s.left, ...s.right])];
  if (s.kind === 'aggregate' || s.kind === 'sort') return [...buffersOf(s.input)];
  if (s.kind === 'split') return [...buffersOf(s.blocks)];
  return [];
}

export async function runOnPool(workers: number, task: TaskSpec, transfer = true): Promise<TaskResult> {
  const p = getPool(workers);
  const r = (await p.run(task, transfer ? { transferList: inputBuffers(task) } : {})) as
    { ok: true; result: TaskResult } | { ok: false; error: ErrorPayload };
  if (!r.ok) throw reviveError(r.error);
  return r.result;
}
