// Progress of a running query: runPlan's onProgress events (in order, ending
// at the run's totals) and the terminal display drawn from them on a fake TTY
// (frames name the stages and counts; nothing on a stream that is not a TTY).
import path from 'node:path';
import { Writable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { type ProgressEvent, runPlan } from '../dist/index.js';
import { progressDisplay, progressLine, wantsProgress } from '../dist/cli/progress.js';
import { ProgressTracker, advance, taskWeight } from '../dist/scheduler/progress.js';
import { cli, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-progress-');
const FACT_ROWS = 30_000,
  DIM_ROWS = 500;

/** join (two shuffles), aggregate (a third), sort: several stages of map and reduce tasks */
const plan = {
  version: 1,
  sources: { fact: { parquet: 'fact.parquet' }, dim: { parquet: 'dim.parquet' } },
  query: {
    op: 'sort',
    by: [{ column: 'region' }],
    input: {
      op: 'aggregate',
      groupBy: ['region'],
      aggregates: [
        { fn: 'count', as: 'n' },
        { fn: 'sum', column: 'amount', as: 'amount' },
      ],
      input: {
        op: 'join',
        type: 'inner',
        on: [['key', 'key']],
        left: { op: 'scan', source: 'fact' },
        right: { op: 'scan', source: 'dim' },
      },
    },
  },
  // the shuffle path on the worker pool: no broadcast, not on the calling thread (runtime/local.ts)
  execution: { workers: 2, partitions: 8, eagerAggregation: false, broadcastBytes: 0, inThreadBytes: 0 },
};

beforeAll(async () => {
  await writeParquet(
    path.join(dir, 'fact.parquet'),
    `SELECT i AS id, i % ${DIM_ROWS} AS key, (i * 0.5)::DOUBLE AS amount FROM range(${FACT_ROWS}) t(i)`,
    2000,
  );
  await writeParquet(
    path.join(dir, 'dim.parquet'),
    `SELECT i AS key, 'r' || (i % 7) AS region FROM range(${DIM_ROWS}) t(i)`,
  );
});

/** A terminal stand-in: isTTY, a width, and everything written kept. */
class FakeTTY extends Writable {
  readonly isTTY: boolean;
  readonly columns = 200;
  text = '';
  constructor(tty = true) {
    super();
    this.isTTY = tty;
  }
  override _write(chunk: Buffer, _enc: string, done: () => void) {
    this.text += chunk.toString();
    done();
  }
  /** the lines drawn, escape sequences removed */
  frames(): string[] {
    // eslint-disable-next-line no-control-regex
    return this.text
      .split(/\r|\x1b\[\d*G/)
      .map((f) => f.replace(/\x1b\[[0-9;?]*[A-Za-z]|\x1b[78]/g, '').trim())
      .filter((f) => f !== '');
  }
}

describe('onProgress', () => {
  it('reports every finished task in order and ends at the run totals', async () => {
    const events: ProgressEvent[] = [];
    const r = await runPlan(plan, { baseDir: dir, onProgress: (e) => events.push({ ...e }) });
    expect(r.numRows).toBe(7);
    const last = events.at(-1)!;
    // one event per task, then the final one
    expect(events.length).toBe(r.stats.tasks.length + 1);
    events.slice(0, -1).forEach((e, i) => expect(e.tasksDone).toBe(i + 1));
    for (let i = 1; i < events.length; i++) {
      const a = events[i - 1],
        b = events[i];
      for (const k of ['rowsRead', 'bytesShuffled', 'elapsedMs', 'tasksTotal'] as const)
        expect(b[k]).toBeGreaterThanOrEqual(a[k]);
      expect(b.tasksDone).toBeLessThanOrEqual(b.tasksTotal);
    }
    expect(last).toEqual({
      stage: 'done',
      tasksDone: r.stats.tasks.length,
      tasksTotal: r.stats.tasks.length,
      fraction: 1,
      running: [],
      rowsRead: FACT_ROWS + DIM_ROWS,
      bytesShuffled: r.stats.shuffles.reduce((s, x) => s + x.partitionBytes.reduce((a, b) => a + b, 0), 0),
      bytesSpilled: 0,
      elapsedMs: r.stats.wallMs,
    });
    expect(last.bytesShuffled).toBeGreaterThan(0);
    // several stages, map tasks first; each stage's events are its tasks in the statistics
    const stages = [...new Set(events.slice(0, -1).map((e) => e.stage))];
    expect(stages.length).toBeGreaterThanOrEqual(3);
    expect(stages[0]).toMatch(/ map$/);
    expect(stages.some((s) => s.endsWith(' reduce'))).toBe(true);
    for (const st of stages) {
      expect(events.filter((e) => e.stage === st).length, st).toBe(
        r.stats.tasks.filter((t) => `${t.stage} ${t.kind}` === st).length,
      );
    }
  });
  it("counts the bytes spilled as tasks finish, ending at the run's total (a 1-byte budget)", async () => {
    const events: ProgressEvent[] = [];
    const r = await runPlan(plan, {
      baseDir: dir,
      memoryLimit: 1,
      spillDir: path.join(dir, 'spill'),
      onProgress: (e) => events.push({ ...e }),
    });
    expect(r.stats.spilledBytes).toBeGreaterThan(0);
    expect(events.at(-1)!.bytesSpilled).toBe(r.stats.spilledBytes);
    for (let i = 1; i < events.length; i++)
      expect(events[i].bytesSpilled).toBeGreaterThanOrEqual(events[i - 1].bytesSpilled);
    // each task's event adds what the task spilled
    const spilling = events.slice(0, -1).filter((e, i) => e.bytesSpilled > (i ? events[i - 1].bytesSpilled : 0));
    expect(spilling.length).toBe(r.stats.tasks.filter((t) => t.spilledBytes > 0).length);
  });
});

describe('the completed fraction', () => {
  // small partitions are not coalesced into one reduce task: each later stage adds several tasks
  const manyTasks = { ...plan, execution: { ...plan.execution, skew: { advisoryPartitionBytes: 1024 } } };

  it('never decreases over a multi-stage query, though later stages add tasks, and is 1 only at the end', async () => {
    const events: ProgressEvent[] = [];
    await runPlan(manyTasks, { baseDir: dir, onProgress: (e) => events.push(structuredClone(e)) });
    // the task count alone goes back when a stage is scheduled: this run must have such a moment
    const countBack = events.some(
      (e, i) => i > 0 && e.tasksDone / e.tasksTotal < events[i - 1].tasksDone / events[i - 1].tasksTotal,
    );
    expect(countBack, 'tasksDone/tasksTotal never went back: the plan does not exercise the fraction').toBe(true);
    for (let i = 1; i < events.length; i++)
      expect(events[i].fraction, `event ${i}`).toBeGreaterThanOrEqual(events[i - 1].fraction);
    expect(events.slice(0, -1).every((e) => e.fraction > 0 && e.fraction < 1)).toBe(true);
    expect(events.at(-1)!.fraction).toBe(1);
    // the work of stages not yet scheduled: the rows the join's map tasks shuffled are read again by its reduce
    // tasks, so its map stage alone does not fill the bar (about half of it, a little more: the rows shuffled
    // become known task by task, and the first tasks' steps were taken before the later tasks' rows were known)
    const lastMap = events.findLast((e) => e.stage.endsWith(' map') && e.stage.startsWith('join'))!;
    expect(lastMap.fraction).toBeLessThan(2 / 3);
  });

  it('names the running stages oldest first: the first one changes only when it ends', async () => {
    const events: ProgressEvent[] = [];
    await runPlan(manyTasks, { baseDir: dir, onProgress: (e) => events.push(structuredClone(e)) });
    const firsts = events.map((e) => e.running[0]?.stage).filter((s): s is string => s !== undefined);
    // a stage that leaves the first place never comes back to it
    const order = firsts.filter((s, i) => i === 0 || s !== firsts[i - 1]);
    expect(new Set(order).size, order.join(' -> ')).toBe(order.length);
    for (const e of events) for (const st of e.running) expect(st.tasksDone).toBeLessThan(st.tasksTotal);
  });
});

describe('the progress display', () => {
  it('draws the stage, the counts and the elapsed time on a terminal, stage after stage', async () => {
    const tty = new FakeTTY();
    const display = await progressDisplay(tty, { delayMs: 0, fps: 1000 });
    await new Promise((res) => setTimeout(res, 5)); // past the delay: the line is up
    const stages = new Set<string>();
    try {
      await runPlan(plan, {
        baseDir: dir,
        onProgress: (e) => {
          display.onProgress(e);
          stages.add(e.stage);
        },
      });
    } finally {
      display.stop();
    }
    const frames = tty.frames();
    // bar, percent, elapsed time, rate, the oldest running stage (its tasks done/scheduled) and how many others
    // run, the counters
    const line =
      /^\S* +([\d.]+)% [\d.]+ s [\d.]+[KMG]? rows\/s \| (.+?) (?:\((\d+)\/(\d+)\)(?: \+\d+ more stages?)? )?\| ([\d,]+) rows read \| ([\d.]+ ?[KMGT]?B) shuffled \| ([\d.]+ ?[KMGT]?B) spilled$/;
    const drawn = frames.map((f) => f.match(line)).filter((m) => m !== null);
    expect(drawn.length, frames.join('\n')).toBeGreaterThan(2);
    for (const m of drawn) if (m[3] !== undefined) expect(Number(m[3])).toBeLessThan(Number(m[4]));
    // the percentage never goes back from one frame to the next
    const pct = drawn.map((m) => Number(m[1]));
    for (let i = 1; i < pct.length; i++) expect(pct[i], pct.join(' ')).toBeGreaterThanOrEqual(pct[i - 1]);
    // a multi-stage query: several of its stages appear in the frames
    const shown = new Set(drawn.map((m) => m[2]));
    // (which ones depends on timing: the bar redraws at most once a frame, and a stage whose tasks all
    // finish within one, as a reduce stage did on a loaded CI machine, is never drawn; the events'
    // stages, reduce ones included, are checked above)
    expect([...shown].filter((s) => stages.has(s)).length, [...shown].join(', ')).toBeGreaterThanOrEqual(2);
    expect(drawn.some((m) => Number(m[5].replace(/,/g, '')) > 0)).toBe(true);
    // erased at the end: the last thing written clears the line
    expect(tty.text.endsWith('\x1b[2K') || tty.text.endsWith('\x1b[0K') || tty.text.endsWith('\x1b[K')).toBe(true);
  });

  it('writes nothing on a stream that is not a terminal', async () => {
    const pipe = new FakeTTY(false);
    const display = await progressDisplay(pipe, { delayMs: 0, fps: 1000 });
    await new Promise((res) => setTimeout(res, 5));
    await runPlan(plan, { baseDir: dir, onProgress: display.onProgress });
    display.clear();
    display.stop();
    expect(pipe.text).toBe('');
  });

  it('is shown on a terminal stderr only, and not with --quiet or --json into a pipe', () => {
    const tty = { isTTY: true } as any,
      pipe = {} as any;
    expect(wantsProgress(tty, tty, {})).toBe(true);
    expect(wantsProgress(tty, pipe, {})).toBe(true);
    expect(wantsProgress(pipe, tty, {})).toBe(false);
    expect(wantsProgress(tty, tty, { quiet: true })).toBe(false);
    expect(wantsProgress(tty, pipe, { json: true })).toBe(false);
    expect(wantsProgress(tty, tty, { json: true })).toBe(true);
  });

  it('skewjoin plan.json with stderr into a pipe prints no progress', () => {
    const r = cli(['plans/quickstart.json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('(8 rows)');
    expect(r.stderr).toBe('');
  });
});

describe('the fraction follows the rows read, not the count of tasks (issue 43)', () => {
  const rows = (n: number) => ({ kind: 'batches', schema: [], batches: [{ length: n, columns: [] }] }) as any;
  const scan = (path: string, rowGroups: number[], extra = {}) =>
    ({ kind: 'scan', path, rowGroups, fields: [], ...extra }) as any;
  const done = (stage = 's map') => ({ stage, rowsRead: 0, bytesShuffled: 0, bytesSpilled: 0 });

  it("a task's weight: a scan split's rows from the plan, a row range's length, input blocks' rows", () => {
    const splits = new Map([['f.parquet|0,1||', 1000]]);
    expect(taskWeight(scan('f.parquet', [0, 1]), splits)).toBe(1000);
    expect(taskWeight(scan('f.parquet', [2], { offset: 0, limit: 300 }), splits)).toBe(300);
    expect(taskWeight(rows(25), splits)).toBe(25);
    expect(
      taskWeight({ kind: 'join', left: [{ length: 10 }, { length: 5 }], right: [{ length: 7 }] } as any, splits),
    ).toBe(22);
    expect(taskWeight(rows(0), splits)).toBe(1); // an empty task still moves the bar
  });

  it('advance: exactly done/total when nothing is added; never back, below 1 until the end', () => {
    let f = 0;
    const ws = [25, 500_000, 10_000, 1];
    let left = ws.reduce((a, b) => a + b, 0);
    let sum = 0;
    for (const w of ws) {
      const g = advance(f, w, left);
      expect(g).toBeGreaterThanOrEqual(f);
      sum += w;
      left -= w;
      f = g;
      expect(f).toBeCloseTo(Math.min(0.999, sum / 510_026), 9);
    }
    // work found later (more remaining than planned) slows it, never moves it back
    expect(advance(0.5, 10, 1_000_000)).toBeGreaterThan(0.5);
    expect(advance(0.5, 10, 1_000_000)).toBeLessThan(0.50001);
    expect(advance(0.998, 100, 100)).toBe(0.999);
  });

  it('a 25-row task and a 500,000-row task: the first moves the bar by its rows, not by half', () => {
    const fractions: number[] = [];
    const t = new ProgressTracker((e) => fractions.push(e.fraction), performance.now());
    const a = t.scheduled('join-1 map', rows(25));
    const b = t.scheduled('join-2 map', rows(500_000));
    t.finished(done('join-1 map'), a);
    expect(fractions[0]).toBeCloseTo(25 / 500_025, 9);
    t.finished(done('join-2 map'), b);
    t.end(1);
    expect(fractions.slice(1)).toEqual([0.999, 1]);
  });

  it('rows shuffled count as work to come until tasks are scheduled to read them', () => {
    const fractions: number[] = [];
    const t = new ProgressTracker((e) => fractions.push(e.fraction), performance.now());
    const map = t.scheduled('join-1 map', rows(1000));
    t.finished({ ...done('join-1 map'), rowsShuffled: 1000 }, map);
    // the map side done, its 1000 rows wait for reduce tasks: half of the run
    expect(fractions[0]).toBeCloseTo(1 / 2, 9);
    const r1 = t.scheduled('join-1 reduce', rows(500));
    const r2 = t.scheduled('join-1 reduce', rows(500));
    t.finished(done('join-1 reduce'), r1);
    expect(fractions[1]).toBeCloseTo(3 / 4, 9);
    t.finished(done('join-1 reduce'), r2);
    expect(fractions[2]).toBe(0.999);
  });

  it('on an 80-column terminal the elapsed time and the rate stay; the detail is cut', () => {
    const e: ProgressEvent = {
      stage: 'join-3 map',
      tasksDone: 4,
      tasksTotal: 9,
      fraction: 0.42,
      running: [
        { stage: 'aggregate-12 reduce', tasksDone: 117, tasksTotal: 200 },
        { stage: 'join-3 map', tasksDone: 4, tasksTotal: 9 },
      ],
      rowsRead: 123_456_789,
      bytesShuffled: 5 * 2 ** 30,
      bytesSpilled: 0,
      elapsedMs: 0,
    };
    const bar = '█'.repeat(8) + '░'.repeat(12);
    const line = progressLine(bar, 0.42, 64_500, e, 80);
    expect(line.length).toBeLessThanOrEqual(79);
    expect(line).toMatch(/^█{8}░{12} +42\.0% 1 min 4 s 1\.9M rows\/s \| aggregate-12 reduce \(117\/20/);
    // a wide terminal shows it all
    expect(progressLine(bar, 0.42, 2_000, e, 200)).toMatch(
      /\| 123,456,789 rows read \| 5\.0GB shuffled \| 0B spilled$/,
    );
    // narrower than the head: the head whole, nothing of the detail
    expect(progressLine(bar, 0.42, 2_000, e, 30)).toBe(`${bar} 42.0% 2.0 s 62M rows/s`);
  });
});
