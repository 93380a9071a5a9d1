// The conjuncts of a scan task's filter that read one column each, read as their outcome (io/parquet-mask.ts): each
// evaluated once per value of the column chunk's dictionary, the rows' outcomes looked up by index, the filter then
// reading a boolean column. A column nothing else reads is never decoded (its mask in its place); a column the task
// keeps or another conjunct reads is read too (its mask appended after the columns; not a string column). When the
// masks keep few rows, the other columns are read at those rows only (io/parquet-select.ts). Decided on the worker,
// from the task alone; a file the direct reader does not take reads the columns as before and evaluates the same
// conjuncts over them, so the rewritten filter holds either way.
import { type Batch, type Column, type Field, batchesBytes, rowCount } from '../../kernels/column.js';
import { evalPredicate } from '../../expr/filter.js';
import { exprCols } from '../../expr/columns.js';
import { compileFilter } from '../../expr/select.js';
import { BOOL } from '../../expr/types.js';
import { readRowGroups, readRowGroupsInPlace } from '../../io/parquet.js';
import { type MaskSpec, dictShare, readMasks } from '../../io/parquet-mask.js';
import { readSelected } from '../../io/parquet-select.js';
import type { BoundPredicate } from '../../plan/bound.js';
import { countFilter, noteTested, testColumn, worthMasking } from '../../kernels/runtime-filter.js';
import type { Produced, RowOp, TaskSource, TaskSpec } from '../task.js';
import { scanMetrics } from './metrics.js';

type ScanSource = Extract<TaskSource, { kind: 'scan' }>;
type ScanMask = NonNullable<ScanSource['masks']>[number];

/** Types the direct reader decodes (io/parquet-direct.ts), so their dictionaries can be evaluated. */
const MASKABLE = new Set(['utf8', 'date32', 'int32', 'int64', 'decimal', 'float32', 'float64', 'timestamp']);

/** The other columns are read at the rows the masks keep when these are at most this share of the rows read. */
export const SELECT_SHARE = 0.25;

/** Rows a batch of mask columns holds when no other column sets the batches' lengths (the direct reader's). */
const MASK_BATCH_ROWS = 1 << 17;

/** A filter's conjuncts: of a predicate's AND, and of an AND of its expression form (a LIKE or BETWEEN makes one). */
function conjuncts(p: BoundPredicate): BoundPredicate[] {
  if (p.kind === 'and') return p.preds.flatMap(conjuncts);
  if (p.kind === 'expr' && p.expr.k === 'fn' && p.expr.fn === 'and')
    return p.expr.args.flatMap((expr) => conjuncts({ kind: 'expr', expr }));
  return [p];
}

/** The conjuncts as one predicate: one expression when each is one (compiled once for the task: expr/select.ts). */
function conjunction(ps: BoundPredicate[], what: string): BoundPredicate {
  if (ps.length === 1) return ps[0];
  if (!ps.every((p) => p.kind === 'expr')) return and(ps);
  const args = ps.map((p) => (p as Extract<BoundPredicate, { kind: 'expr' }>).expr);
  return { kind: 'expr', expr: { k: 'fn', fn: 'and', args, type: BOOL, what } };
}

function predCols(p: BoundPredicate, into: Set<number>): Set<number> {
  switch (p.kind) {
    case 'cmp':
    case 'in':
    case 'isNull':
      into.add(p.col);
      break;
    case 'and':
    case 'or':
      for (const q of p.preds) predCols(q, into);
      break;
    case 'not':
      predCols(p.pred, into);
      break;
    case 'expr':
      exprCols(p.expr, into);
  }
  return into;
}

/**
 * The task with the single-column conjuncts of its filter read as masks, or the task itself where none applies. A
 * column nothing else reads is not read at all (its mask stands in its place); a column the task keeps or another
 * conjunct reads is read too, at the rows the masks keep when they keep few, its mask appended after the columns.
 */
