// The join operator's coordinator side: the strategy (broadcast or shuffle), the shuffle join's reduce tasks as
// planned from the shuffle statistics (coalesced partitions, map-range splits here; hot-key grids in hot-keys.ts,
// one task or grace pieces in tasks.ts), and cross joins.
import type { EagerPlan } from '../../agg/eager.js';
import { type Batch, batchBytes, concatBatches, rowCount, viewBatch } from '../../kernels/column.js';
import { partitionOf } from '../../kernels/keys.js';
import type { BoundNode } from '../../plan/bound.js';
import { plannedWorkers } from '../../plan/load.js';
import { BUILD_WEIGHT, type PlannedTask, type SideStats, type SplitInfo, planReduceTasks } from '../../skew/decide.js';
import { type RowSlice, sliceBlocks, sliceLabel } from '../../skew/slices.js';
import { mergeSketches } from '../../skew/sketch.js';
import { mixPlan } from '../../skew/mix.js';
import { type Collect, type JoinStrategy, chooseStrategy } from './broadcast.js';
import {
  type RtFilterOp,
  budgeted,
  keysOf,
  movedFilter,
  normsOf,
  placeAgain,
  placeFilter,
  reportFilters,
  shuffledFilter,
  sideOf,
  transferFrom,
} from './filters.js';
import { filterBytes, filterKinds } from '../../kernels/runtime-filter.js';
import type { Side } from './decide.js';
import { trace } from '../../trace.js';
import { mergeProbes } from './merge.js';
import { runMarked, tryMarked } from './marked.js';
import { runRanged } from '../fused-ranges.js';
import {
  type Pipeline,
  type StopRule,
  type Stopped,
  partitionsFor,
  pipelineOf,
  readWhole,
  scanBytes,
} from '../pipeline.js';
import { budgetedSkew } from '../../spill/budget.js';
import { type Combine, type RowOp, type TaskResult, type TaskSink, withSeed } from '../task.js';
import type { Downstream, ExecContext } from '../operator.js';
import { type ShuffleOutput, batchesOf, blocksOf, runFromRead, shuffle } from '../shuffle.js';

import { type JoinContext, type JoinNode, type JoinShape, graceJoin, joinTask, mapOutputs } from './tasks.js';
import { runHotKeys } from './hot-keys.js';

/** Whether a pipeline's source is a repeated subtree (no runtime filter enters it: filters.ts placeFilter). */
const repeatedIn = (ex: ExecContext) => (source: BoundNode) => ex.readsRepeated?.(source) ?? false;

/** Counters per map task for the heavy-hitter sketch of join keys. */
const SKETCH_CAPACITY = 1000;

/**
 * A join with keys: broadcast when a side measures small enough after its filters (physical/join/broadcast.ts), else a
 * shuffle join. With `eager`, each side is first aggregated by its join key (and the group columns it provides)
 * and the reduce tasks emit the states of the aggregate above the join (see agg/eager.ts).
 */
export async function runJoin(ex: ExecContext, node: JoinNode, ops: RowOp[], d: Downstream): Promise<TaskResult[]> {
  return (await runJoinUntil(ex, node, ops, d)).results;
}

/**
 * runJoin with a stop rule: a broadcast join's probe scan stops as ExecContext.executeUntil says, and the pipeline
 * of its rest comes back (any other join runs to its end).
 */
export async function runJoinUntil(
  ex: ExecContext,
  node: JoinNode,
  ops: RowOp[],
  d: Downstream,
  stop?: StopRule,
): Promise<Stopped> {
  const { combine, eager } = d;
  if (node.leftKeys.length === 0) return readWhole(await runCross(ex, node, ops, d));
  const how: JoinStrategy = eager
    ? {
        decision: { strategy: 'shuffle', reason: 'eager aggregation: both sides pre-aggregated by their join keys' },
        heldBytes: 0,
      }
    : await chooseStrategy(
        node,
        ex.settings.broadcastBytes,
        measure(ex, node),
        ex.memory,
        ops.length === 0 ? combine : undefined,
        ex.settings.sharedBuildBytes,
        ex.settings.runtimeFilters,
        repeatedIn(ex),
      );
  const marked = eager ? null : await tryMarked(ex, node, how, measure(ex, node));
  if (marked) return readWhole(await runMarked(ex, node, how, marked, ops, d));
  if (how.pipeline) return runBroadcast(ex, node, how, ops, d, stop);
  return readWhole(await runShuffleJoin(ex, node, how, ops, d));
}

