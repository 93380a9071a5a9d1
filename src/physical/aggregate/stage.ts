// The aggregate operator's coordinator side: combiners or eager aggregation below a join, the shuffle by group,
// packed and two-level reduce tasks, grace pieces for a partition over a task's share of the budget.
import { normFor } from '../../kernels/keys.js';
import { eagerPlan } from '../../agg/eager.js';
import { combinable, partialSchema } from '../../agg/partial.js';
import type { Batch } from '../../kernels/column.js';
import type { BoundJoin, BoundNode, KeyNorm } from '../../plan/bound.js';
import { type Settings, plannedWorkers } from '../../plan/load.js';
import { isSharedProjection } from '../../plan/share.js';
import { coalesceCap, packPartitions } from '../../skew/decide.js';
import { planAggregateSplits } from '../../skew/aggregate.js';
import { type AggregateInput, aggregateSource, levelOne, rowsInput } from './two-level.js';
import { blockBytes } from '../../spill/block.js';
import { MAX_GRACE_PIECES, cutByHash } from '../grace.js';
import { partitionsFor, pipelineOf, scanBytes, scanSource } from '../pipeline.js';
import { type Combine, type RowOp, type TaskResult, type TaskSink, type TaskSpec, withSeed } from '../task.js';
import type { Downstream, ExecContext } from '../operator.js';
import { type AggregateBlocks, type ShuffleOutput, aggregateBlocksOf, shuffle } from '../shuffle.js';

type AggregateNode = Extract<BoundNode, { kind: 'aggregate' }>;

/** Rows read from each side of a join to decide on eager aggregation. */
const EAGER_SAMPLE_ROWS = 16384;

/** An aggregate: its input shuffled by group (after combiners or eager aggregation), then reduce tasks. */
export async function runAggregate(
  ex: ExecContext,
  node0: Extract<BoundNode, { kind: 'aggregate' }>,
  ops: RowOp[],
  { sink, combine }: Downstream,
): Promise<TaskResult[]> {
  const node = overJoin(node0);
  const P = node.groupBy.length === 0 ? 1 : partitionsFor(node, ex.settings);
  const { s, shuffled, norms } = await shuffleInput(ex, node, P);
  const share = ex.taskShare();
  // A skewed partition is aggregated in two levels (skew/aggregate.ts).
  const skew = planAggregateSplits(s.stats.partitionRows, s.stats.partitionBytes, ex.settings.skew, node.aggs, share);
  Object.assign(s.stats, skew.decision);
  ex.report('aggregate', { split: { id: node.id, targetBytes: skew.targetBytes, splits: skew.splits } });
  const twoLevel = new Map(skew.splits.filter((x) => x.method === 'two-level').map((x) => [x.partition, x]));
  const rc: Reduce = { ex, node, ops, sink, combine, share, P, norms, rows: rowsInput(shuffled) };
  const jobs = packJobs(ex, node, s, twoLevel, Math.min(skew.targetBytes, share));
  const results = await Promise.all(
    jobs.map(async (ps) => {
      const p = ps[0],
        split = twoLevel.get(p);
      if (!split) return reduce(rc, shuffled, aggregateBlocksOf(s, ps), p, undefined, ps);
      const { blocks, raw } = aggregateBlocksOf(s, [p]);
      const one = await levelOne(ex, shuffled, blocks, split, raw);
      const out = await reduce(rc, one.input, { blocks: one.blocks, raw: [] }, p, 'merge');
      ex.memory.release(one.held);
      return out;
    }),
  );
  ex.memory.done(s.byTask);
  return results.flat();
}

/**
 * How an aggregate's input is pre-aggregated before its shuffle, by the plan alone: eager aggregation below a join
 * (when a sample then shows the join keys repeating on both sides, see joinMultiplies; else combiners), combiners
 * in the map tasks, or none. `--explain` states the same (aggregate/operator.ts).
 */
export function preAggregation(node0: AggregateNode, settings: Settings): 'eager' | 'combiners' | 'none' {
  if (!settings.combiners) return 'none';
  const node = overJoin(node0);
  if (settings.eagerAggregation && node.input.kind === 'join' && eagerPlan(node, node.input)) return 'eager';
  return combinable(node.aggs) ? 'combiners' : 'none';
}

/**
 * An aggregate over a repeated join's projection onto its reader's columns (plan/share.ts) as one over the join
 * itself: the projection only picks columns, and eager aggregation needs the join right below.
 */
