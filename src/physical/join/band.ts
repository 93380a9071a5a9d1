// The keyed band join: an inner hash join whose filter right above bounds a column of one side by the other's
// (`s.sku = p.sku AND s.day BETWEEN p.valid_from AND p.valid_to`, `e.user = s.user AND e.ts >= s.start AND e.ts <
// s.end`), the range join's conditions (physical/join/range-condition.ts) with keys. The join runs as its stage
// decides (broadcast or shuffle, hot keys split, grace pieces), and its tasks search each key's rows by their bound
// instead of making every pair of a key (physical/join/band-source.ts). Chosen here, from the same function for
// --explain and for execution; reported as the join's strategy with a band note (its distribution is the hash
// join's; the band only changes what a task does with a key's rows).
import type { ExecContext } from '../operator.js';
import type { RowOp, TaskSpec } from '../task.js';
import type { BandJoinSource, BandProbeOp } from './band-source.js';
import type { ProbeOp } from './probe-op.js';
import { type RangeCondition, rangeCondition } from './range-condition.js';
import type { JoinNode } from './tasks.js';

type FilterOp = Extract<RowOp, { kind: 'filter' }>;

/** The band of an inner join with keys, from the filter right above it (null: none). */
export function bandCondition(node: JoinNode, ops: readonly RowOp[]): RangeCondition | null {
  if (node.type !== 'inner' || node.leftKeys.length === 0) return null;
  return rangeCondition({ ...node, leftKeys: [], rightKeys: [] }, ops);
}

/** The band as --explain and the statistics say it. */
export const bandNote = (c: RangeCondition) =>
  `band on ${c.text}: per key the built side's rows sorted by their bound, each probing row binary searched in ` +
  `its key's rows${c.rest ? '; the other conjuncts filtered above' : ''}`;

/**
 * A task of this join made a band task: its reduce task's source, or its broadcast probe, takes the band's conjuncts
 * out of the filter `f` above (the rest stays). A task whose operators do not hold `f` stays a hash join's.
 */
function banded(node: JoinNode, c: RangeCondition, f: FilterOp, task: TaskSpec, stage: string): TaskSpec {
  const at = task.ops.indexOf(f);
  if (at < 0) return task;
  const ops = [
    ...task.ops.slice(0, at),
    ...(c.rest ? [{ kind: 'filter', pred: c.rest } as const] : []),
    ...task.ops.slice(at + 1),
  ];
  const s = task.source;
  if (s.kind === 'join' && stage === node.id && s.leftKeys.length > 0 && !s.eager && s.type === 'inner') {
    const source: BandJoinSource = { kind: 'bandJoin', join: s, bound: c.bound, check: f.pred };
    return { ...task, source, ops };
  }
  const p = task.ops.findIndex((o) => o.kind === 'probe' && o.id === node.id && o.type === 'inner');
  if (p < 0 || p > at) return task;
  const op: BandProbeOp = { kind: 'bandProbe', probe: task.ops[p] as ProbeOp, bound: c.bound, check: f.pred };
  return { ...task, ops: [...ops.slice(0, p), op, ...ops.slice(p + 1)] };
}

/**
 * The context the join's stage runs in (physical/join/stage.ts, unchanged): every task it starts, itself or through
 * the pipelines it executes (a broadcast's probing map tasks), passes `run` here and comes out a band task, and its
 * report carries the band note. The other members are the query's own (a prototype, so that the executor's methods
 * called through it reach this `run`).
 */
export function bandContext(ex: ExecContext, node: JoinNode, ops: readonly RowOp[], c: RangeCondition): ExecContext {
  const f = ops[c.at] as FilterOp;
  const w = Object.create(ex) as ExecContext;
  w.run = (task, meta, here) => ex.run(banded(node, c, f, task, meta.stage), meta, here);
  w.report = (owner, m) => {
    if (owner === 'join') {
      const j = m as Parameters<ExecContext['report']>[1] & { id: string; reason: string };
      if (j.id === node.id) return ex.report(owner, { ...j, reason: `${j.reason}; ${bandNote(c)}` } as typeof m);
    }
    return ex.report(owner, m);
  };
  return w;
}
