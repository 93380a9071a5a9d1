// The window kernel: a task's rows sorted by (partition keys, order keys), then each function's column computed over
// them (window/functions.ts) and appended; the rows leave in that order. A piece of a split partition keeps its
// range's rows (cut by a task of its own) and reports a summary; its second pass adds what the pieces before carry (window/split.ts).
import {
  type Batch,
  type Column,
  type Schema,
  type Values,
  concatBatches,
  concatColumns,
  emptyBatch,
  gatherSelected,
  lanes,
  rowCount,
  rowWidth,
  sliceColumn,
  valuesCtor,
} from '../../kernels/column.js';
import { scratchBytes } from './scratch.js';
import { sortIndices } from '../../kernels/sort.js';
import type { Produced, SourceKernel } from '../task.js';
import { type Shape, shapeOf } from './bounds.js';
import { type Packed, packKeys, shapeOfPacked, sortPacked } from './packed.js';
import { streamWindow } from './stream.js';
import { windowColumn } from './functions.js';
import { topNBlocks } from './topn.js';
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
 * found after. The rows sorted (only the columns `need`, in that order; all when null), and their shape.
 */
function sortRows(
  rows: Batch,
  src: WindowSource,
  need: number[] | null,
  packed: Packed | null,
): { sorted: Batch; shape: Shape } {
  const n = rows.length;
  const gatherAll = (order: Int32Array) => ({
    length: n,
    columns: (need ?? rows.columns.map((_, i) => i)).map((c) => gatherSelected(rows.columns[c], order, n)),
  });
  if (!packed) {
    const order = sortIndices(rows, sortKeys(src));
    const keys: Batch = {
      length: n,
      columns: [...src.partitionBy, ...src.orderBy.map((k) => k.col)].map((c) =>
        gatherSelected(rows.columns[c], order, n),
      ),
    };
    const p = src.partitionBy.length;
    const shape = shapeOf(
      keys,
      src.partitionBy.map((_, i) => i),
      src.orderBy.map((k, i) => ({ ...k, col: p + i })),
    );
    return { sorted: gatherAll(order), shape };
  }
  const { order, sorted: codes, starts } = sortPacked(packed);
  const shape = shapeOfPacked(codes, packed.orderSpan, src.partitionBy.length > 0, src.orderBy.length > 0, starts);
  return { sorted: gatherAll(order), shape };
}

/**
 * What a task with `keep` gathers: the kept columns, the functions' arguments and defaults, and the first order key
 * when a RANGE frame has offsets (its values bound the frames); as input column → its index there.
 */
function gathered(src: WindowSource, keep: number[]): number[] {
  const need = new Set(keep);
  for (const f of src.fns) {
    if (f.col >= 0) need.add(f.col);
    if (f.def >= 0) need.add(f.def);
    const offsets =
      f.frame.unit === 'range' &&
      ((f.frame.start !== null && f.frame.start !== 0) || (f.frame.end !== null && f.frame.end !== 0));
    if (offsets && src.orderBy.length) need.add(src.orderBy[0].col);
  }
  return [...need].sort((a, b) => a - b);
}

/**
 * The task's input blocks as one batch of the columns `cols` (the others empty: not read), fixed-width ones copied
 * into the thread's scratch slots (window/scratch.ts): the batch does not outlive the task's sort, which gathers
 * what leaves it. Strings concatenated as usual.
 */
function concatScratch(schema: Schema, input: Batch[], cols: Set<number>): Batch {
  if (input.length === 1) return input[0];
  const n = rowCount(input);
  const columns = schema.map((f, c): Column => {
    if (!cols.has(c) || f.type.id === 'utf8')
      return concatColumns(f.type, cols.has(c) ? input.map((b) => b.columns[c]) : []);
    const l = lanes(f.type),
      width = rowWidth(f.type);
    const buf = scratchBytes(`in${c}`, n * width);
    const Ctor = valuesCtor(f.type);
    const values = (buf === null ? new Ctor(n * l) : new Ctor(buf, 0, n * l)) as Values;
    let anyNull = false;
    for (const b of input) if (b.columns[c].valid !== null) anyNull = true;
    let valid: Uint8Array | null = null;
    if (anyNull) {
      const vb = scratchBytes(`valid${c}`, n);
      valid = vb === null ? new Uint8Array(n) : new Uint8Array(vb, 0, n);
    }
    let p = 0;
    for (const b of input) {
      const col = b.columns[c],
        m = b.length;
      (values as Int32Array).set((col.values as Int32Array).subarray(0, m * l), p * l);
      if (valid !== null) {
        if (col.valid !== null) valid.set(col.valid.subarray(0, m), p);
        else valid.fill(1, p, p + m);
      }
      p += m;
    }
    return { type: f.type, length: n, values, valid };
  });
  return { length: n, columns };
}

