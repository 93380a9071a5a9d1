// `skewjoin bench --suite quick` on tiny data, end to end: every workload and
// mode agrees with DuckDB, and report.html renders in headless Chromium with
// its charts (Vega-Lite drawn: legends in the series' colours, no text over
// text); `--report-only` draws a report again from a results.json.
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ROOT, cli, tmpDir } from './helpers.js';
import { makespan, hottestOverMean, hottestWithKeysSplit } from '../dist/bench/simulate.js';
import { apart, chartSpecs } from '../dist/bench/charts.js';

/** Run in the page: every pair of visible texts within a chart whose boxes intersect, into <pre id="overlaps">. */
const OVERLAPS = `(() => {
  const out = [];
  const visible = (t) => t.textContent.trim() !== '' && t.getAttribute('opacity') !== '0';
  for (const svg of document.querySelectorAll('svg.chart')) {
    const boxes = [...svg.querySelectorAll('text')].filter(visible).map((t) => ({ text: t.textContent, r: t.getBoundingClientRect() }));
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i].r, b = boxes[j].r;
      const w = Math.min(a.right, b.right) - Math.max(a.left, b.left), h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (w > 0.5 && h > 0.5) out.push(svg.getAttribute('aria-label') + ': ' + boxes[i].text + ' / ' + boxes[j].text);
    }
  }
  const pre = document.createElement('pre');
  pre.id = 'overlaps';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();`;

/** The page in headless Chromium with the OVERLAPS script run in it: the DOM as rendered, and the texts found over each other. */
function renderInChromium(html: string): { dom: string; overlaps: string[] } {
  // a copy of the page with a script that measures, in the browser, every text of every chart against the others
  const checked = html.replace(/\.html$/, '-checked.html');
  fs.writeFileSync(checked, fs.readFileSync(html, 'utf8').replace('</body>', `<script>${OVERLAPS}</script></body>`));
  const r = spawnSync(
    'chromium',
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--user-data-dir=${tmpDir('sj-chrome-')}`,
      '--dump-dom',
      `file://${checked}`,
    ],
    { encoding: 'utf8', timeout: 60_000 },
  );
  expect(r.status, r.error?.message ?? r.stderr).toBe(0);
  return { dom: r.stdout, overlaps: JSON.parse(r.stdout.match(/<pre id="overlaps">([\s\S]*?)<\/pre>/)![1]) };
}

// Required in CI (.ci/run installs Chromium); elsewhere skipped, saying why, when it is not installed.
const chromium = spawnSync('chromium', ['--version'], { encoding: 'utf8' }).status === 0;
function needChromium(ctx: { skip: (note: string) => void }, what: string) {
  if (!chromium && !['true', '1'].includes(process.env.CI ?? '')) {
    console.warn(`${what} skipped: chromium not found: apt-get install chromium`);
    ctx.skip('chromium not found: apt-get install chromium');
  }
}

const unescapeHtml = (s: string) =>
  s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&');

/** A chart's legend entries (vega's legend symbols and labels), in order. */
function legendEntries(svg: string): { label: string; color: string }[] {
  return [
    ...svg.matchAll(
      /role-legend-symbol[^>]*>\s*<path [^>]*?fill="(#[0-9a-fA-F]{3,6})"[\s\S]*?role-legend-label[^>]*>\s*<text[^>]*>([^<]*)<\/text>/g,
    ),
  ].map((m) => ({ color: m[1].toLowerCase(), label: unescapeHtml(m[2]) }));
}

/**
 * The fill and stroke colours of the marks of one series: vega names a mark's fields in its
 * aria-label ("Zipf s: 1.2; mode: key; ..."), the series under the legend's title.
 */
function seriesColors(svg: string, label: string): string[] {
  const title = unescapeHtml(svg.match(/role-legend-title[^>]*>\s*<text[^>]*>([^<]*)<\/text>/)![1]);
  const colors: string[] = [];
  for (const m of svg.matchAll(/<path aria-label="([^"]*)"[^>]*>/g)) {
    if (!unescapeHtml(m[1]).split('; ').includes(`${title}: ${label}`)) continue;
    for (const c of m[0].matchAll(/ (?:fill|stroke)="(#[0-9a-fA-F]{3,6})"/g)) colors.push(c[1].toLowerCase());
  }
  return colors;
}

