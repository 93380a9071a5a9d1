// `--explain`: the physical plan as an indented tree of stages and shuffles.
import type { BoundNode, BoundPredicate, Literal } from '../plan/bound.js';
import { decimalText } from '../kernels/column.js';
import { exprText } from '../expr/columns.js';
import type { LoadedPlan } from '../plan/load.js';
import { partitionsFor, pipelineOf } from './physical.js';
import type { Stats, TaskStats } from './stats.js';
import { eagerPlan } from '../agg/eager.js';
import { combinable } from '../agg/partial.js';
import { expectedStrategy } from './broadcast.js';
import { median, quantile } from 'simple-statistics';

const litText = (v: Literal): string =>
  typeof v === 'string'
    ? JSON.stringify(v)
    : v !== null && typeof v === 'object'
      ? decimalText(v.scaled, v.scale)
      : String(v);

function predText(p: BoundPredicate, names: string[]): string {
  switch (p.kind) {
    case 'cmp':
      return `${names[p.col]} ${p.op} ${litText(p.value)}`;
    case 'in':
      return `${names[p.col]} in (${p.values.map(litText).join(', ')})`;
    case 'isNull':
      return `${names[p.col]} is ${p.isNull ? '' : 'not '}null`;
    case 'not':
      return `not (${predText(p.pred, names)})`;
    case 'expr':
      return exprText(p.expr, names);
    default:
      return p.preds.map((q) => `(${predText(q, names)})`).join(` ${p.kind} `);
  }
}

