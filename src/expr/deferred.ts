// A dense filter's rows left where they are: when a filter keeps most rows of
// a batch and only computed columns and a combiner follow, gathering every
// kept row into new arrays costs more than carrying the selection along. The
// batch keeps all its rows, its selection is noted here, expressions are
// computed over every row (again over the gathered rows if that fails: an
// error from a row the filter dropped must not surface), and the combiner
// groups the selected rows only (agg/partial.ts). Anything else gathers first.
import { type Batch, gatherSelected } from '../kernels/column.js';
import type { Selection } from './select.js';

/** Kept rows per batch above which the gather is deferred. */
export const DENSE = 0.75;

const pending = new WeakMap<Batch, Selection>();

/** `b` with its rows `sel` (ascending, owned by the caller from now on) still to be picked. */
export function defer(b: Batch, sel: Selection): Batch {
  pending.set(b, sel);
  return b;
}

export const selectionOf = (b: Batch): Selection | undefined => pending.get(b);

/** The rows of `b` that count: its deferred selection's, or all. */
export const selectedRows = (b: Batch): number => pending.get(b)?.n ?? b.length;

/** A derived batch (same rows, other columns) keeps the selection of the batch it came from. */
export function carry(from: Batch, to: Batch): Batch {
  const s = pending.get(from);
  return s ? defer(to, s) : to;
}

/** The batch with its selection applied (only its first `limit` rows when given). */
export function materialize(b: Batch, limit = Infinity): Batch {
  const s = pending.get(b);
  if (!s) return b;
  const n = Math.min(s.n, limit);
  return { length: n, columns: b.columns.map((c) => gatherSelected(c, s.idx, n)) };
}
