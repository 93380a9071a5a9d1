// The report's charts as Vega-Lite specs, built from a benchmark's results
// (data inline, so that each spec renders on its own: vl2svg, the Vega
// editor). Only specs here: compiling and drawing them is report.ts's job.
import type { TopLevelSpec } from 'vega-lite';
import type { BenchResults, RunRow } from './bench.js';

export interface Chart {
  /** the report section it belongs to */
  section: 'speedup' | 'duckdb' | 'balance' | 'simulation' | 'imbalance' | 'detail';
  /** file name stem of the spec: charts/<name>.vl.json */
  name: string;
  spec: TopLevelSpec;
  /** set when the chart is not drawn: the sentence the report shows instead (see apart) */
  omitted?: string;
}

/** Series whose values at every x are within this factor of each other are drawn on top of each other. */
const APART = 1.05;

/**
 * Whether a chart can tell its series apart: at some x the largest value is more than APART
 * times the smallest. A quick run on small data put every mode's makespan / ideal at 1.00,
 * four lines on one, which reads as one mode.
 */
export function apart(values: Row[], x: string, y: string, series: string): boolean {
  const byX = new Map<string, Map<string, number>>();
  for (const v of values) {
    const m = byX.get(String(v[x])) ?? new Map<string, number>();
    m.set(String(v[series]), Number(v[y]));
    byX.set(String(v[x]), m);
  }
  // one series has nothing to be told apart from
  if (new Set(values.map((v) => String(v[series]))).size < 2) return true;
  return [...byX.values()].some((m) => {
    const ys = [...m.values()].filter((n) => Number.isFinite(n) && n > 0);
    return ys.length > 1 && Math.max(...ys) > APART * Math.min(...ys);
  });
}

/** The sentence shown instead of a chart whose modes could not be told apart. */
function sameForEveryMode(title: string, values: Row[], x: string, y: string, series: string): string {
  const ys = values.map((v) => Number(v[y])).filter(Number.isFinite);
  const range = `${Math.min(...ys).toFixed(2)} to ${Math.max(...ys).toFixed(2)}`;
  const names = [...new Set(values.map((v) => String(v[series])))].join(', ');
  const every = x === 'workers' ? 'worker count' : x === 's' ? 'Zipf s' : x;
  return (
    `${title}: not drawn: ${names} are within ${Math.round((APART - 1) * 100)}% of each other at every ${every} ` +
    `(${y} from ${range}), so their lines or bars would lie on top of each other; the table below has the figures.`
  );
}

/** The chart, or its sentence when its series cannot be told apart. */
function unlessAlike(c: Chart, values: Row[], x: string, y: string, series: string): Chart {
  if (apart(values, x, y, series)) return c;
  const title = typeof c.spec.title === 'string' ? c.spec.title : c.name;
  return { ...c, omitted: sameForEveryMode(title, values, x, y, series) };
}

/** One colour per series, the same in every chart. */
const COLORS: Record<string, string> = {
  off: '#9e9e9e',
  partition: '#1f77b4',
  key: '#d62728',
  auto: '#2ca02c',
  'no-combiners': '#8c564b',
  duckdb: '#ff7f0e',
  whole: '#9e9e9e',
  split: '#d62728',
  before: '#9e9e9e',
  after: '#d62728',
  'input rows': '#17becf',
  'input bytes': '#9467bd',
  time: '#bcbd22',
  'CPU time': '#e377c2',
};
/** Task kinds of the timeline. */
const KIND_COLORS: Record<string, string> = { map: '#1f77b4', split: '#ff7f0e', reduce: '#d62728' };
const OTHER = ['#9467bd', '#17becf', '#bcbd22', '#e377c2', '#7f7f7f', '#8c564b'];

/** A colour scale for exactly the series present, in this order, so the legend lists only them. */
function colorScale(names: string[], palette = COLORS) {
  let k = 0;
  return { domain: names, range: names.map((n) => palette[n] ?? OTHER[k++ % OTHER.length]) };
}

const CONFIG = {
  font: 'DejaVu Sans, Helvetica, Arial, sans-serif',
  title: { anchor: 'start', fontSize: 13 },
  axis: { labelFontSize: 11, titleFontSize: 11, titlePadding: 8 },
  legend: { labelFontSize: 11, titleFontSize: 11, symbolStrokeWidth: 2, labelLimit: 240 },
  view: { stroke: '#ddd' },
} as const;

const SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';

type Row = Record<string, string | number>;

