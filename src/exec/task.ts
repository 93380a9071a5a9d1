// A task: a source (scan split, in-memory batches, a join or an aggregation
// over shuffled partitions), a chain of row-wise operators, and a sink
// (collect, or hash-partition for the next shuffle). Pure: the same function
// runs on a worker thread or on the coordinator.
import { threadId } from 'node:worker_threads';
import { threadCpuMs } from './cpu-time.js';
import { aggregateBatch, groupsOf } from '../agg/aggregate.js';
import type { Groups } from '../agg/groups.js';
import { type EagerPlan, eagerStates } from '../agg/eager.js';
import { type Combine, combine } from '../agg/combiner.js';
import { finalAggregate, partialAggregateJoin, partialSchema, rowsAsStates } from '../agg/partial.js';
import { type TwoLevelStep, twoLevelStep } from '../agg/twolevel.js';
import { sumOnlyColumns } from '../agg/narrow.js';
import { readRowGroups, readRowGroupsInPlace } from '../io/parquet.js';
import {
  type Batch,
  type Field,
  type Schema,
  Int32Scratch,
  buffersOf,
  concatBatches,
  emptyBatch,
  gather,
  gatherSelected,
  rowCount,
  shareBatch,
  sliceBatch,
} from '../kernels/column.js';
import { selectRows } from '../kernels/filter.js';
import { type EmitPairs, JoinProbe, hashJoin } from '../kernels/join.js';
import { JoinAggregator, type JoinShape } from '../agg/joinagg.js';
import { type JoinSides, type Orientation, ProbeGroupedAggregate, orient } from '../joins/orient.js';
import { buildKeys } from '../kernels/keys.js';
import { groupRows } from '../agg/groups.js';
import { GatherSink } from '../joins/gather.js';
import { type ProbeOp, probeAggregate, probeBatch } from '../joins/probe.js';
import { type PartitionSpec, type Partitioned, type TaskSketch, partitionBatches } from '../shuffle/partition.js';
import { type SplitKey, hotKeyRuns, splitHotKeys } from '../skew/split.js';
import type { BoundAggregate, BoundPredicate, KeyNorm } from '../plan/bound.js';
import { compileExpr, compileNarrow } from '../expr/compile.js';
import { compileFilter } from '../expr/select.js';
import { DENSE, carry, defer, materialize, selectedRows, selectionOf } from '../expr/deferred.js';
import type { BoundExpr } from '../expr/types.js';
import type { JoinType } from '../plan/spec.js';
import { withSpillRead } from './spill-read.js';
import { encodeOutput, encodesOutput } from './encode-output.js';
import { inputBytesOf } from './input-size.js';
import type { EncodedRowGroup } from '../io/parquet-encode.js';
import type { SortKey } from '../kernels/sort.js';
import { rangePartition, sampleRows } from '../sort/partition.js';
import { sortRanges } from '../sort/ranges.js';
import { cutPairs } from '../sort/cut-pairs.js';

/** Row-wise operators of a pipeline, fused into its tasks; `probe` joins with a broadcast table. */
export type RowOp =
  | { kind: 'filter'; pred: BoundPredicate }
  | { kind: 'project'; indices: number[] }
  /** append computed columns (src/expr) */
  | { kind: 'compute'; exprs: BoundExpr[] }
  | ProbeOp;

