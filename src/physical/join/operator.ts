// The join operator: `--explain` from the strategy rule that execution applies to measured sides
// (join/broadcast.ts expectedStrategy), and execution (join/stage.ts).
import type { PhysicalOperator } from '../operator.js';
import type { JoinPath, JoinStats } from '../stats.js';
import { humanSizes } from '../explain-text.js';
import { partitionsFor } from '../pipeline.js';
import { expectedStrategy } from './broadcast.js';
import { markedRule } from './marked.js';
import { expectedPartitioned } from './partitioned.js';
import { runJoin } from './stage.js';
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
    const d = expectedPartitioned(
      src,
      expectedStrategy(src, x.settings.broadcastBytes, x.settings.sharedBuildBytes),
      x.settings,
    );
    const tasks = d.strategy === 'shuffle' ? `, ${P} reduce task(s) at most` : '';
    x.line(depth, `${src.id}: ${src.type} hash join on ${on}${tasks}${fused}`);
    const by = d.strategy === 'partitioned' ? 'hash-partitioned and built by all workers into one table' : 'built once';
    const built = d.side
      ? ` (${d.side} side ${by}, probed by the ${d.side === 'left' ? 'right' : 'left'} side's map tasks)`
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
        d.strategy !== 'shuffle'
          ? d.side === side
            ? d.strategy === 'partitioned'
              ? `partitioned ${src.id}.${side}: collected, its parts built by all workers into one shared hash table`
              : `broadcast ${src.id}.${side}: collected, built once into a shared hash table`
            : `probe from ${src.id}.${side}: its map tasks probe the table, no shuffle`
          : `shuffle ${src.id}.${side}: hash on [${names}], ${P} partitions`,
      );
      x.walk(input, depth + 2);
    }
  },
  execute: (ctx, p, d) => runJoin(ctx, p.source, p.ops, d),
  analyze: {
    task: (join) => ({ join }),
    run: (j, into) => {
      into.joins.push(j);
    },
  },
};