export function explainPlan(lp: LoadedPlan): string {
  const { settings } = lp;
  const lines: string[] = [];
  const parts = (node: BoundNode) => partitionsFor(node, settings);
  const emit = (prefix: string, text: string) => lines.push(prefix + text);

  const walk = (node: BoundNode, indent: string) => {
    const p = pipelineOf(node);
    const src = p.source;
    const fused = p.ops.length
      ? ` → ${p.fused
          .map((id, i) => {
            const op = p.ops[i];
            if (op.kind === 'filter') return `${id}[${predText(op.pred, inputNames(node, id))}]`;
            if (op.kind === 'compute')
              return `${id}[${op.exprs.map((e) => exprText(e, inputNames(node, id))).join(', ')}]`;
            if (op.kind === 'probe') return `${id}[probe broadcast table]`;
            return `${id}[${p.schema.length} columns]`;
          })
          .join(' → ')}`
      : '';
    const child = indent + '   ';
    switch (src.kind) {
      case 'scan': {
        const files = new Set(src.splits.map((s) => s.path)).size;
        const rows = src.splits.reduce((s, x) => s + x.rows, 0);
        emit(
          indent,
          `${src.id}: scan ${src.source} [${src.schema.map((f) => f.name).join(', ')}], ${files} file(s), ${rows} rows → ${src.splits.length} map task(s)${fused}`,
        );
        return;
      }
      case 'join': {
        if (src.leftKeys.length === 0) {
          emit(indent, `${src.id}: cross join, the smaller side replicated to the tasks of the larger${fused}`);
          walk(src.left, child);
          walk(src.right, child);
          return;
        }
        const P = parts(src);
        const on = src.leftKeys
          .map((l, i) => `${src.left.schema[l].name} = ${src.right.schema[src.rightKeys[i]].name}`)
          .join(' and ');
        const d = expectedStrategy(src, settings.broadcastBytes, settings.sharedBuildBytes);
        emit(
          indent,
          `${src.id}: ${src.type} hash join on ${on}${d.strategy === 'shuffle' ? `, ${P} reduce task(s) at most` : ''}${fused}`,
        );
        emit(
          child,
          `expected strategy: ${d.strategy}${d.side ? ` (${d.side} side built once, probed by the ${d.side === 'left' ? 'right' : 'left'} side's map tasks)` : ''}: ${d.reason}`,
        );
        for (const [side, input, keys] of [
          ['left', src.left, src.leftKeys],
          ['right', src.right, src.rightKeys],
        ] as const) {
          emit(
            child,
            d.strategy === 'broadcast'
              ? d.side === side
                ? `broadcast ${src.id}.${side}: collected, built once into a shared hash table`
                : `probe from ${src.id}.${side}: its map tasks probe the table, no shuffle`
              : `shuffle ${src.id}.${side}: hash on [${keys.map((k) => input.schema[k].name).join(', ')}], ${P} partitions`,
          );
          walk(input, child + '   ');
        }
        return;
      }
      case 'aggregate': {
        const P = src.groupBy.length ? parts(src) : 1;
        const by = src.groupBy.map((k) => src.input.schema[k].name);
        const eager =
          settings.combiners && settings.eagerAggregation && src.input.kind === 'join' && eagerPlan(src, src.input);
        const how = eager
          ? ` (eager when a sample shows join keys repeating on both sides: each side of ${src.input.id} pre-aggregated by its join key)`
          : settings.combiners && combinable(src.aggs)
            ? ' (combiners before the shuffle)'
            : '';
        emit(
          indent,
          `${src.id}: aggregate by [${by.join(', ')}] ${src.aggs.map((a) => `${a.fn}→${a.as}`).join(', ')}, ${P} reduce task(s) at most${how}${fused}`,
        );
        emit(child, `shuffle ${src.id}.input: hash on [${by.join(', ')}], ${P} partition(s)`);
        walk(src.input, child + '   ');
        return;
      }
      case 'sort':
        emit(
          indent,
          `${src.id}: sort by ${src.by.map((k) => `${src.schema[k.col].name}${k.desc ? ' desc' : ''}${k.nullsFirst ? ' nulls first' : ''}`).join(', ')} (ranges by sampled boundaries, a task per run of consecutive ranges)${fused}`,
        );
        walk(src.input, child);
        return;
      case 'limit':
        emit(
          indent,
          `${src.id}: limit ${src.count}${src.offset ? ` offset ${src.offset}` : ''} (on the coordinator)${fused}`,
        );
        walk(src.input, child);
    }
  };
  const out = lp.output ? `${lp.output.format} file ${lp.output.path}` : 'stdout';
  if (lp.plan.description) lines.push(`plan: ${lp.plan.description}`);
  lines.push(
    `output: ${out}; ${settings.workers} worker(s); skew handling ${settings.skew.enabled ? `on (${settings.skew.strategy})` : 'off'}; broadcast ${settings.broadcastBytes > 0 ? `up to ${settings.broadcastBytes} bytes` : 'off'}`,
  );
  walk(lp.root, '');
  return lines.join('\n') + '\n';
}

/** Column names seen by a fused operator: those of the node below it. */
function inputNames(top: BoundNode, id: string): string[] {
  for (let n: BoundNode = top; ; ) {
    if (n.kind !== 'filter' && n.kind !== 'project' && n.kind !== 'compute') return n.schema.map((f) => f.name);
    if (n.id === id) return n.input.schema.map((f) => f.name);
    n = n.input;
  }
}

export function fmtBytes(b: number): string {
  const u = ['B', 'KB', 'MB', 'GB'];
  let i = 0;
  while (b >= 1024 && i < u.length - 1) {
    b /= 1024;
    i++;
  }
  return `${b < 10 && i > 0 ? b.toFixed(1) : Math.round(b)}${u[i]}`;
}

/** A count, with one decimal when a quantile falls between two values. */
const fmtCount = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(1));

/** min, median, p95 and max (simple-statistics' quantiles: linear between ranks, as numpy's default). */
function distribution(xs: number[], fmt: (x: number) => string): string {
  if (xs.length === 0) return 'no values';
  const [min, med, p95, max] = quantile(xs, [0, 0.5, 0.95, 1]);
  return `min ${fmt(min)}, median ${fmt(med)}, p95 ${fmt(p95)}, max ${fmt(max)}`;
}

/** What a stage's tasks spilled: their output written to spill files, their input read back. */
function spillText(ts: TaskStats[]): string {
  const w = ts.filter((t) => t.spilledBytes > 0),
    r = ts.filter((t) => t.spillReadBytes > 0);
  const parts = [];
  if (w.length) parts.push(`spilled ${fmtBytes(w.reduce((a, t) => a + t.spilledBytes, 0))} from ${w.length} task(s)`);
  if (r.length) parts.push(`read back ${fmtBytes(r.reduce((a, t) => a + t.spillReadBytes, 0))} in ${r.length} task(s)`);
  return parts.length ? `; ${parts.join(', ')}` : '';
}

