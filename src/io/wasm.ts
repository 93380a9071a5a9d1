// The parquet-wasm module of this thread, and what a trap inside it means. A
// Rust panic (corrupt data) and a failed allocation (memory exhausted) both
// surface as WebAssembly.RuntimeError('unreachable'), synchronously or, from
// the async reader, as an unhandled rejection; either way the module's state
// is unusable afterwards: the calling thread loads a fresh instance, a worker
// thread reports itself poisoned and the pool replaces it (runtime/worker.ts).
import { createRequire } from 'node:module';
import { isMainThread } from 'node:worker_threads';
import type * as PW from 'parquet-wasm';
import { ExecutionError, InputError, SkewjoinError } from '../errors.js';
import { trace } from '../trace.js';

const require = createRequire(import.meta.url);

/** wasm32 addresses 4 GiB at most: the decoder's memory limit, per thread. */
const WASM_MEMORY_LIMIT = 4 * 1024 ** 3;

// Loaded on first use (20 ms of a thread's start-up): a thread whose files the direct reader takes whole
// (io/parquet-direct.ts), such as the coordinator reading footers (io/parquet-footer.ts), never loads it.
let mod: typeof PW | null = null;
// Taken once: asking the module for it after a trap would run code in a broken instance.
let memory: WebAssembly.Memory | null = null;
let generation = 0;
let poisoned = false;

function load(): typeof PW {
  const m: typeof PW = require('parquet-wasm');
  memory = m.wasmMemory() as WebAssembly.Memory;
  mod = m;
  trace('parquet-wasm: loaded');
  return m;
}

/** Whether this thread has loaded the module (io/parquet-direct.ts decodes more itself until then). */
export const wasmLoaded = () => mod !== null;

/** The module instance to call now (a new one after a trap in the calling thread). */
export function parquetWasm(): typeof PW {
  return mod ?? load();
}

/** Changes whenever the instance is replaced: objects of an older one must be dropped, not freed. */
export function wasmGeneration(): number {
  return generation;
}

/** A worker thread whose module trapped: it must not run another task. */
export function wasmPoisoned(): boolean {
  return poisoned;
}

export function isWasmTrap(e: unknown): e is WebAssembly.RuntimeError {
  return e instanceof WebAssembly.RuntimeError;
}

function reload() {
  delete require.cache[require.resolve('parquet-wasm')];
  load();
  generation++;
}

/**
 * After a trap: was memory exhausted (the module could not get 16 MiB more, or
 * it already held three quarters of its limit)? Then retire the instance.
 */
function afterTrap(): { outOfMemory: boolean; held: number } {
  // a trap comes from a call into the module: it is loaded
  const m = memory!;
  const held = m.buffer.byteLength;
  let outOfMemory = held >= 0.75 * WASM_MEMORY_LIMIT;
  if (!outOfMemory) {
    try {
      m.grow(256);
    } catch {
      outOfMemory = true;
    } // harmless: this instance is retired below
  }
  if (isMainThread) reload();
  else poisoned = true;
  return { outOfMemory, held };
}

const mib = (n: number) => `${Math.round(n / 1024 ** 2)} MiB`;
const limitText = (held: number) =>
  `parquet-wasm's WebAssembly memory is limited to ${mib(WASM_MEMORY_LIMIT)} per thread (it held ${mib(held)})`;

/**
 * The typed error for a failure while decoding `file` (`where`: "row group 3",
 * "the footer", ...): a trap is corrupt data (InputError, exit 3) unless memory
 * was exhausted (ExecutionError naming the limit, exit 1); any other failure
 * of the decoder is an InputError too.
 */
export function decodeFailure(e: unknown, file: string, where: string, columns: readonly string[] = []): SkewjoinError {
  if (e instanceof SkewjoinError) return e;
  const column = columns.length === 1 ? columns[0] : undefined;
  const cols = columns.length === 0 ? '' : column ? `, column "${column}"` : `, columns ${columns.join(', ')}`;
  if (isWasmTrap(e)) {
    const { outOfMemory, held } = afterTrap();
    if (outOfMemory) {
      return new ExecutionError(
        `${file}: out of memory decoding ${where}${cols}: ${limitText(held)}; read fewer columns or write the ` +
          `file with smaller row groups`,
      );
    }
    return new InputError(
      `${file}: corrupt Parquet data in ${where}${cols} (the decoder failed: ${e.message})`,
      file,
      column,
    );
  }
  const msg = String((e as Error)?.message ?? e).replace(/^Error: /, '');
  return new InputError(`${file}: error reading Parquet data in ${where}${cols} (${msg})`, file, column);
}

/**
 * The error for a failure while writing Parquet: a trap is memory exhaustion (naming the limit) or a writer failure.
 */
export function encodeFailure(e: unknown): Error {
  if (!isWasmTrap(e)) return e instanceof Error ? e : new Error(String(e));
  const { outOfMemory, held } = afterTrap();
  return new ExecutionError(
    outOfMemory
      ? `out of memory writing Parquet: ${limitText(held)}; write fewer rows per file`
      : `the Parquet writer failed (${e.message})`,
  );
}

// Async calls into the module run one at a time per thread, so that a trap
// reported outside the call (parquet-wasm's futures run from queueMicrotask,
// where a trap is an uncaught exception) belongs to the one call waiting.
let tail: Promise<unknown> = Promise.resolve();
let waiting: ((e: unknown) => void) | null = null;
const EVENTS = ['uncaughtException', 'unhandledRejection'] as const;

const listeners = EVENTS.map((ev) => (e: unknown) => {
  if (waiting && isWasmTrap(e)) {
    waiting(e);
    return;
  }
  // Not ours: unless someone else listens, fail as Node would without listeners.
  if (process.listenerCount(ev) === 1) {
    stopListening();
    throw e;
  }
});
function stopListening() {
  EVENTS.forEach((ev, i) => process.off(ev, listeners[i]));
}

/** Run an async call into the module; a trap inside it, however reported, rejects the returned promise. */
export function guarded<T>(call: () => Promise<T>): Promise<T> {
  const run = () =>
    new Promise<T>((resolve, reject) => {
      const done = () => {
        waiting = null;
        stopListening();
      };
      waiting = (e) => {
        done();
        reject(e);
      };
      EVENTS.forEach((ev, i) => process.on(ev, listeners[i]));
      Promise.resolve()
        .then(call)
        .then(
          (v) => {
            done();
            resolve(v);
          },
          (e) => {
            done();
            reject(e);
          },
        );
    });
  const r = tail.then(run, run);
  tail = r.catch(() => {});
  return r;
}
