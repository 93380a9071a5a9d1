// A limit without a sort: its input streams in task order (scheduler/in-order.ts)
// and is kept only until offset + count rows are there; the input's final
// tasks not started by then are skipped. Only the rows the limit needs are held.
import { type Batch, concatBatches, gatherBatch, sliceBatch } from '../../kernels/column.js';
import { topIndices } from '../../kernels/sort.js';
import type { BoundNode } from '../../plan/bound.js';
import type { ExecContext } from '../operator.js';

type LimitNode = Extract<BoundNode, { kind: 'limit' }>;

/** A limit's rows on the coordinator: over a sort, only the rows the limit keeps are sorted (top-k). */
export async function limitRows(ex: ExecContext, node: LimitNode): Promise<Batch> {
  if (node.input.kind !== 'sort') return takeRows(ex, node);
  const below = node.input.input;
  const b = concatBatches(below.schema, await ex.collectBatches(below));
  const want = node.offset + node.count;
  return sliceBatch(gatherBatch(b, topIndices(b, node.input.by, want)), node.offset, want);
}

export async function takeRows(ex: ExecContext, node: LimitNode): Promise<Batch> {
  const want = node.offset + node.count;
  const kept: Batch[] = [];
  let rows = 0;
  if (want > 0) {
    await ex.streamBatches(node.input, ({ batches: bs }) => {
      for (const b of bs) {
        if (rows >= want) break;
        kept.push(rows + b.length > want ? sliceBatch(b, 0, want - rows) : b);
        rows += Math.min(b.length, want - rows);
      }
      return rows >= want;
    });
  }
  return sliceBatch(concatBatches(node.schema, kept), node.offset, want);
}
