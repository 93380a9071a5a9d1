// A shuffle join's reduce task as the coordinator starts it (one task over its sides' blocks, or grace pieces when
// the build side outgrows a task's share of the budget), and the types the join's stage files share.
import type { EagerPlan } from '../../agg/eager.js';
import { type Batch, type Schema, rowCount } from '../../kernels/column.js';
import type { BoundJoin } from '../../plan/bound.js';
import { reduceNeeded } from '../../skew/decide.js';
import { blockBytes } from '../../spill/block.js';
import { cutByHash, gracePieces } from '../grace.js';
import { type Combine, type RowOp, type TaskResult, type TaskSink, withSeed } from '../task.js';
import type { ExecContext, TaskMeta } from '../operator.js';
import { type ShuffleOutput, EMPTY } from '../shuffle.js';

export type JoinNode = BoundJoin;

/** What the join's reduce tasks read: the sides as shuffled (rows, or eager partial rows). */
export interface JoinShape {
  leftSchema: Schema;
  rightSchema: Schema;
  leftKeys: number[];
  rightKeys: number[];
  eager?: EagerPlan;
}

export interface JoinContext {
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

export function joinTask(
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

/**
 * Grace hash join: when the build side of a reduce task does not fit its
 * share of the budget, both sides are cut into pieces by further bits of
 * the key hash (re-partition tasks, their output held or spilled like any
 * shuffle) and each piece is joined by its own task. Null when the task fits.
 */
export async function graceJoin(
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
  ex.memory.release(ls.held + rs.held);
  return results;
}

/** Partition p's block of every map task (by map task; EMPTY where it wrote none), shared: row slices index it. */
export function mapOutputs(ex: ExecContext, s: ShuffleOutput, p: number): Batch[] {
  return s.byTask.map((bs) => (bs[p] ? ex.share(bs[p]) : EMPTY));
}
