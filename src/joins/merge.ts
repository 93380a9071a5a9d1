// Two broadcast probes in a row where the second's keys are all columns of the
// first's table (a snowflake: lineitem → customer → nation): the two tables
// are joined once, on the coordinator, into one table probed once. The first
// table's columns are then never gathered for every probing row before the
// second probe, and an aggregate grouped by both tables' columns (q10's
// customer and nation) is grouped by one table's rows: it fuses with the probe.
import { type Schema, rowCount } from '../kernels/column.js';
import { buildBroadcast } from '../exec/broadcast.js';
import type { Pipeline } from '../exec/physical.js';
import type { RowOp } from '../exec/task.js';
import { type ProbeOp, probeBatch } from './probe.js';

/**
 * The pipeline (ending in a probe) with the probe that comes next in `after`
 * merged into it; null unless both are inner joins probed by their left side,
 * the second's keys are the first table's columns and no row of the first
 * table matches twice (so the merged table is no bigger in rows).
 */
export function mergeProbes(pipeline: Pipeline, after: RowOp[]): { pipeline: Pipeline; after: RowOp[] } | null {
  const first = pipeline.ops[pipeline.ops.length - 1], second = after[0];
  if (first?.kind !== 'probe' || second?.kind !== 'probe' || !first.buildNorms) return null;
  if (first.type !== 'inner' || second.type !== 'inner' || first.buildFirst || second.buildFirst) return null;
  const np = first.leftSchema.length;
  if (!second.keys.every((k) => k >= np)) return null;
  const t = first.table;
  const rows = probeBatch(t.batch, { ...second, keys: second.keys.map((k) => k - np) });
  if (rowCount(rows) > t.batch.length) return null;
  const tableSchema: Schema = [...first.rightSchema, ...second.rightSchema];
  const op: ProbeOp = { ...first, table: buildBroadcast(tableSchema, rows, first.buildKeys, first.buildNorms), rightSchema: tableSchema };
  return { pipeline: { ...pipeline, ops: [...pipeline.ops.slice(0, -1), op], schema: [...first.leftSchema, ...tableSchema] }, after: after.slice(1) };
}
