// Grace hash join and aggregation in pieces. A reduce task whose build side
// (or an aggregation's partition) does not fit its share of the memory budget
// is cut into pieces by further bits of the same key hash (both sides alike,
// so every key's rows meet in one piece), one task per piece. The decision is
// a pure function (sizes in, a piece count out); hot-key pieces of a skew
// split are never cut again: the caller asks only for whole partitions and
// the rest of a hot-key split.
import type { Batch, Schema } from '../kernels/column.js';
import { buildsLeft } from '../kernels/join.js';
import type { KeyNorm } from '../plan/bound.js';
import type { JoinType } from '../plan/spec.js';
import type { ExecContext } from './operator.js';
import { packBlocks } from '../spill/block.js';
import { heldBytes } from '../spill/spiller.js';

/** Most pieces one reduce task is cut into. */
export const MAX_GRACE_PIECES = 64;

export interface SideSize {
  rows: number;
  bytes: number;
}

/**
 * Pieces for a reduce task (1: join it whole): enough that the build side's
 * share of each fits `shareBytes` (the budget over the workers that join at once).
 */
export function gracePieces(type: JoinType, left: SideSize, right: SideSize, shareBytes: number): number {
  const build = buildsLeft(type, left.rows, right.rows) ? left : right;
  if (build.bytes <= shareBytes) return 1;
  return Math.min(MAX_GRACE_PIECES, Math.ceil(build.bytes / Math.max(1, shareBytes)));
}

/**
 * Cut blocks into K pieces by the bits of their key hash below the `within`
 * partitions they came from (re-partition tasks over chunks of about the
 * target size, their output held or spilled like a shuffle's): every key's
 * rows in one piece. Returns each piece's blocks and the bytes held.
 */
export async function cutByHash(
  ex: ExecContext,
  blocks: Batch[],
  schema: Schema,
  keys: number[],
  norms: KeyNorm[],
  K: number,
  within: number,
  meta: { stage: string; partition: number; label: string },
  spreadNulls: boolean,
): Promise<{ pieces: Batch[][]; held: number }> {
  const chunks = packBlocks(blocks, ex.settings.skew.advisoryPartitionBytes).filter((c) => c.length > 0);
  const outs = await Promise.all(
    chunks.map((chunk, c) =>
      ex.run(
        {
          source: { kind: 'batches', schema, batches: chunk },
          ops: [],
          sink: { kind: 'partition', keys, norms, partitions: K, spreadNulls, nullSeed: c * 7919, within },
        },
        {
          stage: meta.stage,
          kind: 'split',
          partition: meta.partition,
          split: `${meta.label} chunk ${c + 1}/${chunks.length} into ${K}`,
        },
      ),
    ),
  );
  const pieces = Array.from({ length: K }, (_, k) =>
    outs.map((o) => o.batches[k]).filter((b): b is Batch => b !== null),
  );
  return { pieces, held: heldBytes(outs.map((o) => o.batches)) };
}
