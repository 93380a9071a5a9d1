// The window operator: `--explain` and execution (window/stage.ts: shuffle by the partition keys, a task per pack of
// partitions sorting its rows and computing the functions).
import type { BoundNode, BoundWindowFn } from '../../plan/bound.js';
import type { PhysicalOperator } from '../operator.js';
import type { WindowStats } from '../../skew/window.js';
import { unsplittable, unsplittableWhole } from '../../skew/window.js';
import { runWindow, topNOf, windowPartitions } from './stage.js';
import { taskFigures } from '../explain-text.js';

type WindowNode = Extract<BoundNode, { kind: 'window' }>;

function frameText(f: BoundWindowFn): string {
  const b = (x: number | null, end: boolean) =>
    x === null
      ? `unbounded ${end ? 'following' : 'preceding'}`
      : x === 0
        ? 'current row'
        : `${Math.abs(x)} ${x < 0 ? 'preceding' : 'following'}`;
  return `${f.frame.unit} ${b(f.frame.start, false)} to ${b(f.frame.end, true)}`;
}

declare module '../operator.js' {
  interface RunMetrics {
    /** a window's partitions split by ranges of their keys */
    window: WindowStats;
  }
}

export const windowOperator: PhysicalOperator<WindowNode, never, WindowStats> = {
  describe(src, x, depth, fused) {
    const s = src.input.schema;
    const by = src.partitionBy.map((c) => s[c].name);
    const order = src.orderBy
      .map((k) => `${s[k.col].name}${k.desc ? ' desc' : ''}${k.nullsFirst ? ' nulls first' : ''}`)
      .join(', ');
    const fns = src.fns
      .map(
        (f) =>
          `${f.fn}${f.col >= 0 ? `(${f.distinct ? 'distinct ' : ''}${s[f.col].name})` : ''}→${f.as} [${frameText(f)}]`,
      )
      .join(', ');
    const P = windowPartitions(src, x.settings);
    // the input columns it emits when pruned (plan/prune.ts): the only ones its tasks gather besides the arguments
    const emits = src.keep ? `, emits [${src.keep.map((c) => s[c].name).join(', ')}] of its input` : '';
    x.line(
      depth,
      `${src.id}: window partition by [${by.join(', ')}] order by [${order}] ${fns}${emits}, ${P} task(s) at most, ` +
        `each sorting its partitions${fused}`,
    );
    const top = topNOf(src);
    if (top)
      x.line(
        depth + 1,
        `top ${top.n} per partition by ${top.fn} (${src.fns[src.topN!.fn].as} <= ${top.n} above): each map task ` +
          'keeps only the rows that may be among them when that drops three quarters of its rows, each task again ' +
          'before its sort',
      );
    const why = src.orderBy.length ? unsplittable(src.fns) : unsplittableWhole(src.fns);
    x.line(
      depth + 1,
      why
        ? `a partition over the skew thresholds stays one task (${why})`
        : src.orderBy.length === 0
          ? `a partition over the skew thresholds is split as a two-level aggregate: its rows dealt over ranges of [${by.join(', ')}], ` +
            "each range a task computing its partial count/sum/avg/min/max, then each window partition's partials combined and given back to its rows in every range"
          : `a partition over the skew thresholds is split by ranges of [${[...by, order].filter(Boolean).join(', ')}], ` +
            "each range a task, then what the ranges before carry added (counts, running sums and counts, min/max, the partition's rows, the neighbouring rows) " +
            "and what the ranges after carry (count/sum/min/max/last_value over frames to the partition's end, avg from the current row to it)",
    );
    x.line(depth + 1, `shuffle ${src.id}.input: hash on [${by.join(', ')}], ${P} partition(s)`);
    x.walk(src.input, depth + 2);
  },
  execute: (ctx, p, d) => runWindow(ctx, p.source, p.ops, d),
  ran: taskFigures,
  analyze: {
    run: (w, into) => {
      (into.windows ??= []).push(w);
    },
  },
};