export type TaskSource =
  /** offset, limit: a row range of the row groups read (a map split below the row group, or a sample's first rows) */
  | {
      kind: 'scan';
      path: string;
      rowGroups: number[];
      wholeFile?: boolean;
      fields: Field[];
      offset?: number;
      limit?: number;
    }
  | { kind: 'batches'; schema: Schema; batches: Batch[] }
  | {
      kind: 'join';
      type: JoinType;
      leftSchema: Schema;
      rightSchema: Schema;
      left: Batch[];
      right: Batch[];
      leftKeys: number[];
      rightKeys: number[];
      leftNorms: KeyNorm[];
      rightNorms: KeyNorm[];
      /** a task over several partitions: blocks of each, [left, right], in order (joined one partition at a time) */
      parts?: [number, number][];
      /** the sides are eager partial aggregates: emit the states of the aggregate above the join */
      eager?: EagerPlan;
    }
  /** cut hot keys out of a partition's rows (key-level skew handling); `locate`: report at most this many runs of rows instead */
  | {
      kind: 'split';
      schema: Schema;
      blocks: Batch[];
      keys: number[];
      norms: KeyNorm[];
      hot: SplitKey[];
      locate?: number;
    }
  /**
   * raw: input rows; final: partial states from combiners, grouped by their leading columns;
   * step: one step of a skewed partition's two-level aggregation (agg/twolevel.ts);
   * rows: with final, `input` from `from` on holds input rows (`schema`, grouped by `groupBy`)
   * that a combiner passed through (agg/combiner.ts)
   */
  | {
      kind: 'aggregate';
      mode: 'raw' | 'final';
      schema: Schema;
      input: Batch[];
      groupBy: number[];
      aggs: BoundAggregate[];
      outSchema: Schema;
      step?: TwoLevelStep;
      rows?: { schema: Schema; groupBy: number[]; from: number };
    }
  /**
   * consecutive ranges of a range-partitioned sort, their rows sorted: `ranges`
   * holds how many blocks of `input` each range has, in order (absent: one range)
   */
  | { kind: 'sort'; schema: Schema; input: Batch[]; by: SortKey[]; ranges?: number[] };

export type { Combine };

export type TaskSink =
  /**
   * sample: also return this many evenly spaced rows of the output (a sort's boundaries come from them);
   * share: the rows in SharedArrayBuffers, copied once (a side to broadcast, see exec/broadcast.ts);
   * groupBy: also each output batch's rows grouped by these columns (a broadcast table's, exec/table-groups.ts);
   * parquet: the rows encoded as Parquet row groups of these fields (the final stage of a Parquet output,
   * exec/encode-output.ts), unless too few for a row group of their own
   */
  | { kind: 'collect'; sample?: number; share?: boolean; groupBy?: number[]; parquet?: Field[] }
  /** range-partition rows by sort keys against sorted boundaries (see sort/range.ts) */
  | { kind: 'range'; by: SortKey[]; bounds: Batch; nullSeed: number }
  /** count rows and distinct keys (nulls excluded), returning no rows: a sample of a join side */
  | { kind: 'keyStats'; keys: number[]; norms: KeyNorm[] }
  /** hash-partition rows by key (see PartitionSpec) */
  | ({ kind: 'partition' } & PartitionSpec);

export interface TaskSpec {
  source: TaskSource;
  ops: RowOp[];
  combine?: Combine;
  sink: TaskSink;
  /** measure the thread's CPU time over the task (TaskResult.cpuMs; Settings.taskCpuTime) */
  cpuClock?: boolean;
}

export interface TaskResult {
  /** collect: the output batches; partition: one batch (or null) per partition */
  batches: (Batch | null)[];
  inputRows: number;
  /** the input's in-memory bytes (exec/input-size.ts) */
  inputBytes?: number;
  outputRows: number;
  partitionRows?: number[];
  partitionBytes?: number[];
  /** epoch ms when the task started, and the thread that ran it (0: the coordinator) */
  start?: number;
  thread?: number;
  /** heavy hitters of the partition keys, when the sink asked for them */
  sketch?: TaskSketch;
  /** keyStats sink: rows with a non-null key, and their distinct keys */
  keyStats?: { rows: number; distinct: number };
  /** what the combiner did: aggregated, or passed rows through because they did not reduce */
  combine?: { mode: 'partial' | 'pass-through'; rowsIn: number; bytesIn: number; rowsOut: number };
  /** collect sink with `parquet`: the output rows as row groups (`batches` empty) */
  encoded?: EncodedRowGroup[];
  /** collect sink with `sample`: evenly spaced output rows */
  sample?: Batch;
  /** collect sink with `groupBy`: the groups of each output batch's rows (ids in shared memory) */
  groups?: Groups[];
  /** bytes of spilled input blocks this task read back */
  spillReadBytes?: number;
  /** a join task: the path it took (see JoinPath) */
  join?: JoinPath;
  /** a scan task: whether the columns were decoded directly, read in place (Arrow C Data Interface) or through IPC */
  read?: 'direct' | 'in-place' | 'ipc';
  /** a split task that located its hot keys: runs of rows (skew/split.ts hotKeyRuns), no batches */
  runs?: Int32Array;
  ms: number;
  /** the thread's CPU time over the task (exec/cpu-time.ts; absent where the clock is not available) */
  cpuMs?: number;
}

