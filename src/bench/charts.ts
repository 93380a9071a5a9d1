// The report's charts as Vega-Lite specs, built from a benchmark's results
// (data inline, so that each spec renders on its own: vl2svg, the Vega
// editor). Only specs here: compiling and drawing them is report.ts's job;
// the marks they are drawn with are in chart-marks.ts.
import type { TopLevelSpec } from 'vega-lite';
import type { BenchResults, RunRow } from './results.js';
import {
  type Chart,
  CONFIG,
  colorScale,
  groupedBars,
  KIND_COLORS,
  lineChart,
  SCHEMA,
  slug,
  unlessAlike,
} from './chart-marks.js';

export { apart } from './chart-marks.js';

/** What each workload's modes are compared with: skew handling off, or (aggregation only) no combiners. */
export function baselineOf(runs: RunRow[], workload: string): 'off' | 'no-combiners' {
  return runs.some((x) => x.workload === workload && x.mode === 'off') ? 'off' : 'no-combiners';
}

/** `num` over `den` per s, for runs of one workload in two modes. */
export function ratios(runs: RunRow[], workload: string, num: string, den: string): { s: number; ratio: number }[] {
  const of = (mode: string) => runs.filter((x) => x.workload === workload && x.mode === mode);
  return of(den)
    .sort((a, b) => a.s - b.s)
    .flatMap((d) => {
      const n = of(num).find((x) => x.s === d.s);
      return n ? [{ s: d.s, ratio: n.wallMs / d.wallMs }] : [];
    });
}

/** A run's simulated worker counts; a results.json of before makespan and ideal (`{ workers, ms }`) has no ideal. */
export function simulationOf(x: RunRow): { workers: number; makespanMs: number; idealMs?: number }[] {
  return (x.simulated ?? []).map((y) => {
    const old = y as unknown as { workers: number; ms?: number };
    return {
      workers: y.workers,
      makespanMs: y.makespanMs ?? old.ms ?? 0,
      ...(Number.isFinite(y.idealMs) ? { idealMs: y.idealMs } : {}),
    };
  });
}

/** The skew-handling modes compared in the balance and simulation charts, in this order. */
const SKEW_MODES = ['off', 'no-combiners', 'partition', 'key', 'auto'];

export function chartSpecs(r: BenchResults): Chart[] {
  const workloads = [...new Set(r.runs.map((x) => x.workload))];
  return [
    ...speedupCharts(r, workloads),
    ...duckdbCharts(r, workloads),
    ...balanceCharts(r, workloads),
    ...simulationCharts(r, workloads),
    ...imbalanceCharts(r),
    ...detailCharts(r),
  ];
}

/** A workload's runs at its largest s, in the order of SKEW_MODES. */
function atTop(r: BenchResults, w: string): RunRow[] {
  const top = Math.max(...r.runs.filter((x) => x.workload === w).map((x) => x.s));
  return SKEW_MODES.flatMap((m) => r.runs.filter((x) => x.workload === w && x.mode === m && x.s === top));
}

/** 1. Speedup against s, per workload and mode. */
function speedupCharts(r: BenchResults, workloads: string[]): Chart[] {
  const charts: Chart[] = [];
  for (const w of workloads) {
    const base = baselineOf(r.runs, w);
    const values = ['partition', 'key', 'auto'].flatMap((mode) =>
      ratios(r.runs, w, base, mode).map((x) => ({ mode, s: x.s, speedup: x.ratio })),
    );
    if (values.length === 0) continue;
    charts.push(
      unlessAlike(
        {
          section: 'speedup',
          name: `speedup-${slug(w)}`,
          spec: lineChart(
            `${w}: speedup over ${base}`,
            values,
            { field: 's', title: 'Zipf s' },
            { field: 'speedup', title: `${base} time / mode time`, rule: 1 },
            'mode',
          ),
        },
        values,
        's',
        'speedup',
        'mode',
      ),
    );
  }
  return charts;
}

/** 2. skewjoin against DuckDB. */
function duckdbCharts(r: BenchResults, workloads: string[]): Chart[] {
  const charts: Chart[] = [];
  const duck = workloads.flatMap((workload) =>
    ratios(r.runs, workload, 'duckdb', 'auto').map((x) => ({ workload, s: x.s, ratio: x.ratio })),
  );
  if (duck.length) {
    charts.push({
      section: 'duckdb',
      name: 'duckdb',
      spec: lineChart(
        'DuckDB time / skewjoin time (above 1: skewjoin faster)',
        duck,
        { field: 's', title: 'Zipf s' },
        { field: 'ratio', title: 'DuckDB time / skewjoin (auto) time', log: true, rule: 1 },
        'workload',
        480,
      ),
    });
  }
  return charts;
}

/** 3. Slowest/median task of the main reduce stage by input rows, bytes and time, at the largest s of each workload. */
function balanceCharts(r: BenchResults, workloads: string[]): Chart[] {
  const charts: Chart[] = [];
  for (const w of workloads) {
    const runs = atTop(r, w);
    const values = runs.flatMap((x) =>
      (
        [
          ['input rows', x.reduceImbalanceRows],
          ['input bytes', x.reduceImbalanceBytes],
          ['time', x.reduceImbalance],
          ['CPU time', x.reduceImbalanceCpu],
        ] as const
      ).flatMap(([measure, v]) => (v === undefined ? [] : [{ mode: x.mode, measure, ratio: v }])),
    );
    if (values.length === 0 || !values.some((v) => v.measure !== 'time' && v.measure !== 'CPU time')) continue;
    // the modes are the x groups here: apart per measure
    charts.push(
      unlessAlike(
        {
          section: 'balance',
          name: `balance-${slug(w)}`,
          spec: groupedBars(
            `${w} at s=${runs[0].s}: slowest / median reduce task`,
            values,
            { field: 'mode', title: 'mode' },
            { field: 'ratio', title: 'slowest / median task', log: true },
            'measure',
          ),
        },
        values,
        'measure',
        'ratio',
        'mode',
      ),
    );
  }
  return charts;
}