export function overJoin(node: AggregateNode): AggregateNode {
  const p = node.input;
  if (p.kind !== 'project' || p.input.kind !== 'join' || !isSharedProjection(p)) return node;
  const at = p.indices;
  return {
    ...node,
    input: p.input,
    groupBy: node.groupBy.map((g) => at[g]),
    aggs: node.aggs.map((a) => (a.col < 0 ? a : { ...a, col: at[a.col] })),
  };
}

/**
 * The aggregate's input shuffled by its groups. With combiners, map tasks ship partial states keyed by their
 * leading g columns; a map task whose rows barely group ships them as they are, beside other tasks' states.
 * Eager aggregation: partial aggregates below the join, whose reduce tasks emit our partial states.
 */
async function shuffleInput(ex: ExecContext, node: Extract<BoundNode, { kind: 'aggregate' }>, P: number) {
  const inSchema = node.input.schema;
  const g = node.groupBy.length;
  const how = preAggregation(node, ex.settings);
  const lead = node.lead ? { lead: node.lead } : {};
  // a join computed once for several readers is read whole: pre-aggregated, its rows could not be held (unless they
  // were found too many to hold: then eager aggregation is back, as for a join read once)
  const eager =
    how === 'eager' &&
    node.input.kind === 'join' &&
    !(await ex.sharesRows?.(node.input)) &&
    (await joinMultiplies(ex, node.input))
      ? (eagerPlan(node, node.input) ?? undefined)
      : undefined;
  const pre: Combine | undefined =
    !eager && ex.settings.combiners && combinable(node.aggs)
      ? { groupBy: node.groupBy, aggs: node.aggs, schema: inSchema, passRows: true, ...lead }
      : undefined;
  const partial = pre !== undefined || eager !== undefined;
  const shuffledSchema = partial ? partialSchema(inSchema, node.groupBy, node.aggs) : inSchema;
  const keys = partial ? Array.from({ length: g }, (_, i) => i) : node.groupBy;
  const norms = keys.map((i) => normFor(shuffledSchema[i].type));
  if (eager) ex.report('aggregate', { eager: node.id });
  // a lead (plan/eager-push.ts): rows are hashed by the group columns expected to determine the rest; every row of
  // a group still meets in one partition, grouped there by all its columns
  const hashed = node.lead ? node.lead : keys.length;
  const spec = { keys: keys.slice(0, hashed), norms: norms.slice(0, hashed), partitions: P, spreadNulls: false };
  const s = await shuffle(ex, node.input, spec, `${node.id}.input`, node.id, pre, eager);
  const shuffled: AggregateInput = {
    stage: node.id,
    mode: partial ? 'final' : 'raw',
    schema: shuffledSchema,
    groupBy: keys,
    aggs: node.aggs,
    outSchema: node.schema,
    ...(pre ? { rows: { schema: inSchema, groupBy: node.groupBy } } : {}),
    ...lead,
  };
  return { s, shuffled, norms };
}

/**
 * The reduce tasks' partitions, largest first. Small partitions are packed into tasks as a join's are
 * (skew/decide.ts): a task over several partitions aggregates them together (each group lies in one partition);
 * a partition aggregated in two levels is a task of its own.
 */
function packJobs(
  ex: ExecContext,
  node: Extract<BoundNode, { kind: 'aggregate' }>,
  s: ShuffleOutput,
  twoLevel: Map<number, unknown>,
  target: number,
): number[][] {
  const g = node.groupBy.length;
  const bytesOf = (p: number) => s.stats.partitionBytes[p];
  const plain: number[] = [];
  for (let p = 0; p < s.stats.partitions; p++) {
    if ((s.stats.partitionRows[p] > 0 || g === 0) && !twoLevel.has(p)) plain.push(p);
  }
  plain.sort((a, b) => bytesOf(b) - bytesOf(a));
  const total = plain.reduce((a, p) => a + bytesOf(p), 0);
  const packed =
    ex.settings.skew.enabled && g > 0
      ? packPartitions(plain, bytesOf, coalesceCap(total, target, plannedWorkers(ex.settings))).map((t) => t.partitions)
      : plain.map((p) => [p]);
  const sizeOf = (ps: number[]) => ps.reduce((a, p) => a + bytesOf(p), 0);
  return [...packed, ...[...twoLevel.keys()].map((p) => [p])].sort((a, b) => sizeOf(b) - sizeOf(a));
}

/** What the reduce tasks of one aggregate share. */
interface Reduce {
  ex: ExecContext;
  node: Extract<BoundNode, { kind: 'aggregate' }>;
  ops: RowOp[];
  sink: TaskSink;
  combine?: Combine;
  share: number;
  P: number;
  /** how the shuffle's group keys were normalized for hashing: grace pieces cut by the same */
  norms: KeyNorm[];
  /** the passed-through rows' input, beside the states (combiners' pass-through) */
  rows: AggregateInput | null;
}

