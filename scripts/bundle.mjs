// Bundle the command line and the worker entry (dist/bundle/): one file each
// to load instead of ~60 modules, which halves the start-up's module loading.
// The worker is one CommonJS file (worker.cjs, what the pool starts when it is
// there: runtime/pool.ts): a thread that requires it never loads Node's ES
// module loader (13 of its modules, fs/promises, readline, assert), which
// took each worker 18 ms longer to start (two workers started together, 2
// cores: ready at 72 ms instead of 90, 36 ms less CPU).
// Kept external: parquet-wasm (reads its .wasm beside its own module), snappy (a native addon),
// piscina (starts its own worker file), and what loads lazily or only for the
// benchmark and its report (Arrow JS, DuckDB, Vega, cli-progress). Dynamic imports become chunks loaded on demand.
import fs from 'node:fs';
import { build } from 'esbuild';

// chunk names carry a content hash: a rebuild would leave the old chunks beside the new ones
fs.rmSync('dist/bundle', { recursive: true, force: true });

const external = [
  'parquet-wasm',
  'snappy',
  'piscina',
  'apache-arrow',
  '@duckdb/node-api',
  'vega',
  'vega-lite',
  'cli-progress',
];

await build({
  // interrupt and prestart: run by bin/ before the engine loads, sharing its chunks (one pool, one temp registry)
  entryPoints: {
    cli: 'src/cli/main.ts',
    interrupt: 'src/cli/interrupt.ts',
    prestart: 'src/cli/prestart.ts',
  },
  outdir: 'dist/bundle',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external,
  // chunks beside the entries: the pool finds its worker as ./worker.cjs from whichever file it lands in
  chunkNames: '[name]-[hash]',
  logLevel: 'warning',
  // CommonJS dependencies (commander) require Node's built-ins: give the ES modules a require
  banner: {
    js: "import { createRequire as __skewjoinRequire } from 'node:module'; const require = __skewjoinRequire(import.meta.url);",
  },
});

await build({
  entryPoints: { worker: 'src/runtime/worker.ts' },
  outdir: 'dist/bundle',
  outExtension: { '.js': '.cjs' },
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  external,
  logLevel: 'warning',
  // io/wasm.ts finds parquet-wasm from its own module's URL
  define: { 'import.meta.url': '__skewjoinModuleUrl' },
  banner: { js: "const __skewjoinModuleUrl = require('node:url').pathToFileURL(__filename).href;" },
});