/**
 * How a join task ran, for the statistics (tests assert the path they mean to
 * exercise): streamed probe blocks gathered into rows, streamed into the fused
 * join aggregator, or both sides concatenated (hashJoin; eager and
 * combiners the fused form cannot serve); which side was built; how many
 * chunks of matched pairs the probe emitted. A map task whose probe of a
 * broadcast table fed its combiner reports 'fused-aggregate' too.
 */
export interface JoinPath {
  path: 'gather' | 'fused-aggregate' | 'concatenated';
  /** the side built (a task over several partitions: the side built for most rows) */
  build: 'left' | 'right';
  matchChunks: number;
  /** rows the task built tables over (the probing rows are the rest of its input) */
  buildRows?: number;
  /** fused-aggregate: the groups came from the built side's rows or from each probing batch's (any partition of the task) */
  grouped?: 'build' | 'probe';
  /** a broadcast probe fused with the aggregate: whose group ids (see ProbeAggregate.groups), and how rows found them (ProbeAggregate.lookup) */
  groups?: 'table' | 'thread' | 'batch';
  lookup?: 'pairs' | 'key-groups';
}

type Produced = {
  batches: Batch[];
  rows: number;
  combined?: boolean;
  release?: () => void;
  join?: JoinPath;
  read?: 'direct' | 'in-place' | 'ipc';
  /** a join's output already cut into a range sink's ranges (sort/cut-pairs.ts): `batches` is empty */
  cut?: Omit<Partitioned, 'sketch'>;
};
type RangeSink = Extract<TaskSink, { kind: 'range' }>;
/** A range sink a join cuts its matches into itself, `select`ing columns when a projection sits between (see cutSink). */
type CutSink = RangeSink & { select?: number[] };

/**
 * `inPlace`: scanned columns may be views into the Parquet module's memory, released after the sink;
 * `cut`: a range sink the rows go to as they are (no row operator between, or only a choice of columns,
 * `select`): a join may cut them itself.
 */
