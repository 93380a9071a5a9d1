// The worker side of every task: one kernel per kind of source and of sink, each in its operator family's folder,
// registered here in one table each (a kind of TaskSource or TaskSink without a kernel is a compile error), and the
// one way a task runs: its source produces batches, the row operators and the combiner transform them, the sink
// makes the result. Pure: the same function runs on a worker thread or on the coordinator.
import { combine } from '../agg/combiner.js';
import { sumOnlyColumns } from '../agg/narrow.js';
import { type Batch, batchesBytes, rowCount } from '../kernels/column.js';
import { takeFilterCounts } from '../kernels/runtime-filter.js';
import { materialize, selectedRows } from '../expr/deferred.js';
import { aggregateKernel } from './aggregate/source.js';
import { batchesKernel } from './exchange/batches.js';
import { collectKernel } from './exchange/collect.js';
import { partitionKernel } from './exchange/partition-sink.js';
import { keyStatsKernel } from './join/key-stats.js';
import { joinMetrics } from './join/metrics.js';
import { type ProbeOp, probeAggregate, probeBatch } from './join/probe.js';
import { type MarkOp, markBatch } from './join/mark.js';
import { type RowsOp, rowsBatch } from './setop/rows.js';
import type { WindowSource } from './window/window-source.js';
import { type TopNOp, topNBatch, topNBatches } from './window/topn.js';
import { joinKernel } from './join/source.js';
import { type RangeJoinSource, rangeJoinKernel } from './join/range-source.js';
import { type BandJoinSource, type BandProbeOp, bandJoinKernel, bandProbeBatch } from './join/band-source.js';
import { splitKernel } from './join/split.js';
import { compileOps } from './row-ops.js';
import { scanKernel } from './scan/source.js';
import { rangeKernel } from './sort/range-sink.js';
import { sortKernel } from './sort/source.js';
import { withMasks } from './scan/masks.js';
import { windowKernel } from './window/source.js';
import type {
  CutSink,
  Produced,
  RowOp,
  RowOpKernels,
  SinkKernel,
  SourceKernel,
  TaskResult,
  TaskSink,
  TaskSource,
  TaskSpec,
} from './task.js';

declare module './task.js' {
  interface FamilyRowOps {
    /** probe a broadcast table (physical/join/probe.ts) */
    probe: ProbeOp;
    /** mark the built left rows of a semi or anti join that a probing row matches (physical/join/mark.ts) */
    mark: MarkOp;
    /** rows expanded or repeated (physical/setop/rows.ts) */
    rows: RowsOp;
    /** a broadcast band join's probe, searched per key by its bound (physical/join/band-source.ts) */
    bandProbe: BandProbeOp;
    /** a window's map tasks keep the rows that may be among the first N of their partition (physical/window/topn.ts) */
    topn: TopNOp;
  }
  interface FamilySources {
    /** a window's shuffled partitions, sorted and its functions appended (physical/window/source.ts) */
    window: WindowSource;
    /** a range join's probing rows searched in its sorted side (physical/join/range-source.ts) */
    rangeJoin: RangeJoinSource;
    /** a shuffle band join's task: each key's built rows searched by their bound (physical/join/band-source.ts) */
    bandJoin: BandJoinSource;
  }
}

type SourceKernels = { [K in TaskSource['kind']]: SourceKernel<Extract<TaskSource, { kind: K }>> };
type SinkKernels = { [K in TaskSink['kind']]: SinkKernel<Extract<TaskSink, { kind: K }>> };

const SOURCES: SourceKernels = {
  scan: scanKernel,
  batches: batchesKernel,
  join: joinKernel,
  split: splitKernel,
  aggregate: aggregateKernel,
  sort: sortKernel,
  window: windowKernel,
  rangeJoin: rangeJoinKernel,
  bandJoin: bandJoinKernel,
};

const SINKS: SinkKernels = {
  collect: collectKernel,
  range: rangeKernel,
  keyStats: keyStatsKernel,
  partition: partitionKernel,
};

const ROW_OPS: RowOpKernels = {
  probe: probeBatch,
  mark: markBatch,
  expand: rowsBatch,
  repeat: rowsBatch,
  bandProbe: bandProbeBatch,
  topn: topNBatch,
};

/**
 * Row operators that may also run over a task's whole output at once when they end its operators (a batch at a time
 * elsewhere): a window's top-N keeps each partition's first rows over all of a map task's rows.
 */
const WHOLE_OPS: { topn: (batches: Batch[], op: TopNOp) => Batch[] } = { topn: topNBatches };

const sourceKernel = <S extends TaskSource>(src: S) => SOURCES[src.kind] as unknown as SourceKernel<S>;

/** Whether the coordinator holds a task's output until its consumer is done (its sink or its source says so). */
export function outputHeld(t: TaskSpec): boolean {
  return (SINKS[t.sink.kind] as SinkKernel<TaskSink>).held(t.sink) || sourceKernel(t.source).holdsOutput === true;
}

/** The in-memory batches a task's source reads (a scan: none). */
export function inputsOf(src: TaskSource): Batch[] {
  return sourceKernel(src).inputs(src);
}

/** The source reading `inputs` instead of its own (as many, in the order inputsOf gave them). */
export function withInputs<S extends TaskSource>(src: S, inputs: Batch[]): S {
  return sourceKernel(src).withInputs(src, inputs);
}

