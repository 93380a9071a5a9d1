#!/usr/bin/env node
// Signals are handled before the engine loads, so that an early Ctrl-C exits 130 too.
// The bundled command line (dist/bundle, built by `npm run build`) when present: it loads in
// about half the time of the ~60 modules of dist/, which remain the fallback. The interrupt
// handler comes from the same build as the engine, so that both share one pool and temp registry.
import fs from 'node:fs';
import v8 from 'node:v8';

// Parquet decoding (parquet-wasm, 5 MB of WebAssembly) stays on V8's baseline compiler: tiering
// its hot functions up to TurboFan costs more CPU than the faster code saves within a run, even a
// long one (paired, 2 cores: the quick start's CPU 1.41 -> 0.99 s; decoding the reference's 5M-row
// fact table 0.52-0.64 -> 0.31-0.36 s CPU, TPC-H lineitem's seven q01 columns 1.87-1.99 -> 1.64-1.67 s).
// Set before the module compiles; flags are per process, so the worker threads share it. The
// library API leaves its host's flags alone.
v8.setFlagsFromString('--liftoff-only');
// TurboFan compiles hot JavaScript on V8's own background threads by default. On a machine whose
// cores the worker threads already fill, those threads take cores from the tasks, and the jobs of
// functions that have stopped being hot by the time they finish are wasted; compiled on the thread
// that asked, it costs less in all (paired whole processes, 7 runs each, medians: the reference
// workload 1.59 -> 1.46 s wall, 2.61 -> 2.33 s CPU; the quick start 1.03 -> 0.83 s CPU; TPC-H q01
// 3.37 -> 3.09 s, q21 6.92 -> 6.13 s).
// Not for `skewjoin bench`, which times warm runs in one process as the library runs them (V8's
// defaults): there the compilations that still happen run after run (30-50 a warm run of the full
// suite's joins) landed inside whichever task asked, 5-15 ms each, and the slowest/median task by
// CPU time measured them (fact ⋈ dim at s = 1.5, `auto`: 2.16 with them, 1.20 without).
if (process.argv[2] !== 'bench') v8.setFlagsFromString('--no-concurrent-recompilation');

const bundled = fs.existsSync(new URL('../dist/bundle/cli.js', import.meta.url));
const { exitOnInterrupt } = await import(bundled ? '../dist/bundle/interrupt.js' : '../dist/cli/interrupt.js');
exitOnInterrupt();
// The worker pool starts now when the run will need it (a guess from the plan's files): its threads
// start up while the command line's modules load on this one.
const { prestartFromArgs } = await import(bundled ? '../dist/bundle/prestart.js' : '../dist/cli/prestart.js');
prestartFromArgs(process.argv.slice(2));
const { main } = await import(bundled ? '../dist/bundle/cli.js' : '../dist/cli/main.js');
main(process.argv).then((code) => {
  process.exitCode = code;
});
