// Run a loaded plan and write its output: what the command line needs, without
// the library's Arrow conversions (src/api.ts adds those), so that a run loads
// Arrow JS only when a file needs it.
import { type Batch, type Field, rowCount } from '../kernels/column.js';
import type { LoadedPlan } from '../plan/load.js';
import type { ResultFile } from '../io/result-file.js';
import { mergeScans } from '../plan/map-splits.js';
import { IN_THREAD_TASK_BYTES, runsInThread } from '../runtime/local.js';
import { scanBytes } from '../physical/pipeline.js';
import { poolStarted } from '../runtime/pool.js';
import { inThreadLimit } from '../runtime/in-thread-bytes.js';
import { type OnProgress, ProgressTracker } from './progress.js';
import { Executor } from './executor.js';
import type { Stats } from '../physical/stats.js';
import { trace } from '../trace.js';

export interface Executed {
  schema: Field[];
  batches: Batch[];
  numRows: number;
  stats: Stats;
  /** the file written, when the plan has `output` */
  outputPath?: string;
}

/**
 * Run a loaded plan. With an output file (and `writeOut`) the final stage's
 * batches are written as they are produced; `keepBatches: false` then keeps
 * none of them in memory (the result's `batches` is empty), so that a result
 * larger than memory can be written.
 */
export async function execute(
  lp: LoadedPlan,
  writeOut = true,
  hooks: { onProgress?: OnProgress; keepBatches?: boolean; stdout?: NodeJS.WritableStream } = {},
): Promise<Executed> {
  const t0 = performance.now();
  const keepBatches = hooks.keepBatches ?? true;
  const inThread = runsInThread(scanBytes(lp.root), inThreadLimit(lp.settings.inThreadBytes, poolStarted()));
  // on the calling thread, tasks run one after another: a file's row groups are read by one task
  const root = inThread ? mergeScans(lp.root, IN_THREAD_TASK_BYTES) : lp.root;
  const ex = new Executor(lp.settings, new ProgressTracker(hooks.onProgress, t0, root), inThread);
  ex.stats.inThread = inThread;
  if (lp.joinOrder) ex.stats.joinOrders = lp.joinOrder.map((j) => ({ root: j.root, reordered: j.changed }));
  ex.shareRepeats(root);
  trace('run: start');
  const schema = lp.root.schema;
  let batches: Batch[] = [];
  let numRows = 0;
  let file: ResultFile | null = null;
  try {
    if (lp.output && writeOut) {
      const f = (file = await (await import('../io/result-file.js')).ResultFile.open(
        lp.output.path,
        lp.output.format,
        schema,
        hooks.stdout,
      ));
      // Parquet rows kept nowhere are encoded by the final tasks themselves (physical/exchange/encode-output.ts);
      // on this thread that would gain nothing
      const encodeInTasks = lp.output.format === 'parquet' && !keepBatches && !inThread;
      await ex.streamBatches(
        root,
        ({ batches: bs, encoded }) => {
          // a write failed (the pipe's reader went away): no task starts any more, finish() throws
          if (f.failed) return true;
          numRows += rowCount(bs) + (encoded ?? []).reduce((a, g) => a + g.rows, 0);
          if (keepBatches) batches.push(...bs);
          // the promise holds later tasks back while the file falls behind; a failed write fails finish()
          return (encoded ? f.writeEncoded(encoded) : f.write(bs)).catch(() => undefined);
        },
        encodeInTasks ? schema : undefined,
      );
      await f.finish();
    } else {
      batches = await ex.collectBatches(root);
      numRows = rowCount(batches);
    }
  } catch (e) {
    file?.abort();
    throw e;
  } finally {
    await ex.close();
  }
  ex.stats.wallMs = performance.now() - t0;
  trace('run: end');
  ex.stats.outputRows = numRows;
  ex.progress.end(ex.stats.wallMs);
  return { schema, batches, numRows, stats: ex.stats, outputPath: file?.file };
}
