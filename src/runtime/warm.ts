// Warming a worker thread while the coordinator validates the plan and
// inspects its files: the first Parquet decode in a fresh thread costs
// 0.3-0.4 s more than the next ones (DESIGN.md), so each worker decodes a
// little of a file the run will read before the first map task arrives.
import { inspectParquet, readRowGroupsInPlace } from '../io/parquet.js';
import { oneFieldPerWay } from '../io/parquet-direct.js';
import type { Field } from '../kernels/column.js';
import { trace } from '../trace.js';

export interface WarmTask {
  warm: string;
}

export const isWarmTask = (t: unknown): t is WarmTask => typeof (t as WarmTask)?.warm === 'string';

/** Decode the first rows of a file's readable columns; any failure is left for the real tasks to report. */
export async function warm(path: string): Promise<{ ok: true; result: null }> {
  try {
    const info = await inspectParquet(path);
    const readable = info.columns.filter((c): c is Field => typeof c.type !== 'string');
    // a column of each way the direct reader decodes the file's, when it takes any: the tasks read those without
    // parquet-wasm until a thread has decoded enough to load it (io/parquet-direct.ts), and warming must not load
    // it before then
    const direct = info.wholeFile ? [] : oneFieldPerWay(path, readable);
    const fields = direct.length > 0 ? direct : readable;
    const { release } = await readRowGroupsInPlace(path, info.wholeFile ? [] : [0], fields, info.wholeFile, {
      limit: 1024,
    });
    release();
  } catch {
    /* reported by the run itself */
  }
  trace('worker: warm');
  return { ok: true, result: null };
}