async function produce(src: TaskSource, combine?: Combine, inPlace = false, cut?: CutSink): Promise<Produced> {
  switch (src.kind) {
    case 'scan': {
      if (inPlace) {
        const { batches, release, viewsIntoModule, direct } = await readRowGroupsInPlace(
          src.path,
          src.rowGroups,
          src.fields,
          src.wholeFile,
          src,
        );
        return {
          batches,
          rows: rowCount(batches),
          release,
          read: direct ? 'direct' : viewsIntoModule ? 'in-place' : 'ipc',
        };
      }
      const batches = await readRowGroups(src.path, src.rowGroups, src.fields, src.wholeFile, src);
      return { batches, rows: rowCount(batches), read: 'ipc' };
    }
    case 'split':
      throw new Error('internal: split tasks are run by runTask');
    case 'batches':
      return { batches: src.batches, rows: rowCount(src.batches) };
    case 'join': {
      if (!src.eager) {
        const streamed = streamJoin(src, combine, cut);
        if (streamed) return streamed;
      }
      const l = concatBatches(src.leftSchema, src.left);
      const r = concatBatches(src.rightSchema, src.right);
      const lk = buildKeys(l, src.leftKeys, src.leftNorms);
      const rk = buildKeys(r, src.rightKeys, src.rightNorms);
      const m = hashJoin(src.type, lk, rk);
      const join: JoinPath = { path: 'concatenated', build: 'right', matchChunks: 1 };
      if (src.eager)
        return {
          batches: [eagerStates(l, r, m.left, m.right, m.n, src.eager)],
          rows: l.length + r.length,
          combined: true,
          join,
        };
      if (combine) {
        const schema = partialSchema(combine.schema, combine.groupBy, combine.aggs);
        const b = partialAggregateJoin(l, r, m.left, m.right, m.n, src.type, combine.groupBy, combine.aggs, schema);
        if (b) return { batches: [b], rows: l.length + r.length, combined: true, join };
      }
      const cols = l.columns.map((c) => gather(c, m.left, m.n));
      if (src.type !== 'semi' && src.type !== 'anti') for (const c of r.columns) cols.push(gather(c, m.right, m.n));
      return { batches: [{ length: m.n, columns: cols }], rows: l.length + r.length, join };
    }
    case 'sort': {
      const sorted = sortRanges(src.schema, src.input, src.ranges ?? [src.input.length], src.by);
      return { batches: sorted, rows: rowCount(sorted) };
    }
    case 'aggregate': {
      const from = src.rows?.from ?? src.input.length;
      const rows = src.rows && from < src.input.length ? concatBatches(src.rows.schema, src.input.slice(from)) : null;
      // only rows that combiners passed through: aggregated as without combiners
      if (rows && from === 0)
        return { batches: [aggregateAll(rows, src, true, src.rows!.schema, src.rows!.groupBy)], rows: rows.length };
      // states and rows: each row becomes its own state (no hashing: the final aggregate groups them once
      // with the rest; grouping them first measured 1.9x slower on TPC-H q21's aggregate reduce)
      const states = rows ? [...src.input.slice(0, from), rowsAsStates(rows, src.rows!.groupBy, src.aggs)] : src.input;
      const all = concatBatches(src.schema, states);
      return {
        batches: [aggregateAll(all, src, src.mode === 'raw', src.schema, src.groupBy)],
        rows: rowCount(src.input),
      };
    }
  }
}

type AggregateSource = Extract<TaskSource, { kind: 'aggregate' }>;

/** An aggregate task's rows (raw) or states aggregated: one two-level step, or to the final rows. */
function aggregateAll(b: Batch, src: AggregateSource, raw: boolean, schema: Schema, groupBy: number[]): Batch {
  if (src.step) return twoLevelStep(b, src.step, raw, schema, groupBy, src.aggs, src.outSchema);
  return raw
    ? aggregateBatch(b, groupBy, src.aggs, src.outSchema)
    : finalAggregate(b, groupBy.length, src.aggs, src.outSchema);
}

type JoinSource = Extract<TaskSource, { kind: 'join' }>;

/** Hashes of a probe block's keys live here: they are not needed after the block. */
const probeHashes = new Int32Scratch(1 << 16, 1 << 20);

/** Where a streamed join's matched pairs go: `add` with the left rows first. */
interface PairTarget {
  add(l: Batch, r: Batch, li: Int32Array, ri: Int32Array, n: number): void;
}

/**
 * The pair router of this thread's streamed joins (streamJoin is synchronous,
 * so one serves them all): the sink, the build side and the probe block of
 * the moment, and one `emit` created once. V8 drops the optimized code of a
 * closure created anew for every block at each full garbage collection, and
 * the probe path inlined into such closures cost 10-30 ms of compilation
 * again in every warm run (`--trace-opt`, skew benchmark).
 */
class PairRouter {
  sink: PairTarget | null = null;
  build: Batch | null = null;
  probe: Batch | null = null;
  buildLeft = false;
  chunks = 0;
  readonly emit: EmitPairs = (pi, bi, n) => {
    this.chunks++;
    if (this.buildLeft) this.sink!.add(this.build!, this.probe!, bi, pi, n);
    else this.sink!.add(this.probe!, this.build!, pi, bi, n);
  };

  /** Lets go of the task's batches and sink. */
  clear(): void {
    this.sink = null;
    this.build = null;
    this.probe = null;
  }
}
const ROUTER = new PairRouter();

/**
 * A join that concatenates only its build side: each probe block is hashed,
 * probed and consumed on its own, the matches going to the combiner
 * (aggregated through the row indices) or gathered into output batches. A
 * task over several partitions joins them one at a time, so each table is a
 * partition's (small enough to stay in cache), each partition oriented on
 * its own (joins/orient.ts). Null when a combiner is asked for that the
 * streaming form cannot serve.
 */
