// The progress display on a terminal: one line on stderr with the completed
// share (a bar that never goes back), the elapsed time and the rows read per
// second, then the detail: the oldest running stage with its tasks
// done/scheduled, rows read, bytes shuffled and spilled. On a narrow terminal
// the detail is cut, never the clock. Drawn by cli-progress from onProgress events. It appears after the first
// second (short queries print nothing), redraws a few times a second, and is
// erased when the run ends. On a stream that is not a TTY it writes nothing.
import { fmtBytes } from '../physical/explain-text.js';
import type { ProgressEvent } from '../scheduler/progress.js';

export interface ProgressDisplay {
  onProgress(e: ProgressEvent): void;
  /** erase the line until the next redraw, before other output goes to the same terminal */
  clear(): void;
  /** erase the line and stop redrawing (idempotent) */
  stop(): void;
}

export interface DisplayOptions {
  /** ms before the line first appears (default 1000) */
  delayMs?: number;
  /** redraws per second (default 4) */
  fps?: number;
}

type Stream = NodeJS.WritableStream & { isTTY?: boolean; columns?: number };

const NONE: ProgressDisplay = { onProgress() {}, clear() {}, stop() {} };

/** Steps of the bar: the fraction drawn to a tenth of a percent. */
const STEPS = 1000;

const fmtRows = (n: number) => n.toLocaleString('en-US');
const fmtElapsed = (ms: number) =>
  ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.floor(ms / 60_000)} min ${Math.floor((ms % 60_000) / 1000)} s`;

/** Rows read per second, short: "850 rows/s", "12.5K rows/s", "1.9M rows/s". */
function fmtRate(rows: number, ms: number): string {
  const r = ms > 0 ? (rows * 1000) / ms : 0;
  const [v, u] = r >= 1e9 ? [r / 1e9, 'G'] : r >= 1e6 ? [r / 1e6, 'M'] : r >= 1e3 ? [r / 1e3, 'K'] : [r, ''];
  return `${u ? v.toFixed(v < 10 ? 1 : 0) : Math.round(v)}${u} rows/s`;
}

/**
 * The display's line: bar, percent, elapsed time and rate first, then the detail; cut to `width - 1`
 * columns (the last column would wrap on some terminals) by shortening the detail, never the head.
 */
export function progressLine(bar: string, fraction: number, elapsedMs: number, e: ProgressEvent, width: number) {
  const percent = `${(fraction * 100).toFixed(fraction < 1 ? 1 : 0).padStart(4)}%`;
  const head = `${bar} ${percent} ${fmtElapsed(elapsedMs)} ${fmtRate(e.rowsRead, elapsedMs)}`;
  const detail =
    `${stageLabel(e)} | ${fmtRows(e.rowsRead)} rows read | ${fmtBytes(e.bytesShuffled)} shuffled | ` +
    `${fmtBytes(e.bytesSpilled)} spilled`;
  const line = `${head} | ${detail}`;
  return line.length < width ? line : line.slice(0, Math.max(head.length, width - 1));
}

/** Whether `skewjoin plan.json` shows the display: stderr a TTY, not --quiet, not --json into a pipe. */
export function wantsProgress(stderr: Stream, stdout: Stream, flags: { quiet?: boolean; json?: boolean }): boolean {
  return stderr.isTTY === true && !flags.quiet && !(flags.json && stdout.isTTY !== true);
}

/**
 * Where the query is: the oldest stage still running, with its tasks done and scheduled, Spark's way
 * (`join-3 map (120/200)`), and how many others run beside it. The oldest stays first until it
 * ends, so the label does not flip between concurrent stages from one redraw to the next.
 */
function stageLabel(e: ProgressEvent): string {
  const [first, ...rest] = e.running;
  if (!first) return e.stage;
  const others = rest.length ? ` +${rest.length} more stage${rest.length > 1 ? 's' : ''}` : '';
  return `${first.stage} (${first.tasksDone}/${first.tasksTotal})${others}`;
}

/** A display on `stream`; a no-op when it is not a TTY. cli-progress is loaded only here (not on the query path). */
export async function progressDisplay(stream: Stream, o: DisplayOptions = {}): Promise<ProgressDisplay> {
  if (stream.isTTY !== true) return NONE;
  const { default: cliProgress } = await import('cli-progress');
  const t0 = performance.now();
  let last: ProgressEvent = {
    stage: 'starting',
    tasksDone: 0,
    tasksTotal: 0,
    fraction: 0,
    running: [],
    rowsRead: 0,
    bytesShuffled: 0,
    bytesSpilled: 0,
    elapsedMs: 0,
  };
  // the largest fraction seen: the bar is drawn from it, so it never goes back whatever the events say
  let shown = 0;
  const bar = new cliProgress.SingleBar({
    stream: stream as NodeJS.WriteStream,
    fps: o.fps ?? 4,
    barsize: 20,
    // Leave the terminal's modes alone (no hidden cursor, no wrapping turned off): a run killed by a
    // signal then leaves nothing to restore. Lines are cut to the width instead of wrapping.
    hideCursor: false,
    linewrap: true,
    clearOnComplete: true,
    // a function format so that the elapsed time moves on between events
    format: (opts, params, payload) =>
      progressLine(
        cliProgress.Format.Formatter({ ...opts, format: '{bar}' }, params, payload),
        shown,
        performance.now() - t0,
        last,
        params.maxWidth,
      ),
  });
  let started = false,
    stopped = false;
  const timer = setTimeout(() => {
    if (stopped) return;
    started = true;
    bar.start(STEPS, Math.floor(shown * STEPS));
  }, o.delayMs ?? 1000);
  timer.unref();
  return {
    onProgress(e) {
      last = e;
      shown = Math.max(shown, Math.min(1, e.fraction));
      if (started) bar.update(Math.floor(shown * STEPS));
    },
    clear() {
      if (started && !stopped) stream.write('\r\x1b[K');
    },
    stop() {
      if (stopped) return;
      stopped = true;
      clearTimeout(timer);
      if (started) bar.stop();
    },
  };
}
