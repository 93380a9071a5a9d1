// The join operator's coordinator side: the strategy (broadcast or shuffle), the shuffle join's reduce tasks as
// planned from the shuffle statistics (coalesced partitions, map-range and hot-key splits, mixed tasks), grace
// pieces for a build side over a task's share of the budget, and cross joins.
import type { EagerPlan } from '../agg/eager.js';
import { type Batch, type Schema, batchBytes, concatBatches, rowCount } from '../kernels/column.js';
import { partitionOf } from '../kernels/keys.js';
import type { BoundNode } from '../plan/bound.js';
import { plannedWorkers } from '../plan/load.js';
import {
  BUILD_WEIGHT,
  type PlannedTask,
  type SideStats,
  type SplitInfo,
  planReduceTasks,
  reduceNeeded,
} from '../skew/decide.js';
import { keyGrid, restGrid } from '../skew/cut.js';
import { type RowSlice, packRowSlices, runsToSlices, sliceBlocks, sliceLabel } from '../skew/slices.js';
import { mergeSketches } from '../skew/sketch.js';
import { mixPlan } from '../skew/mix.js';
import { type Collected, type JoinStrategy, chooseStrategy } from './broadcast.js';
import { mergeProbes } from '../joins/merge.js';
import { runsInThread } from './local.js';
import { poolReady } from './pool.js';
import { blockBytes, isSpilled, packBlocks } from '../spill/block.js';
import { heldBytes } from '../spill/spiller.js';
import { runRanged } from '../sort/fused.js';
import { cutByHash, gracePieces } from '../spill/grace.js';
import { partitionsFor, pipelineOf, scanBytes } from './physical.js';
import { budgetedSkew } from './budget.js';
import { type Combine, type RowOp, type TaskResult, type TaskSink, withSeed } from './task.js';
import type { ExecContext, TaskMeta } from './context.js';
import { type ShuffleOutput, EMPTY, batchesOf, blocksOf, shuffle } from './exchange.js';

export type JoinNode = Extract<BoundNode, { kind: 'join' }>;

/** What the join's reduce tasks read: the sides as shuffled (rows, or eager partial rows). */
interface JoinShape {
  leftSchema: Schema;
  rightSchema: Schema;
  leftKeys: number[];
  rightKeys: number[];
  eager?: EagerPlan;
}

interface JoinContext {
  node: JoinNode;
  shape: JoinShape;
  ops: RowOp[];
  combine?: Combine;
  sink: TaskSink;
  l: ShuffleOutput;
  r: ShuffleOutput;
  /** the reduce plan's target task size */
  targetBytes: number;
  /** partitions of the shuffle the sides come from */
  partitions: number;
}

/** Runs of rows (of hot keys and the rest) up to which a split task leaves a key's rows in place for the join tasks. */
const MAX_RUNS = 64;

/** Counters per map task for the heavy-hitter sketch of join keys. */
const SKETCH_CAPACITY = 1000;

/**
 * A shuffle join. With `eager`, each side is first aggregated by its join key
 * (and the group columns it provides) and the reduce tasks emit the states of
 * the aggregate above the join (see agg/eager.ts).
 */
