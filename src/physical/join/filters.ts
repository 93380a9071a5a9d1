// Runtime join filters on the coordinator: from a join's side built once (a broadcast or shared build), a filter of
// its keys (kernels/runtime-filter.ts) put first into the other side's pipeline, right after its scan, where the
// scan task reads it as a mask of the key column before decoding the others (physical/scan/masks.ts). Only where
// the join may drop the probing rows that find nothing: an inner or semi probe (never the preserved side of an outer
// join, never an anti join's). A filter that cannot reach a scan (the probing side is a join's output) is put first
// into that side's pipeline all the same: the join below hoists it on through its own probe (hoistFilters), or
// tests it on its output rows. Each filter is reported with the rows its tasks tested and kept.
import type { Batch, Schema } from '../../kernels/column.js';
import { isSpilled } from '../../spill/block.js';
import { scanBytes } from '../pipeline.js';
import type { ShuffleOutput } from '../shuffle.js';
import type { Side } from './decide.js';
import type { JoinNode } from './tasks.js';
import { buildKeys } from '../../kernels/keys.js';
import {
  type FilterCount,
  type FilterMode,
  type RuntimeFilter,
  buildFilter,
  filterBytes,
  filterKinds,
} from '../../kernels/runtime-filter.js';
import type { KeyNorm } from '../../plan/bound.js';
import type { Pipeline } from '../pipeline.js';
import type { RuntimeFilterStats } from '../stats.js';
import type { Analyze, ExecContext } from '../operator.js';
import type { RowOp, TaskResult } from '../task.js';
import type { BroadcastTable } from './probe-op.js';

declare module '../task.js' {
  interface TaskMetric {
    /** rows each runtime join filter tested and kept in the task */
    filters: FilterCount[];
  }
}
declare module '../operator.js' {
  interface RunMetrics {
    /** a runtime join filter: where from, where to, its kind, and the rows its tasks tested and kept */
    filters: RuntimeFilterStats;
  }
}

export type RtFilterOp = Extract<RowOp, { kind: 'rtfilter' }>;

/** A filter put into a pipeline: the op, and what --stats says of it. */
export interface Placed {
  op: RtFilterOp;
  /** the source the filter reached (a scan's id, or a join's whose output it tests) and its key columns there */
  into: string;
  columns: string[];
}

/**
 * The columns of a pipeline's source that its output columns `cols` are (through filters, projections, computed
 * columns appended, probes of broadcast tables on the probing side's columns, other runtime filters), or null where
 * one is computed, comes from a built table, or an operator would not let a filter pass (a tee: the rows it hands
 * to other readers must stay whole; a mark; a set operation's rows).
 */
export function traceColumns(p: Pipeline, cols: number[]): number[] | null {
  let out = cols.slice();
  for (let i = p.ops.length - 1; i >= 0; i--) {
    const o = p.ops[i];
    if (o.kind === 'project') out = out.map((c) => o.indices[c]);
    else if (o.kind === 'compute') {
      const width = widthBefore(p, i);
      if (width < 0 || out.some((c) => c >= width)) return null;
    } else if (o.kind === 'probe') {
      if (o.type === 'semi' || o.type === 'anti') continue; // the probing rows' columns only
      const built = o.buildFirst ? o.leftSchema.length : o.rightSchema.length;
      const probing = o.buildFirst ? o.rightSchema.length : o.leftSchema.length;
      // the output: the join's left columns, then its right ones; the probing side's are the right ones when built first
      const from = o.buildFirst ? built : 0;
      if (out.some((c) => c < from || c >= from + probing)) return null;
      out = out.map((c) => c - from);
    } else if (o.kind !== 'filter' && o.kind !== 'rtfilter') return null;
  }
  return out;
}

/** The width of the rows before op `i` (-1 when unknown). */
function widthBefore(p: Pipeline, i: number): number {
  let w = p.source.kind === 'scan' || p.source.kind === 'join' ? p.source.schema.length : -1;
  if (w < 0) return -1;
  for (let k = 0; k < i; k++) {
    const o = p.ops[k];
    if (o.kind === 'project') w = o.indices.length;
    else if (o.kind === 'compute') w += o.exprs.length;
    else if (o.kind === 'probe')
      w = o.type === 'semi' || o.type === 'anti' ? w : o.leftSchema.length + o.rightSchema.length;
    else if (o.kind !== 'filter' && o.kind !== 'rtfilter') return -1;
  }
  return w;
}