export function withMasks(t: TaskSpec): TaskSpec {
  const src = t.source;
  if (src.kind !== 'scan' || src.wholeFile || src.csv || src.masks) return t;
  // runtime join filters first after the scan (physical/join/filters.ts): one integer or string key each, read as a
  // mask of its key column unless this thread found it keeps most rows
  let lead = 0;
  while (t.ops[lead]?.kind === 'rtfilter') lead++;
  const filters = t.ops.slice(0, lead) as RtFilterOp[];
  for (const f of filters)
    if (f.keys.some((k) => src.fields[k] === undefined))
      throw new Error(`internal: runtime filter ${f.filter.id} on column ${f.keys} of a scan of ${src.fields.length}`);
  const asMask = filters.filter(
    (f) => f.keys.length === 1 && MASKABLE.has(src.fields[f.keys[0]].type.id) && worthMasking(f.filter, SELECT_SHARE),
  );
  const stay = filters.filter((f) => !asMask.includes(f));
  const [filter, next] = t.ops.slice(lead);
  const width = src.fields.length;
  const hasFilter = filter?.kind === 'filter';
  const project = hasFilter && next?.kind === 'project' ? next : null;
  const all = hasFilter ? conjuncts(filter.pred) : [];
  const cols = all.map((c) => predCols(c, new Set()));
  const usedElsewhere = new Set(project ? project.indices : src.fields.map((_, i) => i));
  cols.forEach((s) => {
    if (s.size !== 1) for (const c of s) usedElsewhere.add(c);
  });
  for (const f of stay) for (const c of f.keys) usedElsewhere.add(c);
  const masked = new Map<number, BoundPredicate[]>();
  all.forEach((c, i) => {
    const col = cols[i].size === 1 ? [...cols[i]][0] : -1;
    if (col < 0 || !MASKABLE.has(src.fields[col].type.id)) return;
    // a string column read anyway is not read twice: strings mostly differ (TPC-H q22's phones: 10% more CPU)
    if (usedElsewhere.has(col) && src.fields[col].type.id === 'utf8') return;
    masked.set(col, [...(masked.get(col) ?? []), c]);
  });
  if (masked.size === 0 && asMask.length === 0) return t;
  const what =
    hasFilter && filter.pred.kind === 'expr' && filter.pred.expr.k === 'fn' ? filter.pred.expr.what : 'filter';
  let appended = 0;
  const masks: ScanMask[] = [...masked].map(([col, ps]) => {
    const kept = usedElsewhere.has(col);
    return { col, pred: conjunction(ps, what), ...(kept ? { at: width + appended++ } : {}) };
  });
  const rest = all.filter((_, i) => !(cols[i].size === 1 && masked.has([...cols[i]][0])));
  const refs = masks.map((m): BoundPredicate => {
    const name = `${src.fields[m.col].name} (mask)`;
    return { kind: 'expr', expr: { k: 'col', col: m.at ?? m.col, type: BOOL, name } };
  });
  for (const f of asMask) {
    const col = f.keys[0],
      at = width + appended++;
    const name = `${src.fields[col].name} (runtime filter ${f.filter.id})`;
    masks.push({ col, pred: TRUE, at, filter: f.filter, norm: f.norms[0] });
    refs.push({ kind: 'expr', expr: { k: 'col', col: at, type: BOOL, name } });
  }
  const pred = conjunction([...rest, ...refs], what);
  // the appended masks dropped after the filter, by its projection or one added
  const drop = project ?? { kind: 'project' as const, indices: src.fields.map((_, i) => i) };
  const after = t.ops.slice(lead + (hasFilter ? (project ? 2 : 1) : 0));
  return { ...t, source: { ...src, masks }, ops: [...stay, { kind: 'filter', pred }, drop, ...after] };
}

type RtFilterOp = Extract<RowOp, { kind: 'rtfilter' }>;

/** The predicate of a runtime filter's mask (never evaluated: its truth is the filter's, see truthOf). */
const TRUE: BoundPredicate = { kind: 'and', preds: [] };

const and = (preds: BoundPredicate[]): BoundPredicate => ({ kind: 'and', preds });

/**
 * A mask's predicate over a column standing at its position in the scan's batch; 1 where it holds, else 0. An
 * expression is compiled once for the task (expr/select.ts), as the filter compiles it: compiled for each page or
 * dictionary, its functions never ran long enough to be optimized (TPC-H q22's phone prefixes: 1.9 s more CPU).
 */
function truthOf(m: ScanMask, width: number): (c: Column) => Uint8Array {
  if (m.filter) {
    const f = m.filter,
      norm = m.norm!;
    return (c) => testColumn(f, c, norm);
  }
  const batch = (c: Column) => ({ length: c.length, columns: Array.from({ length: width }, () => c) });
  if (m.pred.kind === 'expr') {
    const select = compileFilter(m.pred.expr);
    return (c) => {
      const { idx, n } = select(batch(c)),
        out = new Uint8Array(c.length);
      for (let k = 0; k < n; k++) out[idx[k]] = 1;
      return out;
    };
  }
  const pred = m.pred;
  return (c) => {
    const r = evalPredicate(batch(c), pred);
    for (let i = 0; i < r.length; i++) r[i] = r[i] === 1 ? 1 : 0;
    return r;
  };
}

