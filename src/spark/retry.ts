// Retrying Spark Connect calls that fail with a transient gRPC code, as the official clients
// do (pyspark's client/retries.py, spark-connect-go's retry.go): exponential backoff from
// 50 ms times 4 up to 60 s per wait, plus up to 500 ms of jitter on waits of 2 s or more;
// bounded by a count (15) and a total time (10 min), both configurable.
import * as grpc from '@grpc/grpc-js';
import { PlanError } from '../errors.js';

export interface RetryPolicy {
  /** retries after the first attempt, at most */
  retries: number;
  /** time spent waiting between attempts, at most, over one call */
  totalMs: number;
  initialMs: number;
  multiplier: number;
  maxBackoffMs: number;
  jitterMs: number;
  /** jitter is added to waits of this length or longer */
  jitterFromMs: number;
}

const DEFAULT: RetryPolicy = {
  retries: 15,
  totalMs: 600_000,
  initialMs: 50,
  multiplier: 4,
  maxBackoffMs: 60_000,
  jitterMs: 500,
  jitterFromMs: 2000,
};

function envInt(name: string): number | undefined {
  const v = process.env[name];
  if (v === undefined || v === '') return undefined;
  if (!/^\d+$/.test(v)) throw new PlanError(name, `expected a whole number, got "${v}"`);
  return Number(v);
}

/** The policy: the defaults, SKEWJOIN_SPARK_RETRIES and SKEWJOIN_SPARK_RETRY_MS from the environment, then `o`. */
export function retryPolicy(o: Partial<Pick<RetryPolicy, 'retries' | 'totalMs'>> = {}): RetryPolicy {
  return {
    ...DEFAULT,
    retries: o.retries ?? envInt('SKEWJOIN_SPARK_RETRIES') ?? DEFAULT.retries,
    totalMs: o.totalMs ?? envInt('SKEWJOIN_SPARK_RETRY_MS') ?? DEFAULT.totalMs,
  };
}

/** Whether a failed call may be tried again: the server unreachable or the connection lost, or a preempted cursor. */
export function transient(e: unknown): boolean {
  const g = e as Partial<grpc.ServiceError> | undefined;
  if (g?.code === grpc.status.UNAVAILABLE) return true;
  return (
    g?.code === grpc.status.INTERNAL &&
    /INVALID_CURSOR\.DISCONNECTED|RST_STREAM|Connection dropped/i.test(g.details ?? '')
  );
}

/** The attempts of one call: `wait` sleeps before the next one, or throws `exhausted` when the policy is spent. */
export class Retrying {
  private attempt = 0;
  private waited = 0;
  private next: number;
  constructor(
    private readonly policy: RetryPolicy,
    private readonly exhausted: (e: unknown, attempts: number, waitedMs: number) => Error,
  ) {
    this.next = policy.initialMs;
  }

  async wait(e: unknown): Promise<void> {
    const p = this.policy;
    let ms = this.next;
    if (ms >= p.jitterFromMs) ms += Math.random() * p.jitterMs;
    ms = Math.min(ms, p.totalMs - this.waited);
    if (this.attempt >= p.retries || ms <= 0) throw this.exhausted(e, this.attempt, this.waited);
    this.attempt++;
    this.next = Math.min(p.maxBackoffMs, this.next * p.multiplier);
    this.waited += ms;
    if (process.env.SKEWJOIN_DEBUG)
      process.stderr.write(`spark: retry ${this.attempt} in ${ms.toFixed(0)} ms after ${(e as Error)?.message}\n`);
    await new Promise((r) => setTimeout(r, ms));
  }

  /** Progress was made (a response came): the next failure starts the backoff anew. */
  reset(): void {
    this.attempt = 0;
    this.waited = 0;
    this.next = this.policy.initialMs;
  }
}