/**
 * The pipeline with the filter first, its keys traced to its source's columns; null where they cannot be, or where
 * the pipeline reads a repeated subtree (`repeated`: ExecContext.readsRepeated): its rows, computed once, go to
 * other readers too (and its tee is put after the subtree's own operators, counted from the pipeline's first).
 */
export function placeFilter(
  p: Pipeline,
  op: RtFilterOp,
  repeated?: (source: Pipeline['source']) => boolean,
): { pipeline: Pipeline; placed: Placed } | null {
  if (repeated?.(p.source)) return null;
  const keys = traceColumns(p, op.keys);
  if (keys === null) return null;
  const first: RtFilterOp = { ...op, keys };
  const schema = p.source.schema as Schema;
  return {
    pipeline: filterFirst(p, first),
    placed: { op: first, into: p.source.id, columns: keys.map((k) => schema[k]?.name ?? `#${k}`) },
  };
}

/**
 * The filter placed by placeFilter put first too into `p`, a pipeline reading the same source: the rest of a side
 * read to measure it (its ops are the side's own, so a filter's keys on a join's output are not theirs: only the
 * keys traced to the source are). Null when `p` reads another source.
 */
export function placeAgain(p: Pipeline, placed: Placed): Pipeline | null {
  if (p.source.id !== placed.into) return null;
  return filterFirst(p, placed.op);
}

/** The pipeline with `op` as its first row operator (and named first among those fused). */
const filterFirst = (p: Pipeline, op: RtFilterOp): Pipeline => ({
  ...p,
  ops: [op, ...p.ops],
  fused: [`${op.filter.id} filter`, ...p.fused],
});

/** A filter's words take at most this share of the memory budget left when it is built (and are counted in it). */
const FILTER_SHARE = 0.25;

/**
 * A filter built within the memory budget's share (FILTER_SHARE of what is free), its bytes reserved in the budget
 * until the caller releases them (filterBytes) when the tasks it was placed into are done.
 */
export function budgeted(
  memory: { free(): number; reserve(bytes: number): void },
  build: (maxBytes: number) => RuntimeFilter | null,
) {
  const f = build(Math.floor(memory.free() * FILTER_SHARE));
  if (f) memory.reserve(filterBytes(f));
  return f;
}

/**
 * The filter of a built table's keys (`keys`, `norms`: the table's key columns) in at most `maxBytes`, or null when
 * the setting builds none. Keys hashed only for a Bloom filter.
 */
export function tableFilter(
  id: string,
  t: BroadcastTable,
  keys: number[],
  norms: KeyNorm[],
  mode: FilterMode,
  maxBytes: number,
): RuntimeFilter | null {
  if (mode === 'off' || t.batch.length === 0) return null;
  const hashed = () => buildKeys(t.batch, keys, norms);
  return buildFilter(
    id,
    [t.keys.hash.length === t.keys.n ? t.keys : buildKeys(t.batch, keys, norms, undefined, false)],
    mode,
    hashed,
    true,
    maxBytes,
  );
}

/** A join side's key columns and their normal forms. */
export const keysOf = (n: JoinNode, s: Side) => (s === 'left' ? n.leftKeys : n.rightKeys);
export const normsOf = (n: JoinNode, s: Side) => (s === 'left' ? n.leftNorms : n.rightNorms);

/** Whether a join may lose the rows of its `side` that match nothing on the other side (they would give nothing). */
function droppable(type: string, side: Side): boolean {
  if (type === 'inner' || type === 'semi') return true;
  return type === 'left' || type === 'anti' ? side === 'right' : type === 'right' && side === 'left';
}

/**
 * The side of a shuffle join partitioned first, whose keys' filter goes to the other side's map tasks: the one whose
 * files are smaller among those whose other side may lose its unmatched rows; null when none may (a full join) or
 * filters are off.
 */
