// A sort above a shuffle join: the join's reduce tasks cut their output into
// the sort's ranges themselves (a range sink), so the joined rows are not
// held or spilled whole and read again by range tasks. The boundaries must
// be known before those tasks start: a few pilot tasks (one per worker, over
// plain hash partitions: each a random share of the join keys) run first and
// return their rows with a sample; the boundaries come from the pilots'
// samples, the pilots' rows are cut by range tasks, and the other tasks
// range-partition what they produce. A range the pilots misjudged (a hot
// value they did not see) is cut again by physical/sort/stage.ts.
import { plannedWorkers } from '../plan/load.js';
import type { TaskResult, TaskSink } from './task.js';
import type { ExecContext, RangeRequest } from './operator.js';
import { boundsFromSamples, outputBytes, rangeTasks } from './range-shuffle.js';

/** Rows sampled from each pilot's output (the boundaries of up to thousands of ranges come from a few pilots). */
const PILOT_SAMPLE_ROWS = 16384;

/**
 * Run planned tasks (`run(task, sink)`, whose tasks write to the sink given)
 * with the pilots first; every result comes back as range-sink output (each task's
 * rows per range: `partitionRows` says how many ranges). `plain`: tasks over whole hash partitions, preferred as
 * pilots (a skew split's piece holds few keys); `bytes`: each task's input.
 */
export async function runRanged<T extends { bytes: number }>(
  ex: ExecContext,
  req: RangeRequest,
  tasks: T[],
  plain: (t: T) => boolean,
  run: (t: T, sink: TaskSink) => Promise<TaskResult[]>,
): Promise<TaskResult[]> {
  const pilots = choosePilots(tasks, plain, plannedWorkers(ex.settings));
  const first = (await Promise.all(pilots.map((t) => run(t, { kind: 'collect', sample: PILOT_SAMPLE_ROWS })))).flat();
  // the join's output size, estimated from the pilots' output per byte of input
  const pilotIn = pilots.reduce((a, t) => a + t.bytes, 0),
    allIn = tasks.reduce((a, t) => a + t.bytes, 0);
  const pilotOut = outputBytes(first);
  const total = pilotIn > 0 ? (pilotOut / pilotIn) * allIn : pilotOut;
  const bounds = boundsFromSamples(
    req,
    first.flatMap((r) => (r.sample ? [r.sample] : [])),
    total,
  );
  const sink: TaskSink = { kind: 'range', by: req.by, bounds, nullSeed: 0, spread: req.spread };
  const rest = Promise.all(tasks.filter((t) => !pilots.includes(t)).map((t) => run(t, sink)));
  const cut = rangeTasks(
    ex,
    req,
    first.map((r) => r.batches),
    bounds,
    tasks.length,
  );
  const [a, b] = await Promise.all([cut, rest]);
  return [...a, ...b.flat()];
}

/** `n` tasks spread over the plan (largest to smallest), from the plain ones when there are any. */
function choosePilots<T>(tasks: T[], plain: (t: T) => boolean, n: number): T[] {
  const pool = tasks.some(plain) ? tasks.filter(plain) : tasks;
  const k = Math.min(n, pool.length);
  return Array.from({ length: k }, (_, i) => pool[Math.floor(((i + 0.5) * pool.length) / k)]);
}
