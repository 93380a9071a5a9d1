// The map side of a semi or anti join whose left side was built (physical/join/marked.ts): a row operator that
// probes the left side's table with each batch of the right side and marks the table rows it matches in a byte
// array every task shares. It emits no rows: the left rows marked (semi) or not (anti) are the join's output.
import type { Batch } from '../../kernels/column.js';
import { JoinProbe } from '../../kernels/join.js';
import { KeyTable } from '../../kernels/table.js';
import type { KeyNorm } from '../../plan/bound.js';
import { type BroadcastTable, probeKeys } from './probe.js';

export interface MarkOp {
  kind: 'mark';
  /** the join's id (for --explain) */
  id: string;
  /** the left side's rows built into a table */
  table: BroadcastTable;
  /** key columns of the probing (right) rows, and their normal forms */
  keys: number[];
  norms: KeyNorm[];
  /** a byte per table row, in a SharedArrayBuffer: 1 once a probing row matched it (writes of 1 race harmlessly) */
  marks: Uint8Array;
}

/** Mark the table rows this batch's rows match; no rows out. */
export function markBatch(b: Batch, op: MarkOp): Batch[] {
  if (b.length === 0) return [];
  const t = op.table,
    marks = op.marks;
  const joiner = new JoinProbe('inner', t.keys, new KeyTable(t.keys, true, t));
  joiner.probe(probeKeys(b, { keys: op.keys, norms: op.norms, table: t }), (_pi, bi, n) => markRows(marks, bi, n));
  return [];
}

function markRows(marks: Uint8Array, rows: Int32Array, n: number): void {
  for (let i = 0; i < n; i++) marks[rows[i]] = 1;
}