/**
 * How a side is read to measure it for a broadcast. A side small enough for a run in the thread is read here
 * while the pool's threads start (their modules, WebAssembly), and by them too once they are ready
 * (scheduler/steal.ts); by them alone when they are ready already (warm: this thread's first decode is not). Each read
 * task groups its rows for the aggregate fused with the probe, if any (physical/join/table-groups.ts). A scan's tasks
 * stop
 * starting once the rows read pass the cap (the rest of its splits left to the consumer).
 */
function measure(ex: ExecContext, node: JoinNode): Collect {
  return async (n, cap, groupBy, from) => {
    const here = ex.coldAndSmall(scanBytes(n)) && 'steal';
    let bytes = 0;
    const stop: StopRule = (r) => (bytes += r.batches.reduce((a, b) => a + (b ? batchBytes(b) : 0), 0)) > cap;
    const sink: TaskSink = { kind: 'collect', share: true, ...(groupBy ? { groupBy } : {}) };
    const { results, rest } = await ex.executeUntil(
      from ?? pipelineOf(n),
      { stage: node.id, sink, placement: here },
      stop,
    );
    const groups = groupBy && results.flatMap((r) => r.groups ?? []);
    return { batches: batchesOf(results), groups, rest };
  };
}

/** A broadcast join: the probing side's map tasks join, and go on with our operators and sink (stopped by `stop`). */
async function runBroadcast(
  ex: ExecContext,
  node: JoinNode,
  how: JoinStrategy,
  ops: RowOp[],
  d: Downstream,
  stop?: StopRule,
): Promise<Stopped> {
  const side = how.decision.side!;
  ex.report('join', {
    id: node.id,
    type: node.type,
    strategy: how.decision.strategy,
    reason: how.decision.reason,
    broadcast: { side, rows: how.rows!, bytes: how.bytes! },
    targetBytes: 0,
    tasks: 0,
    splits: [],
  });
  try {
    // runtime filters of the joins above on this join's probing rows: put first into its probing side's pipeline
    let { pipeline, probeAt } = how as { pipeline: Pipeline; probeAt?: number },
      after = ops;
    let probed = how.read?.[side === 'left' ? 'right' : 'left'];
    for (let op = after[0]; op?.kind === 'rtfilter'; op = after[0]) {
      const at = placeFilter(pipeline, op, repeatedIn(ex));
      if (!at) break;
      pipeline = at.pipeline;
      movedFilter(op.filter, at.placed);
      // the rest of the probing side read to measure it: its own columns, not the join's output ones op.keys are
      const rest = probed?.rest && placeAgain(probed.rest, at.placed);
      if (probed && rest) probed = { ...probed, rest };
      if (probeAt !== undefined) probeAt++;
      after = after.slice(1);
    }
    // the next probe's table joined into this one where it joins this table's rows (physical/join/merge.ts); a
    // merged table is grouped by the threads (grouping it here, before the first probe, measured slower on q10)
    for (let m = mergeProbes(pipeline, after); m; m = mergeProbes(pipeline, after)) ({ pipeline, after } = m);
    const full = { ...pipeline, ops: [...pipeline.ops, ...after] };
    // the probing side's rows read to measure it are probed as they are
    const probing = side === 'left' ? node.right : node.left;
    const down = { ...d, eager: undefined, placement: false };
    const out = probed
      ? readWhole(await runFromRead(ex, full, probed, probeAt!, probing.schema, d))
      : stop
        ? await ex.executeUntil(full, down, stop)
        : readWhole(await ex.execute(full, down));
    reportFilters(ex, node.id, side, how.filters ?? [], out.results);
    return out;
  } finally {
    ex.memory.release(how.heldBytes);
  }
}

/** What a shuffle join's reduce tasks read: each side's rows, or with eager aggregation its partial states. */
function shapeOf(node: JoinNode, eager?: EagerPlan): JoinShape {
  return eager
    ? {
        leftSchema: eager.left.schema,
        rightSchema: eager.right.schema,
        leftKeys: eager.left.keys,
        rightKeys: eager.right.keys,
        eager,
      }
    : {
        leftSchema: node.left.schema,
        rightSchema: node.right.schema,
        leftKeys: node.leftKeys,
        rightKeys: node.rightKeys,
      };
}

