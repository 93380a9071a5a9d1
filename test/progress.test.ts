// Progress of a running query: runPlan's onProgress events (in order, ending
// at the run's totals) and the terminal display drawn from them on a fake TTY
// (frames name the stages and counts; nothing on a stream that is not a TTY).
import path from 'node:path';
import { Writable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { type ProgressEvent, runPlan } from '../dist/index.js';
import { progressDisplay, wantsProgress } from '../dist/cli/progress.js';
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
    // the reserve for stages not yet scheduled: the join's map stage alone does not fill half the bar
    const lastMap = events.findLast((e) => e.stage.endsWith(' map') && e.stage.startsWith('join'))!;
    expect(lastMap.fraction).toBeLessThan(0.5);
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
    // bar, percent, the oldest running stage (its tasks done/scheduled) and how many others run, the counters
    const line =
      /^\S* +([\d.]+)% (.+?) (?:\((\d+)\/(\d+)\)(?: \+\d+ more stages?)? )?\| ([\d,]+) rows read \| ([\d.]+ ?[KMGT]?B) shuffled \| ([\d.]+ ?[KMGT]?B) spilled \| [\d.]+ s$/;
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