function streamJoin(src: JoinSource, combine?: Combine, cut?: CutSink): (Produced & { join: JoinPath }) | null {
  const parts = src.parts ?? [[src.left.length, src.right.length]];
  const sides: JoinSides = {
    type: src.type,
    leftSchema: src.leftSchema,
    rightSchema: src.rightSchema,
    leftKeys: src.leftKeys,
    rightKeys: src.rightKeys,
  };
  const orientations: Orientation[] = [];
  let li = 0,
    ri = 0;
  for (const [nl, nr] of parts) {
    const o = orient(
      sides,
      rowCount(src.left.slice(li, (li += nl))),
      rowCount(src.right.slice(ri, (ri += nr))),
      combine,
    );
    if (!o) return null;
    orientations.push(o);
  }
  const states = combine ? partialSchema(combine.schema, combine.groupBy, combine.aggs) : null;
  // matches cut straight into ranges need every index on a row (no outer join's missing side)
  const cutHere = cut && (src.type === 'inner' || src.type === 'semi' || src.type === 'anti') ? cut : undefined;
  const gathered = combine ? null : new GatherSink(src.type !== 'semi' && src.type !== 'anti', cutHere !== undefined);
  const out: Batch[] = [];
  let builtLeft = 0,
    builtRight = 0;
  li = 0;
  ri = 0;
  const route = ROUTER;
  route.chunks = 0;
  let chunks = 0;
  try {
    for (let k = 0; k < parts.length; k++) {
      const [nl, nr] = parts[k];
      const { buildLeft, grouped } = orientations[k];
      const left = src.left.slice(li, (li += nl)),
        right = src.right.slice(ri, (ri += nr));
      const build = buildLeft ? concatBatches(src.leftSchema, left) : concatBatches(src.rightSchema, right);
      if (buildLeft) builtLeft += build.length;
      else builtRight += build.length;
      const shape: JoinShape = { ...sides, groupedLeft: grouped === 'probe' ? !buildLeft : buildLeft };
      const byBuild =
        grouped === 'build' ? JoinAggregator.create(build, shape, combine!.groupBy, combine!.aggs, states!) : null;
      const byProbe = grouped === 'probe' ? new ProbeGroupedAggregate(shape, combine!, states!) : null;
      const joiner = new JoinProbe(
        src.type,
        buildLeft ? buildKeys(build, src.leftKeys, src.leftNorms) : buildKeys(build, src.rightKeys, src.rightNorms),
      );
      route.sink = byBuild ?? byProbe ?? gathered!;
      route.build = build;
      route.buildLeft = buildLeft;
      const probeKeys = buildLeft ? src.rightKeys : src.leftKeys,
        probeNorms = buildLeft ? src.rightNorms : src.leftNorms;
      for (const p of buildLeft ? right : left) {
        if (p.length === 0) continue;
        route.probe = p;
        joiner.probe(buildKeys(p, probeKeys, probeNorms, probeHashes.get(p.length)), route.emit);
        byProbe?.flush(p);
      }
      // right and full joins: the build rows no probe row matched
      if (src.type === 'right' || src.type === 'full') {
        const none = emptyBatch(buildLeft ? src.rightSchema : src.leftSchema);
        route.probe = none;
        joiner.finish(route.emit);
        byProbe?.flush(none);
      }
      if (byBuild) out.push(byBuild.finish());
      if (byProbe) out.push(byProbe.finish());
    }
  } finally {
    // a failed join too lets go of its batches
    chunks = route.chunks;
    route.clear();
  }
  const cutRows =
    gathered && cutHere
      ? cutPairs(gathered.pending, gathered.withRight, cutHere.by, cutHere.bounds, cutHere.nullSeed, cutHere.select)
      : undefined;
  if (gathered && !cutRows) {
    gathered.flush();
    out.push(...gathered.batches);
  }
  const join: JoinPath = {
    path: combine ? 'fused-aggregate' : 'gather',
    build: builtLeft > builtRight ? 'left' : 'right',
    matchChunks: chunks,
    buildRows: builtLeft + builtRight,
    ...(combine ? { grouped: orientations.some((o) => o.grouped === 'probe') ? 'probe' : 'build' } : {}),
  };
  return {
    batches: out,
    rows: rowCount(src.left) + rowCount(src.right),
    combined: combine !== undefined,
    join,
    ...(cutRows ? { cut: cutRows } : {}),
  };
}