/** A shuffle join: both sides hash-partitioned, the reduce tasks planned from the shuffle statistics. */
async function runShuffleJoin(
  ex: ExecContext,
  node: JoinNode,
  how: JoinStrategy,
  ops: RowOp[],
  d: Downstream,
): Promise<TaskResult[]> {
  const { sink, combine, eager } = d;
  const P = partitionsFor(node, ex.settings);
  const shape = shapeOf(node, eager);
  const shuffleSide = (s: Side, p: Pipeline, read: NonNullable<JoinStrategy['read']>[Side]) => {
    const skew = ex.settings.skew;
    const sketch = skew.enabled && skew.strategy !== 'partition' ? SKETCH_CAPACITY : 0;
    const keys = s === 'left' ? shape.leftKeys : shape.rightKeys;
    const spec = {
      keys,
      norms: s === 'left' ? node.leftNorms : node.rightNorms,
      partitions: P,
      spreadNulls: true,
      sketch,
    };
    const pre: Combine | undefined = eager && {
      groupBy: eager[s].groupBy,
      aggs: eager[s].aggs,
      schema: (s === 'left' ? node.left : node.right).schema,
    };
    return shuffle(
      ex,
      s === 'left' ? node.left : node.right,
      spec,
      `${node.id}.${s}`,
      node.id,
      pre,
      undefined,
      read,
      p,
    );
  };
  // runtime filters of the joins above on this join's output, put first into the side whose columns they test
  const pipes = { left: pipelineOf(node.left), right: pipelineOf(node.right) };
  const reads = { left: how.read?.left, right: how.read?.right };
  const place = (s: Side, op: RtFilterOp) => {
    const at = placeFilter(pipes[s], op, repeatedIn(ex));
    if (!at) return null;
    pipes[s] = at.pipeline;
    const rest = reads[s]?.rest && placeAgain(reads[s]!.rest!, at.placed);
    if (rest) reads[s] = { ...reads[s]!, rest };
    return at.placed;
  };
  let after = ops;
  for (let op = after[0]; !eager && op?.kind === 'rtfilter'; op = after[0]) {
    const to = sideOf(node, op);
    const at = to && place(to.side, { ...op, keys: to.keys });
    if (!at) break;
    movedFilter(op.filter, at);
    after = after.slice(1);
  }
  const run = (s: Side) => shuffleSide(s, pipes[s], reads[s]);
  // predicate transfer: one side partitioned first sends the filter of its keys to the other side's map tasks
  const first = eager ? null : transferFrom(node, ex.settings.runtimeFilters);
  let l: ShuffleOutput, r: ShuffleOutput;
  let held = how.heldBytes;
  try {
    if (first) {
      const a = await run(first);
      const other: Side = first === 'left' ? 'right' : 'left';
      const f = budgeted(ex.memory, (max) =>
        shuffledFilter(`${node.id}.${first}`, a, node, first, ex.settings.runtimeFilters, max),
      );
      // its words counted until the other side's map tasks are done
      if (f) held += filterBytes(f);
      const placed =
        f && place(other, { kind: 'rtfilter', filter: f, keys: keysOf(node, other), norms: normsOf(node, other) });
      if (f && placed)
        trace(`shuffle ${node.id}: runtime filter ${filterKinds(f)} from the ${first} side into ${placed.into}`);
      const b = await run(other);
      if (placed) reportFilters(ex, node.id, first, [placed], b.results ?? []);
      [l, r] = first === 'left' ? [a, b] : [b, a];
    } else [l, r] = await Promise.all([run('left'), run('right')]);
  } finally {
    // the measured side's rows are held until its map tasks have partitioned them
    ex.memory.release(held);
  }
  const plan = planJoinTasks(ex, node, l, r, P);
  ex.report('join', {
    id: node.id,
    type: node.type,
    strategy: how.decision.strategy,
    reason: how.decision.reason,
    targetBytes: plan.targetBytes,
    tasks: plan.tasks.length,
    splits: plan.splits,
  });
  const ctx: JoinContext = {
    node,
    shape,
    ops: after,
    combine: eager ? undefined : combine,
    sink,
    l,
    r,
    targetBytes: plan.targetBytes,
    partitions: P,
  };
  const splitOf = (t: PlannedTask) =>
    t.kind === 'partitions' ? undefined : plan.splits.find((sp) => sp.partition === t.partition);
  const runOne = (t: PlannedTask, s: TaskSink) => runPlanned(ex, { ...ctx, sink: s }, t, splitOf(t));
  const ranged = eager ? undefined : d.range;
  const results = ranged
    ? await runRanged(ex, ranged, plan.tasks, (t) => t.kind === 'partitions', runOne)
    : (await Promise.all(plan.tasks.map((t) => runOne(t, sink)))).flat();
  ex.memory.done([...l.byTask, ...r.byTask]);
  return results;
}

