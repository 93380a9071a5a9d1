// report.html: one self-contained page (inline SVG, no scripts, no network)
// from a benchmark's results. Each chart is a Vega-Lite spec (charts.ts),
// compiled by vega-lite and drawn to SVG by vega in Node; the specs are
// written beside the report (charts/<name>.vl.json) for restyling.
// vega and vega-lite load only here, when a report is drawn (bench/optional.ts: not a library dependency).
import fs from 'node:fs';
import path from 'node:path';
import { geometricMean } from 'simple-statistics';
import { InputError } from '../errors.js';
import type { BenchResults } from './results.js';
import type { Chart } from './chart-marks.js';
import { baselineOf, chartSpecs, ratios, simulationOf } from './charts.js';
import { chartingStack } from './optional.js';

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const fmt = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(2));

/** Each chart as an inline <svg class="chart">: vega's SVG with the page's class and an accessible name. */
export async function drawCharts(charts: Chart[]): Promise<string[]> {
  const [vega, vl] = await chartingStack();
  const out: string[] = [];
  for (const c of charts) {
    if (c.omitted) {
      out.push(`<p class="omitted">${esc(c.omitted)}</p>`);
      continue;
    }
    // renderer 'none': no canvas; vega measures text by its estimate (0.8 em per character), which
    // overestimates digits and lower case, so axis titles and legends get room rather than collide
    const view = new vega.View(vega.parse(vl.compile(c.spec).spec), { renderer: 'none' });
    const svg = await view.toSVG();
    view.finalize();
    const title = typeof c.spec.title === 'string' ? c.spec.title : c.name;
    out.push(
      svg.replace(/^<svg ([^>]*?)class="marks" /, `<svg class="chart" role="img" aria-label="${esc(title)}" $1`),
    );
  }
  return out;
}

/** Geometric means over s of each mode's speedup, and of DuckDB time over skewjoin (auto) time. */
function summary(r: BenchResults): string {
  const workloads = [...new Set(r.runs.map((x) => x.workload))];
  const modes = ['partition', 'key', 'auto'];
  const gm = (xs: number[]) => (xs.length ? fmt(geometricMean(xs)) : '');
  const rows = workloads
    .map((w) => {
      const base = baselineOf(r.runs, w);
      const cells = modes.map((m) => gm(ratios(r.runs, w, base, m).map((x) => x.ratio)));
      return `<tr><td>${esc(w)}</td><td>${base}</td>${cells.map((c) => `<td>${c}</td>`).join('')}<td>${gm(ratios(r.runs, w, 'duckdb', 'auto').map((x) => x.ratio))}</td></tr>`;
    })
    .join('');
  return `<h2 id="summary">Geometric means over s</h2><table><tr><th>workload</th><th>baseline</th>${modes.map((m) => `<th>${m} speedup</th>`).join('')}<th>DuckDB time / auto time</th></tr>${rows}</table>`;
}

const SECTIONS: [Chart['section'], string][] = [
  ['speedup', 'Speedup over the baseline (skew handling off; for aggregation, no combiners)'],
  ['duckdb', 'skewjoin (auto) against DuckDB'],
  ['balance', 'Slowest over median task of the main reduce stage, by input rows, input bytes and time'],
  [
    'simulation',
    'Beyond one machine: each run planned for W workers, its tasks run here and scheduled on W (largest first); the ideal is per stage max(work / W, largest task)',
  ],
  ['imbalance', 'Hottest partition over the mean'],
  ['detail', ''],
];

