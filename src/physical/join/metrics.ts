// The join family's task metric: the path a join task took (JoinPath, physical/stats.ts), under `join` among a task's
// metrics (TaskMetrics, physical/task.ts), made where the task runs and folded into the task's statistics by the join
// operator's analyze (join/operator.ts).
import type { JoinPath } from '../stats.js';
import type { TaskMetrics } from '../task.js';

declare module '../task.js' {
  interface TaskMetric {
    join: JoinPath;
  }
}

/** A join task's metrics. */
export const joinMetrics = (join: JoinPath): TaskMetrics => ({ join });
