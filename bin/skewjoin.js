#!/usr/bin/env node
// Signals are handled before the engine loads, so that an early Ctrl-C exits 130 too.
// The bundled command line (dist/bundle, built by `npm run build`) when present: it loads in
// about half the time of the ~60 modules of dist/, which remain the fallback. The interrupt
// handler comes from the same build as the engine, so that both share one pool and temp registry.
import fs from 'node:fs';

const bundled = fs.existsSync(new URL('../dist/bundle/cli.js', import.meta.url));
const { exitOnInterrupt } = await import(bundled ? '../dist/bundle/interrupt.js' : '../dist/cli/interrupt.js');
exitOnInterrupt();
const { main } = await import(bundled ? '../dist/bundle/cli.js' : '../dist/cli/main.js');
main(process.argv).then((code) => { process.exitCode = code; });