export async function runJoin(
  ex: ExecContext,
  node: JoinNode,
  ops: RowOp[],
  sink: TaskSink,
  consumer: string,
  combine?: Combine,
  eager?: EagerPlan,
): Promise<TaskResult[]> {
  if (node.leftKeys.length === 0) return runCross(ex, node, ops, sink, combine);
  // Broadcast (exec/broadcast.ts): the probing side's map tasks join, and go on with our operators and sink.
  // A side small enough for a run in the thread is read here while the pool's threads start (their modules,
  // WebAssembly), and by them too once they are ready (exec/steal.ts); by them alone when they are ready already
  // (warm: this thread's first decode is not). Then the coordinator builds the table.
  // Each read task groups its rows for the aggregate fused with the probe, if any (exec/table-groups.ts).
  const collect = async (n: BoundNode, groupBy?: number[]): Promise<Collected> => {
    const here = runsInThread(scanBytes(n), ex.settings.inThreadBytes) && !poolReady() && 'steal';
    const results = await ex.runPipeline(
      pipelineOf(n),
      { kind: 'collect', share: true, ...(groupBy ? { groupBy } : {}) },
      node.id,
      undefined,
      undefined,
      here,
    );
    return { batches: batchesOf(results), groups: groupBy && results.flatMap((r) => r.groups ?? []) };
  };
  const how: JoinStrategy = eager
    ? {
        decision: { strategy: 'shuffle', reason: 'eager aggregation: both sides pre-aggregated by their join keys' },
        heldBytes: 0,
      }
    : await chooseStrategy(node, ex.settings.broadcastBytes, collect, ex.spill, ops.length === 0 ? combine : undefined);
  const strategy = { strategy: how.decision.strategy, reason: how.decision.reason };
  if (how.pipeline) {
    ex.stats.joins.push({
      id: node.id,
      type: node.type,
      ...strategy,
      broadcast: { side: how.decision.side!, rows: how.rows!, bytes: how.bytes! },
      targetBytes: 0,
      tasks: 0,
      splits: [],
    });
    try {
      // the next probe's table joined into this one where it joins this table's rows (joins/merge.ts); a
      // merged table is grouped by the threads (grouping it here, before the first probe, measured slower on q10)
      let pipeline = how.pipeline,
        after = ops;
      for (let m = mergeProbes(pipeline, after); m; m = mergeProbes(pipeline, after)) ({ pipeline, after } = m);
      return await ex.runPipeline({ ...pipeline, ops: [...pipeline.ops, ...after] }, sink, consumer, combine);
    } finally {
      ex.spill.release(how.heldBytes);
    }
  }
  const pre = (side: 'left' | 'right') => (how.collected?.side === side ? how.collected.batches : undefined);
  const P = partitionsFor(node, ex.settings);
  const skew = ex.settings.skew;
  const sketch = skew.enabled && skew.strategy !== 'partition' ? SKETCH_CAPACITY : 0;
  const shape: JoinShape = eager
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
  const sideCombine = (side: 'left' | 'right'): Combine | undefined =>
    eager && {
      groupBy: eager[side].groupBy,
      aggs: eager[side].aggs,
      schema: (side === 'left' ? node.left : node.right).schema,
    };
  const shuffled = Promise.all([
    shuffle(
      ex,
      node.left,
      { keys: shape.leftKeys, norms: node.leftNorms, partitions: P, spreadNulls: true, sketch },
      `${node.id}.left`,
      node.id,
      sideCombine('left'),
      undefined,
      pre('left'),
    ),
    shuffle(
      ex,
      node.right,
      { keys: shape.rightKeys, norms: node.rightNorms, partitions: P, spreadNulls: true, sketch },
      `${node.id}.right`,
      node.id,
      sideCombine('right'),
      undefined,
      pre('right'),
    ),
  ]);
  // the measured side's rows are held until its map tasks have partitioned them
  const [l, r] = await shuffled.finally(() => ex.spill.release(how.heldBytes));
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
  const planned = planReduceTasks(
    ls,
    rs,
    node.type,
    budgetedSkew(skew, ex.taskShare()),
    plannedWorkers(ex.settings),
    BUILD_WEIGHT,
  );
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
  ex.stats.joins.push({
    id: node.id,
    type: node.type,
    ...strategy,
    targetBytes: plan.targetBytes,
    tasks: plan.tasks.length,
    splits: plan.splits,
  });
  const ctx: JoinContext = {
    node,
    shape,
    ops,
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
  const ranged = eager ? undefined : ex.rangeRequests.get(sink);
  const results = ranged
    ? await runRanged(ex, ranged, plan.tasks, (t) => t.kind === 'partitions', runOne)
    : (await Promise.all(plan.tasks.map((t) => runOne(t, sink)))).flat();
  ex.spill.done([...l.byTask, ...r.byTask]);
  return results;
}

/**
 * A cross join (no keys): both sides are run to the coordinator, the smaller
 * one is put in shared memory and replicated to one task per chunk of the
 * larger one (about advisoryPartitionBytes each). How scalar subqueries are planned.
 */
async function runCross(
  ex: ExecContext,
  node: JoinNode,
  ops: RowOp[],
  sink: TaskSink,
  combine?: Combine,
): Promise<TaskResult[]> {
  const [l, r] = await Promise.all([ex.collectBatches(node.left), ex.collectBatches(node.right)]);
  const leftSmall = rowCount(l) <= rowCount(r);
  const small = [concatBatches(leftSmall ? node.left.schema : node.right.schema, leftSmall ? l : r, true)];
  const chunks = packBlocks(leftSmall ? r : l, ex.settings.skew.advisoryPartitionBytes);
  // the smaller side is replicated whatever broadcastBytes says: there is no key to shuffle by
  const side = leftSmall ? 'left' : 'right';
  ex.stats.joins.push({
    id: node.id,
    type: node.type,
    strategy: 'broadcast',
    reason: `cross join: the smaller side (${side}) replicated to every task of the larger`,
    broadcast: { side, rows: small[0].length, bytes: batchBytes(small[0]) },
    targetBytes: ex.settings.skew.advisoryPartitionBytes,
    tasks: chunks.length,
    splits: [],
  });
  return Promise.all(
    chunks.map((chunk, i) =>
      ex.run(
        {
          source: {
            kind: 'join',
            type: 'inner',
            leftSchema: node.left.schema,
            rightSchema: node.right.schema,
            left: leftSmall ? small : chunk,
            right: leftSmall ? chunk : small,
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

function joinTask(
  ex: ExecContext,
  ctx: JoinContext,
  left: Batch[],
  right: Batch[],
  meta: Omit<TaskMeta, 'stage'>,
  seed: number,
  parts?: [number, number][],
) {
  const { node, shape } = ctx;
  const inputBytes = [...left, ...right].reduce((a, b) => a + blockBytes(b), 0);
  return ex.run(
    {
      source: {
        kind: 'join',
        type: node.type,
        ...shape,
        left,
        right,
        leftNorms: node.leftNorms,
        rightNorms: node.rightNorms,
        ...(parts ? { parts } : {}),
      },
      ops: ctx.ops,
      combine: ctx.combine,
      sink: withSeed(ctx.sink, seed),
    },
    { stage: node.id, ...meta, inputBytes },
  );
}

/** `split`: the skewed partition's entry in joins[].splits, its task counts set to what ran */
async function runPlanned(ex: ExecContext, ctx: JoinContext, t: PlannedTask, split?: SplitInfo): Promise<TaskResult[]> {
  const { l, r, node } = ctx;
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
  // Hot keys: find them in both sides of the partition, then join the rest and each key's grid.
  // The split tasks read row ranges of about the target size, so no task reads a whole map output.
  // Where a range holds few runs of each key (sorted input), the join tasks read those runs in
  // place; otherwise the split task cuts the keys out (a copy). The grids are cut from the rows
  // found (exact), not from the sketches' estimates.
  const p = t.partition;
  const H = t.keys.length;
  let held = 0;
  const modes = { located: 0, scattered: 0 };
  const splitSide = async (s: ShuffleOutput, side: 'left' | 'right') => {
    const blocks = mapOutputs(ex, s, p);
    const chunks = packRowSlices(
      blocks.map((b) => b.length),
      blocks.map(blockBytes),
      ctx.targetBytes,
    );
    const outs = await Promise.all(
      chunks.map(async (slices, c) => {
        const chunk = sliceBlocks(blocks, slices);
        // a spilled block is cut out once rather than read back by every task of the grid
        const locate = chunk.some(isSpilled) ? undefined : MAX_RUNS;
        const res = await ex.run(
          {
            source: {
              kind: 'split',
              schema: side === 'left' ? ctx.shape.leftSchema : ctx.shape.rightSchema,
              blocks: chunk,
              keys: side === 'left' ? ctx.shape.leftKeys : ctx.shape.rightKeys,
              norms: side === 'left' ? node.leftNorms : node.rightNorms,
              hot: t.keys.map((k) => ({ hash: k.hash, match: k.match })),
              locate,
            },
            ops: [],
            sink: { kind: 'collect' },
          },
          {
            stage: node.id,
            kind: 'split',
            partition: p,
            split: `${side} cut ${c + 1}/${chunks.length} ${sliceLabel(slices, (i) => blocks[i].length)}`,
            inputBytes: chunk.reduce((a, b) => a + blockBytes(b), 0),
          },
        );
        modes[res.runs ? 'located' : 'scattered']++;
        held += heldBytes([res.batches]);
        return res.runs
          ? runsToSlices(slices, res.runs, 1 + H).map((sl) => sliceBlocks(blocks, sl))
          : (res.batches as Batch[]).map((b) => [b]);
      }),
    );
    // [rest, key 0, key 1, ...] from every chunk, empty outputs dropped
    const gather = (i: number) => outs.flatMap((o) => o[i]).filter((b) => b.length > 0);
    return { rest: gather(0), keys: Array.from({ length: H }, (_, i) => gather(1 + i)) };
  };
  const [ls, rs] = await Promise.all([splitSide(l, 'left'), splitSide(r, 'right')]);
  const jobs: Promise<TaskResult | TaskResult[]>[] = [];
  let tasks = 0;
  // the plain partitions each cell of the keys' grids carries (skew/mix.ts), in order
  let cell = 0;
  const riders = t.riders ?? [];
  const plainTask = (ps: number[]) => runPlanned(ex, ctx, { kind: 'partitions', partitions: ps, bytes: 0 });
  const pairs = (g: { left: Batch[][]; right: Batch[][] }, label: (i: number, j: number) => string, grace: boolean) => {
    g.left.forEach((x, i) =>
      g.right.forEach((y, j) => {
        const rides = grace ? [] : (riders[cell++] ?? []);
        if (!reduceNeeded(node.type, rowCount(x), rowCount(y))) {
          if (rides.length) jobs.push(plainTask(rides));
          return;
        }
        tasks++;
        // the rest may still not fit the memory budget (grace pieces); a hot key's pieces are never cut by hash
        if (grace) {
          const meta = { kind: 'reduce', partition: p, split: label(i, j) } as const;
          jobs.push(
            graceJoin(ex, ctx, x, y, meta).then(
              (r): Promise<TaskResult | TaskResult[]> | TaskResult[] => r ?? joinTask(ex, ctx, x, y, meta, p + i + j),
            ),
          );
          return;
        }
        const ql = rides.map((q) => blocksOf(l, q)),
          qr = rides.map((q) => blocksOf(r, q));
        const meta = {
          kind: 'reduce',
          partition: p,
          split: label(i, j),
          ...(rides.length ? { partitions: [p, ...rides] } : {}),
        } as const;
        jobs.push(
          joinTask(
            ex,
            ctx,
            [...x, ...ql.flat()],
            [...y, ...qr.flat()],
            meta,
            p + i + j,
            rides.length
              ? [[x.length, y.length], ...ql.map((b, k): [number, number] => [b.length, qr[k].length])]
              : undefined,
          ),
        );
      }),
    );
  };
  const rest = restGrid(node.type, ls.rest, rs.rest, ctx.targetBytes);
  pairs(
    rest,
    (i, j) => (rest.left.length * rest.right.length > 1 ? `hot-key rest piece ${i},${j}` : 'hot-key rest'),
    true,
  );
  t.keys.forEach((k, ki) => {
    const g = keyGrid(node.type, ls.keys[ki], rs.keys[ki], ctx.targetBytes, [k.leftPieces, k.rightPieces]);
    const before = tasks;
    pairs(g, (i, j) => `hot-key ${k.display.join(',')} piece ${i},${j}`, false);
    const info = split?.keys?.[ki];
    if (info) info.tasks = tasks - before;
  });
  // cells planned but not made (the rows found cut into fewer pieces): their partitions on their own
  for (const ps of riders.slice(cell)) if (ps.length) jobs.push(plainTask(ps));
  if (split) Object.assign(split, { tasks, cut: modes });
  const results = (await Promise.all(jobs)).flat();
  ex.spill.release(held);
  return results;
}

/**
 * Grace hash join: when the build side of a reduce task does not fit its
 * share of the budget, both sides are cut into pieces by further bits of
 * the key hash (re-partition tasks, their output held or spilled like any
 * shuffle) and each piece is joined by its own task. Null when the task fits.
 */
async function graceJoin(
  ex: ExecContext,
  ctx: JoinContext,
  left: Batch[],
  right: Batch[],
  meta: Omit<TaskMeta, 'stage'>,
): Promise<TaskResult[] | null> {
  const size = (bs: Batch[]) => ({ rows: rowCount(bs), bytes: bs.reduce((a, b) => a + blockBytes(b), 0) });
  const K = gracePieces(ctx.node.type, size(left), size(right), ex.taskShare());
  if (K <= 1) return null;
  const { node, shape } = ctx;
  const [ls, rs] = await Promise.all([
    cutByHash(
      ex,
      left,
      shape.leftSchema,
      shape.leftKeys,
      node.leftNorms,
      K,
      ctx.partitions,
      { stage: node.id, partition: meta.partition, label: 'grace left' },
      true,
    ),
    cutByHash(
      ex,
      right,
      shape.rightSchema,
      shape.rightKeys,
      node.rightNorms,
      K,
      ctx.partitions,
      { stage: node.id, partition: meta.partition, label: 'grace right' },
      true,
    ),
  ]);
  const jobs: Promise<TaskResult>[] = [];
  for (let k = 0; k < K; k++) {
    const a = ls.pieces[k],
      b = rs.pieces[k];
    if (reduceNeeded(node.type, rowCount(a), rowCount(b))) {
      jobs.push(
        joinTask(
          ex,
          ctx,
          a,
          b,
          { ...meta, split: `${meta.split ? meta.split + ', ' : ''}grace piece ${k + 1}/${K}` },
          meta.partition + k,
        ),
      );
    }
  }
  const results = await Promise.all(jobs);
  ex.spill.release(ls.held + rs.held);
  return results;
}

/** Partition p's block of every map task (by map task; EMPTY where it wrote none), shared: row slices index it. */
function mapOutputs(ex: ExecContext, s: ShuffleOutput, p: number): Batch[] {
  return s.byTask.map((bs) => (bs[p] ? ex.share(bs[p]) : EMPTY));
}
