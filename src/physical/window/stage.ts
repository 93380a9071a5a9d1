// The window operator's coordinator side: the input shuffled by the partition keys (one partition without them),
// small partitions packed into tasks as an aggregate's are, and one task per pack sorting its rows and computing
// the functions (window/source.ts). Spilled shuffle blocks are read back by the task that reads them.
import { normFor } from '../../agg/aggregate.js';
import type { BoundNode } from '../../plan/bound.js';
import { plannedWorkers } from '../../plan/load.js';
import { coalesceCap, packPartitions } from '../../skew/decide.js';
import { type ShuffleOutput, blocksOf, shuffle } from '../exchange/shuffle.js';
import type { Downstream, ExecContext } from '../operator.js';
import { partitionsFor } from '../pipeline.js';
import { type RowOp, type TaskResult, withSeed } from '../task.js';

type WindowNode = Extract<BoundNode, { kind: 'window' }>;

/** Shuffle partitions of a window: one without partition keys, else as an aggregate's. */
export const windowPartitions = (node: WindowNode, settings: Parameters<typeof partitionsFor>[1]) =>
  node.partitionBy.length === 0 ? 1 : partitionsFor(node, settings);

export async function runWindow(
  ex: ExecContext,
  node: WindowNode,
  ops: RowOp[],
  { sink, combine }: Downstream,
): Promise<TaskResult[]> {
  const P = windowPartitions(node, ex.settings);
  const keys = node.partitionBy;
  const norms = keys.map((c) => normFor(node.input.schema[c].type));
  const s = await shuffle(
    ex,
    node.input,
    { keys, norms, partitions: P, spreadNulls: false },
    `${node.id}.input`,
    node.id,
  );
  const results = await Promise.all(
    packJobs(ex, node, s).map((ps) =>
      ex.run(
        {
          source: {
            kind: 'window',
            schema: node.input.schema,
            input: ps.flatMap((p) => blocksOf(s, p)),
            partitionBy: node.partitionBy,
            orderBy: node.orderBy,
            fns: node.fns,
          },
          ops,
          combine,
          sink: withSeed(sink, ps[0]),
        },
        { stage: node.id, kind: 'reduce', partition: ps[0], ...(ps.length > 1 ? { partitions: ps } : {}) },
      ),
    ),
  );
  ex.memory.done(s.byTask);
  return results;
}

/** The non-empty partitions packed into tasks, largest first (a window partition lies in one shuffle partition). */
function packJobs(ex: ExecContext, node: WindowNode, s: ShuffleOutput): number[][] {
  const bytesOf = (p: number) => s.stats.partitionBytes[p];
  const plain: number[] = [];
  for (let p = 0; p < s.stats.partitions; p++) if (s.stats.partitionRows[p] > 0) plain.push(p);
  plain.sort((a, b) => bytesOf(b) - bytesOf(a));
  if (!ex.settings.skew.enabled || node.partitionBy.length === 0) return plain.map((p) => [p]);
  const total = plain.reduce((a, p) => a + bytesOf(p), 0);
  const cap = coalesceCap(
    total,
    Math.min(ex.settings.skew.advisoryPartitionBytes, ex.taskShare()),
    plannedWorkers(ex.settings),
  );
  return packPartitions(plain, bytesOf, cap).map((t) => t.partitions);
}
