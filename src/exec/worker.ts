// Worker thread entry: runs one task and moves its result buffers back
// without copying.
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { errorPayload } from '../errors.js';
import { type TaskSpec, resultBuffers, runTask } from './task.js';
import { type WarmTask, isWarmTask, warm } from './warm.js';

export default async function work(task: TaskSpec | WarmTask): Promise<unknown> {
  if (isWarmTask(task)) return warm(task.warm);
  try {
    const result = await runTask(task);
    const buffers = resultBuffers(result);
    return move({
      get [transferableSymbol]() { return buffers; },
      get [valueSymbol]() { return { ok: true, result }; },
    } as any);
  } catch (e) {
    return { ok: false, error: errorPayload(e) };
  }
}