/** The kept input columns (`keep`, of a batch whose first `w` columns are the input's) and the functions'. */
function emit(b: Batch, w: number, keep: number[] | undefined): Batch {
  if (!keep) return b;
  return { length: b.length, columns: [...keep.map((c) => b.columns[c]), ...b.columns.slice(w)] };
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
      return { batches: [emit(out, w, src.keep)], rows: rows.length };
    }
    if (src.cut) {
      const turn = src.deal === undefined ? undefined : { next: src.deal };
      const parts = cutByBounds(src.schema, src.input, src.cut, sortKeys(src), turn);
      return { batches: parts, rows: rowCount(src.input), asIs: true };
    }
    // the keys packed from the input blocks as they are; gathered from: every column, or with `keep` those and the
    // functions' inputs, and the keys when they do not pack (the column sort reads them)
    const read = rowCount(src.input);
    const need = src.keep && !src.piece ? gathered(src, src.keep) : null;
    const cols = new Set(need ?? src.schema.map((_, c) => c));
    const keys = [...src.partitionBy, ...src.orderBy.map((k) => k.col)];
    // a top-N filter above: only the rows that may pass it are gathered (their keys too) and sorted, their keys
    // packed from them (window/topn.ts); a split's pieces keep theirs
    const kept =
      src.topN !== undefined && !src.piece
        ? topNBlocks(src.schema, src.input, src.partitionBy, src.orderBy, src.topN, new Set([...cols, ...keys]))
        : null;
    let packed = kept === null && read >= PACK_MIN_ROWS ? packKeys(src.input, src.partitionBy, src.orderBy) : null;
    if (packed === null) for (const c of keys) cols.add(c);
    const rows = kept ?? concatScratch(src.schema, src.input, cols);
    if (kept !== null) packed = rows.length >= PACK_MIN_ROWS ? packKeys([rows], src.partitionBy, src.orderBy) : null;
    if (rows.length === 0) {
      if (!src.piece) return { batches: [], rows: read };
      const none = emptyBatch([...src.schema, ...src.fns.map((f) => ({ name: f.as, type: f.type }))]);
      return { batches: [none, { length: 0, columns: [] }], rows: read, asIs: true };
    }
    if (packed !== null && !src.piece) {
      // rows already in order within their partitions: the running functions in input order, nothing sorted
      const added = streamWindow(rows, src.fns, packed, src.orderBy.length > 0);
      if (added !== null) {
        const own = (c: Column) => (src.input.length > 1 && c.type.id !== 'utf8' ? sliceColumn(c, 0, c.length) : c);
        const kept = (src.keep ?? src.schema.map((_, c) => c)).map((c) => own(rows.columns[c]));
        return { batches: [{ length: rows.length, columns: [...kept, ...added] }], rows: read };
      }
    }
    if (src.keep && need !== null) {
      // only the kept columns and the functions' inputs gathered; the functions read them at their new places
      const at = (c: number) => (c < 0 ? -1 : need.indexOf(c));
      const { sorted, shape } = sortRows(rows, src, need, packed);
      const orderBy = src.orderBy.map((k) => ({ ...k, col: at(k.col) }));
      const added = src.fns.map((f) => windowColumn({ ...f, col: at(f.col), def: at(f.def) }, sorted, shape, orderBy));
      const columns = [...src.keep.map((c) => sorted.columns[at(c)]), ...added];
      return { batches: [{ length: sorted.length, columns }], rows: read };
    }
    const { sorted, shape } = sortRows(rows, src, null, packed);
    const added = src.fns.map((f) => windowColumn(f, sorted, shape, src.orderBy));
    const out: Batch = { length: sorted.length, columns: [...sorted.columns, ...added] };
    if (!src.piece) return { batches: [out], rows: read };
    return { batches: [out, summaryOf(out, w, src.partitionBy, src.orderBy, src.fns, shape)], rows: read, asIs: true };
  },
};