describe('simulation', () => {
  it('schedules the largest task first', () => {
    expect(makespan([5, 4, 3, 3, 3], 2)).toBe(10); // LPT: 5+3 | 4+3+3 (the optimum, 9, is not its aim)
    expect(makespan([4, 3, 3, 2], 2)).toBe(6);
    expect(makespan([10, 1, 1], 256)).toBe(10);
    expect(makespan([], 4)).toBe(0);
  });
  it('splitting a hot key brings the hottest task down to the mean', () => {
    expect(hottestOverMean([10, 10, 100, 0])).toBeCloseTo(100 / 30);
    expect(hottestWithKeysSplit([10, 10, 100, 0], [{ partition: 2, rows: 90 }])).toBeCloseTo(30 / 30);
  });
});

describe('charts that cannot tell their modes apart', () => {
  const run = (mode: string, s: number, wallMs: number, makespanMs: number, idealMs: number) => ({
    workload: 'w',
    s,
    mode,
    wallMs,
    runsMs: [wallMs],
    reduceImbalanceRows: 1,
    reduceImbalanceBytes: 1,
    simulated: [16, 64].map((workers) => ({ workers, makespanMs, idealMs })),
  });
  const results = (runs: object[]) =>
    ({ suite: 'quick', workers: 2, repeat: 1, simulateWorkers: [16, 64], date: '', runs }) as any;

  it('are replaced by a sentence saying why; those that can are drawn', () => {
    // every mode's makespan equals its ideal (the quick run at 300K rows); their speedups differ
    const charts = chartSpecs(
      results([
        run('off', 1, 100, 50, 50),
        run('partition', 1, 50, 30, 30),
        run('key', 1, 80, 40, 40),
        run('auto', 1, 60, 20, 20),
      ]),
    );
    const ideal = charts.find((c) => c.name === 'simulation-ideal-w')!;
    expect(ideal.omitted).toBe(
      'w at s=1: makespan / ideal: not drawn: off, partition, key, auto are within 5% of each other at every worker count ' +
        '(ratio from 1.00 to 1.00), so their lines or bars would lie on top of each other; the table below has the figures.',
    );
    expect(charts.find((c) => c.name === 'speedup-w')!.omitted).toBeUndefined();
    expect(charts.find((c) => c.name === 'simulation-w')!.omitted).toBeUndefined();
    // the balance chart's modes (its x groups) all at 1: alike
    expect(charts.find((c) => c.name === 'balance-w')!.omitted).toMatch(
      /^w at s=1: slowest \/ median reduce task: not drawn: off, partition, key, auto are within 5%/,
    );
  });

  it('tell series apart when one value differs by more than 5%, and draw a single series', () => {
    const v = (mode: string, x: number, y: number) => ({ mode, x, y });
    expect(apart([v('a', 1, 1), v('b', 1, 1.04), v('a', 2, 2), v('b', 2, 2.08)], 'x', 'y', 'mode')).toBe(false);
    expect(apart([v('a', 1, 1), v('b', 1, 1.04), v('a', 2, 2), v('b', 2, 2.2)], 'x', 'y', 'mode')).toBe(true);
    expect(apart([v('a', 1, 1), v('a', 2, 1)], 'x', 'y', 'mode')).toBe(true);
  });
});

