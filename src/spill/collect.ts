// Memory the coordinator lets go of is given back by a major garbage collection of this thread, asked for here.
// Shuffle blocks are shared memory made by the workers: the main thread's V8 does not count them (three 1 GB queries
// held 512 MB of blocks while `process.memoryUsage().arrayBuffers` said 5 MB), so it never collects for their sake,
// and blocks let go of (spilled, or their stage done) stayed in RSS until a collection the small heap made for its
// own reasons: 1.1 GB above the data held at the end of docs/design/memory.md's run. Shared memory cannot be freed
// by hand (spill/block.ts freeBlocks frees plain buffers only); a collection frees it once no thread views it.
import v8 from 'node:v8';
import vm from 'node:vm';

type Gc = (options?: { type: 'major'; execution: 'async' }) => Promise<void> | void;

let gc: Gc | null | undefined;

/** V8's collector, taken once from a context made while --expose-gc is on (as Jest does); null where refused. */
function collector(): Gc | null {
  if (gc !== undefined) return gc;
  const own = (globalThis as { gc?: Gc }).gc;
  if (own) return (gc = own);
  try {
    v8.setFlagsFromString('--expose-gc');
    gc = vm.runInNewContext('gc') as Gc;
  } catch {
    gc = null;
  } finally {
    v8.setFlagsFromString('--no-expose-gc');
  }
  return gc;
}

/** Bytes let go of since the last collection asked for. */
let dropped = 0;
let collecting = false;

/**
 * `bytes` of data the coordinator held are let go of (released from the budget, or spilled as they arrived). Past
 * `every` bytes since the last one, a major collection is started: concurrent (its marking beside the running
 * code, not a pause), one at a time.
 */
export function letGo(bytes: number, every: number): void {
  dropped += bytes;
  if (dropped < every || collecting) return;
  const run = collector();
  if (!run) return;
  dropped = 0;
  collecting = true;
  Promise.resolve(run({ type: 'major', execution: 'async' })).finally(() => {
    collecting = false;
  });
}
