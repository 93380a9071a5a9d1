// The final stage of a Parquet output encodes its own rows: its tasks return
// row groups (io/parquet-encode.ts), compressed, instead of batches, so that
// the coordinator only appends bytes in order and writes the footer, and the
// encoding runs on the workers in parallel. A task with few rows returns
// them as batches: the coordinator gathers those into full row groups.
import { type Batch, rowCount } from '../../kernels/column.js';
import type { TaskResult, TaskSink } from '../task.js';

/** Fewer output rows than this (a quarter of a row group) go back as batches. */
const MIN_ENCODED_ROWS = 1 << 15;

/** Whether a task with this sink and output encodes it. */
export function encodesOutput(sink: TaskSink, batches: Batch[]): boolean {
  return sink.kind === 'collect' && sink.parquet !== undefined && rowCount(batches) >= MIN_ENCODED_ROWS;
}

/** The result with its rows as Parquet row groups, when the sink asks for them and they are enough. */
export async function encodeOutput(sink: TaskSink, r: TaskResult): Promise<TaskResult> {
  const batches = r.batches as Batch[];
  if (sink.kind !== 'collect' || !sink.parquet || !encodesOutput(sink, batches)) return r;
  const { encodeRowGroups } = await import('../../io/parquet-encode.js'); // loaded by the tasks that encode only
  return { ...r, batches: [], encoded: encodeRowGroups(sink.parquet, batches) };
}
