// Two broadcast probes in a row where the second's keys are all columns of the
// first's table and every row of that table finds exactly one row of the
// second (a snowflake's foreign key: lineitem → customer → nation): the second
// table's columns are gathered once onto the first table's rows, which keep
// their hash table, so one probe serves both. The first table's columns are
// then never gathered for every probing row before the second probe, and an
// aggregate grouped by both tables' columns (q10's customer and nation) is
// grouped by one table's rows: it fuses with the probe.
import { type Schema, gather, shareBatch } from '../../kernels/column.js';
import { JoinProbe } from '../../kernels/join.js';
import { KeyTable } from '../../kernels/table.js';
import type { Pipeline } from '../pipeline.js';
import type { RowOp } from '../task.js';
import { type ProbeOp, probeKeys } from './probe.js';

/**
 * The pipeline (ending in a probe) with the probe that comes next in `after`
 * merged into it; null unless both are inner joins probed by their left side,
 * the second's keys are the first table's columns, and each row of the first
 * table matches one row of the second (none dropped, none repeated).
 */
export function mergeProbes(pipeline: Pipeline, after: RowOp[]): { pipeline: Pipeline; after: RowOp[] } | null {
  const first = pipeline.ops[pipeline.ops.length - 1],
    second = after[0];
  if (first?.kind !== 'probe' || second?.kind !== 'probe') return null;
  if (first.type !== 'inner' || second.type !== 'inner' || first.buildFirst || second.buildFirst) return null;
  const np = first.leftSchema.length;
  if (!second.keys.every((k) => k >= np)) return null;
  const rows = first.table.batch,
    n = rows.length,
    t2 = second.table;
  const match = new Int32Array(n).fill(-1);
  let once = true;
  new JoinProbe('inner', t2.keys, new KeyTable(t2.keys, true, t2)).probe(
    probeKeys(rows, { ...second, keys: second.keys.map((k) => k - np) }),
    (pi, bi, m) => {
      for (let k = 0; k < m; k++) {
        if (match[pi[k]] >= 0) once = false;
        match[pi[k]] = bi[k];
      }
    },
  );
  if (!once || match.includes(-1)) return null;
  const added = shareBatch({ length: n, columns: t2.batch.columns.map((c) => gather(c, match, n)) });
  const tableSchema: Schema = [...first.rightSchema, ...second.rightSchema];
  const table = {
    ...first.table,
    id: `${first.table.id}+${t2.id}`,
    batch: { length: n, columns: [...rows.columns, ...added.columns] },
    groups: undefined,
  };
  const op: ProbeOp = { ...first, table, rightSchema: tableSchema };
  return {
    pipeline: { ...pipeline, ops: [...pipeline.ops.slice(0, -1), op], schema: [...first.leftSchema, ...tableSchema] },
    after: after.slice(1),
  };
}
