// The join operator: `--explain` from the strategy rule that execution applies to measured sides
// (join/broadcast.ts expectedStrategy), and execution (join/stage.ts).
import type { PhysicalOperator } from '../operator.js';
import type { JoinPath, JoinStats } from '../stats.js';
import { humanSizes, taskFigures } from '../explain-text.js';
import { partitionsFor, pipelineOf, readWhole } from '../pipeline.js';
import { expectedStrategy } from './broadcast.js';
import { markedRule } from './marked.js';
import { filterLine, filterable, traceColumns } from './filters.js';
import type { BoundNode } from '../../plan/bound.js';
import type { Settings } from '../../plan/load.js';
import { runJoin, runJoinUntil } from './stage.js';
import { rangeCondition } from './range-condition.js';
import { runRange } from './range.js';
import { bandCondition, bandContext, bandNote } from './band.js';
import type { JoinNode } from './tasks.js';

declare module '../operator.js' {
  interface RunMetrics {
    /** a join's strategy and reduce plan */
    join: JoinStats;
  }
}

/**
 * Where a filter on output columns `cols` of `node` goes (--explain): the scan (or the join whose output it tests)
 * and its columns there, through the probing sides of the joins below expected to broadcast; null where it cannot go.
 */
function filterTarget(node: BoundNode, cols: number[], settings: Settings): { into: string; columns: string[] } | null {
  const p = pipelineOf(node);
  const keys = traceColumns(p, cols);
  if (keys === null) return null;
  const here = { into: p.source.id, columns: keys.map((k) => p.source.schema[k].name) };
  const s = p.source;
  if (s.kind !== 'join' || s.leftKeys.length === 0) return here;
  const d = expectedStrategy(s, settings.broadcastBytes, settings.sharedBuildBytes);
  if (d.strategy !== 'broadcast') return here;
  const nl = s.left.schema.length;
  // the probing side's columns in the join's output: the left ones first (a semi or anti join: only them)
  const [probing, from, n] = d.side === 'right' ? [s.left, 0, nl] : [s.right, nl, s.right.schema.length];
  if (keys.some((k) => k < from || k >= from + n)) return here;
  return (
    filterTarget(
      probing,
      keys.map((k) => k - from),
      settings,
    ) ?? here
  );
}

/** The runtime filter a broadcast join expects to send from its built side, as --explain says it. */
function explainFilter(src: JoinNode, side: 'left' | 'right', settings: Settings): string | null {
  const mode = settings.runtimeFilters;
  const type = side === 'right' ? src.type : src.type === 'inner' ? 'inner' : 'left';
  if (mode === 'off' || !filterable(type)) return null;
  const probing = side === 'right' ? src.left : src.right;
  const t = filterTarget(probing, side === 'right' ? src.leftKeys : src.rightKeys, settings);
  return t && filterLine(src.id, side, t.into, t.columns, mode);
}

export const joinOperator: PhysicalOperator<JoinNode, JoinPath, JoinStats> = {
  describe(src, x, depth, fused, ops) {
    const range = rangeCondition(src, ops);
    if (range) {
      x.line(depth, `${src.id}: inner range join on ${range.text}${fused}`);
      x.line(
        depth + 1,
        'expected strategy: range (the smaller side sorted on its bound once, the rows of the larger binary searched ' +
          `in tasks${range.rest ? '; the other conjuncts filtered above' : ''})`,
      );
      x.walk(src.left, depth + 1);
      x.walk(src.right, depth + 1);
      return;
    }
    if (src.leftKeys.length === 0) {
      x.line(depth, `${src.id}: cross join, the smaller side replicated to the tasks of the larger${fused}`);
      x.walk(src.left, depth + 1);
      x.walk(src.right, depth + 1);
      return;
    }
    const P = partitionsFor(src, x.settings);
    const on = src.leftKeys
      .map((l, i) => `${src.left.schema[l].name} = ${src.right.schema[src.rightKeys[i]].name}`)
      .join(' and ');
    const d = expectedStrategy(src, x.settings.broadcastBytes, x.settings.sharedBuildBytes);
    const tasks = d.strategy === 'shuffle' ? `, ${P} reduce task(s) at most` : '';
    x.line(depth, `${src.id}: ${src.type} hash join on ${on}${tasks}${fused}`);
    const built = d.side
      ? ` (${d.side} side built once, probed by the ${d.side === 'left' ? 'right' : 'left'} side's map tasks)`
      : '';
    // the run-time rule is the same for many joins: said once, after the tree
    const rule = d.rule ? `; ${x.note(humanSizes(d.rule))}` : '';
    x.line(depth + 1, `expected strategy: ${d.strategy}${built}: ${humanSizes(d.reason)}${rule}`);
    const band = bandCondition(src, ops);
    if (band) x.line(depth + 1, bandNote(band));
    const marks = d.strategy === 'shuffle' ? markedRule(src, x.settings.broadcastBytes) : null;
    if (marks) x.line(depth + 1, humanSizes(marks));
    const filter = d.strategy === 'broadcast' ? explainFilter(src, d.side!, x.settings) : null;
    if (filter) x.line(depth + 1, filter);
    for (const [side, input, keys] of [
      ['left', src.left, src.leftKeys],
      ['right', src.right, src.rightKeys],
    ] as const) {
      const names = keys.map((k) => input.schema[k].name).join(', ');
      x.line(
        depth + 1,
        d.strategy === 'broadcast'
          ? d.side === side
            ? `broadcast ${src.id}.${side}: collected, built once into a shared hash table`
            : `probe from ${src.id}.${side}: its map tasks probe the table, no shuffle`
          : `shuffle ${src.id}.${side}: hash on [${names}], ${P} partitions`,
      );
      x.walk(input, depth + 2);
    }
  },
  execute(ctx, p, d) {
    const range = rangeCondition(p.source, p.ops);
    if (range) return runRange(ctx, p.source, p.ops, d, range);
    const band = bandCondition(p.source, p.ops);
    return runJoin(band ? bandContext(ctx, p.source, p.ops, band) : ctx, p.source, p.ops, d);
  },
  // a broadcast join's probe scan stops as the scan would (a side read up to a cap)
  async executeUntil(ctx, p, d, stop) {
    const range = rangeCondition(p.source, p.ops);
    if (range) return readWhole(await runRange(ctx, p.source, p.ops, d, range));
    const band = bandCondition(p.source, p.ops);
    return runJoinUntil(band ? bandContext(ctx, p.source, p.ops, band) : ctx, p.source, p.ops, d, stop);
  },
  ran: taskFigures,
  analyze: {
    task: (join) => ({ join }),
    run: (j, into) => {
      into.joins.push(j);
    },
  },
};