/** 4. Simulated makespans against the ideal on W workers, at the largest s of each workload. */
function simulationCharts(r: BenchResults, workloads: string[]): Chart[] {
  const charts: Chart[] = [];
  for (const w of workloads) {
    const runs = atTop(r, w).filter((x) => simulationOf(x).length > 0);
    if (runs.length === 0) continue;
    const sim = runs.flatMap((x) => simulationOf(x).map((y) => ({ mode: x.mode, ...y })));
    const makespans = sim.map((y) => ({ mode: y.mode, workers: y.workers, ms: y.makespanMs }));
    charts.push(
      unlessAlike(
        {
          section: 'simulation',
          name: `simulation-${slug(w)}`,
          spec: groupedBars(
            `${w} at s=${runs[0].s}: simulated makespan`,
            makespans,
            { field: 'workers', title: 'workers' },
            { field: 'ms', title: 'makespan (ms)' },
            'mode',
          ),
        },
        makespans,
        'workers',
        'ms',
        'mode',
      ),
    );
    const ratio = sim.flatMap((y) =>
      y.idealMs ? [{ mode: y.mode, workers: y.workers, ratio: y.makespanMs / y.idealMs }] : [],
    );
    if (ratio.length === 0) continue;
    charts.push(
      unlessAlike(
        {
          section: 'simulation',
          name: `simulation-ideal-${slug(w)}`,
          spec: lineChart(
            `${w} at s=${runs[0].s}: makespan / ideal`,
            ratio,
            { field: 'workers', title: 'workers', log2Ticks: [...new Set(ratio.map((y) => y.workers))] },
            { field: 'ratio', title: 'simulated makespan / ideal', rule: 1 },
            'mode',
          ),
        },
        ratio,
        'workers',
        'ratio',
        'mode',
      ),
    );
  }
  return charts;
}

/** 5. The imbalance curve. */
function imbalanceCharts(r: BenchResults): Chart[] {
  const charts: Chart[] = [];
  if (r.imbalance?.length) {
    const values = r.imbalance.flatMap((x) => [
      { keys: 'whole', partitions: x.partitions, ratio: x.whole },
      { keys: 'split', partitions: x.partitions, ratio: x.split },
    ]);
    charts.push({
      section: 'imbalance',
      name: 'imbalance',
      spec: lineChart(
        `Zipf s=1 over ${r.imbalanceKeys} keys: hottest task / mean partition`,
        values,
        { field: 'partitions', title: 'partitions', log2Ticks: [1, 4, 16, 64, 256, 1024] },
        { field: 'ratio', title: 'hottest / mean', log: true },
        'keys',
        480,
      ),
    });
  }
  return charts;
}

/** 6. One skewed run: partition sizes before and after splitting, and its task timeline. */
function detailCharts(r: BenchResults): Chart[] {
  const charts: Chart[] = [];
  if (r.detail) {
    const d = r.detail;
    const ranked = (xs: number[], series: string) =>
      [...xs].sort((a, b) => b - a).map((rows, i) => ({ series, rank: i + 1, rows }));
    charts.push({
      section: 'detail',
      name: 'detail-sizes',
      spec: groupedBars(
        'rows per partition (before) and per reduce task (after splitting), largest first',
        [...ranked(d.partitionRows, 'before'), ...ranked(d.taskRows, 'after')],
        { field: 'rank', title: 'rank', labelEvery: 8 },
        { field: 'rows', title: 'rows', format: '~s' },
        'series',
        960,
      ),
    });
    const threads = [...new Set(d.tasks.map((t) => t.thread))].sort((a, b) => a - b);
    const kinds = [...new Set(d.tasks.map((t) => t.kind))].sort(
      (a, b) => ['map', 'split', 'reduce'].indexOf(a) - ['map', 'split', 'reduce'].indexOf(b),
    );
    charts.push({
      section: 'detail',
      name: 'detail-timeline',
      spec: {
        $schema: SCHEMA,
        title: 'tasks per worker thread',
        width: 960,
        height: 28 * threads.length,
        data: {
          values: d.tasks.map((t) => ({
            thread: `thread ${t.thread}`,
            start: t.startMs,
            end: t.startMs + t.ms,
            kind: t.kind,
            label: t.label,
            ms: t.ms,
          })),
        },
        mark: { type: 'bar', stroke: '#fff', strokeWidth: 0.3 },
        encoding: {
          x: { field: 'start', type: 'quantitative', title: 'ms since the run began' },
          x2: { field: 'end' },
          y: { field: 'thread', type: 'nominal', title: null, sort: threads.map((t) => `thread ${t}`) },
          color: { field: 'kind', type: 'nominal', title: 'task kind', scale: colorScale(kinds, KIND_COLORS) },
          tooltip: [
            { field: 'label', title: 'task' },
            { field: 'ms', format: '.1f' },
          ],
        },
        config: CONFIG,
      } as TopLevelSpec,
    });
  }
  return charts;
}
