// A skewed join partition split by hot keys (skew/decide.ts plans it): split tasks cut each key's rows out of both
// sides (or locate their runs in place), then the rest and each key's rows are joined as grids of pieces.
import { type Batch, rowCount } from '../../kernels/column.js';
import { type PlannedTask, type SplitInfo, reduceNeeded } from '../../skew/decide.js';
import { keyGrid, restGrid } from '../../skew/cut.js';
import { packRowSlices, runsToSlices, sliceBlocks, sliceLabel } from '../../skew/slices.js';
import { blockBytes, isSpilled } from '../../spill/block.js';
import { heldBytes } from '../../spill/spiller.js';
import type { TaskResult } from '../task.js';
import type { ExecContext } from '../operator.js';
import { blocksOf } from '../shuffle.js';
import { type JoinContext, graceJoin, joinTask, mapOutputs } from './tasks.js';

/** Runs of rows (of hot keys and the rest) up to which a split task leaves a key's rows in place for the join tasks. */
const MAX_RUNS = 64;

/** What the split tasks of one side found: the rest of the partition's rows and each hot key's rows. */
interface Found {
  rest: Batch[];
  keys: Batch[][];
}

/** The split tasks' tally: bytes they hold until the grid's tasks are done, and how the rows were found. */
interface Tally {
  held: number;
  modes: { located: number; scattered: number };
}

/**
 * Cut one side of partition p into the rest and each hot key's rows. The split tasks read row ranges of about
 * the target size, so no task reads a whole map output. Where a range holds few runs of each key (sorted
 * input), the join tasks read those runs in place; otherwise the split task cuts the keys out (a copy).
 */
async function splitSide(
  ex: ExecContext,
  ctx: JoinContext,
  t: Extract<PlannedTask, { kind: 'hot-keys' }>,
  side: 'left' | 'right',
  tally: Tally,
): Promise<Found> {
  const { node } = ctx;
  const p = t.partition,
    H = t.keys.length;
  const blocks = mapOutputs(ex, side === 'left' ? ctx.l : ctx.r, p);
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
      tally.modes[res.runs ? 'located' : 'scattered']++;
      tally.held += heldBytes([res.batches]);
      return res.runs
        ? runsToSlices(slices, res.runs, 1 + H).map((sl) => sliceBlocks(blocks, sl))
        : (res.batches as Batch[]).map((b) => [b]);
    }),
  );
  // [rest, key 0, key 1, ...] from every chunk, empty outputs dropped
  const gather = (i: number) => outs.flatMap((o) => o[i]).filter((b) => b.length > 0);
  return { rest: gather(0), keys: Array.from({ length: H }, (_, i) => gather(1 + i)) };
}

/**
 * A skewed partition split by hot keys: find them in both sides of the partition, then join the rest and each
 * key's grid. The grids are cut from the rows found (exact), not from the sketches' estimates. `plainTask` runs
 * the plain partitions that ride in the grids' cells (skew/mix.ts) on their own.
 */
export async function runHotKeys(
  ex: ExecContext,
  ctx: JoinContext,
  t: Extract<PlannedTask, { kind: 'hot-keys' }>,
  split: SplitInfo | undefined,
  plainTask: (ps: number[]) => Promise<TaskResult[]>,
): Promise<TaskResult[]> {
  const { l, r, node } = ctx;
  const p = t.partition;
  const tally: Tally = { held: 0, modes: { located: 0, scattered: 0 } };
  const [ls, rs] = await Promise.all([splitSide(ex, ctx, t, 'left', tally), splitSide(ex, ctx, t, 'right', tally)]);
  const jobs: Promise<TaskResult | TaskResult[]>[] = [];
  let tasks = 0;
  // the plain partitions each cell of the keys' grids carries (skew/mix.ts), in order
  let cell = 0;
  const riders = t.riders ?? [];
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
  if (split) Object.assign(split, { tasks, cut: tally.modes });
  const results = (await Promise.all(jobs)).flat();
  ex.memory.release(tally.held);
  return results;
}