/**
 * The task's row-wise operators as one function over batches, one operator
 * after the other with nothing else materialized; expressions are compiled
 * here, once per task. A probe may turn a batch into several.
 */
function compileOps(ops: RowOp[], deferDense = false, sumOnly?: Set<number>): (b: Batch) => Batch[] {
  const steps = ops.flatMap((op, k): ((b: Batch) => Batch | Batch[])[] => {
    if (op.kind === 'compute') {
      // columns only the combiner's sums read may come narrowed (agg/narrow.ts): known once a batch's width is
      const narrow = sumOnly && ops.slice(k + 1).every((o) => o.kind !== 'probe') ? sumOnly : null;
      let ks = narrow ? null : op.exprs.map(compileExpr);
      const add = (b: Batch): Batch => {
        ks ??= op.exprs.map((e, j) =>
          (narrow!.has(finalColumn(ops, k, b.columns.length + j)) ? compileNarrow : compileExpr)(e),
        );
        return { length: b.length, columns: [...b.columns, ...ks.map((f) => f(b))] };
      };
      return [
        (b) => {
          if (!selectionOf(b)) return add(b);
          try {
            return carry(b, add(b));
          } catch {
            return add(materialize(b));
          }
        },
      ];
    }
    if (op.kind === 'project')
      return ops[k - 1]?.kind === 'filter'
        ? []
        : [(b) => carry(b, { length: b.length, columns: op.indices.map((i) => b.columns[i]) })];
    if (op.kind === 'probe') return [(b) => probeBatch(materialize(b), op)];
    const pred = op.pred.kind === 'expr' ? compileFilter(op.pred.expr) : null;
    // a projection right after the filter (its pruned columns): only the columns kept are gathered
    const next = ops[k + 1],
      keep = next?.kind === 'project' ? next.indices : null;
    // only computed columns up to the combiner: a dense selection is carried, not gathered (expr/deferred.ts)
    const carried = deferDense && ops.slice(k + 1).every((o) => o.kind === 'project' || o.kind === 'compute');
    return [
      (b0) => {
        const b = materialize(b0);
        const { idx, n } = pred ? pred(b) : selectRows(b, op.pred);
        const cols = keep ? keep.map((i) => b.columns[i]) : b.columns;
        if (n === b.length) return { length: n, columns: cols };
        if (carried && n >= DENSE * b.length)
          return defer({ length: b.length, columns: cols }, { idx: idx.slice(0, n), n });
        return { length: n, columns: cols.map((c) => gatherSelected(c, idx, n)) };
      },
    ];
  });
  const from = (b: Batch, k0: number): Batch[] => {
    for (let k = k0; k < steps.length; k++) {
      const x = steps[k](b);
      if (!Array.isArray(x)) {
        b = x;
        continue;
      }
      return x.length === 1 ? from(x[0], k + 1) : x.flatMap((y) => from(y, k + 1));
    }
    return [b];
  };
  return (b) => from(b, 0);
}

/** Where column `p` after operator k ends up after the later projections (-1: dropped). */
function finalColumn(ops: RowOp[], k: number, p: number): number {
  for (let j = k + 1; j < ops.length && p >= 0; j++) {
    const o = ops[j];
    if (o.kind === 'project') p = o.indices.indexOf(p);
  }
  return p;
}