/**
 * The reduce tasks of a shuffle join from its sides' statistics (skew/decide.ts, skew/mix.ts), with each side's
 * skew test, skewed partitions and hot keys written into its shuffle's statistics.
 */
function planJoinTasks(ex: ExecContext, node: JoinNode, l: ShuffleOutput, r: ShuffleOutput, P: number) {
  const sideStats = (s: ShuffleOutput): SideStats => ({
    partitionRows: s.stats.partitionRows,
    partitionBytes: s.stats.partitionBytes,
    mapBytes: s.mapBytes,
    mapRows: s.mapRows,
    hotKeys: mergeSketches(s.sketches, SKETCH_CAPACITY).map((e) => ({
      hash: e.hash,
      match: e.match,
      display: e.display,
      rows: e.count,
      partition: partitionOf(e.hash, P),
    })),
  });
  const ls = sideStats(l),
    rs = sideStats(r);
  // tasks sized by cost: the side each partition builds weighs more (skew/decide.ts BUILD_WEIGHT)
  const skew = budgetedSkew(ex.settings.skew, ex.taskShare());
  const planned = planReduceTasks(ls, rs, node.type, skew, plannedWorkers(ex.settings), BUILD_WEIGHT);
  // plain partitions ride in the tasks of hot keys' pieces, so that every task holds some built rows (skew/mix.ts)
  const plan = mixPlan(planned, ls, rs, node.type);
  for (const [out, side, d] of [
    [l, ls, plan.left],
    [r, rs, plan.right],
  ] as const) {
    out.stats.medianBytes = d.medianBytes;
    out.stats.thresholdBytes = d.thresholdBytes;
    out.stats.skewedPartitions = d.skewedPartitions;
    const skewed = new Set(d.skewedPartitions);
    out.stats.hotKeys = side.hotKeys
      .filter((h) => skewed.has(h.partition))
      .slice(0, 20)
      .map((h) => ({ key: h.display, rows: h.rows, partition: h.partition }));
  }
  return plan;
}

/** The least output a cross join task may make (its pairs' bytes): below it, tasks cost more than they hold. */
const CROSS_TASK_MIN_BYTES = 256 * 1024;

/**
 * The bytes of the pairs a task of a join without keys makes (a cross join's tile, a range join's share of
 * matches): about a quarter of a task's share of the budget, at most advisoryPartitionBytes, at least
 * CROSS_TASK_MIN_BYTES.
 */
export const pairTaskBytes = (ex: ExecContext): number =>
  Math.max(CROSS_TASK_MIN_BYTES, Math.min(ex.settings.skew.advisoryPartitionBytes, ex.taskShare() / 4));

/** A batch's bytes a row (0 for no rows): a joined row's bytes are its two sides'. */
export const rowBytes = (b: Batch): number => (b.length === 0 ? 0 : batchBytes(b) / b.length);

/**
 * A cross join (no keys): both sides are run to the coordinator and put in shared memory, and the pairs are
 * cut into tiles (rows of the larger side by rows of the smaller one), each a task whose pairs take at most
 * about a quarter of a task's share of the budget (and advisoryPartitionBytes): the output is |A|·|B| rows, so
 * it must flow through the filters above in bounded pieces and reach the sink (spilled under the budget)
 * piece by piece, not as one task's output. How scalar subqueries are planned.
 */
