// The window operator's coordinator side: the input shuffled by the partition keys (one partition without them),
// small partitions packed into tasks as an aggregate's are, and one task per pack sorting its rows and computing
// the functions (window/source.ts). Spilled shuffle blocks are read back by the task that reads them.
import { normFor } from '../../kernels/keys.js';
import { type Batch, type Schema, concatBatches, emptyBatch, gatherBatch, sliceBatch } from '../../kernels/column.js';
import { type SortKey, comparisonSort } from '../../kernels/sort.js';
import { planWindowSplits } from '../../skew/window.js';
import { blockBytes, packBlocks, readBack } from '../../spill/block.js';
import type { BoundNode } from '../../plan/bound.js';
import { plannedWorkers } from '../../plan/load.js';
import { coalesceCap, packPartitions } from '../../skew/decide.js';
import { type ShuffleOutput, blocksOf, shuffle } from '../shuffle.js';
import type { Downstream, ExecContext } from '../operator.js';
import { partitionsFor, pipelineOf } from '../pipeline.js';
import { type RowOp, type TaskResult, type TaskSpec, withSeed } from '../task.js';
import {
  carries,
  carriesAfter,
  needsNeighbours,
  needsTotal,
  partitionTotals,
  reach,
  summaryR,
  toEnd,
  wholeTotals,
} from './carry.js';
import { keyOrder } from './split.js';
import type { WindowSource } from './window-source.js';
import type { TopN, TopNOp } from './topn.js';

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
  const top = topNOf(node);
  // under a top-N filter the map tasks keep only the rows that may pass it (window/topn.ts): the shuffle carries those
  const input = pipelineOf(node.input);
  const from = top ? { ...input, ops: [...input.ops, mapTopN(node, top)] } : undefined;
  const s = await shuffle(
    ex,
    node.input,
    { keys, norms, partitions: P, spreadNulls: false },
    `${node.id}.input`,
    node.id,
    undefined,
    undefined,
    undefined,
    from,
  );
  const { partitionRows: rows, partitionBytes: bytes } = s.stats;
  const target = taskTarget(ex, node, bytes);
  const splits = planWindowSplits(rows, bytes, ex.settings.skew, node.fns, node.orderBy.length > 0, target);
  Object.assign(s.stats, { skewedPartitions: splits.map((x) => x.partition) });
  const names = node.input.schema.map((f) => f.name);
  ex.report('window', {
    id: node.id,
    splits,
    targetBytes: target,
    shuffled: names,
    emitted: node.keep ? node.keep.map((c) => names[c]) : names,
    ...(top ? { topN: top } : {}),
  });
  const split = new Map(splits.filter((x) => x.method !== 'none').map((x) => [x.partition, x.pieces!]));
  const source = (input: Batch[], more: Partial<WindowSource> = {}): WindowSource => ({
    kind: 'window',
    schema: node.input.schema,
    input,
    partitionBy: node.partitionBy,
    orderBy: node.orderBy,
    fns: node.fns,
    ...(top ? { topN: top } : {}),
    ...more,
  });
  const results = await Promise.all([
    ...packJobs(ex, node, s, split, target).map((ps) =>
      ex.run(
        {
          source: source(
            ps.flatMap((p) => blocksOf(s, p)),
            node.keep ? { keep: node.keep } : {},
          ),
          ops,
          combine,
          sink: withSeed(sink, ps[0]),
        },
        { stage: node.id, kind: 'reduce', partition: ps[0], ...(ps.length > 1 ? { partitions: ps } : {}) },
      ),
    ),
    ...[...split].map(([p, pieces]) =>
      runPieces(ex, node, blocksOf(s, p), p, pieces, source, (k) => ({ ops, combine, sink: withSeed(sink, p + k) })),
    ),
  ]);
  ex.memory.done(s.byTask);
  return results.flat();
}

/** The window's top-N (plan/window-topn.ts) as its tasks take it: the function's kind and N. */
export function topNOf(node: WindowNode): TopN | null {
  if (!node.topN) return null;
  const fn = node.fns[node.topN.fn].fn;
  if (fn !== 'row_number' && fn !== 'rank' && fn !== 'dense_rank') throw new Error(`internal: top-N by ${fn}`);
  return { fn, n: node.topN.n };
}

/** The row operator a window's map tasks end with under a top-N filter. */
const mapTopN = (node: WindowNode, top: TopN): TopNOp => ({
  kind: 'topn',
  partitionBy: node.partitionBy,
  orderBy: node.orderBy,
  ...top,
});

