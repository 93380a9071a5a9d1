// A range join's task (physical/join/range.ts plans them): some rows of the probing side searched in the built side,
// sorted on its bound and shared by every task, within a window of its sorted positions; the matches gathered into
// joined rows (left columns, then right), OUTPUT_ROWS at a time (join/gather.ts).
import type { Batch, Schema } from '../../kernels/column.js';
import { type BuiltKeys, type ProbeKeys, type RangeShape, rangePairs, withinIndex } from '../../kernels/range-join.js';
import type { SourceKernel } from '../task.js';
import type { Side } from './decide.js';
import { GatherSink } from './gather.js';
import { joinMetrics } from './metrics.js';

export interface RangeJoinSource {
  kind: 'rangeJoin';
  shape: RangeShape;
  /** the side sorted and searched (`build`), the other one probing */
  built: Side;
  leftSchema: Schema;
  rightSchema: Schema;
  /** the built side's rows in the order of their keys (nulls and empty intervals left out) */
  build: Batch;
  /** float64 columns: the sorted keys `a` and, for intervals built, their upper bounds `b` */
  keys: Batch;
  probe: Batch;
  /** float64 columns: the probing rows' keys `x` (its validity: rows that match nothing) and, around, `y` */
  probeKeys: Batch;
  /** the built positions [from, to) this task searches (a probing row with more matches than a task's share) */
  window: [number, number];
}

/** Pairs found before they are gathered. */
const PAIRS = 1 << 15;

export const rangeJoinKernel: SourceKernel<RangeJoinSource> = {
  inputs: (s) => [s.build, s.keys, s.probe, s.probeKeys],
  withInputs: (s, [build, keys, probe, probeKeys]) => ({ ...s, build, keys, probe, probeKeys }),
  produce(s) {
    const k: BuiltKeys = { a: s.keys.columns[0].values as Float64Array };
    if (s.keys.columns.length > 1) k.b = s.keys.columns[1].values as Float64Array;
    const x = s.probeKeys.columns[0];
    const p: ProbeKeys = { x: x.values as Float64Array, valid: x.valid };
    if (s.probeKeys.columns.length > 1) p.y = s.probeKeys.columns[1].values as Float64Array;
    const out = new GatherSink(true);
    const [l, r] = s.built === 'right' ? [s.probe, s.build] : [s.build, s.probe];
    const probe = new Int32Array(PAIRS),
      built = new Int32Array(PAIRS);
    let chunks = 0;
    const flush = (n: number) => {
      chunks++;
      if (s.built === 'right') out.add(l, r, probe, built, n);
      else out.add(l, r, built, probe, n);
    };
    const index = s.shape.kind === 'within' ? withinIndex(k.b!) : undefined;
    rangePairs(s.shape, k, p, 0, s.probe.length, s.window[0], s.window[1], { probe, built, flush }, index);
    out.flush();
    const metrics = joinMetrics({ path: 'gather', build: s.built, matchChunks: chunks, buildRows: s.build.length });
    return { batches: out.batches, rows: s.probe.length + s.build.length, metrics };
  },
};
