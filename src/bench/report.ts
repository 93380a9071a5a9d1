// report.html: one self-contained page of inline SVG charts (no scripts, no
// network) from a benchmark's results.
import type { BenchResults } from './bench.js';

const COLORS: Record<string, string> = {
  off: '#9e9e9e', partition: '#1f77b4', key: '#d62728', auto: '#2ca02c', duckdb: '#ff7f0e',
  whole: '#9e9e9e', split: '#d62728', before: '#9e9e9e', after: '#d62728',
};
const color = (name: string, i: number) => COLORS[name] ?? ['#8c564b', '#9467bd', '#17becf', '#bcbd22'][i % 4];
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const fmt = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(2));

interface Series { name: string; points: [number, number][] }

interface Axes { title: string; xLabel: string; yLabel: string; logX?: boolean; logY?: boolean; width?: number; height?: number }

function scale(lo: number, hi: number, log: boolean, a: number, b: number) {
  const f = log ? Math.log10 : (x: number) => x;
  const l = f(lo), h = f(hi) === f(lo) ? f(lo) + 1 : f(hi);
  return (x: number) => a + ((f(x) - l) / (h - l)) * (b - a);
}

function ticks(lo: number, hi: number, log: boolean): number[] {
  if (log) {
    const out: number[] = [];
    for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) out.push(10 ** e);
    return out.filter((t) => t >= lo / 1.0001 && t <= hi * 1.0001);
  }
  const step = (hi - lo) / 4 || 1;
  return Array.from({ length: 5 }, (_, i) => lo + i * step);
}

function frame(ax: Axes & { noXTicks?: boolean }, xs: number[], ys: number[], body: (sx: (x: number) => number, sy: (y: number) => number) => string): string {
  const W = ax.width ?? 520, H = ax.height ?? 300, L = 60, R = 130, T = 30, B = 45;
  const xlo = Math.min(...xs), xhi = Math.max(...xs);
  const ylo = ax.logY ? Math.min(...ys.filter((y) => y > 0)) : Math.min(0, ...ys), yhi = Math.max(...ys) * 1.05 || 1;
  const sx = scale(xlo, xhi, !!ax.logX, L, W - R), sy = scale(ylo, yhi, !!ax.logY, H - B, T);
  const gx = ax.noXTicks ? '' : ticks(xlo, xhi, !!ax.logX).map((t) => `<line x1="${sx(t)}" x2="${sx(t)}" y1="${T}" y2="${H - B}" class="grid"/><text x="${sx(t)}" y="${H - B + 16}" text-anchor="middle">${fmt(t)}</text>`).join('');
  const gy = ticks(ylo, yhi, !!ax.logY).map((t) => `<line x1="${L}" x2="${W - R}" y1="${sy(t)}" y2="${sy(t)}" class="grid"/><text x="${L - 6}" y="${sy(t) + 4}" text-anchor="end">${fmt(t)}</text>`).join('');
  return `<svg class="chart" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="${esc(ax.title)}">
<title>${esc(ax.title)}</title><text x="${L}" y="18" class="title">${esc(ax.title)}</text>${gx}${gy}
<line x1="${L}" x2="${W - R}" y1="${H - B}" y2="${H - B}" class="axis"/><line x1="${L}" x2="${L}" y1="${T}" y2="${H - B}" class="axis"/>
<text x="${(L + W - R) / 2}" y="${H - 8}" text-anchor="middle">${esc(ax.xLabel)}</text>
<text transform="translate(14 ${(T + H - B) / 2}) rotate(-90)" text-anchor="middle">${esc(ax.yLabel)}</text>
${body(sx, sy)}</svg>`;
}

export function lineChart(ax: Axes, series: Series[]): string {
  const pts = series.flatMap((s) => s.points);
  if (pts.length === 0) return '';
  const W = ax.width ?? 520;
  return frame(ax, pts.map((p) => p[0]), pts.map((p) => p[1]), (sx, sy) => series.map((s, i) => {
    const c = color(s.name, i);
    const d = s.points.map((p, k) => `${k ? 'L' : 'M'}${sx(p[0]).toFixed(1)},${sy(p[1]).toFixed(1)}`).join('');
    const dots = s.points.map((p) => `<circle cx="${sx(p[0]).toFixed(1)}" cy="${sy(p[1]).toFixed(1)}" r="3" fill="${c}"><title>${esc(s.name)}: ${fmt(p[1])}</title></circle>`).join('');
    return `<path d="${d}" stroke="${c}" fill="none" stroke-width="2" class="series"/>${dots}<text x="${W - 122}" y="${40 + i * 16}" fill="${c}">■ ${esc(s.name)}</text>`;
  }).join(''));
}

