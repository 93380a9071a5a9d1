// The join operator: `--explain` from the strategy rule that execution applies to measured sides
// (join/broadcast.ts expectedStrategy), and execution (join/stage.ts).
import type { PhysicalOperator } from '../operator.js';
import type { JoinPath, JoinStats } from '../stats.js';
import { humanSizes, taskFigures } from '../explain-text.js';
import { partitionsFor } from '../pipeline.js';
import { expectedStrategy } from './broadcast.js';
import { markedRule } from './marked.js';
import { runJoin, runJoinUntil } from './stage.js';
import type { JoinNode } from './tasks.js';

declare module '../operator.js' {
  interface RunMetrics {
    /** a join's strategy and reduce plan */
    join: JoinStats;
  }
}

export const joinOperator: PhysicalOperator<JoinNode, JoinPath, JoinStats> = {
  describe(src, x, depth, fused) {
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
    const marks = d.strategy === 'shuffle' ? markedRule(src, x.settings.broadcastBytes) : null;
    if (marks) x.line(depth + 1, humanSizes(marks));
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
  execute: (ctx, p, d) => runJoin(ctx, p.source, p.ops, d),
  // a broadcast join's probe scan stops as the scan would (a side read up to a cap)
  executeUntil: (ctx, p, d, stop) => runJoinUntil(ctx, p.source, p.ops, d, stop),
  ran: taskFigures,
  analyze: {
    task: (join) => ({ join }),
    run: (j, into) => {
      into.joins.push(j);
    },
  },
};
