// `skewjoin bench`: workloads on synthetic Zipf data, each run by skewjoin in
// several modes and by DuckDB on the same files in the same process, with
// the answers checked to agree; results.json, results.csv and report.html.
// Ratios within one run are the figures that count: absolute times on
// shared machines are noisy.
// The measuring is in bench/measure.ts, the results' rows and files in bench/results.ts.
import path from 'node:path';
import { progressDisplay } from '../cli/progress.js';
import { BenchProgress, measure } from './measure.js';
import { requireBenchPackages } from './optional.js';
import { writeReport } from './report.js';
import { type BenchResults, writeResultFiles } from './results.js';
import { type BenchOptions, suites, type Workload } from './suites.js';

export { plannedFor } from './measure.js';

export async function runBench(
  o: BenchOptions,
  log: NodeJS.WritableStream,
  progressOut: NodeJS.WriteStream = process.stderr,
): Promise<number> {
  const all = suites(o)[o.suite];
  if (!all) throw new Error(`unknown suite "${o.suite}"; suites are: ${Object.keys(suites(o)).join(', ')}`);
  const named = (w: Workload) =>
    !o.workloads || o.workloads.some((n) => w.name.toLowerCase().includes(n.toLowerCase()));
  const workloads = all.filter((w) => (!o.s || o.s.includes(w.s)) && named(w));
  if (workloads.length === 0) {
    const at = o.s ? ` at s = ${o.s.join(', ')}` : '';
    const like = o.workloads ? ` named like ${o.workloads.join(', ')}` : '';
    const names = [...new Set(all.map((w) => w.name))].join(', ');
    const ss = [...new Set(all.map((w) => w.s))].join(', ');
    throw new Error(`suite "${o.suite}" has no workload${at}${like}; its workloads are ${names} at s = ${ss}`);
  }
  // before minutes of measuring: the packages that compare and draw the results are there
  await requireBenchPackages();
  const progress = new BenchProgress(
    await progressDisplay(progressOut),
    workloads.reduce((s, w) => s + w.modes.length + 1, 0),
  );
  let results: BenchResults;
  try {
    results = await measure(o, workloads, log, progress);
  } finally {
    progress.stop();
  }
  writeResultFiles(o.out, results);
  await writeReport(o.out, results);
  log.write(
    `wrote ${path.join(o.out, 'results.json')}, results.csv, report.html and the charts' Vega-Lite specs (charts/)\n`,
  );
  return results.runs.every((r) => r.sameAnswer !== false) ? 0 : 1;
}
