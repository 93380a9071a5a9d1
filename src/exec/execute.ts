// Run a loaded plan and write its output: what the command line needs, without
// the library's Arrow conversions (src/api.ts adds those), so that a run loads
// Arrow JS only when a file needs it.
import { type Batch, type Field, rowCount } from '../kernels/column.js';
import type { LoadedPlan } from '../plan/load.js';
import { runsInThread } from './local.js';
import { scanBytes } from './physical.js';
import { type OnProgress, ProgressTracker } from './progress.js';
import { Executor } from './run.js';
import type { Stats } from './stats.js';

export interface Executed {
  schema: Field[];
  batches: Batch[];
  numRows: number;
  stats: Stats;
  /** the file written, when the plan has `output` */
  outputPath?: string;
}

export async function execute(lp: LoadedPlan, writeOut = true, hooks: { onProgress?: OnProgress } = {}): Promise<Executed> {
  const t0 = performance.now();
  const inThread = runsInThread(scanBytes(lp.root), lp.settings.inThreadBytes);
  const ex = new Executor(lp.settings, new ProgressTracker(hooks.onProgress, t0), inThread);
  ex.stats.inThread = inThread;
  const batches = await ex.collectBatches(lp.root);
  const schema = lp.root.schema;
  const numRows = rowCount(batches);
  let outputPath: string | undefined;
  if (lp.output && writeOut) {
    await (await import('../io/output.js')).writeOutput(lp.output.path, lp.output.format, schema, batches);
    outputPath = lp.output.path;
  }
  ex.stats.wallMs = performance.now() - t0;
  ex.stats.outputRows = numRows;
  ex.progress.end(ex.stats.wallMs);
  return { schema, batches, numRows, stats: ex.stats, outputPath };
}