/** Grouped bars: one group per label, one bar per series. */
export function barChart(ax: Axes, labels: string[], series: { name: string; values: number[] }[]): string {
  const vals = series.flatMap((s) => s.values);
  if (vals.length === 0) return '';
  const W = ax.width ?? 520;
  const n = labels.length, m = series.length;
  return frame({ ...ax, logX: false, noXTicks: true }, [0, n], [0, ...vals], (sx, sy) => {
    const bw = (sx(1) - sx(0)) / (m + 1);
    const bars = series.map((s, j) => s.values.map((v, i) => {
      const x = sx(i) + bw * (j + 0.5);
      return `<rect x="${x.toFixed(1)}" y="${sy(v).toFixed(1)}" width="${(bw * 0.9).toFixed(1)}" height="${Math.max(0, sy(0) - sy(v)).toFixed(1)}" fill="${color(s.name, j)}"><title>${esc(s.name)} ${esc(labels[i])}: ${fmt(v)}</title></rect>`;
    }).join('')).join('');
    const names = labels.map((l, i) => `<text x="${(sx(i) + sx(i + 1)) / 2}" y="${sy(0) + 30}" text-anchor="middle" class="small">${esc(l)}</text>`).join('');
    const legend = series.map((s, j) => `<text x="${W - 122}" y="${40 + j * 16}" fill="${color(s.name, j)}">■ ${esc(s.name)}</text>`).join('');
    return bars + names + legend;
  });
}

/** Tasks per thread over time: one row per worker thread. */
export function timeline(title: string, tasks: { thread: number; startMs: number; ms: number; kind: string; label: string }[]): string {
  if (tasks.length === 0) return '';
  const threads = [...new Set(tasks.map((t) => t.thread))].sort((a, b) => a - b);
  const W = 1040, rowH = 26, L = 90, T = 30, H = T + threads.length * rowH + 40;
  const end = Math.max(...tasks.map((t) => t.startMs + t.ms));
  const sx = (x: number) => L + (x / end) * (W - L - 20);
  const kinds: Record<string, string> = { map: '#1f77b4', split: '#ff7f0e', reduce: '#d62728' };
  const rects = tasks.map((t) => {
    const y = T + threads.indexOf(t.thread) * rowH;
    return `<rect x="${sx(t.startMs).toFixed(1)}" y="${y + 3}" width="${Math.max(0.8, sx(t.startMs + t.ms) - sx(t.startMs)).toFixed(1)}" height="${rowH - 6}" fill="${kinds[t.kind] ?? '#999'}" stroke="#fff" stroke-width="0.3"><title>${esc(t.label)}: ${fmt(t.ms)} ms</title></rect>`;
  }).join('');
  const rows = threads.map((th, i) => `<text x="${L - 6}" y="${T + i * rowH + rowH / 2 + 4}" text-anchor="end">thread ${th}</text>`).join('');
  const legend = Object.entries(kinds).map(([k, c], i) => `<text x="${L + i * 90}" y="${H - 10}" fill="${c}">■ ${k}</text>`).join('');
  return `<svg class="chart" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" xmlns="http://www.w3.org/2000/svg" role="img" aria-label="${esc(title)}">
<title>${esc(title)}</title><text x="${L}" y="18" class="title">${esc(title)}</text>${rows}${rects}${legend}
<text x="${W - 20}" y="${H - 10}" text-anchor="end">${fmt(end)} ms</text></svg>`;
}

