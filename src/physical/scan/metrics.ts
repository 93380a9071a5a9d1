// The scan family's task metric: how a scan task read its columns (ScanRead, physical/stats.ts), under `scan` among a
// task's metrics (TaskMetrics, physical/task.ts), folded into the task's statistics by the scan operator's analyze
// (scan/operator.ts).
import type { ScanRead } from '../stats.js';
import type { TaskMetrics } from '../task.js';

declare module '../task.js' {
  interface TaskMetric {
    scan: ScanRead;
  }
}

/** A scan task's metrics. */
export const scanMetrics = (scan: ScanRead): TaskMetrics => ({ scan });