async function runCross(
  ex: ExecContext,
  node: JoinNode,
  ops: RowOp[],
  { sink, combine }: Downstream,
): Promise<TaskResult[]> {
  const [l, r] = await Promise.all([ex.collectBatches(node.left), ex.collectBatches(node.right)]);
  const leftSmall = rowCount(l) <= rowCount(r);
  const [smallSchema, largeSchema] = leftSmall
    ? [node.left.schema, node.right.schema]
    : [node.right.schema, node.left.schema];
  const small = concatBatches(smallSchema, leftSmall ? l : r, true);
  const large = concatBatches(largeSchema, leftSmall ? r : l, true);
  const target = pairTaskBytes(ex);
  const { smallRows, largeRows } = crossTile(small.length, large.length, rowBytes(small) + rowBytes(large), target);
  const pieces = (b: Batch, n: number) => {
    const out: Batch[] = [];
    for (let i = 0; i < b.length; i += n) out.push(viewBatch(b, i, Math.min(b.length, i + n)));
    return out.length ? out : [b];
  };
  const smalls = pieces(small, smallRows),
    larges = pieces(large, largeRows);
  const tiles = larges.flatMap((lg) => smalls.map((sm) => [sm, lg] as const));
  // the smaller side is replicated whatever broadcastBytes says: there is no key to shuffle by
  const side = leftSmall ? 'left' : 'right';
  ex.report('join', {
    id: node.id,
    type: node.type,
    strategy: 'cross',
    reason:
      `cross join: the smaller side (${side}) replicated to every task of the larger` +
      (smalls.length > 1 ? `, in ${smalls.length} pieces` : ''),
    broadcast: { side, rows: small.length, bytes: batchBytes(small) },
    targetBytes: target,
    tasks: tiles.length,
    splits: [],
  });
  return Promise.all(
    tiles.map(([sm, lg], i) =>
      ex.run(
        {
          source: {
            kind: 'join',
            type: 'inner',
            leftSchema: node.left.schema,
            rightSchema: node.right.schema,
            left: [leftSmall ? sm : lg],
            right: [leftSmall ? lg : sm],
            leftKeys: [],
            rightKeys: [],
            leftNorms: [],
            rightNorms: [],
          },
          ops,
          combine,
          sink: withSeed(sink, i),
        },
        {
          stage: node.id,
          kind: 'reduce',
          partition: i,
          split: `cross join: ${leftSmall ? 'left' : 'right'} side replicated`,
        },
      ),
    ),
  );
}

/**
 * Rows of each side per cross join task so that a task's pairs take about `target` bytes: the whole smaller
 * side with as many rows of the larger as fit, or, when the smaller side alone is past it, square tiles.
 */
function crossTile(
  small: number,
  large: number,
  pairBytes: number,
  target: number,
): { smallRows: number; largeRows: number } {
  if (small === 0) return { smallRows: 1, largeRows: Math.max(1, large) }; // no pairs: one task
  const pairs = Math.max(1, Math.floor(target / Math.max(1, pairBytes)));
  if (small <= pairs)
    return { smallRows: Math.max(1, small), largeRows: Math.max(1, Math.floor(pairs / Math.max(1, small))) };
  const side = Math.max(1, Math.floor(Math.sqrt(pairs)));
  return { smallRows: side, largeRows: Math.max(1, Math.floor(pairs / side)) };
}

/** `split`: the skewed partition's entry in joins[].splits, its task counts set to what ran */
async function runPlanned(ex: ExecContext, ctx: JoinContext, t: PlannedTask, split?: SplitInfo): Promise<TaskResult[]> {
  const { l, r } = ctx;
  if (t.kind === 'partitions') {
    const ls = t.partitions.map((p) => blocksOf(l, p)),
      rs = t.partitions.map((p) => blocksOf(r, p));
    const many = t.partitions.length > 1;
    const meta = { kind: 'reduce', partition: t.partitions[0], ...(many ? { partitions: t.partitions } : {}) } as const;
    const grace = await graceJoin(ex, ctx, ls.flat(), rs.flat(), meta);
    if (grace) return grace;
    return [
      await joinTask(
        ex,
        ctx,
        ls.flat(),
        rs.flat(),
        meta,
        t.partitions[0],
        many ? ls.map((b, i) => [b.length, rs[i].length]) : undefined,
      ),
    ];
  }
  if (t.kind === 'map-range') {
    // Row ranges of the map outputs (views, no copy); blocks read by several tasks are shared.
    const side = (s: ShuffleOutput, slices: RowSlice[] | null) => {
      if (slices === null) return { blocks: blocksOf(s, t.partition).map((b) => ex.share(b)), label: 'all' };
      const blocks = mapOutputs(ex, s, t.partition);
      return { blocks: sliceBlocks(blocks, slices), label: sliceLabel(slices, (i) => blocks[i].length) };
    };
    const left = side(l, t.left),
      right = side(r, t.right);
    const detail = `map-range left ${left.label} right ${right.label}`;
    return [
      await joinTask(
        ex,
        ctx,
        left.blocks,
        right.blocks,
        { kind: 'reduce', partition: t.partition, split: detail },
        t.partition,
      ),
    ];
  }
  return runHotKeys(ex, ctx, t, split, (ps) => runPlanned(ex, ctx, { kind: 'partitions', partitions: ps, bytes: 0 }));
}
