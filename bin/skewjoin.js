#!/usr/bin/env node
// Signals are handled before the engine loads, so that an early Ctrl-C exits 130 too.
// Then the bundled command line (dist/bundle, built by `npm run build`) when present: it loads in
// about half the time of the ~60 modules of dist/; those remain the fallback.
import fs from 'node:fs';
import { exitOnInterrupt } from '../dist/cli/interrupt.js';
exitOnInterrupt();
const bundled = new URL('../dist/bundle/cli.js', import.meta.url);
const { main } = await import(fs.existsSync(bundled) ? bundled.href : '../dist/cli/main.js');
main(process.argv).then((code) => { process.exitCode = code; });
