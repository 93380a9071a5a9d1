// Progress of a running query for the library's `onProgress` option
// (shared/PLAN-SPEC.md, execution): counters the coordinator bumps as tasks
// are scheduled and finish, reported after every finished task and once more
// at the end, at the totals, with a completed fraction that never decreases.
import type { BoundNode } from '../plan/bound.js';
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
   * event. Each finished task takes its share of what remains: of the tasks scheduled and not done,
   * plus a reserve for the plan's operators not yet scheduled (see ProgressTracker).
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

/** "join-3 map" -> "join-3" */
const operatorOf = (stage: string) => stage.split(' ')[0];

/** What one finished task adds to the counters. */
export interface TaskProgress {
  stage: string;
  rowsRead: number;
  bytesShuffled: number;
  bytesSpilled: number;
}

/**
 * The operators whose stages a plan is expected to run: those that shuffle (join, aggregate,
 * sort). An operator counts as seen at its first task, whichever stage: how many stages it
 * runs depends on run-time choices (a broadcast join has no reduce stage, an aggregate above
 * a join runs its map side in the join's reduce tasks).
 */
export function expectedStages(root: BoundNode): string[] {
  const out: string[] = [];
  const visit = (n: BoundNode): void => {
    if (n.kind === 'join' || n.kind === 'aggregate' || n.kind === 'sort') out.push(n.id);
    for (const c of children(n)) visit(c);
  };
  visit(root);
  return out;
}

/**
 * The counters, and the fraction. A count of tasks done over tasks scheduled
 * goes backwards whenever a later stage is scheduled (q21 at SF 10: 1064/1103,
 * then 1149/1589), so the fraction is kept instead: a finished task moves it
 * 1/r of the way to 1, r being the tasks not yet done (itself included) plus a
 * reserve for each expected operator not yet seen, as many tasks as the
 * mean operator seen so far. With nothing added later this is exactly done/total; a
 * later stage only slows the bar down.
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
  private readonly unseen: Set<string>;
  private readonly seen = new Set<string>();

  /** `t0`: performance.now() when the run began; `expected`: the plan's operators (expectedStages) */
  constructor(
    private readonly onProgress: OnProgress | undefined,
    private readonly t0: number,
    expected: string[] = [],
  ) {
    this.unseen = new Set(expected);
  }

  scheduled(stage = ''): void {
    this.tasksTotal++;
    const s = this.stages.get(stage);
    if (s) s.total++;
    else this.stages.set(stage, { done: 0, total: 1 });
    this.seen.add(operatorOf(stage));
    this.unseen.delete(operatorOf(stage));
  }

  finished(t: TaskProgress): void {
    const remaining = this.tasksTotal - this.tasksDone + this.reserve();
    this.fraction += (1 - this.fraction) / Math.max(1, remaining);
    // below 1 until the end: the last event says "done"
    this.fraction = Math.min(this.fraction, 0.999);
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

  /** Tasks still to come in the expected operators not yet scheduled. */
  private reserve(): number {
    if (this.unseen.size === 0) return 0;
    return this.unseen.size * Math.max(1, Math.round(this.tasksTotal / Math.max(1, this.seen.size)));
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
