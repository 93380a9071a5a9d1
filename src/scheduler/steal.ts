// Tasks shared between the calling thread and the pool's threads as they
// become ready: a small side to broadcast is read here while the threads are
// still starting (their modules, WebAssembly), and by them too once they are,
// each task taken by whichever is free first. Neither waits for the other.

/**
 * Run tasks 0..n-1, one at a time on this thread (`run(i, true)`) and on the
 * pool (`run(i, false)`), one more at a time as each of `ready` resolves (a
 * thread of the pool ready); results in task order. `ready` empty: the pool
 * is not coming, this thread runs them all. After a failure no task starts,
 * nor once `stop()` (the results of those started, a prefix of 0..n-1).
 */
export async function stealTasks<T>(
  n: number,
  run: (i: number, here: boolean) => Promise<T>,
  ready: Promise<void>[],
  stop: () => boolean = () => false,
): Promise<T[]> {
  const out = new Array<T>(n);
  let next = 0,
    failed = false;
  const runner = async (here: boolean) => {
    while (next < n && !failed && !stop()) {
      const i = next++;
      try {
        out[i] = await run(i, here);
      } catch (e) {
        failed = true;
        throw e;
      }
    }
  };
  const mine = runner(true);
  // A thread not ready by the time this one has taken the last task is not waited for; one that joined
  // is, to the end of its last task (racing its runner against this one's would return without that
  // task's result: a hole in `out`, which the callers' flatMap skips, and rows silently lost).
  const joins = ready.map((r) =>
    Promise.race([r.then(() => true), mine.then(() => false)]).then((go) => (go ? runner(false) : undefined)),
  );
  await Promise.all([mine, ...joins]);
  return out.slice(0, next);
}

/**
 * Run tasks 0..n-1 in order, `parallel` at a time, none started once `stop()`
 * (checked as each task ends, e.g. a side read up to a byte cap); the results
 * of those started, a prefix of 0..n-1 in order. After a failure no task starts.
 */
export async function tasksUntil<T>(
  n: number,
  run: (i: number) => Promise<T>,
  parallel: number,
  stop: () => boolean,
): Promise<T[]> {
  const out = new Array<T>(n);
  let next = 0,
    failed = false;
  const runner = async () => {
    while (next < n && !failed && !stop()) {
      const i = next++;
      try {
        out[i] = await run(i);
      } catch (e) {
        failed = true;
        throw e;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(parallel, n)) }, runner));
  return out.slice(0, next);
}