/** A cut task's blocks at least (fewer, larger tasks: each has a fixed cost). */
const CUT_TASK_BYTES = 4 * 1024 * 1024;
/** Rows sampled from a hot partition for its boundaries. */
const SAMPLE_ROWS = 4096;

/**
 * A hot partition cut into `pieces` ranges of its (partition, order) keys by boundaries sampled from its rows: each
 * piece computed by its own task (a few tasks cut the partition's blocks into the ranges first), then, once the summaries
 * say what each piece's first window partition carries from the pieces before it, a second task per piece adds it.
 */
async function runPieces(
  ex: ExecContext,
  node: WindowNode,
  blocks: Batch[],
  p: number,
  pieces: number,
  source: (input: Batch[], more?: Partial<WindowSource>) => WindowSource,
  rest: (k: number) => Pick<TaskSpec, 'ops' | 'combine' | 'sink'>,
): Promise<TaskResult[]> {
  const keys = [...node.partitionBy.map((col) => ({ col, desc: false, nullsFirst: false })), ...node.orderBy];
  // without orderBy, a two-level aggregate: a hot partition's rows dealt over the ranges of equal boundaries
  const whole = node.orderBy.length === 0;
  const bounds = boundaries(node.input.schema, blocks, keys, pieces, whole);
  const K = bounds.length + 1;
  // the partition's blocks cut into the ranges by a few tasks, each over a run of blocks
  const bytes = blocks.reduce((a, b) => a + blockBytes(b), 0);
  const chunks = packBlocks(blocks, Math.max(CUT_TASK_BYTES, bytes / (2 * plannedWorkers(ex.settings))));
  const cuts = await Promise.all(
    chunks.map((chunk, i) =>
      ex.run(
        {
          source: source(chunk, { cut: bounds, ...(whole ? { deal: i * 7919 } : {}) }),
          ops: [],
          sink: { kind: 'collect' },
        },
        { stage: node.id, kind: 'split', partition: p, split: `cut ${i + 1}/${chunks.length} into ${K} ranges` },
      ),
    ),
  );
  const first = await Promise.all(
    Array.from({ length: K }, (_, k) =>
      ex.run(
        {
          source: source(
            cuts.flatMap((r) => (r.batches[k]?.length ? [r.batches[k]!] : [])),
            { piece: true },
          ),
          ops: [],
          sink: { kind: 'collect' },
        },
        { stage: node.id, kind: 'reduce', partition: p, split: `range ${k + 1}/${K}` },
      ),
    ),
  );
  const outs = first.map((r) => r.batches[0]!);
  const summaries = first.map((r) => (r.batches[1]?.length ? r.batches[1] : null));
  const after =
    !whole && node.fns.some(toEnd) ? carriesAfter(node.fns, node.partitionBy.length, summaries, lengths(outs)) : null;
  const combined = whole ? wholeTotals(node.fns, node.partitionBy.length, summaries, lengths(outs)) : null;
  const carried = carries(
    node.fns,
    node.partitionBy.length,
    summaries,
    outs.map((b) => b.length),
  );
  const totals =
    !whole && node.fns.some(needsTotal)
      ? partitionTotals(
          node.partitionBy.length,
          summaries,
          outs.map((b) => b.length),
        )
      : null;
  const schema = [...node.input.schema, ...node.fns.map((f) => ({ name: f.as, type: f.type }))];
  const near = node.fns.some(needsNeighbours) ? neighbours(outs, node.input.schema, reach(node.fns)) : null;
  return Promise.all(
    outs.map((out, k) => {
      const upTo = summaries[k]
        ? (summaries[k]!.columns[summaryR(node.partitionBy.length)].values as Float64Array)[0]
        : 0;
      return ex.run(
        {
          source: {
            ...source([out], {
              ...(node.keep ? { keep: node.keep } : {}),
              carry: {
                upTo,
                values: combined ? null : carried[k],
                ...(combined
                  ? { whole: { ...combined[k], lastFrom: lastFrom(summaries[k], node.partitionBy.length, out.length) } }
                  : {}),
                ...(totals ? { totals: totals[k] } : {}),
                ...(after?.[k]
                  ? {
                      after: {
                        values: after[k]!,
                        lastFrom: lastFrom(summaries[k], node.partitionBy.length, out.length),
                      },
                    }
                  : {}),
                ...(near ? { neighbours: near[k] } : {}),
              },
            }),
            schema,
          },
          ...rest(k),
        },
        { stage: node.id, kind: 'reduce', partition: p, split: `range ${k + 1}/${K} carried` },
      );
    }),
  );
}

