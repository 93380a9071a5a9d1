// The hot-key split kernel: a skewed partition's rows cut into its hot keys' pieces and the rest (skew/split.ts),
// or with `locate` only the runs of rows where each piece lies (the coordinator slices the blocks itself).
import { rowCount } from '../../kernels/column.js';
import { hotKeyRuns, splitHotKeys } from '../../skew/split.js';
import type { SourceKernel, TaskSource } from '../task.js';

type SplitSource = Extract<TaskSource, { kind: 'split' }>;

export const splitKernel: SourceKernel<SplitSource> = {
  inputs: (src) => src.blocks,
  withInputs: (src, blocks) => ({ ...src, blocks }),
  holdsOutput: true,
  produce(src) {
    const rows = rowCount(src.blocks);
    const runs = src.locate ? hotKeyRuns(src.blocks, src.keys, src.norms, src.hot, src.locate) : null;
    if (runs) return { batches: [], rows, runs, asIs: true };
    return { batches: splitHotKeys(src.schema, src.blocks, src.keys, src.norms, src.hot), rows, asIs: true };
  },
};
