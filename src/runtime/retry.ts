// Task retries, as Spark's spark.task.maxFailures: a task whose worker died
// (process.exit, an uncaught native error, out of memory under the thread's
// limits) runs again on a fresh worker, up to MAX_TASK_ATTEMPTS attempts. The
// coordinator still holds every input (shuffle blocks live in shared memory
// and inputs are never transferred), so an attempt reads what the first read.
import { ExecutionError } from '../errors.js';
import type { Batch } from '../kernels/column.js';
import type { CrashDecision } from './faults.js';
import { WorkerLost, attemptOnPool, resetPool } from './pool.js';
import { inputsOf } from '../physical/kernels.js';
import type { TaskResult, TaskSpec } from '../physical/task.js';

const MAX_TASK_ATTEMPTS = 3;

interface FailedAttempt {
  attempt: number;
  error: string;
  start: number;
  ms: number;
}

export interface RetryOptions {
  /** names the task in errors: "join-1 reduce task (partition 3)" */
  label: string;
  /** fault injection: which attempts die */
  crash?: CrashDecision;
  /** told of every attempt whose worker died */
  onFailed?: (f: FailedAttempt) => void;
}

const now = () => performance.timeOrigin + performance.now();

/** Run a task on the pool, retrying a lost worker; the result carries the attempt (from 1) that produced it. */
export async function runWithRetries(
  workers: number,
  task: TaskSpec,
  o: RetryOptions,
): Promise<TaskResult & { attempt: number }> {
  for (let attempt = 1; ; attempt++) {
    const start = now();
    try {
      const r = await attemptOnPool(workers, task, o.crash?.(attempt) ?? false);
      return Object.assign(r, { attempt });
    } catch (e) {
      if (!(e instanceof WorkerLost)) throw e;
      if (e.closed) throw new ExecutionError(`${o.label}: stopped, the worker pool was closed`);
      o.onFailed?.({ attempt, error: e.message, start, ms: now() - start });
      if (attempt >= MAX_TASK_ATTEMPTS) {
        resetPool(); // the next query starts on fresh threads
        throw new ExecutionError(
          `${o.label} failed: its worker died on each of ${MAX_TASK_ATTEMPTS} attempts (last: ${e.message})`,
        );
      }
      if (!inputsIntact(task)) {
        resetPool();
        throw new ExecutionError(
          `${o.label} cannot be retried after its worker died (${e.message}): its input is gone`,
        );
      }
    }
  }
}

/** The batches a task reads. */
function inputBatches(t: TaskSpec): Batch[] {
  return inputsOf(t.source);
}

/**
 * Whether every input array still holds its rows: a buffer moved to another
 * thread (a transfer list) is detached here, and a task reading it again would
 * see nothing.
 */
export function inputsIntact(t: TaskSpec): boolean {
  return inputBatches(t).every(
    (b) =>
      b.length === 0 ||
      b.columns.every(
        (c) =>
          (c.valid === null || c.valid.length >= c.length) &&
          (c.offsets ? c.offsets.length >= c.length + 1 : c.values.length >= c.length),
      ),
  );
}