/**
 * One reduce task over partition p (or the partitions packed with it). A partition larger than a worker's share
 * of the budget is cut by further bits of the group hash: each group lies in one piece, aggregated by its own
 * task (no merge needed).
 */
async function reduce(
  rc: Reduce,
  a: AggregateInput,
  input: AggregateBlocks,
  p: number,
  step?: 'merge',
  partitions?: number[],
): Promise<TaskResult[]> {
  const { ex, node, share } = rc;
  const run = (x: AggregateBlocks, split?: string) =>
    ex.run(
      {
        source: aggregateSource(a, x.blocks, step, x.raw, x.parts),
        ops: rc.ops,
        combine: rc.combine,
        sink: withSeed(rc.sink, p),
      },
      {
        stage: node.id,
        kind: 'reduce',
        partition: p,
        ...(partitions && partitions.length > 1 ? { partitions } : {}),
        ...(split ? { split } : {}),
      },
    );
  const label = step ? 'two-level merge' : undefined;
  const bytes = [...input.blocks, ...input.raw].reduce((x, b) => x + blockBytes(b), 0);
  if (node.groupBy.length === 0 || bytes <= share) return [await run(input, label)];
  const K = Math.min(MAX_GRACE_PIECES, Math.ceil(bytes / Math.max(1, share)));
  // states and passed-through rows are cut apart by the same hash bits: piece k of both holds the same groups
  const cutOf = (bs: Batch[], x: AggregateInput, what: string) =>
    bs.length === 0
      ? { pieces: Array.from({ length: K }, (): Batch[] => []), held: 0 }
      : cutByHash(
          ex,
          bs,
          x.schema,
          x.groupBy,
          rc.norms,
          K,
          rc.P,
          { stage: node.id, partition: p, label: `${label ? `${label} ` : ''}grace ${what}` },
          false,
        );
  const [cut, rawCut] = await Promise.all([cutOf(input.blocks, a, 'input'), cutOf(input.raw, rc.rows ?? a, 'rows')]);
  const out = await Promise.all(
    cut.pieces.map((piece, k) =>
      piece.length || rawCut.pieces[k].length
        ? run({ blocks: piece, raw: rawCut.pieces[k] }, `${label ? `${label}, ` : ''}grace piece ${k + 1}/${K}`)
        : null,
    ),
  );
  ex.memory.release(cut.held + rawCut.held);
  return out.filter((r): r is TaskResult => r !== null);
}

/**
 * Whether a join repeats keys on both sides (rows per key >= 1.5 in a
 * sample: the first rows of the first map task of each side), where eager aggregation pays:
 * against a side with unique keys it only adds work. Sides that do not
 * start with a scan are assumed to repeat keys.
 */
async function joinMultiplies(ex: ExecContext, join: BoundJoin): Promise<boolean> {
  // a sample is small: read on this thread, unless runs are kept off it (inThreadBytes 0, faults) or the
  // pool's threads are ready (they have warmed WebAssembly: this one has not, see cli/prestart.ts)
  const here = ex.inThread || ex.coldAndSmall(1);
  const sample = async (node: BoundNode, keys: number[], norms: KeyNorm[]) => {
    const p = pipelineOf(node);
    if (p.source.kind !== 'scan' || p.source.splits.length === 0) return Infinity;
    const s = p.source.splits[0];
    const task: TaskSpec = {
      source: scanSource(s, p.source.schema, EAGER_SAMPLE_ROWS),
      ops: p.ops,
      sink: { kind: 'keyStats', keys, norms },
    };
    const r = await ex.runAside(task, `${join.id} key sample`, here);
    const k = r.keyStats!;
    return k.distinct === 0 ? Infinity : k.rows / k.distinct;
  };
  const left = () => sample(join.left, join.leftKeys, join.leftNorms),
    right = () => sample(join.right, join.rightKeys, join.rightNorms);
  if (!here) {
    const [l, r] = await Promise.all([left(), right()]);
    return l >= 1.5 && r >= 1.5;
  }
  // one after the other on this thread anyway: the smaller side first (a dimension's unique keys, often),
  // and the other only when it repeats keys
  const [first, then] = scanBytes(join.left) <= scanBytes(join.right) ? [left, right] : [right, left];
  return (await first()) >= 1.5 && (await then()) >= 1.5;
}