export async function renderReport(r: BenchResults, charts = chartSpecs(r)): Promise<string> {
  const svgs = await drawCharts(charts);
  const sections = SECTIONS.flatMap(([id, heading]) => {
    const mine = svgs.filter((_, i) => charts[i].section === id);
    if (mine.length === 0 && (id === 'balance' || id === 'imbalance' || id === 'detail')) return [];
    return [`<h2 id="${id}">${esc(id === 'detail' ? (r.detail?.title ?? '') : heading)}</h2>${mine.join('\n')}`];
  });
  const opt = (x: number | undefined) => (x === undefined ? '' : fmt(x));
  const W = [...new Set(r.runs.flatMap((x) => simulationOf(x).map((y) => y.workers)))].sort((a, b) => a - b);
  const simCells = (x: BenchResults['runs'][number]) =>
    W.map((w) => {
      const y = simulationOf(x).find((z) => z.workers === w);
      return `<td>${y ? `${fmt(y.makespanMs)}${y.idealMs ? ` / ${fmt(y.idealMs)}` : ''}` : ''}</td>`;
    }).join('');
  const rows = r.runs
    .map(
      (x) =>
        `<tr><td>${esc(x.workload)}</td><td>${x.s}</td><td>${x.mode}</td><td>${fmt(x.wallMs)}</td><td>${opt(x.reduceImbalanceRows)}</td><td>${opt(x.reduceImbalanceBytes)}</td><td>${opt(x.reduceImbalance)}</td><td>${opt(x.reduceImbalanceCpu)}</td><td>${x.tasks ?? ''}</td><td>${x.shuffledRows ?? ''}</td><td>${x.shuffledBytes === undefined ? '' : fmt(x.shuffledBytes / 1048576)}</td><td>${opt(x.peakRssMb)}</td><td>${x.sameAnswer ?? ''}</td>${simCells(x)}</tr>`,
    )
    .join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>skewjoin bench: ${esc(r.suite)}</title>
<style>body{font:14px system-ui,sans-serif;margin:24px;color:#222}svg.chart{margin:8px 12px 8px 0;vertical-align:top}
p.omitted{max-width:60em;color:#555;font-style:italic}
table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ddd;padding:2px 6px;text-align:right}</style></head><body>
<h1>skewjoin bench — suite ${esc(r.suite)}</h1>
<p>${r.workers} worker thread(s) (skewjoin's runs take the worker pool whatever their size),
median of ${r.repeat} run(s), ${esc(r.date)}.
Ratios compare modes within this run; absolute times are machine-dependent.
Slowest/median task by time and by CPU time is the median of that ratio over the runs (a ratio of sub-millisecond tasks is mostly noise; CPU time, Linux only, leaves out the time a task's thread waited for a core on a shared machine); by input rows and bytes, of the last run.
Each chart's Vega-Lite spec is in <code>charts/</code> beside this page.</p>
${summary(r)}
${sections.join('\n')}
<h2 id="runs">All runs</h2><table><tr><th>workload</th><th>s</th><th>mode</th><th>wall ms</th><th>slowest/median task by rows</th><th>by bytes</th><th>by time</th><th>by CPU time</th><th>tasks</th><th>rows shuffled</th><th>MB shuffled</th><th>peak RSS MB</th><th>same answer as DuckDB</th>${W.map((w) => `<th>${w} workers: makespan / ideal ms</th>`).join('')}</tr>${rows}</table>
</body></html>
`;
}

/** report.html and charts/<name>.vl.json into `dir`. */
export async function writeReport(dir: string, r: BenchResults): Promise<void> {
  const charts = chartSpecs(r);
  const html = await renderReport(r, charts);
  const specDir = path.join(dir, 'charts');
  fs.mkdirSync(specDir, { recursive: true });
  // specs of an earlier drawing that this one leaves out go (--report-only draws into the same folder)
  for (const f of fs.readdirSync(specDir)) if (f.endsWith('.vl.json')) fs.rmSync(path.join(specDir, f));
  // a chart left out of the page (Chart.omitted) has no spec beside it either
  for (const c of charts) {
    if (!c.omitted) fs.writeFileSync(path.join(specDir, `${c.name}.vl.json`), JSON.stringify(c.spec, null, 2) + '\n');
  }
  fs.writeFileSync(path.join(dir, 'report.html'), html);
}

/** `skewjoin bench --report-only DIR`: the report drawn again from DIR/results.json, nothing run. */
export async function reportFromResults(dir: string): Promise<string> {
  const file = path.join(dir, 'results.json');
  let r: BenchResults;
  try {
    r = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new InputError(`cannot read ${file}: ${(e as Error).message}`, file);
  }
  if (!Array.isArray(r?.runs))
    throw new InputError(`${file} has no "runs" list: not a results.json of skewjoin bench`, file);
  await writeReport(dir, r);
  return path.join(dir, 'report.html');
}
