// The library entry: run a plan (a file path or an object) and get the
// result batches, an Arrow table, rows as objects, and the run statistics.
import type * as arrow from 'apache-arrow';
import { tableToArrow } from './io/arrow.js';
import { ExecutionError, SkewjoinError } from './errors.js';
import type { Batch, Field } from './kernels/column.js';
import { type RowOptions, batchRows } from './io/rows.js';
import { execute } from './scheduler/execute.js';
import type { OnProgress } from './scheduler/progress.js';
import type { Stats } from './physical/stats.js';
import { type LoadOptions, type LoadedPlan, loadPlan } from './plan/load.js';
import type { Plan } from './plan/spec.js';

/** `baseDir` and the overrides as `loadPlan` takes them, and what a run adds. */
export interface RunOptions extends LoadOptions {
  /** write `output` when the plan has one (default true) */
  writeOutput?: boolean;
  /**
   * called as tasks finish with the stage, tasks done/total, rows read, bytes shuffled and spilled, elapsed ms; the
   * last call at the totals
   */
  onProgress?: OnProgress;
  /** 'spark': run on Apache Spark through Spark Connect (src/spark/engine.ts); default 'local' */
  engine?: 'local' | 'spark';
  /**
   * with engine 'spark': sc://host:port[/;token=...]; default SPARK_REMOTE, else a local server kept until closePool()
   */
  remote?: string;
  /** with engine 'spark': replace the files of a URI output folder (refused without it) */
  replaceOutput?: boolean;
}

export interface RunResult {
  schema: Field[];
  batches: Batch[];
  numRows: number;
  stats: Stats;
  /** the file written, when the plan has `output` */
  outputPath?: string;
  toArrow(): arrow.Table;
  /**
   * Rows as plain objects: 64-bit integers as bigint, decimals as exact text ('1234.50'), nulls as null,
   * dates and timestamps as ISO text ('1996-09-24', as `--json` prints them); `{ dates: 'date' }` gives
   * `Date` objects, `{ dates: 'raw' }` the stored numbers (days since 1970, a bigint count of the unit).
   * `{ integers: 'number' }` gives 64-bit integers as numbers (so that `JSON.stringify` takes the rows): exact up
   * to 2^53 - 1, a RangeError naming the column beyond.
   */
  toRows(options?: RowOptions): Record<string, unknown>[];
}

/**
 * Run a loaded plan (scheduler/execute.ts). With an output file (and `writeOut`)
 * the final stage's batches are written as they are produced; `keepBatches:
 * false` then keeps none of them in memory (the result's `batches` is empty).
 */
export async function executePlan(
  lp: LoadedPlan,
  writeOut = true,
  hooks: { onProgress?: OnProgress; keepBatches?: boolean } = {},
): Promise<RunResult> {
  return withViews(await execute(lp, writeOut, hooks));
}

/** A run's result with its Arrow and row views. */
function withViews(r: Awaited<ReturnType<typeof execute>>): RunResult {
  const { schema, batches } = r;
  return {
    ...r,
    toArrow: () => tableToArrow(schema, batches),
    toRows: (o?: RowOptions) => batchRows(schema, batches, o),
  };
}

/**
 * Load, validate, bind and run a plan: a plan file's path, or a `Plan` object (typed, so that a
 * misspelled operator or field is a compile error; `definePlan` types a plan kept in a variable).
 * Throws PlanError (exit 2), InputError (exit 3) or ExecutionError.
 */
export async function runPlan(plan: Plan | string, options: RunOptions = {}): Promise<RunResult> {
  try {
    if (options.engine === 'spark') {
      const { executeOnSpark, loadForSpark } = await import('./spark/engine.js');
      const lp = await loadForSpark(plan, options, options.remote);
      const writeOut = options.writeOutput ?? true;
      const { remote, onProgress, replaceOutput } = options;
      return withViews(await executeOnSpark(lp, { remote, onProgress, writeOut, replaceOutput }));
    }
    const lp = await loadPlan(plan, options);
    return await executePlan(lp, options.writeOutput ?? true, { onProgress: options.onProgress });
  } catch (e) {
    throw typed(e);
  }
}

/**
 * A plan object, type-checked where it is written: `const plan = definePlan({ ... })` is a `Plan`,
 * where a plain `const` would widen `op: 'aggregate'` to string and fail only where it is used.
 * Not generic on purpose: a generic parameter would let misspelled fields (`colums`) through.
 */
export function definePlan(plan: Plan): Plan {
  return plan;
}

/** No untyped error leaves the library: anything else is an ExecutionError (exit 1) keeping the original stack. */
function typed(e: unknown): SkewjoinError {
  if (e instanceof SkewjoinError) return e;
  const err = new ExecutionError(`internal error: ${(e as Error)?.message ?? String(e)}`);
  if (e instanceof Error && e.stack) err.stack = e.stack;
  return err;
}
