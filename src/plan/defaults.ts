// Defaults of execution settings that code below the engine reads (plan loading, the command line's start-up
// guess): a module with no imports, so reading a default loads nothing else.

/**
 * The default `inThreadBytes`: Parquet bytes (uncompressed, as the footers
 * give them) up to which a run stays on the calling thread. Measured on 2
 * cores, whole processes, paired (docs/design/cold-start.md): the quick start (2.1
 * MB) costs 1.6 s CPU in the thread against 2.7 s with the pool, and a 2M-row
 * join (34.5 MB) 1.4-1.7 s against 2.3-2.5 s, without being slower on the
 * clock; the 5M-row reference (114 MB) needs both threads.
 */
export const DEFAULT_IN_THREAD_BYTES = 48 * 1024 * 1024;

/** Coalescing stops at this many tasks per worker, so that the last tasks balance out (map splits aim at it too). */
export const TASKS_PER_WORKER = 4;

/**
 * The default `broadcastBytes`, measured on this machine class (2 cores,
 * whole processes, paired, docs/design/joins.md): 2M fact rows against a
 * 100K-row dimension (1.7 MB) cost 11% less CPU broadcast than shuffled; 5M
 * against a 1M-row dimension (17.6 MB) cost the same either way (the table no
 * longer fits the caches, and it is built on one thread). So sides up to a
 * little above that are broadcast; they cannot be skewed, and nothing is shuffled.
 */
export const DEFAULT_BROADCAST_BYTES = 24 * 1024 * 1024;

/**
 * With the default `broadcastBytes` (not set by the plan or the caller), a side up to this many bytes (after its
 * filters) is built once in shared memory too when the other side is at least as large: the build on one thread
 * costs about what partitioning its own rows would, and the other side is then neither partitioned nor written
 * nor read again (paired whole processes at SF 10, docs/performance.md). Bounded by a sixteenth of the memory
 * budget (plan/load.ts).
 */
export const SHARED_BUILD_BYTES = 256 * 1024 * 1024;
