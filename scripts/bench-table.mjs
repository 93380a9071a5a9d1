#!/usr/bin/env node
// The Markdown table of a scripts/process-bench.mjs results file, as docs/performance.md shows it: per query our
// time and DuckDB's (medians), the medians of the per-round ratios (wall, CPU), peak RSS, and with --levers each
// lever's off / on ratio (wall, CPU; above 1: the lever saves time) and, for the runtime filters, the run with them
// off against DuckDB; the geometric means last.
//
//   node scripts/bench-table.mjs DATA/results.json [MORE/results.json ...]
//
// Several files (one run split in parts over the queries) make one table, the first file's settings above it.
import fs from 'node:fs';
import { median } from './bench-common.mjs';

const files = process.argv.slice(2);
if (!files.length) {
  console.error('usage: bench-table.mjs results.json');
  process.exit(2);
}
const parts = files.map((f) => JSON.parse(fs.readFileSync(f, 'utf8')));
const r = {
  ...parts[0],
  results: parts
    .flatMap((p) => p.results)
    .sort((a, b) => (a.workload < b.workload ? -1 : a.workload > b.workload ? 1 : 0)),
};
// the levers of any part; a query run without one shows a dash there (its plan the same either way, say)
const levers = [...new Set(parts.flatMap((p) => p.levers ?? []))];
const geomean = (xs) => {
  const ok = xs.filter((x) => x != null && !Number.isNaN(x));
  return Math.exp(ok.reduce((a, x) => a + Math.log(x), 0) / ok.length);
};
// a figure of runs that all failed is null in the JSON
const x2 = (v) => (v == null ? '-' : `${v.toFixed(2)}x`);
const f2 = (v) => (v == null ? '-' : v.toFixed(2));
const k = (ms) => (ms == null ? '-' : (ms / 1000).toFixed(2));
const rows = r.results;
/** the median over rounds of a ratio between two runs of one round */
const per = (row, f) => median(row.runs.map(f));
const cpu = (x) => x.cpu;

console.log(
  `${r.date}, ${r.pairs} pairs, ${r.workers} workers, flags [${(r.flags ?? []).join(' ')}], ` +
    `load at the end ${parts.map((p) => p.load.map((x) => x.toFixed(1)).join(', ')).join('; ')}\n`,
);
const head = ['query', 'ours s', 'DuckDB s', 'wall', 'CPU', 'peak RSS MB ours / DuckDB'];
for (const l of levers) head.push(`${l} off / on: wall, CPU`);
if (levers.includes('rf')) head.push('rf off vs DuckDB: wall, CPU');
head.push('answers');
console.log(`| ${head.join(' | ')} |`);
console.log(`|${head.map((_, i) => (i === 0 || i === head.length - 1 ? '---' : '---:')).join('|')}|`);
const cols = { wall: [], cpu: [], off: Object.fromEntries(levers.map((l) => [l, [[], []]])), rfDuck: [[], []] };
for (const row of rows) {
  const q = row.workload.replace(/^TPC-H (q\d+).*$/, '$1');
  const cells = [
    q,
    k(row.skewjoinMs),
    k(row.duckdbMs),
    x2(row.ratio),
    x2(row.cpuRatio),
    `${row.skewjoinRssMB?.toFixed(0) ?? '-'} / ${row.duckdbRssMB.toFixed(0)}`,
  ];
  cols.wall.push(row.ratio);
  cols.cpu.push(row.cpuRatio);
  let ok = row.sameAnswer;
  for (const l of levers) {
    const v = row.levers?.[l];
    if (!v) {
      cells.push('—');
      continue;
    }
    cells.push(`${f2(v.offOverOn)}, ${f2(v.offOverOnCpu)}`);
    cols.off[l][0].push(v.offOverOn);
    cols.off[l][1].push(v.offOverOnCpu);
    ok &&= v.sameAnswer;
  }
  if (levers.includes('rf') && !row.levers?.rf) cells.push('—');
  else if (levers.includes('rf')) {
    const w = per(row, (x) => x['off-rf'].wall / x.duckdb.wall);
    const c = per(row, (x) => cpu(x['off-rf']) / cpu(x.duckdb));
    cells.push(`${x2(w)}, ${x2(c)}`);
    cols.rfDuck[0].push(w);
    cols.rfDuck[1].push(c);
  }
  cells.push(ok ? 'DuckDB’s' : row.failures ? `**FAILED**: ${row.failures.join('; ')}` : '**DIFFER**');
  console.log(`| ${cells.join(' | ')} |`);
}
const last = ['**geometric mean**', '', '', `**${x2(geomean(cols.wall))}**`, `**${x2(geomean(cols.cpu))}**`, ''];
for (const l of levers) last.push(`${f2(geomean(cols.off[l][0]))}, ${f2(geomean(cols.off[l][1]))}`);
if (levers.includes('rf')) last.push(`${x2(geomean(cols.rfDuck[0]))}, ${x2(geomean(cols.rfDuck[1]))}`);
last.push('');
console.log(`| ${last.join(' | ')} |`);
const worst = [...rows].sort((a, b) => b.ratio - a.ratio).slice(0, 5);
console.log(
  `\nworst (wall): ${worst.map((w) => `${w.workload.replace(/^TPC-H (q\d+).*$/, '$1')} ${x2(w.ratio)}`).join(', ')}`,
);
console.log(
  `peak RSS at most ${Math.max(...rows.map((w) => w.skewjoinRssMB)).toFixed(0)} MB (DuckDB's at most ${Math.max(...rows.map((w) => w.duckdbRssMB)).toFixed(0)})`,
);