/** Run a task; its result carries when (epoch ms) and on which thread it ran, for timelines. */
export async function runTask(t: TaskSpec): Promise<TaskResult> {
  const cpu0 = t.cpuClock ? threadCpuMs() : undefined;
  const start = performance.timeOrigin + performance.now();
  const { source, readBytes } = withSpillRead(t.source);
  const r = await execute(readBytes ? { ...t, source } : t);
  if (readBytes) r.spillReadBytes = readBytes;
  const cpu1 = cpu0 !== undefined ? threadCpuMs() : undefined;
  if (cpu0 !== undefined && cpu1 !== undefined) r.cpuMs = cpu1 - cpu0;
  r.start = start;
  r.thread = threadId;
  return r;
}

async function execute(t: TaskSpec): Promise<TaskResult> {
  const t0 = performance.now();
  if (t.source.kind === 'split') {
    const s = t.source;
    const rows = rowCount(s.blocks);
    const runs = s.locate ? hotKeyRuns(s.blocks, s.keys, s.norms, s.hot, s.locate) : null;
    if (runs) return { batches: [], runs, inputRows: rows, outputRows: rows, ms: performance.now() - t0 };
    const pieces = splitHotKeys(s.schema, s.blocks, s.keys, s.norms, s.hot);
    return {
      batches: pieces,
      inputRows: rows,
      inputBytes: inputBytesOf(s, []),
      outputRows: rows,
      ms: performance.now() - t0,
    };
  }
  // A combiner right after a join aggregates from the join's row indices. Scanned
  // columns are read in place (views into the module's memory): the partition sink
  // copies them, keyStats only reads them, and collect copies what it keeps.
  const p = await produce(t.source, t.ops.length === 0 ? t.combine : undefined, true, cutSink(t));
  const inputBytes = inputBytesOf(t.source, p.batches);
  try {
    // encoded before the scanned columns (views into the module's memory) are released
    return await encodeOutput(t.sink, Object.assign(finish(t, p, t0), { inputBytes }));
  } finally {
    p.release?.();
  }
}

/**
 * A range sink the task's join may cut its matches into itself (sort/cut-pairs.ts): no row
 * operator between them, or a projection that only chooses columns (`select`).
 */
function cutSink(t: TaskSpec): CutSink | undefined {
  if (t.combine || t.sink.kind !== 'range') return undefined;
  if (t.ops.length === 0) return t.sink;
  const op = t.ops[0];
  return t.ops.length === 1 && op.kind === 'project' ? { ...t.sink, select: op.indices } : undefined;
}

function finish(t: TaskSpec, p: Produced, t0: number): TaskResult {
  const fused = fuseProbe(t, p);
  const r = finishSink(t, fused ?? p, fused ? [] : t.ops, t0);
  const join = fused?.join ?? p.join;
  if (join) r.join = join;
  if (p.read) r.read = p.read;
  return r;
}

/**
 * scan → filter → project → compute → probe → partial aggregate with no
 * joined row gathered, where the probe allows (joins/probe.ts): the task's
 * rows become its partial states. Null when it does not apply.
 */
function fuseProbe(t: TaskSpec, p: Produced): Produced | null {
  const last = t.ops[t.ops.length - 1];
  if (!t.combine || p.combined || last?.kind !== 'probe') return null;
  const fused = probeAggregate(last, t.combine.groupBy, t.combine.aggs, t.combine.schema);
  if (!fused) return null;
  const before = compileOps(t.ops.slice(0, -1));
  for (const b of p.batches) for (const x of before(b)) fused.add(x);
  const join: JoinPath = {
    path: 'fused-aggregate',
    build: last.buildFirst ? 'left' : 'right',
    matchChunks: fused.matchChunks(),
    groups: fused.groups,
    lookup: fused.lookup(),
  };
  return { ...p, batches: [fused.finish()], combined: true, join };
}