const lengths = (outs: Batch[]) => outs.map((b) => b.length);

/** Where a piece's last window partition starts (its summary's second row counts that partition's rows). */
function lastFrom(summary: Batch | null, keys: number, n: number): number {
  return summary ? n - (summary.columns[summaryR(keys)].values as Float64Array)[1] : n;
}

/**
 * Each piece's neighbours: the last `before` rows of the pieces before it and the first `after` rows of those after
 * it (the input's columns, in the pieces' sorted order), for lag/lead and bounded ROWS frames.
 */
function neighbours(
  outs: Batch[],
  schema: Schema,
  r: { before: number; after: number },
): { before: Batch; after: Batch }[] {
  const w = schema.length;
  const cols = (b: Batch, from: number, to: number): Batch => {
    const s = sliceBatch(b, from, to);
    return { length: s.length, columns: s.columns.slice(0, w) };
  };
  return outs.map((_, k) => {
    const before: Batch[] = [],
      after: Batch[] = [];
    for (let j = k - 1, need = r.before; j >= 0 && need > 0; j--) {
      const n = outs[j].length;
      before.unshift(cols(outs[j], Math.max(0, n - need), n));
      need -= Math.min(n, need);
    }
    for (let j = k + 1, need = r.after; j < outs.length && need > 0; j++) {
      const n = outs[j].length;
      after.push(cols(outs[j], 0, Math.min(n, need)));
      need -= Math.min(n, need);
    }
    const join = (bs: Batch[]): Batch => (bs.length === 0 ? emptyBatch(schema) : concatBatches(schema, bs));
    return { before: join(before), after: join(after) };
  });
}

/**
 * Up to pieces-1 distinct boundary rows (the input's schema, sorted by the keys) from rows sampled evenly over the
 * partition's blocks (a few spilled ones read back).
 */
function boundaries(schema: Schema, blocks: Batch[], keys: SortKey[], pieces: number, equal = false): Batch {
  const step = Math.max(1, Math.floor(blocks.length / 16));
  const some = readBack(
    blocks.filter((_, i) => i % step === 0),
    { bytes: 0 },
  );
  const all = concatBatches(schema, some);
  const n = all.length;
  const take = Math.min(n, SAMPLE_ROWS);
  const picks = new Int32Array(take);
  for (let i = 0; i < take; i++) picks[i] = Math.floor((i * n) / take);
  const sample = gatherBatch(all, picks);
  const order = comparisonSort(sample, keys);
  const sorted = gatherBatch(sample, order);
  const cmp = keyOrder(sorted, keys);
  const chosen: number[] = [];
  for (let k = 1; k < pieces; k++) {
    const at = Math.floor((k * take) / pieces);
    if (at >= take || at === 0) continue;
    // equal boundaries kept where rows with equal keys are dealt over their ranges
    if (!equal && chosen.length && cmp(chosen[chosen.length - 1], at) === 0) continue;
    chosen.push(at);
  }
  return gatherBatch(sorted, Int32Array.from(chosen));
}

/** The non-empty partitions packed into tasks, largest first (a window partition lies in one shuffle partition). */
function packJobs(
  ex: ExecContext,
  node: WindowNode,
  s: ShuffleOutput,
  split: Map<number, number>,
  target: number,
): number[][] {
  const bytesOf = (p: number) => s.stats.partitionBytes[p];
  const plain: number[] = [];
  for (let p = 0; p < s.stats.partitions; p++) if (s.stats.partitionRows[p] > 0 && !split.has(p)) plain.push(p);
  plain.sort((a, b) => bytesOf(b) - bytesOf(a));
  if (!ex.settings.skew.enabled || node.partitionBy.length === 0) return plain.map((p) => [p]);
  return packPartitions(plain, bytesOf, target).map((t) => t.partitions);
}

/** The bytes a window task is packed up to, and a split partition's pieces sized to (the aggregate's rule). */
function taskTarget(ex: ExecContext, node: WindowNode, bytes: number[]): number {
  const total = bytes.reduce((a, b) => a + b, 0);
  const target = Math.min(ex.settings.skew.advisoryPartitionBytes, ex.taskShare());
  return node.partitionBy.length === 0 ? target : coalesceCap(total, target, plannedWorkers(ex.settings));
}