/**
 * The scan of a task with masks: its other columns read as before, the masks in their places or appended. An
 * appended mask (its column is read anyway) is read from the file only where the masks may keep few rows (its
 * dictionary's share of values kept says so): else it is evaluated over its column as read (TPC-H q07's two years
 * of ship dates and q03's order dates keep 30-50%: read twice they cost 3-15% more).
 */
export async function produceMasked(src: ScanSource, inPlace: boolean): Promise<Produced> {
  const masks = src.masks!,
    width = src.fields.length;
  const truths = masks.map((m) => truthOf(m, width));
  const inPlaceOf = new Map(masks.flatMap((m, i) => (m.at === undefined ? [[m.col, i] as const] : [])));
  const restFields = src.fields.filter((_, i) => !inPlaceOf.has(i));
  const restAt = restIndex(width, inPlaceOf);
  const late = lateMasks(src, masks, truths);
  const early = masks.flatMap((_, k) => (late[k] ? [] : [k]));
  // the masks first: the fallback's Parquet read would move the module's memory under columns read in place
  const outcomes: (Uint8Array | null)[] = masks.map(() => null);
  if (early.length > 0) {
    let got: Uint8Array[];
    try {
      const specs: MaskSpec[] = early.map((k) => ({ field: src.fields[masks[k].col], truth: truths[k] }));
      got = readMasks(src.path, src.rowGroups, specs, src);
    } catch {
      got = await evaluated(
        src,
        early.map((k) => masks[k]),
        width,
      );
    }
    early.forEach((k, j) => {
      outcomes[k] = got[j];
    });
    for (const k of early) if (masks[k].filter) countMask(masks[k].filter!, outcomes[k]!);
  }
  const layout = (cols: (i: number) => Column, mask: (k: number) => Column) => [
    ...src.fields.map((_, i) => (inPlaceOf.has(i) ? mask(inPlaceOf.get(i)!) : cols(i))),
    ...masks.flatMap((m, k) => (m.at === undefined ? [] : [mask(k)])),
  ];
  const lateMask = (k: number, c: Column): Column => ({
    type: BOOL,
    length: c.length,
    values: truths[k](c),
    valid: null,
  });
  if (early.length > 0 && restFields.length > 0) {
    const total = outcomes[early[0]]!.length;
    const kept = keptRows(
      early.map((k) => outcomes[k]!),
      total,
    );
    if (kept.length <= SELECT_SHARE * total) {
      const cols = readKept(src, restFields, kept);
      if (cols) return { ...keptBatches(layout, cols, kept.length, masks, restAt, late, lateMask), rows: total };
    }
  }
  const rest =
    restFields.length === 0
      ? null
      : inPlace
        ? await readRowGroupsInPlace(src.path, src.rowGroups, restFields, false, src)
        : { batches: await readRowGroups(src.path, src.rowGroups, restFields, false, src), release: undefined };
  const total = early.length > 0 ? outcomes[early[0]]!.length : rowCount(rest!.batches);
  const lengths = rest ? rest.batches.map((b) => b.length) : cuts(total);
  if (lengths.reduce((a, n) => a + n, 0) !== total) {
    rest?.release?.();
    throw new Error(`internal: a scan's masks have ${total} rows, its other columns ${rowCount(rest!.batches)}`);
  }
  const batches: Batch[] = [];
  for (let k = 0, a = 0; k < lengths.length; a += lengths[k++]) {
    const n = lengths[k];
    const col = (i: number) => rest!.batches[k].columns[restAt[i]];
    const columns = layout(col, (m) =>
      late[m]
        ? lateMask(m, col(masks[m].col))
        : { type: BOOL, length: n, values: outcomes[m]!.subarray(a, a + n), valid: null },
    );
    batches.push({ length: n, columns });
  }
  const read = rest && 'direct' in rest && rest.direct ? 'direct' : 'in-place';
  const metrics = scanMetrics({ read, masks: masks.length });
  return { batches, rows: total, release: rest?.release, metrics, inputBytes: batchesBytes(batches) };
}

/**
 * Appended masks left to their columns as read: all of them, unless their dictionaries say they may together keep
 * few rows (the masks in their columns' places are read anyway; where they keep few rows, the appended ones are
 * evaluated over the rows kept only: q06's discount range beside its date and quantity masks).
 */
function lateMasks(src: ScanSource, masks: ScanMask[], truths: ((c: Column) => Uint8Array)[]): boolean[] {
  // a runtime join filter's mask is read from the file: it is there to drop rows before the other columns
  const appended = masks.map((m) => m.at !== undefined && !m.filter);
  if (!appended.some(Boolean)) return appended;
  let guess = 1;
  try {
    masks.forEach((m, k) => {
      if (appended[k]) guess *= dictShare(src.path, src.rowGroups[0], src.fields[m.col], truths[k]) ?? 1;
    });
  } catch {
    return appended;
  }
  return guess <= SELECT_SHARE ? masks.map(() => false) : appended;
}