/** `--explain --analyze`: the plan, then what the run measured per shuffle, per skewed partition and per stage. */
export function explainAnalyze(lp: LoadedPlan, stats: Stats): string {
  const out = [explainPlan(lp).trimEnd(), '', `run: ${stats.wallMs.toFixed(0)} ms, ${stats.outputRows ?? 0} rows`];
  if (stats.spilledBytes > 0 || stats.spillReadBytes > 0) {
    out.push(
      `spilled: ${fmtBytes(stats.spilledBytes)} written to spill files, ${fmtBytes(stats.spillReadBytes)} read back (memory limit ${fmtBytes(lp.settings.memoryLimit)})`,
    );
  }
  if (stats.eager.length) out.push(`eager aggregation applied: ${stats.eager.join(', ')}`);
  for (const s of stats.shuffles) {
    out.push(`shuffle ${s.id}: ${s.partitions} partitions`);
    out.push(`   rows:  ${distribution(s.partitionRows, fmtCount)}`);
    out.push(`   bytes: ${distribution(s.partitionBytes, fmtBytes)}`);
    if (s.combine) {
      const c = s.combine;
      out.push(
        `   combiners: ${c.rowsBefore} rows (${fmtBytes(c.bytesBefore)}) → ${c.rowsAfter} rows (${fmtBytes(c.bytesAfter)}); ${c.partialTasks} task(s) aggregated, ${c.passThroughTasks} passed rows through`,
      );
    }
    out.push(
      `   skew test: > ${fmtBytes(s.thresholdBytes)} (median ${fmtBytes(s.medianBytes)}); skewed partitions: ${s.skewedPartitions.length ? s.skewedPartitions.join(', ') : 'none'}`,
    );
    if (s.hotKeys.length)
      out.push(
        `   hot keys: ${s.hotKeys
          .slice(0, 5)
          .map((h) => `${h.key.join(',')} (${h.rows} rows, partition ${h.partition})`)
          .join('; ')}`,
      );
  }
  for (const j of stats.joins) {
    if (j.broadcast) {
      out.push(
        `${j.id}: strategy broadcast: ${j.broadcast.side} side (${j.broadcast.rows} rows, ${fmtBytes(j.broadcast.bytes)}) built once and probed in the other side's map tasks; ${j.reason}`,
      );
      continue;
    }
    out.push(
      `${j.id}: strategy shuffle (${j.reason}); ${j.tasks} planned reduce task(s), target ${fmtBytes(j.targetBytes)}`,
    );
    for (const sp of j.splits) {
      const why =
        sp.method === 'none'
          ? ` not split: ${sp.reason}`
          : sp.method === 'map-range'
            ? ' split by map ranges'
            : ' split by hot keys';
      out.push(`   partition ${sp.partition} (skewed ${sp.sides.join(' and ')}):${why}, ${sp.tasks} task(s)`);
      for (const k of sp.keys ?? [])
        out.push(
          `      key ${k.key.join(',')}: ${k.leftRows} left rows x ${k.rightRows} right rows → ${k.tasks} task(s)`,
        );
    }
  }
  for (const a of stats.aggregates) {
    if (a.splits.length === 0) continue;
    out.push(`${a.id}: skewed partitions of its shuffle (two-level aggregation), target ${fmtBytes(a.targetBytes)}`);
    for (const sp of a.splits) {
      const how =
        sp.method === 'none'
          ? `not split: ${sp.reason}`
          : sp.cut === 'rows'
            ? `level-1 tasks over row ranges of at most ${sp.targetRows} rows, then one merge`
            : `split tasks over row ranges of at most ${sp.targetRows} rows cut the distinct (group, value) pairs by hash into ${sp.pieces} pieces, one level-1 task each, then one merge`;
      out.push(`   partition ${sp.partition} (${sp.rows} rows, ${fmtBytes(sp.bytes)}): ${how}`);
    }
  }
  const stages = new Map<string, TaskStats[]>();
  for (const t of stats.tasks) {
    const k = `${t.stage} ${t.kind}`;
    stages.set(k, [...(stages.get(k) ?? []), t]);
  }
  for (const [k, ts] of stages) {
    const ms = ts.map((t) => t.ms);
    const med = median(ms),
      max = Math.max(...ms);
    out.push(
      `stage ${k}: ${ts.length} task(s), median ${med.toFixed(1)} ms, slowest ${max.toFixed(1)} ms (${med > 0 ? (max / med).toFixed(1) : '-'}x median)${spillText(ts)}`,
    );
  }
  return out.join('\n') + '\n';
}
