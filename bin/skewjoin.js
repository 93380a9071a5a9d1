#!/usr/bin/env node
// Signals are handled before the engine loads, so that an early Ctrl-C exits 130 too.
import { exitOnInterrupt } from '../dist/cli/interrupt.js';
exitOnInterrupt();
const { main } = await import('../dist/cli/main.js');
main(process.argv).then((code) => { process.exitCode = code; });