/** Rows a runtime filter's mask tested and kept, for the task's metrics and this thread's learning. */
function countMask(f: NonNullable<ScanMask['filter']>, outcome: Uint8Array): void {
  let kept = 0;
  for (let i = 0; i < outcome.length; i++) kept += outcome[i];
  countFilter(f.id, outcome.length, kept);
  noteTested(f, outcome.length, kept);
}

/** Each field's place among the columns read (those not replaced by their masks). */
function restIndex(width: number, replaced: Map<number, number>): number[] {
  const out: number[] = [];
  for (let i = 0, j = 0; i < width; i++) out.push(replaced.has(i) ? -1 : j++);
  return out;
}

/** The rows every mask keeps. */
function keptRows(outcomes: Uint8Array[], total: number): Int32Array {
  const all = outcomes.length === 1 ? outcomes[0] : outcomes.reduce((a, o) => a.map((x, i) => x & o[i]));
  const out = new Int32Array(total);
  let n = 0;
  for (let i = 0; i < total; i++) {
    out[n] = i;
    n += all[i];
  }
  return out.subarray(0, n);
}

/** The other columns at the rows kept only (io/parquet-select.ts), or null for a file the direct reader refuses. */
function readKept(src: ScanSource, fields: Field[], kept: Int32Array): Column[] | null {
  try {
    return readSelected(src.path, src.rowGroups, fields, kept, src);
  } catch {
    return null;
  }
}

/** Batches of the rows kept (`rows`: the kept rows; the caller says those read): the other columns as read, the
 * masks read true, the late ones evaluated over their columns. */
function keptBatches(
  layout: (cols: (i: number) => Column, mask: (k: number) => Column) => Column[],
  cols: Column[],
  m: number,
  masks: ScanMask[],
  restAt: number[],
  late: boolean[],
  lateMask: (k: number, c: Column) => Column,
): Produced {
  const ones = new Uint8Array(m).fill(1);
  const batches: Batch[] = [];
  for (let lo = 0; lo < m; lo += MASK_BATCH_ROWS) {
    const hi = Math.min(m, lo + MASK_BATCH_ROWS);
    const col = (i: number) => rowsOf(cols[restAt[i]], lo, hi);
    const columns = layout(col, (k) =>
      late[k]
        ? lateMask(k, col(masks[k].col))
        : { type: BOOL, length: hi - lo, values: ones.subarray(lo, hi), valid: null },
    );
    batches.push({ length: hi - lo, columns });
  }
  return {
    batches,
    rows: m,
    metrics: scanMetrics({ read: 'direct', masks: masks.length }),
    inputBytes: batchesBytes(batches),
  };
}

/** Rows [lo, hi) of a column (views; string offsets rebased). */
function rowsOf(c: Column, lo: number, hi: number): Column {
  if (lo === 0 && hi === c.length) return c;
  const valid = c.valid ? c.valid.subarray(lo, hi) : null;
  if (c.offsets) {
    const base = c.offsets[lo];
    const offsets = c.offsets.slice(lo, hi + 1).map((o) => o - base);
    return {
      type: c.type,
      length: hi - lo,
      values: (c.values as Uint8Array).subarray(base, c.offsets[hi]),
      offsets,
      valid,
    };
  }
  const per = c.values.length / c.length;
  return { type: c.type, length: hi - lo, values: c.values.subarray(lo * per, hi * per) as Column['values'], valid };
}

/** The masks evaluated over their columns read as before (a file the direct reader does not take). */
async function evaluated(src: ScanSource, masks: ScanMask[], width: number): Promise<Uint8Array[]> {
  const fields: Field[] = masks.map((m) => src.fields[m.col]);
  const batches = await readRowGroups(src.path, src.rowGroups, fields, false, src);
  const total = rowCount(batches);
  return masks.map((m, i) => {
    const out = new Uint8Array(total),
      truth = truthOf(m, width);
    let at = 0;
    for (const b of batches) {
      out.set(truth(b.columns[i]), at);
      at += b.length;
    }
    return out;
  });
}

function cuts(total: number): number[] {
  return Array.from({ length: Math.ceil(total / MASK_BATCH_ROWS) }, (_, k) =>
    Math.min(MASK_BATCH_ROWS, total - k * MASK_BATCH_ROWS),
  );
}
