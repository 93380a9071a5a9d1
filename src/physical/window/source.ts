// The window kernel: a task's rows sorted by (partition keys, order keys), then each function's column computed over
// them (window/functions.ts) and appended; the rows leave in that order. A piece of a split partition keeps its
// range's rows (cut by a task of its own) and reports a summary; its second pass adds what the pieces before carry (window/split.ts).
import { type Batch, concatBatches, emptyBatch, gatherSelected, rowCount } from '../../kernels/column.js';
import { sortIndices } from '../../kernels/sort.js';
import type { Produced, SourceKernel } from '../task.js';
import { type Shape, shapeOf } from './bounds.js';
import { packKeys, shapeOfPacked, sortPacked } from './packed.js';
import { windowColumn } from './functions.js';
import { summaryR } from './carry.js';
import { cutByBounds, summaryOf, withAfter, withCarry, withNeighbours, withTotals, withWhole } from './split.js';
import type { WindowSource } from './window-source.js';

const sortKeys = (src: WindowSource) => [
  ...src.partitionBy.map((col) => ({ col, desc: false, nullsFirst: false })),
  ...src.orderBy,
];

/** Rows from which integer keys are packed into one number a row and radix sorted (below, by comparisons). */
const PACK_MIN_ROWS = 4096;

/**
 * The task's row order by (partition keys, order keys): integer keys packed into one number a row and sorted by it,
 * the partitions and peers read off the sorted numbers (window/packed.ts); else by the columns (kernels/sort.ts), the shape
 * found after. The rows sorted, and their shape.
 */
function sortRows(rows: Batch, src: WindowSource): { sorted: Batch; shape: Shape } {
  const packed = rows.length >= PACK_MIN_ROWS ? packKeys(rows, src.partitionBy, src.orderBy) : null;
  const n = rows.length;
  if (!packed) {
    const order = sortIndices(rows, sortKeys(src));
    const sorted = { length: n, columns: rows.columns.map((c) => gatherSelected(c, order, n)) };
    return { sorted, shape: shapeOf(sorted, src.partitionBy, src.orderBy) };
  }
  const { order, sorted: codes } = sortPacked(packed);
  const shape = shapeOfPacked(codes, packed.orderSpan, src.partitionBy.length > 0, src.orderBy.length > 0);
  const columns = rows.columns.map((c) => gatherSelected(c, order, n));
  return { sorted: { length: n, columns }, shape };
}

export const windowKernel: SourceKernel<WindowSource> = {
  inputs: (src) => src.input,
  withInputs: (src, input) => ({ ...src, input }),
  produce(src): Produced {
    // the second pass reads the rows computed: the input's columns, then the functions'
    const w = src.schema.length - (src.carry ? src.fns.length : 0);
    if (src.carry) {
      const c = src.carry;
      const rows = concatBatches(src.schema, src.input);
      let out = c.values ? withCarry(rows, w, src.partitionBy, src.orderBy, src.fns, c.upTo, c.values) : rows;
      if (c.totals) {
        const before = c.values ? (c.values.columns[summaryR(src.partitionBy.length)].values as Float64Array)[0] : 0;
        out = withTotals(out, w, src.partitionBy, src.orderBy, src.fns, c.upTo, before, c.totals);
      }
      if (c.neighbours) out = withNeighbours(out, w, src, c.neighbours);
      if (c.after) out = withAfter(out, w, src, c.after.lastFrom, c.after.values);
      if (c.whole) out = withWhole(out, w, src.partitionBy.length, src.fns, c.upTo, c.whole);
      return { batches: [out], rows: rows.length };
    }
    if (src.cut) {
      const turn = src.deal === undefined ? undefined : { next: src.deal };
      const parts = cutByBounds(src.schema, src.input, src.cut, sortKeys(src), turn);
      return { batches: parts, rows: rowCount(src.input), asIs: true };
    }
    const rows = concatBatches(src.schema, src.input);
    const read = rows.length;
    if (rows.length === 0) {
      if (!src.piece) return { batches: [], rows: read };
      const none = emptyBatch([...src.schema, ...src.fns.map((f) => ({ name: f.as, type: f.type }))]);
      return { batches: [none, { length: 0, columns: [] }], rows: read, asIs: true };
    }
    const { sorted, shape } = sortRows(rows, src);
    const added = src.fns.map((f) => windowColumn(f, sorted, shape, src.orderBy));
    const out: Batch = { length: sorted.length, columns: [...sorted.columns, ...added] };
    if (!src.piece) return { batches: [out], rows: read };
    return { batches: [out, summaryOf(out, w, src.partitionBy, src.orderBy, src.fns, shape)], rows: read, asIs: true };
  },
};
