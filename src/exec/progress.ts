// Progress of a running query for the library's `onProgress` option
// (shared/PLAN-SPEC.md, execution): counters the coordinator bumps as tasks
// are scheduled and finish, reported after every finished task and once more
// at the end, at the totals.

export interface ProgressEvent {
  /** the stage of the task that just finished ("join-3 map", "aggregate-5 reduce"); "done" at the end */
  stage: string;
  tasksDone: number;
  /** tasks scheduled so far: it grows as later stages are planned from the earlier ones' statistics */
  tasksTotal: number;
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
export interface TaskProgress { stage: string; rowsRead: number; bytesShuffled: number; bytesSpilled: number }

export class ProgressTracker {
  private tasksDone = 0;
  private tasksTotal = 0;
  private rowsRead = 0;
  private bytesShuffled = 0;
  private bytesSpilled = 0;

  /** `t0`: performance.now() when the run began */
  constructor(private readonly onProgress: OnProgress | undefined, private readonly t0: number) {}

  scheduled(): void {
    this.tasksTotal++;
  }

  finished(t: TaskProgress): void {
    this.tasksDone++;
    this.rowsRead += t.rowsRead;
    this.bytesShuffled += t.bytesShuffled;
    this.bytesSpilled += t.bytesSpilled;
    this.emit(t.stage, performance.now() - this.t0);
  }

  /** The last call: every task finished, the run's wall time. */
  end(elapsedMs: number): void {
    this.emit('done', elapsedMs);
  }

  private emit(stage: string, elapsedMs: number): void {
    this.onProgress?.({
      stage, tasksDone: this.tasksDone, tasksTotal: this.tasksTotal, rowsRead: this.rowsRead,
      bytesShuffled: this.bytesShuffled, bytesSpilled: this.bytesSpilled, elapsedMs,
    });
  }
}
