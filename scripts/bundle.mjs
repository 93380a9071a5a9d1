// Bundle the command line and the worker entry (dist/bundle/): one file each
// to load instead of ~60 modules, which halves the start-up's module loading.
// Kept external: parquet-wasm (reads its .wasm beside its own module), snappy (a native addon),
// piscina (starts its own worker file), and what loads lazily or only for the
// benchmark and its report (Arrow JS, DuckDB, Vega, cli-progress). Dynamic imports become chunks loaded on demand.
import fs from 'node:fs';
import { build } from 'esbuild';

// chunk names carry a content hash: a rebuild would leave the old chunks beside the new ones
fs.rmSync('dist/bundle', { recursive: true, force: true });

await build({
  // interrupt and prestart: run by bin/ before the engine loads, sharing its chunks (one pool, one temp registry)
  entryPoints: {
    cli: 'src/cli/main.ts',
    worker: 'src/runtime/worker.ts',
    interrupt: 'src/cli/interrupt.ts',
    prestart: 'src/cli/prestart.ts',
  },
  outdir: 'dist/bundle',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: [
    'parquet-wasm',
    'snappy',
    'piscina',
    'apache-arrow',
    '@duckdb/node-api',
    'vega',
    'vega-lite',
    'cli-progress',
  ],
  // chunks beside the entries: the pool finds its worker as ./worker.js from whichever file it lands in
  chunkNames: '[name]-[hash]',
  logLevel: 'warning',
  // CommonJS dependencies (commander) require Node's built-ins: give the ES modules a require
  banner: {
    js: "import { createRequire as __skewjoinRequire } from 'node:module'; const require = __skewjoinRequire(import.meta.url);",
  },
});
