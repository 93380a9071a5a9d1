// Tasks shared between the calling thread and the pool's threads as they
// become ready: a small side to broadcast is read here while the threads are
// still starting (their modules, WebAssembly), and by them too once they are,
// each task taken by whichever is free first. Neither waits for the other,
// but a thread ready late joins only where its first (cold) task would not
// end after this thread could have run every task left.

/**
 * Run tasks 0..n-1, one at a time on this thread (`run(i, true)`) and on the
 * pool (`run(i, false)`), one more at a time as each of `ready` resolves (a
 * thread of the pool ready); results in task order. `ready` empty: the pool
 * is not coming, this thread runs them all. After a failure no task starts.
 */
export async function stealTasks<T>(n: number, run: (i: number, here: boolean) => Promise<T>, ready: Promise<void>[]): Promise<T[]> {
  const out = new Array<T>(n);
  let next = 0, failed = false;
  // this thread's first task (cold: the best guess at a fresh thread's first) and its latest (warm)
  let firstMs = -1, lastMs = -1;
  const runOne = async (i: number, here: boolean) => {
    const t0 = performance.now();
    try { out[i] = await run(i, here); } catch (e) { failed = true; throw e; }
    if (here) { lastMs = performance.now() - t0; if (firstMs < 0) firstMs = lastMs; }
  };
  const mine = (async () => { while (next < n && !failed) await runOne(next++, true); })();
  // A thread of the pool joins while the tasks left would take this one longer than its own first task
  // took: the rest of its cold start then goes to the tasks after these, which wait for no slowest task.
  const worthJoining = () => lastMs < 0 || (n - next) * lastMs > firstMs;
  const theirs = async () => {
    if (worthJoining()) while (next < n && !failed) await runOne(next++, false);
  };
  // A thread not ready by the time this one has taken the last task is not waited for; one that joined
  // is, to the end of its last task (racing its runner against this one's would return without that
  // task's result: a hole in `out`, which the callers' flatMap skips, and rows silently lost).
  const joins = ready.map((r) => Promise.race([r.then(() => true), mine.then(() => false)]).then((go) => (go ? theirs() : undefined)));
  await Promise.all([mine, ...joins]);
  return out;
}