export function renderReport(r: BenchResults): string {
  const sections: string[] = [];
  const workloads = [...new Set(r.runs.map((x) => x.workload))];
  const modes = ['partition', 'key', 'auto', 'broadcast'];
  const byS = (w: string, mode: string) => r.runs.filter((x) => x.workload === w && x.mode === mode).sort((a, b) => a.s - b.s);
  // what each workload's modes are compared with: skew handling off, or (aggregation only) no combiners
  const baseline = (w: string) => (byS(w, 'off').length ? 'off' : 'no-combiners');
  // 1. speedup against s, per workload and mode
  const speed = workloads.map((w) => lineChart(
    { title: `${w}: speedup over ${baseline(w)}`, xLabel: 'Zipf s', yLabel: `${baseline(w)} time / mode time` },
    modes.map((m) => ({
      name: m,
      points: byS(w, m).flatMap((x) => {
        const off = byS(w, baseline(w)).find((o) => o.s === x.s);
        return off ? [[x.s, off.wallMs / x.wallMs] as [number, number]] : [];
      }),
    })).filter((s) => s.points.length > 0),
  ));
  sections.push(`<h2 id="speedup">Speedup over the baseline (skew handling off; for aggregation, no combiners)</h2>${speed.join('')}`);
  // 2. skewjoin against DuckDB
  sections.push(`<h2 id="duckdb">skewjoin (auto) against DuckDB</h2>${lineChart(
    { title: 'DuckDB time / skewjoin time (above 1: skewjoin faster)', xLabel: 'Zipf s', yLabel: 'ratio', width: 640 },
    workloads.map((w) => ({
      name: w,
      points: byS(w, 'auto').flatMap((x) => {
        const d = byS(w, 'duckdb').find((o) => o.s === x.s);
        return d ? [[x.s, d.wallMs / x.wallMs] as [number, number]] : [];
      }),
    })).filter((s) => s.points.length > 0),
  )}`);
  // 3. simulated makespans
  const sim = workloads.map((w) => {
    const runs = ['off', 'partition', 'key'].map((m) => byS(w, m).at(-1)).filter((x) => x !== undefined);
    if (runs.length === 0) return '';
    return barChart({ title: `${w} at s=${runs[0]!.s}: simulated makespan`, xLabel: 'workers', yLabel: 'ms' },
      (runs[0]!.simulated ?? []).map((x) => `W=${x.workers}`),
      runs.map((x) => ({ name: x!.mode, values: (x!.simulated ?? []).map((y) => y.ms) })));
  });
  sections.push(`<h2 id="simulation">Beyond one machine (simulated, largest task first)</h2>${sim.join('')}`);
  // 4. the imbalance curve
  if (r.imbalance?.length) {
    sections.push(`<h2 id="imbalance">Hottest partition over the mean</h2>${lineChart(
      { title: `Zipf s=1 over ${r.imbalanceKeys} keys: hottest task / mean partition`, xLabel: 'partitions', yLabel: 'hottest / mean', logX: true, logY: true, width: 640 },
      [{ name: 'whole', points: r.imbalance.map((x) => [x.partitions, x.whole] as [number, number]) },
        { name: 'split', points: r.imbalance.map((x) => [x.partitions, x.split] as [number, number]) }],
    )}`);
  }
  // 5. one skewed run: partition sizes before and after splitting, and its task timeline
  if (r.detail) {
    const d = r.detail;
    const before = [...d.partitionRows].sort((a, b) => b - a);
    const after = [...d.taskRows].sort((a, b) => b - a);
    const n = Math.max(before.length, after.length);
    sections.push(`<h2 id="detail">${esc(d.title)}</h2>${barChart(
      { title: 'rows per partition (before) and per reduce task (after splitting), largest first', xLabel: 'rank', yLabel: 'rows', width: 1040 },
      Array.from({ length: n }, (_, i) => (i % 8 === 0 ? String(i + 1) : '')),
      [{ name: 'before', values: Array.from({ length: n }, (_, i) => before[i] ?? 0) }, { name: 'after', values: Array.from({ length: n }, (_, i) => after[i] ?? 0) }],
    )}${timeline('tasks per worker thread', d.tasks)}`);
  }
  const rows = r.runs.map((x) => `<tr><td>${esc(x.workload)}</td><td>${x.s}</td><td>${x.mode}</td><td>${fmt(x.wallMs)}</td><td>${x.reduceImbalance === undefined ? '' : fmt(x.reduceImbalance)}</td><td>${x.tasks ?? ''}</td><td>${x.shuffledRows ?? ''}</td><td>${x.shuffledBytes === undefined ? '' : fmt(x.shuffledBytes / 1048576)}</td><td>${x.peakRssMb === undefined ? '' : fmt(x.peakRssMb)}</td><td>${x.sameAnswer ?? ''}</td></tr>`).join('');
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>skewjoin bench: ${esc(r.suite)}</title>
<style>body{font:14px system-ui,sans-serif;margin:24px;color:#222}svg.chart{margin:8px 12px 8px 0;background:#fff;border:1px solid #eee}
.grid{stroke:#eee}.axis{stroke:#888}text{font-size:12px;fill:#333}.title{font-size:13px;font-weight:600}.small{font-size:10px}
table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ddd;padding:2px 6px;text-align:right}</style></head><body>
<h1>skewjoin bench — suite ${esc(r.suite)}</h1>
<p>${r.workers} worker(s), median of ${r.repeat} run(s), ${esc(r.date)}. Ratios compare modes within this run; absolute times are machine-dependent.</p>
${sections.join('\n')}
<h2 id="runs">All runs</h2><table><tr><th>workload</th><th>s</th><th>mode</th><th>wall ms</th><th>slowest/median task</th><th>tasks</th><th>rows shuffled</th><th>MB shuffled</th><th>peak RSS MB</th><th>same answer as DuckDB</th></tr>${rows}</table>
</body></html>
`;
}
