// Row operators of the set operations, on the worker: a batch expanded into one batch per copy (grouping sets:
// its columns or nulls, then the copy's tag), or each row repeated as
// often as a count column says (INTERSECT ALL, EXCEPT ALL). A batch at a time, over typed arrays.
import { type Batch, type Column, type DataType, gatherBatch } from '../../kernels/column.js';
import { constColumn } from '../../expr/vector.js';

export type RowsOp =
  /** types: the output's columns (the copies' then the tag's) */
  { kind: 'expand'; copies: { cols: number[]; tag: number }[]; types: DataType[] } | { kind: 'repeat'; col: number };

export function rowsBatch(b: Batch, op: RowsOp): Batch[] {
  return op.kind === 'expand' ? expand(b, op) : [repeat(b, op.col)];
}

function expand(b: Batch, op: Extract<RowsOp, { kind: 'expand' }>): Batch[] {
  const n = b.length;
  const nulls = new Map<number, Column>();
  const nullOf = (j: number) => {
    let c = nulls.get(j);
    if (!c) nulls.set(j, (c = constColumn(null, op.types[j], n)));
    return c;
  };
  return op.copies.map((copy) => ({
    length: n,
    columns: [
      ...copy.cols.map((i, j) => (i < 0 ? nullOf(j) : b.columns[i])),
      constColumn(BigInt(copy.tag), op.types[op.types.length - 1], n),
    ],
  }));
}

/** Each row `count` times (a null or non-positive count: none), in order. */
function repeat(b: Batch, col: number): Batch {
  const c = b.columns[col];
  const v = c.values as BigInt64Array,
    valid = c.valid;
  let total = 0;
  for (let i = 0; i < b.length; i++) if ((valid === null || valid[i]) && v[i] > 0n) total += Number(v[i]);
  const idx = new Int32Array(total);
  let k = 0;
  for (let i = 0; i < b.length; i++) {
    if (valid !== null && !valid[i]) continue;
    for (let r = Number(v[i]); r > 0; r--) idx[k++] = i;
  }
  return gatherBatch(b, idx, total);
}
