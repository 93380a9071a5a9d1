// Progress of a running query for the library's `onProgress` option
// (shared/PLAN-SPEC.md, execution): counters the coordinator bumps as tasks
// are scheduled and finish, reported after every finished task and once more
// at the end, at the totals, with a completed fraction that never decreases.
// The fraction weighs each task by the rows it reads (a scan task: its row
// groups' rows, from the footers; any other: the rows of its input blocks), so
// that it follows the time a run takes rather than its count of tasks.
import type { BoundNode } from '../plan/bound.js';
import type { TaskSource } from '../physical/task.js';
import { inputsOf } from '../physical/kernels.js';
import { children } from '../plan/fingerprint.js';

/** A stage with tasks scheduled and not yet finished. */
interface StageProgress {
  /** "join-3 map", "aggregate-5 reduce" */
  stage: string;
  tasksDone: number;
  /** tasks of this stage scheduled so far (a stage may add split tasks as it runs) */
  tasksTotal: number;
}

export interface ProgressEvent {
  /** the stage of the task that just finished ("join-3 map", "aggregate-5 reduce"); "done" at the end */
  stage: string;
  tasksDone: number;
  /** tasks scheduled so far: it grows as later stages are planned from the earlier ones' statistics */
  tasksTotal: number;
  /**
   * Completed share of the run, 0 to 1, never smaller than in the event before; 1 only in the last
   * event. Each finished task takes its share, by the rows it reads, of the rows that remain: those of
   * the tasks scheduled and not done, of the scans not yet scheduled, and of the rows shuffled that no
   * task has been scheduled to read yet (see ProgressTracker).
   */
  fraction: number;
  /** stages with unfinished tasks, in the order they began: the first is the oldest still running */
  running: StageProgress[];
  /** rows the scans read from Parquet */
  rowsRead: number;
  /** bytes map tasks wrote to shuffle partitions */
  bytesShuffled: number;
  /** bytes written to spill files */
  bytesSpilled: number;
  elapsedMs: number;
}

export type OnProgress = (e: ProgressEvent) => void;

/** What one finished task adds to the counters. */
export interface TaskProgress {
  stage: string;
  rowsRead: number;
  bytesShuffled: number;
  bytesSpilled: number;
  /** rows the task wrote to shuffle partitions: tasks to come will read them */
  rowsShuffled?: number;
}

/** A scan task's key: the same file, row groups and row range (a CSV chunk: its first byte). */
const splitKey = (path: string, rowGroups: number[], offset?: number, csv?: { start: number }) =>
  `${path}|${rowGroups.join(',')}|${offset ?? ''}|${csv?.start ?? ''}`;

/** The rows of each scan split of a plan, by splitKey, and their total over every scan. */
function planScanRows(root: BoundNode): { rows: Map<string, number>; total: number } {
  const rows = new Map<string, number>();
  let total = 0;
  const visit = (n: BoundNode): void => {
    if (n.kind === 'scan') {
      for (const s of n.splits) {
        rows.set(splitKey(s.path, s.rowGroups, s.offset, s.csv), s.rows);
        total += s.rows;
      }
    }
    for (const c of children(n)) visit(c);
  };
  visit(root);
  return { rows, total };
}

const rowsOf = (bs: { length: number }[]) => bs.reduce((a, b) => a + b.length, 0);

/**
 * A task's weight: the rows it reads. A scan task's from the plan's splits (`scanRows`, from the
 * files' footers; a row range: its length), any other's from its input blocks as its kernel lists them
 * (physical/kernels.ts inputsOf: shuffle partitions, collected or held rows; a new kind of source needs no case
 * here). At least 1: an empty task still moves the bar.
 */
export function taskWeight(source: TaskSource, scanRows: ReadonlyMap<string, number>): number {
  const rows =
    source.kind === 'scan'
      ? (source.limit ?? scanRows.get(splitKey(source.path, source.rowGroups, source.offset, source.csv)) ?? 0)
      : rowsOf(inputsOf(source));
  return Math.max(1, rows);
}

/**
 * The fraction after a task of `weight` finishes, `remaining` the weight still to do (this task's
 * included): it moves `weight / remaining` of the way to 1, never backwards, below 1 until the end.
 * With nothing added later this is exactly done / total; work added later only slows it down.
 */