/** Lines with points, one per series, coloured by series with a legend. */
function lineChart(
  title: string,
  values: Row[],
  x: { field: string; title: string; log2Ticks?: number[] },
  y: { field: string; title: string; log?: boolean; rule?: number },
  series: string,
  width = 360,
): TopLevelSpec {
  const names = [...new Set(values.map((v) => String(v[series])))];
  const line = {
    mark: { type: 'line', point: { filled: true, size: 40 }, strokeWidth: 2 },
    encoding: {
      x: {
        field: x.field,
        type: 'quantitative',
        title: x.title,
        ...(x.log2Ticks
          ? { scale: { type: 'log', base: 2 }, axis: { values: x.log2Ticks } }
          : { scale: { zero: false } }),
      },
      // a log axis over a narrow range puts its labels close (0.8 over 0.9): the ones that would overlap are hidden,
      // with a margin: vega measures text without a browser, and Chromium's glyphs came out wider (a CI run's 0.8 over 0.9)
      y: {
        field: y.field,
        type: 'quantitative',
        title: y.title,
        ...(y.log
          ? { scale: { type: 'log' }, axis: { labelOverlap: 'greedy', labelSeparation: 6 } }
          : { scale: { zero: true } }),
      },
      color: { field: series, type: 'nominal', title: series, scale: colorScale(names) },
      tooltip: [{ field: series }, { field: x.field }, { field: y.field, format: '.3~f' }],
    },
  };
  const layers: object[] = [line];
  if (y.rule !== undefined)
    layers.unshift({
      data: { values: [{}] },
      mark: { type: 'rule', strokeDash: [4, 4], color: '#888' },
      encoding: { y: { datum: y.rule } },
    });
  return {
    $schema: SCHEMA,
    title,
    width,
    height: 220,
    data: { values },
    layer: layers,
    config: CONFIG,
  } as TopLevelSpec;
}

/**
 * Tick values for a log axis from 1 to `max`: 1, 2, 5, 10, ... while the decades
 * leave room for three labels each, else powers of ten (vega's own log ticks
 * can set labels over each other).
 */
function logTicks(max: number): number[] {
  const decades = Math.max(1, Math.ceil(Math.log10(Math.max(max, 1.0001))));
  const steps = decades <= 3 ? [1, 2, 5] : [1];
  const out: number[] = [];
  for (let d = 0; d <= decades; d++) for (const m of steps) if (m * 10 ** d <= 10 ** decades) out.push(m * 10 ** d);
  return out;
}

/** Where the bars of a log-scaled ratio start. */
const LOG_BASE = 0.8;

/** Bars grouped by `x`, one bar per series within a group. */
function groupedBars(
  title: string,
  values: Row[],
  x: { field: string; title: string; labelEvery?: number },
  y: { field: string; title: string; format?: string; log?: boolean },
  series: string,
  width = 360,
): TopLevelSpec {
  const names = [...new Set(values.map((v) => String(v[series])))];
  const ticks = y.log ? logTicks(Math.max(...values.map((v) => Number(v[y.field])))) : null;
  return {
    $schema: SCHEMA,
    title,
    width,
    height: 220,
    data: { values },
    mark: { type: 'bar' },
    encoding: {
      x: {
        field: x.field,
        type: 'ordinal',
        title: x.title,
        sort: null,
        axis: {
          labelAngle: 0,
          ...(x.labelEvery ? { labelExpr: `(datum.value - 1) % ${x.labelEvery} === 0 ? datum.label : ''` } : {}),
        },
      },
      xOffset: { field: series, type: 'nominal', sort: names },
      y: {
        field: y.field,
        type: 'quantitative',
        title: y.title,
        axis: y.format ? { format: y.format } : {},
        ...(ticks ? { scale: { type: 'log', domain: [LOG_BASE, ticks.at(-1)] }, axis: { values: ticks } } : {}),
      },
      // a bar on a log scale starts a little below 1 (a ratio of 1 stays visible), not at 0, which a log scale cannot place
      ...(ticks ? { y2: { datum: LOG_BASE } } : {}),
      color: { field: series, type: 'nominal', title: series, scale: colorScale(names) },
      tooltip: [{ field: series }, { field: x.field }, { field: y.field, format: ',.1~f' }],
    },
    config: CONFIG,
  } as TopLevelSpec;
}

const slug = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

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
  const charts: Chart[] = [];
  const workloads = [...new Set(r.runs.map((x) => x.workload))];
  // 1. speedup against s, per workload and mode
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
  // 2. skewjoin against DuckDB
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
  // 3. slowest/median task of the main reduce stage by input rows, bytes and time, at the largest s of each workload
  const atTop = (w: string) => {
    const top = Math.max(...r.runs.filter((x) => x.workload === w).map((x) => x.s));
    return SKEW_MODES.flatMap((m) => r.runs.filter((x) => x.workload === w && x.mode === m && x.s === top));
  };
  for (const w of workloads) {
    const runs = atTop(w);
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
  // 4. simulated makespans against the ideal on W workers, at the largest s of each workload
  for (const w of workloads) {
    const runs = atTop(w).filter((x) => simulationOf(x).length > 0);
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
  // 5. the imbalance curve
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
  // 6. one skewed run: partition sizes before and after splitting, and its task timeline
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
