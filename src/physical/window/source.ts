// The window kernel: a task's rows sorted by (partition keys, order keys), then each function's column computed over
// them (window/functions.ts) and appended; the rows leave in that order.
import { concatBatches, gatherSelected } from '../../kernels/column.js';
import { sortIndices } from '../../kernels/sort.js';
import type { SourceKernel } from '../task.js';
import { shapeOf } from './bounds.js';
import { windowColumn } from './functions.js';
import type { WindowSource } from './window-source.js';

export const windowKernel: SourceKernel<WindowSource> = {
  inputs: (src) => src.input,
  withInputs: (src, input) => ({ ...src, input }),
  produce(src) {
    const rows = concatBatches(src.schema, src.input);
    if (rows.length === 0) return { batches: [], rows: 0 };
    const keys = [...src.partitionBy.map((col) => ({ col, desc: false, nullsFirst: false })), ...src.orderBy];
    const order = sortIndices(rows, keys);
    const sorted = { length: rows.length, columns: rows.columns.map((c) => gatherSelected(c, order, order.length)) };
    const shape = shapeOf(sorted, src.partitionBy, src.orderBy);
    const added = src.fns.map((f) => windowColumn(f, sorted, shape, src.orderBy));
    return { batches: [{ length: sorted.length, columns: [...sorted.columns, ...added] }], rows: rows.length };
  },
};