describe('skewjoin bench --report-only', () => {
  it('draws report.html and the chart specs again from a results.json, running nothing', () => {
    const dir = tmpDir('sj-report-');
    fs.copyFileSync(path.join(ROOT, 'docs', 'bench', 'results.json'), path.join(dir, 'results.json'));
    const r = cli(['bench', '--report-only', dir]);
    expect(r.code, r.stderr).toBe(0);
    const html = fs.readFileSync(path.join(dir, 'report.html'), 'utf8');
    for (const id of ['summary', 'speedup', 'duckdb', 'balance', 'simulation', 'runs'])
      expect(html).toContain(`id="${id}"`);
    // the hottest-partition curve and the detail view are drawn when the results have them (runs at s = 1 and 1.2)
    const results = JSON.parse(fs.readFileSync(path.join(dir, 'results.json'), 'utf8'));
    expect(html.includes('id="imbalance"')).toBe(Boolean(results.imbalance?.length));
    expect(html.includes('id="detail"')).toBe(Boolean(results.detail));
    const charts = html.match(/<svg class="chart"[\s\S]*?<\/svg>/g) ?? [];
    const omitted = html.match(/<p class="omitted">/g) ?? [];
    expect(charts.length).toBe(fs.readdirSync(path.join(dir, 'charts')).length);
    expect(charts.length + omitted.length).toBeGreaterThanOrEqual(12);
    for (const c of charts) expect(legendEntries(c).length).toBeGreaterThan(0);
    expect(html).not.toMatch(/<script|<link|src="http/); // self-contained, no script
    expect(fs.readdirSync(dir).sort()).toEqual(['charts', 'report.html', 'results.json']);
  }, 60_000);

  it('a log axis over a narrow range keeps its labels apart in Chromium (DuckDB time over ours 0.11-0.85, from a CI run that put 0.8 over 0.9)', (ctx) => {
    needChromium(ctx, 'the narrow log axis browser test');
    const dir = tmpDir('sj-report-');
    fs.copyFileSync(path.join(ROOT, 'test', 'fixtures', 'bench-narrow-ratios.json'), path.join(dir, 'results.json'));
    const r = cli(['bench', '--report-only', dir]);
    expect(r.code, r.stderr).toBe(0);
    const { dom, overlaps } = renderInChromium(path.join(dir, 'report.html'));
    expect(dom).toContain('id="duckdb"');
    expect(overlaps).toEqual([]);
  }, 120_000);

  it('names the file when there is no results.json', () => {
    const dir = tmpDir('sj-report-');
    const r = cli(['bench', '--report-only', dir]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(path.join(dir, 'results.json'));
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });
});

describe('skewjoin bench --workloads', () => {
  it('runs only the workloads named (a part of the name, any case), and lists them when none matches', () => {
    const dir = tmpDir('sj-bench-w-');
    const r = cli([
      'bench',
      '--suite',
      'quick',
      '--rows',
      '20000',
      '--keys',
      '2000',
      '--repeat',
      '1',
      '--simulate-workers',
      'none',
      '--s',
      '0',
      '--workloads',
      'AGGREGATE',
      '--out',
      dir,
    ]);
    expect(r.code, r.stderr).toBe(0);
    const res = JSON.parse(fs.readFileSync(path.join(dir, 'results.json'), 'utf8'));
    expect(new Set(res.runs.map((x: any) => `${x.workload} ${x.s}`))).toEqual(new Set(['aggregate by key 0']));
    expect(res.runs.every((x: any) => x.mode === 'duckdb' || x.sameAnswer)).toBe(true);
    const none = cli(['bench', '--suite', 'quick', '--workloads', 'nothing like it', '--out', dir]);
    expect(none.code).not.toBe(0);
    expect(none.stderr).toMatch(
      /no workload named like nothing like it; its workloads are fact⋈dim, many-to-many, aggregate by key/,
    );
  }, 120_000);
});

describe('skewjoin bench --suite quick', () => {
  // Both tests read the output of one bench run: whichever runs first (alone or not) makes it.
  let out: string | null = null;
  function benchOutput(): string {
    if (out) return out;
    const dir = tmpDir('sj-bench-');
    // two simulated worker counts, not the default three: the test's time goes to the modes, not to 1,024 partitions
    const r = cli([
      'bench',
      '--suite',
      'quick',
      '--rows',
      '20000',
      '--keys',
      '2000',
      '--repeat',
      '1',
      '--workers',
      '2',
      '--simulate-workers',
      '16,8',
      '--out',
      dir,
    ]);
    expect(r.code, r.stderr).toBe(0);
    return (out = dir);
  }

  it('runs every workload in every mode and writes results.json, results.csv and report.html', () => {
    const out = benchOutput();
    const res = JSON.parse(fs.readFileSync(path.join(out, 'results.json'), 'utf8'));
    const workloads = new Set(res.runs.map((x: any) => x.workload));
    expect([...workloads].sort()).toEqual([
      'aggregate by key',
      'fact⋈dim',
      'full outer',
      'hot key, one mapper',
      'many-to-many',
    ]);
    expect(new Set(res.runs.map((x: any) => x.s))).toEqual(new Set([0, 0.8, 1, 1.2, 1.5]));
    expect(new Set(res.runs.map((x: any) => x.mode))).toEqual(
      new Set(['off', 'partition', 'key', 'auto', 'no-combiners', 'broadcast', 'duckdb']),
    );
    for (const x of res.runs.filter((y: any) => y.mode !== 'duckdb')) {
      expect(x.sameAnswer, `${x.workload} s=${x.s} ${x.mode}`).toBe(true);
      expect(x.simulated.map((y: any) => y.workers)).toEqual([8, 16]);
      for (const y of x.simulated) {
        expect(y.makespanMs).toBeGreaterThanOrEqual(y.idealMs - 1e-9);
        expect(y.bottleneck).toMatch(/^\S+-\d+ (map|split|reduce) \d+/);
      }
      if (x.mode !== 'broadcast') {
        for (const k of ['reduceImbalance', 'reduceImbalanceRows', 'reduceImbalanceBytes'])
          expect(x[k], `${x.workload} ${x.mode} ${k}`).toBeGreaterThanOrEqual(1);
        // by CPU time: Linux only (runtime/cpu-time.ts); elsewhere the column is empty
        if (process.platform === 'linux')
          expect(x.reduceImbalanceCpu, `${x.workload} ${x.mode} cpu`).toBeGreaterThanOrEqual(1);
        else expect(x.reduceImbalanceCpu).toBeUndefined();
      }
    }
    expect(res.imbalance.map((x: any) => x.partitions)).toEqual([1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]);
    expect(res.imbalance.at(-1).whole).toBeGreaterThan(res.imbalance.at(-1).split);
    expect(res.detail.tasks.some((t: any) => t.kind === 'split')).toBe(true);
    // the timed runs take the worker pool (inThreadBytes 0), both of its threads, even at this size
    expect(new Set(res.detail.tasks.map((t: any) => t.thread))).toEqual(new Set([1, 2]));
    expect(fs.readFileSync(path.join(out, 'results.csv'), 'utf8').split('\n')[0]).toMatch(
      /^workload,s,mode,wall_ms,.*,makespan_8,ideal_8,makespan_16,ideal_16$/,
    );
  }, 400_000);

  it('each mode does what its name says', () => {
    const res = JSON.parse(fs.readFileSync(path.join(benchOutput(), 'results.json'), 'utf8'));
    const runs = (mode: string) => res.runs.filter((x: any) => x.mode === mode);
    const methods = (mode: string) => new Set(runs(mode).flatMap((x: any) => Object.keys(x.splits)));
    // off: nothing split; partition: map ranges only (a side the join type cannot split stays whole);
    // key: hot keys only; both split something somewhere
    expect(methods('off')).toEqual(new Set());
    expect(methods('partition')).toEqual(new Set(['map-range', 'none']));
    expect(methods('key')).toEqual(new Set(['hot-key']));
    expect(
      runs('partition')
        .filter((x: any) => x.workload === 'full outer')
        .every((x: any) => !x.splits['map-range']),
    ).toBe(true);
    // no-combiners ships every fact row through the aggregation shuffle; auto combines them first
    for (const x of runs('no-combiners')) {
      expect(x.rowsBeforeCombining).toBeUndefined();
      expect(x.shuffledRows).toBe(20000);
    }
    for (const x of runs('auto').filter((y: any) => y.workload === 'aggregate by key')) {
      expect(x.rowsBeforeCombining).toBe(20000);
      expect(x.shuffledRows).toBeLessThan(20000);
    }
    // eager aggregation is on only in auto
    expect(res.runs.filter((x: any) => x.eager).every((x: any) => x.mode === 'auto')).toBe(true);
  }, 400_000);

  it('report.html renders in headless Chromium with every chart', (ctx) => {
    // ... with legends in the series' colours and no chart text over another
    needChromium(ctx, 'report.html browser test');
    const out = benchOutput();
    const html = path.join(out, 'report.html');
    expect(fs.existsSync(html)).toBe(true);
    const { dom, overlaps } = renderInChromium(html);
    for (const id of ['speedup', 'duckdb', 'balance', 'simulation', 'imbalance', 'detail', 'runs'])
      expect(dom).toContain(`id="${id}"`);
    const charts = dom.match(/<svg class="chart"[\s\S]*?<\/svg>/g) ?? [];
    // a chart whose modes lie on each other is a sentence instead (charts.ts apart)
    const omitted = dom.match(/<p class="omitted">[^<]*<\/p>/g) ?? [];
    for (const p of omitted)
      expect(p).toMatch(
        /: not drawn: .* are within 5% of each other at every .*, so their lines or bars would lie on top of each other/,
      );
    expect(charts.length + omitted.length).toBeGreaterThanOrEqual(12);
    expect(charts.length).toBeGreaterThanOrEqual(6);
    for (const c of charts) expect(c).toMatch(/<(path|rect) /); // every chart draws something
    expect(dom).toContain('tasks per worker thread');
    // each legend swatch has its series' colour: a mark of that series is drawn in it, and no two series share one
    let legends = 0;
    for (const c of charts) {
      const entries = legendEntries(c);
      if (entries.length === 0) continue;
      legends++;
      expect(new Set(entries.map((e) => e.color)).size, JSON.stringify(entries)).toBe(entries.length);
      for (const e of entries) {
        expect(e.color).not.toMatch(/^#(000|000000)$/);
        expect(seriesColors(c, e.label), `${e.label} in ${c.slice(0, 120)}`).toContain(e.color);
      }
    }
    expect(legends).toBe(charts.length);
    expect(overlaps).toEqual([]);
    // the specs beside the report
    const specs = fs.readdirSync(path.join(out, 'charts')).filter((f) => f.endsWith('.vl.json'));
    expect(specs.length).toBe(charts.length);
    for (const f of specs)
      expect(JSON.parse(fs.readFileSync(path.join(out, 'charts', f), 'utf8')).$schema).toMatch(/vega-lite\/v6/);
  }, 400_000);
});