export function advance(fraction: number, weight: number, remaining: number): number {
  return Math.min(0.999, fraction + ((1 - fraction) * weight) / Math.max(weight, remaining, 1));
}

/**
 * The counters, and the fraction. A share of tasks done goes backwards whenever a later stage is
 * scheduled (q21 at SF 10: 1064/1103, then 1149/1589), and counts a task over 25 rows as one over
 * 500,000 (q09: 85% shown after a tenth of the time). So the fraction is advanced instead (see
 * advance), by each task's rows over the rows left: of the tasks scheduled and not done, of the
 * plan's scans not yet scheduled (their rows are known from the footers before the run starts), and
 * of the rows written to shuffle partitions that no task reads yet (they will be read by the
 * operator's reduce tasks, once its map side ends).
 */
export class ProgressTracker {
  private tasksDone = 0;
  private tasksTotal = 0;
  private rowsRead = 0;
  private bytesShuffled = 0;
  private bytesSpilled = 0;
  private fraction = 0;
  /** per stage, in the order of its first task */
  private readonly stages = new Map<string, { done: number; total: number }>();
  private readonly scanRows: ReadonlyMap<string, number>;
  /** scan rows of the plan not yet in a scheduled task */
  private scansLeft: number;
  /** weight of the tasks scheduled and not finished */
  private running = 0;
  /** rows shuffled that no scheduled task reads yet */
  private shuffledLeft = 0;
  /** the weight of each scheduled task, by the id scheduled() returned */
  private readonly weights = new Map<number, number>();
  private nextId = 0;

  /** `t0`: performance.now() when the run began; `root`: the plan run (its scans' rows weigh the tasks) */
  constructor(
    private readonly onProgress: OnProgress | undefined,
    private readonly t0: number,
    root?: BoundNode,
  ) {
    const p = root ? planScanRows(root) : { rows: new Map<string, number>(), total: 0 };
    this.scanRows = p.rows;
    this.scansLeft = p.total;
  }

  /** A task is scheduled; returns its id for finished(). */
  scheduled(stage = '', source?: TaskSource): number {
    this.tasksTotal++;
    const s = this.stages.get(stage);
    if (s) s.total++;
    else this.stages.set(stage, { done: 0, total: 1 });
    const w = source ? taskWeight(source, this.scanRows) : 1;
    if (source?.kind === 'scan') this.scansLeft = Math.max(0, this.scansLeft - w);
    else this.shuffledLeft = Math.max(0, this.shuffledLeft - w);
    this.running += w;
    const id = this.nextId++;
    this.weights.set(id, w);
    return id;
  }

  finished(t: TaskProgress, id?: number): void {
    const w = (id !== undefined && this.weights.get(id)) || 1;
    if (id !== undefined) this.weights.delete(id);
    // what the task shuffled is work to come: the rows of the reduce tasks that will read it
    this.shuffledLeft += t.rowsShuffled ?? 0;
    this.fraction = advance(this.fraction, w, this.running + this.scansLeft + this.shuffledLeft);
    this.running = Math.max(0, this.running - w);
    this.tasksDone++;
    const s = this.stages.get(t.stage);
    if (s) s.done++;
    this.rowsRead += t.rowsRead;
    this.bytesShuffled += t.bytesShuffled;
    this.bytesSpilled += t.bytesSpilled;
    this.emit(t.stage, performance.now() - this.t0);
  }

  /** The last call: every task finished, the run's wall time. */
  end(elapsedMs: number): void {
    this.fraction = 1;
    this.emit('done', elapsedMs);
  }

  private emit(stage: string, elapsedMs: number): void {
    if (!this.onProgress) return;
    const running = [...this.stages]
      .filter(([, s]) => s.done < s.total)
      .map(([name, s]) => ({ stage: name, tasksDone: s.done, tasksTotal: s.total }));
    this.onProgress({
      stage,
      tasksDone: this.tasksDone,
      tasksTotal: this.tasksTotal,
      fraction: this.fraction,
      running,
      rowsRead: this.rowsRead,
      bytesShuffled: this.bytesShuffled,
      bytesSpilled: this.bytesSpilled,
      elapsedMs,
    });
  }
}