/** `rowOps`: the row operators still to apply to the produced batches. */
function finishSink(
  t: TaskSpec,
  { batches, rows, combined, release, cut }: Produced,
  rowOps: RowOp[],
  t0: number,
): TaskResult {
  if (cut) {
    const outputRows = cut.rows.reduce((a, n) => a + n, 0);
    return {
      batches: cut.blocks,
      inputRows: rows,
      outputRows,
      partitionRows: cut.rows,
      partitionBytes: cut.bytes,
      ms: performance.now() - t0,
    };
  }
  const combining = t.combine !== undefined && !combined;
  const ops = compileOps(
    rowOps,
    combining,
    combining ? sumOnlyColumns(t.combine!.groupBy, t.combine!.aggs) : undefined,
  );
  // loops and pushes, not flatMap and filter: see scatterRows in shuffle/partition.ts
  let outBatches: Batch[] = [];
  let outputRows = 0;
  for (const b of batches) {
    for (const x of ops(b)) {
      if (x.length === 0) continue;
      outBatches.push(x);
      outputRows += selectedRows(x);
    }
  }
  let combineStats: TaskResult['combine'];
  if (t.combine && !combined) {
    // into a shuffle, rows that do not reduce pass through as they are (keyed by the group columns)
    const { batches: partial, ...how } = combine(outBatches, t.combine, t.sink.kind === 'partition');
    combineStats = how;
    outBatches = [];
    for (const b of partial) if (b.length > 0) outBatches.push(b);
  }
  if (t.sink.kind === 'collect') {
    if (t.sink.share)
      outBatches = outBatches.map(shareBatch); // copied out of the module's memory (or the task's) once, with no loop in JS
    // copies out of the module's memory (rows to encode are encoded from it, see encodeOutput)
    else if (release && !encodesOutput(t.sink, outBatches))
      outBatches = outBatches.map((b) => sliceBatch(b, 0, b.length));
    const sample = t.sink.sample ? sampleRows(outBatches, t.sink.sample) : undefined;
    const groupBy = t.sink.groupBy,
      groups = groupBy ? outBatches.map((b) => groupsOf(b, groupBy, undefined, true)) : undefined;
    return {
      batches: outBatches,
      inputRows: rows,
      outputRows,
      ms: performance.now() - t0,
      ...(sample ? { sample } : {}),
      ...(groups ? { groups } : {}),
    };
  }
  if (t.sink.kind === 'range') {
    const {
      blocks,
      rows: partitionRows,
      bytes: partitionBytes,
    } = rangePartition(outBatches, t.sink.by, t.sink.bounds, t.sink.nullSeed);
    return { batches: blocks, inputRows: rows, outputRows, partitionRows, partitionBytes, ms: performance.now() - t0 };
  }
  if (t.sink.kind === 'keyStats') {
    const all = concatBatches(outBatches[0]?.columns.map((c) => ({ name: '', type: c.type })) ?? [], outBatches);
    let keyRows = 0,
      distinct = 0;
    if (all.length > 0) {
      const keys = buildKeys(all, t.sink.keys, t.sink.norms);
      const g = groupRows(keys);
      const nulls = keys.anyNull;
      for (let i = 0; i < all.length; i++) if (nulls === null || !nulls[i]) keyRows++;
      for (let k = 0; k < g.nGroups; k++) if (nulls === null || !nulls[g.first[k]]) distinct++;
    }
    return {
      batches: [],
      inputRows: rows,
      outputRows,
      keyStats: { rows: keyRows, distinct },
      ms: performance.now() - t0,
    };
  }
  const sink =
    combineStats?.mode === 'pass-through' && t.combine!.passRows ? { ...t.sink, keys: t.combine!.groupBy } : t.sink;
  const { blocks, rows: partitionRows, bytes: partitionBytes, sketch } = partitionBatches(outBatches, sink);
  return {
    batches: blocks,
    inputRows: rows,
    outputRows,
    partitionRows,
    partitionBytes,
    sketch,
    combine: combineStats,
    ms: performance.now() - t0,
  };
}

export function resultBuffers(r: TaskResult): ArrayBuffer[] {
  const buffers = buffersOf(r.batches.filter((b): b is Batch => b !== null));
  for (const g of r.encoded ?? []) buffers.add(g.data.buffer as ArrayBuffer);
  return [...buffers];
}

/** The sink of the i-th task of a stage: shuffle sinks spread null keys from a seed of their own. */
export function withSeed(sink: TaskSink, seed: number): TaskSink {
  return sink.kind === 'partition' || sink.kind === 'range' ? { ...sink, nullSeed: seed * 7919 } : sink;
}
