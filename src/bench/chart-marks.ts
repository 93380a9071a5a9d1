// The marks the report's charts are drawn with (bench/charts.ts builds the
// charts from the results): line charts and grouped bars as Vega-Lite specs,
// their colours, log ticks and shared config, and the check that a chart's
// series can be told apart (else a sentence stands in for it).
import type { TopLevelSpec } from 'vega-lite';

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
export function unlessAlike(c: Chart, values: Row[], x: string, y: string, series: string): Chart {
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
export const KIND_COLORS: Record<string, string> = { map: '#1f77b4', split: '#ff7f0e', reduce: '#d62728' };
const OTHER = ['#9467bd', '#17becf', '#bcbd22', '#e377c2', '#7f7f7f', '#8c564b'];

/** A colour scale for exactly the series present, in this order, so the legend lists only them. */
export function colorScale(names: string[], palette = COLORS) {
  let k = 0;
  return { domain: names, range: names.map((n) => palette[n] ?? OTHER[k++ % OTHER.length]) };
}

export const CONFIG = {
  font: 'DejaVu Sans, Helvetica, Arial, sans-serif',
  title: { anchor: 'start', fontSize: 13 },
  axis: { labelFontSize: 11, titleFontSize: 11, titlePadding: 8 },
  legend: { labelFontSize: 11, titleFontSize: 11, symbolStrokeWidth: 2, labelLimit: 240 },
  view: { stroke: '#ddd' },
} as const;

export const SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';

export type Row = Record<string, string | number>;

/** Lines with points, one per series, coloured by series with a legend. */
export function lineChart(
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
      // with a margin: vega measures text without a browser, and Chromium's glyphs came out wider
      // (a CI run's 0.8 over 0.9)
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
export function groupedBars(
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
      // a bar on a log scale starts a little below 1 (a ratio of 1 stays visible), not at 0, which a log
      // scale cannot place
      ...(ticks ? { y2: { datum: LOG_BASE } } : {}),
      color: { field: series, type: 'nominal', title: series, scale: colorScale(names) },
      tooltip: [{ field: series }, { field: x.field }, { field: y.field, format: ',.1~f' }],
    },
    config: CONFIG,
  } as TopLevelSpec;
}

export const slug = (s: string) =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
