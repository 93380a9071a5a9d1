// Files a query must not leave behind (spill folders, temporary result files)
// are registered here while they exist, and removed however the process ends:
// on 'exit' (also after process.exit) and on SIGINT/SIGTERM. `runCleanups` is
// the hook for a signal handler that exits the process itself.
const pending = new Set<() => void>();
const SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/** Run every registered cleanup now (synchronous: safe in 'exit' and signal handlers). */
export function runCleanups(): void {
  for (const f of [...pending]) {
    pending.delete(f);
    try {
      f();
    } catch {
      /* best effort: the process is ending */
    }
  }
  unwatch();
}

function onSignal(sig: NodeJS.Signals) {
  runCleanups();
  // Nobody else handles the signal: let it end the process as it would have without us.
  if (process.listenerCount(sig) === 0) process.kill(process.pid, sig);
}
const handlers = new Map(SIGNALS.map((s) => [s, () => onSignal(s)]));

function watch() {
  process.on('exit', runCleanups);
  for (const [s, h] of handlers) process.on(s, h);
}
function unwatch() {
  process.off('exit', runCleanups);
  for (const [s, h] of handlers) process.off(s, h);
}

/** Register a synchronous cleanup; returns the function that runs it and unregisters it. */
export function registerCleanup(f: () => void): () => void {
  if (pending.size === 0) watch();
  pending.add(f);
  return () => {
    if (!pending.delete(f)) return;
    if (pending.size === 0) unwatch();
    f();
  };
}