export function transferFrom(node: JoinNode, mode: FilterMode): Side | null {
  if (mode === 'off') return null;
  const can: Side[] = (['left', 'right'] as const).filter((s) => droppable(node.type, s === 'left' ? 'right' : 'left'));
  if (can.length === 0) return null;
  if (can.length === 1) return can[0];
  return scanBytes(node.right) < scanBytes(node.left) ? 'right' : 'left';
}

/**
 * A filter a join's output rows pass through (from a join above), as one on the columns of one of its sides: its
 * side and key columns there, where its rows may be dropped before the join (an inner join's sides, an outer join's
 * preserved side: the rows it drops give only output rows the filter drops); null otherwise.
 */
export function sideOf(node: JoinNode, op: RtFilterOp): { side: Side; keys: number[] } | null {
  const nl = node.left.schema.length;
  if (op.keys.every((k) => k < nl))
    return node.type === 'right' || node.type === 'full' ? null : { side: 'left', keys: op.keys };
  if (node.type === 'semi' || node.type === 'anti' || node.type === 'left' || node.type === 'full') return null;
  if (op.keys.every((k) => k >= nl)) return { side: 'right', keys: op.keys.map((k) => k - nl) };
  return null;
}

/**
 * The filter of a side's keys from its partitioned blocks (on the coordinator, one pass over the key columns), or
 * null when some block was spilled (its rows are on disk) or the setting builds none.
 */
export function shuffledFilter(
  id: string,
  out: ShuffleOutput,
  node: JoinNode,
  side: Side,
  mode: FilterMode,
  maxBytes: number,
): RuntimeFilter | null {
  const blocks = out.byTask.flat().filter((b): b is Batch => b !== null && b.length > 0);
  if (blocks.some(isSpilled)) return null;
  const keys = keysOf(node, side),
    norms = normsOf(node, side);
  const plain = blocks.map((b) => buildKeys(b, keys, norms, undefined, false));
  return buildFilter(id, plain, mode, (i) => buildKeys(blocks[i], keys, norms), true, maxBytes);
}

/** Whether a probe of this type may have its probing rows filtered: they are dropped when they find nothing. */
export const filterable = (probeType: string) => probeType === 'inner' || probeType === 'semi';

// Where a filter went when a join below the one that placed it put it on into its own probing side (stage.ts)
const moved = new WeakMap<RuntimeFilter, Placed>();

/** A filter put on further down (by the join below the source it was first placed at). */
export function movedFilter(f: RuntimeFilter, to: Placed): void {
  moved.set(f, to);
}

/** The rows each filter's tasks tested and kept, summed over the tasks' metrics. */
export function reportFilters(ex: ExecContext, join: string, side: string, placed: Placed[], results: TaskResult[]) {
  for (const first of placed) {
    const p = moved.get(first.op.filter) ?? first;
    let rowsIn = 0,
      rowsKept = 0,
      tasks = 0,
      skipped = 0;
    for (const r of results)
      for (const c of r.metrics?.filters ?? [])
        if (c.id === p.op.filter.id) {
          rowsIn += c.rowsIn;
          rowsKept += c.rowsKept;
          tasks++;
          if (c.skipped) skipped++;
        }
    const f = p.op.filter;
    ex.report('filters', {
      id: f.id,
      join,
      side,
      into: p.into,
      columns: p.columns,
      kind: filterKinds(f),
      keys: f.keys,
      bytes: filterBytes(f),
      rowsIn,
      rowsKept,
      tasks,
      ...(skipped ? { skippedTasks: skipped } : {}),
    });
  }
}

export const filtersAnalyze: Analyze<FilterCount[], RuntimeFilterStats> = {
  task: (filters) => ({ filters }),
  run: (f, into) => {
    (into.runtimeFilters ??= []).push(f);
  },
};

/** The --explain line of a filter a join may build from its `side` into `into`'s key columns. */
export function filterLine(join: string, side: string, into: string, columns: string[], mode: FilterMode): string {
  const kind =
    mode === 'auto'
      ? 'bitmap where the built keys are dense integers, else bloom; min/max for an integer key'
      : mode === 'minmax'
        ? 'minmax (one integer key)'
        : `${mode}${mode === 'bitmap' ? ' where the keys allow one, else bloom' : ''}; min/max for an integer key`;
  return `runtime filter ${join}.${side} → ${into} [${columns.join(', ')}]: ${kind}`;
}
