// Running one task on this thread (a worker's, or the coordinator's for a run in the thread): its spilled inputs
// read back, its kernels run (physical/kernels.ts), and when and where it ran recorded for the timelines.
import { threadId } from 'node:worker_threads';
import { executeTask } from '../physical/kernels.js';
import type { TaskResult, TaskSpec } from '../physical/task.js';
import { threadCpuMs } from './cpu-time.js';
import { withSpillRead } from './spill-read.js';

/** Run a task; its result carries when (epoch ms) and on which thread it ran, for timelines. */
export async function runTask(t: TaskSpec): Promise<TaskResult> {
  const cpu0 = t.cpuClock ? threadCpuMs() : undefined;
  const start = performance.timeOrigin + performance.now();
  const { source, readBytes } = withSpillRead(t.source);
  const r = await executeTask(readBytes ? { ...t, source } : t);
  if (readBytes) r.spillReadBytes = readBytes;
  const cpu1 = cpu0 !== undefined ? threadCpuMs() : undefined;
  if (cpu0 !== undefined && cpu1 !== undefined) r.cpuMs = cpu1 - cpu0;
  r.start = start;
  r.thread = threadId;
  return r;
}
