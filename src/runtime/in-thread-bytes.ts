// The bound below which a run stays on the calling thread (runtime/local.ts), in a module of its own: the
// start-up's guess (cli/prestart.ts) reads it before the Parquet module loads. The default itself is a setting's
// default (plan/defaults.ts).
import { DEFAULT_IN_THREAD_BYTES } from '../plan/defaults.js';

/** The default bound when the pool's threads are started already. */
export const IN_THREAD_BYTES_POOL_STARTED = 32 * 1024 * 1024;

/**
 * The bound a run's input is held to (scheduler/execute.ts). With the threads
 * started already (the command line's guess started them ahead, or a
 * library's pool is warm) their start-up is no longer a cost of using them,
 * so the default is lower (TPC-H SF 1, paired: q13's 42 MB took 1.10-1.34 s
 * on the calling thread against 0.86-1.01 s on the started pool; q11's and
 * q16's 20 MB stayed faster on the calling thread). A bound set in the plan
 * or the options holds as set.
 */
export function inThreadLimit(setting: number, poolStarted: boolean): number {
  return setting === DEFAULT_IN_THREAD_BYTES && poolStarted ? IN_THREAD_BYTES_POOL_STARTED : setting;
}