/** Run a task's source, row operators, combiner and sink on this thread. */
export async function executeTask(spec: TaskSpec): Promise<TaskResult> {
  const t0 = performance.now();
  takeFilterCounts(); // what a task that failed here counted
  // a scan's filter-only columns read as the filter's outcome (scan/masks.ts)
  const t = withMasks(spec);
  // A combiner right after a join aggregates from the join's row indices. Scanned
  // columns are read in place (views into the module's memory): the partition sink
  // copies them, keyStats only reads them, and collect copies what it keeps.
  const o = { combine: t.ops.length === 0 ? t.combine : undefined, inPlace: true, cut: cutSink(t) };
  const p = await sourceKernel(t.source).produce(t.source, o);
  const inputBytes = p.inputBytes ?? batchesBytes(inputsOf(t.source));
  try {
    const r = await finish(t, p);
    // rows its runtime join filters tested and kept (row-ops.ts, scan/masks.ts)
    const counts = takeFilterCounts();
    if (counts) r.metrics = { ...r.metrics, filters: counts };
    return Object.assign(r, { inputBytes, ms: performance.now() - t0 });
  } finally {
    p.release?.();
  }
}

/**
 * A range sink the task's join may cut its matches into itself (shuffle/cut-pairs.ts): no row
 * operator between them, or a projection that only chooses columns (`select`).
 */
function cutSink(t: TaskSpec): CutSink | undefined {
  if (t.combine || t.sink.kind !== 'range') return undefined;
  if (t.ops.length === 0) return t.sink;
  const op = t.ops[0];
  return t.ops.length === 1 && op.kind === 'project' ? { ...t.sink, select: op.indices } : undefined;
}

async function finish(t: TaskSpec, p: Produced): Promise<Omit<TaskResult, 'ms'>> {
  if (p.asIs) {
    const r: Omit<TaskResult, 'ms'> = { batches: p.batches, inputRows: p.rows, outputRows: p.rows };
    if (p.runs) r.runs = p.runs;
    return r;
  }
  if (p.cut) {
    const c = p.cut;
    const outputRows = c.rows.reduce((a, n) => a + n, 0);
    const r = { batches: c.blocks, inputRows: p.rows, outputRows, partitionRows: c.rows, partitionBytes: c.bytes };
    return p.metrics ? { ...r, metrics: p.metrics } : r;
  }
  const teed: Batch[] = [];
  const fused = fuseProbe(t, p, teed);
  const q = fused ?? p;
  const r = await toSink(t, q, fused ? [] : t.ops, teed);
  if (t.ops.some((o) => o.kind === 'tee')) r.teed = teed;
  if (q.metrics) r.metrics = q.metrics;
  return r;
}

/**
 * scan → filter → project → compute → probe → partial aggregate with no
 * joined row gathered, where the probe allows (join/probe.ts): the task's
 * rows become its partial states. Null when it does not apply.
 */
function fuseProbe(t: TaskSpec, p: Produced, teed: Batch[]): Produced | null {
  const last = t.ops[t.ops.length - 1];
  if (!t.combine || p.combined || last?.kind !== 'probe') return null;
  const fused = probeAggregate(last, t.combine.groupBy, t.combine.aggs, t.combine.schema);
  if (!fused) return null;
  const before = compileOps(ROW_OPS, t.ops.slice(0, -1), false, undefined, teed);
  for (const b of p.batches) for (const x of before(b)) fused.add(x);
  const join = joinMetrics({
    path: 'fused-aggregate',
    build: last.buildFirst ? 'left' : 'right',
    matchChunks: fused.matchChunks(),
    groups: fused.groups,
    lookup: fused.lookup(),
  });
  return { ...p, batches: [fused.finish()], combined: true, metrics: { ...p.metrics, ...join } };
}

/** The produced batches through `rowOps` and the combiner, into the task's sink. */
function toSink(t: TaskSpec, p: Produced, rowOps: RowOp[], teed: Batch[]): Promise<Omit<TaskResult, 'ms'>> {
  const combining = t.combine !== undefined && !p.combined;
  const sumOnly = combining ? sumOnlyColumns(t.combine!.groupBy, t.combine!.aggs) : undefined;
  // a last operator over the task's whole output (WHOLE_OPS) runs once its batches are all there
  const last = rowOps[rowOps.length - 1];
  const whole = last?.kind === 'topn' ? last : null;
  const ops = compileOps(ROW_OPS, whole ? rowOps.slice(0, -1) : rowOps, combining, sumOnly, teed);
  // loops and pushes, not flatMap and filter: see scatterRows in shuffle/partition.ts
  let out: Batch[] = [];
  let outputRows = 0;
  for (const b of p.batches) {
    for (const x of ops(b)) {
      if (x.length === 0) continue;
      out.push(whole ? materialize(x) : x);
      outputRows += selectedRows(x);
    }
  }
  if (whole) {
    out = WHOLE_OPS[whole.kind](out, whole);
    outputRows = rowCount(out);
  }
  let how: TaskResult['combine'];
  if (t.combine && !p.combined) {
    // into a shuffle, rows that do not reduce pass through as they are (keyed by the group columns)
    const { batches: partial, ...stats } = combine(out, t.combine, t.sink.kind === 'partition');
    how = stats;
    out = [];
    for (const b of partial) if (b.length > 0) out.push(b);
  }
  const input = { batches: out, rows: p.rows, outputRows, release: p.release, combine: how, task: t };
  const kernel = SINKS[t.sink.kind] as SinkKernel<TaskSink>;
  return Promise.resolve(kernel.sink(t.sink, input));
}
