// `--explain`: the physical plan as an indented tree of stages and shuffles, each pipeline described by its
// operator (physical/operators.ts); `--explain --analyze`: then what the run measured.
import type { BoundNode } from '../plan/bound.js';
import { children } from '../plan/fingerprint.js';
import type { LoadedPlan } from '../plan/load.js';
import { pipelineOf } from './pipeline.js';
import { HOLD_SHARE, repeatedUnits } from './repeats.js';
import { dataBudget } from '../spill/budget.js';
import { JOIN_STRATEGIES, type RuntimeFilterStats, type Stats, type TaskStats } from './stats.js';
import { operatorOf } from './operators.js';
import type { Explain } from './operator.js';
import { fmtBytes, fusedText, humanBytes } from './explain-text.js';
import { median, quantile } from 'simple-statistics';

/**
 * The plan as a tree; `ran` (--explain --analyze): what the run measured per operator, a line put
 * under the first line that names the operator.
 */
export function explainPlan(lp: LoadedPlan, ran?: Map<string, string>): string {
  const { settings } = lp;
  const lines: string[] = [];
  const shown = new Set<string>();
  const notes: string[] = [];
  const repeated = repeatedReaders(lp);
  const x: Explain = {
    settings,
    note(text) {
      const i = notes.indexOf(text);
      return `see note ${i < 0 ? notes.push(text) : i + 1}`;
    },
    line(depth, text) {
      lines.push('   '.repeat(depth) + text);
      const id = /^([a-z]+-\d+)[:\s]/.exec(text)?.[1];
      if (!ran || !id || shown.has(id) || !ran.has(id)) return;
      shown.add(id);
      lines.push('   '.repeat(depth + 1) + ran.get(id));
    },
    walk(node: BoundNode, depth: number) {
      const p = pipelineOf(node);
      const r = repeated.get(p.source);
      if (r) {
        // a repeated subtree (physical/repeats.ts): described once, where it is first read
        if (r.first !== p.source) {
          x.line(depth, `${p.source.id}${fusedText(node, p)}: the rows of ${r.first.id}, computed once, read again`);
          return;
        }
        x.line(depth, r.text);
        depth++;
      }
      operatorOf(p.source).describe(p.source, x, depth, fusedText(node, p), p.ops);
    },
  };
  const out = !lp.output
    ? 'stdout'
    : lp.output.path === '-'
      ? `${lp.output.format} to standard output`
      : `${lp.output.format} file ${lp.output.path}`;
  if (lp.plan.description) lines.push(`plan: ${lp.plan.description}`);
  lines.push(
    `output: ${out}; ${settings.workers} worker(s); skew handling ` +
      `${settings.skew.enabled ? `on (${settings.skew.strategy})` : 'off'}; broadcast ` +
      `${settings.broadcastBytes > 0 ? `up to ${humanBytes(settings.broadcastBytes)}` : 'off'}`,
  );
  // the join order chosen by cost for each tree of inner joins (plan/join-order.ts), with its estimates
  for (const j of lp.joinOrder ?? []) lines.push(...j.lines);
  x.walk(lp.root, 0);
  if (notes.length) lines.push('notes:', ...notes.map((n, i) => `   ${i + 1}. ${n}`));
  return lines.join('\n') + '\n';
}

/** Each reader of a repeated subtree, by its source node: the first reader's source, and what is said of it there. */
function repeatedReaders(lp: LoadedPlan): Map<BoundNode, { first: BoundNode; text: string }> {
  const s = lp.settings;
  const cap = s.repeatBytes ?? dataBudget(s.memoryLimit, s.workers) * HOLD_SHARE;
  const out = new Map<BoundNode, { first: BoundNode; text: string }>();
  for (const nodes of repeatedUnits(lp.root).values()) {
    const sources = nodes.map((n) => pipelineOf(n).source);
    const text =
      `computed once for its ${nodes.length} readers (the same subtree, read again as ` +
      `${sources
        .slice(1)
        .map((n) => n.id)
        .join(', ')}): its rows held for them up to ${fmtBytes(cap)}, ` +
      'else computed again for each';
    for (const n of sources) out.set(n, { first: sources[0], text });
  }
  return out;
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

/** A runtime join filter as it ran: where from and to, its kind, the rows it tested and kept. */
function filterLine(f: RuntimeFilterStats): string {
  const share = f.rowsIn > 0 ? ` (${((100 * f.rowsKept) / f.rowsIn).toFixed(1)}%)` : '';
  const skipped = f.skippedTasks ? `, ${f.skippedTasks} task(s) let every row through (it kept most)` : '';
  return (
    `runtime filter ${f.id} → ${f.into} [${f.columns.join(', ')}]: ${f.kind}, ${f.keys} keys, ${fmtBytes(f.bytes)}; ` +
    `${f.rowsIn} rows in, ${f.rowsKept} kept${share} in ${f.tasks} task(s)${skipped}`
  );
}

/** `--explain --analyze`: the plan, then what the run measured per shuffle, per skewed partition and per stage. */
export function explainAnalyze(lp: LoadedPlan, stats: Stats): string {
  const out = [
    explainPlan(lp, operatorFigures(lp.root, stats.tasks)).trimEnd(),
    '',
    `run: ${stats.wallMs.toFixed(0)} ms, ${stats.outputRows ?? 0} rows`,
  ];
  if (stats.spilledBytes > 0 || stats.spillReadBytes > 0) {
    out.push(
      `spilled: ${fmtBytes(stats.spilledBytes)} written to spill files, ${fmtBytes(stats.spillReadBytes)} ` +
        `read back (memory limit ${fmtBytes(lp.settings.memoryLimit)})`,
    );
  }
  if (stats.eager.length) out.push(`eager aggregation applied: ${stats.eager.join(', ')}`);
  for (const r of stats.repeats ?? [])
    out.push(
      `repeated subtree ${r.id} (${r.readers} readers): ${r.rows} rows (${fmtBytes(r.bytes)}) ` +
        (r.held ? 'held for the other readers' : `computed again by the other readers: ${r.reason}`),
    );
  for (const s of stats.shuffles) out.push(...shuffleLines(s));
  for (const j of stats.joins) out.push(...joinLines(j));
  for (const f of stats.runtimeFilters ?? []) out.push(filterLine(f));
  for (const a of stats.aggregates) out.push(...aggregateLines(a));
  for (const w of stats.windows ?? []) out.push(...windowLines(w));
  out.push(...stageLines(stats.tasks));
  return out.join('\n') + '\n';
}

function shuffleLines(s: Stats['shuffles'][number]): string[] {
  const out = [`shuffle ${s.id}: ${s.partitions} partitions`];
  out.push(`   rows:  ${distribution(s.partitionRows, fmtCount)}`);
  out.push(`   bytes: ${distribution(s.partitionBytes, fmtBytes)}`);
  if (s.combine) {
    const c = s.combine;
    out.push(
      `   combiners: ${c.rowsBefore} rows (${fmtBytes(c.bytesBefore)}) → ${c.rowsAfter} rows ` +
        `(${fmtBytes(c.bytesAfter)}); ${c.partialTasks} task(s) aggregated, ${c.passThroughTasks} passed rows through`,
    );
  }
  out.push(
    `   skew test: > ${fmtBytes(s.thresholdBytes)} (median ${fmtBytes(s.medianBytes)}); skewed partitions: ` +
      `${s.skewedPartitions.length ? s.skewedPartitions.join(', ') : 'none'}`,
  );
  if (s.hotKeys.length)
    out.push(
      `   hot keys: ${s.hotKeys
        .slice(0, 5)
        .map((h) => `${h.key.join(',')} (${h.rows} rows, partition ${h.partition})`)
        .join('; ')}`,
    );
  return out;
}

function joinLines(j: Stats['joins'][number]): string[] {
  const built = JOIN_STRATEGIES[j.strategy].built;
  if (j.broadcast && built)
    return [
      `${j.id}: strategy ${j.strategy}: ${j.broadcast.side} side (${j.broadcast.rows} rows, ` +
        `${fmtBytes(j.broadcast.bytes)}) ${built}; ${j.reason}`,
    ];
  const out = [
    `${j.id}: strategy shuffle (${j.reason}); ${j.tasks} planned reduce task(s), target ${fmtBytes(j.targetBytes)}`,
  ];
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
  return out;
}

function aggregateLines(a: Stats['aggregates'][number]): string[] {
  if (a.splits.length === 0) return [];
  const out = [`${a.id}: skewed partitions of its shuffle (two-level aggregation), target ${fmtBytes(a.targetBytes)}`];
  for (const sp of a.splits) {
    const how =
      sp.method === 'none'
        ? `not split: ${sp.reason}`
        : sp.cut === 'rows'
          ? `level-1 tasks over row ranges of at most ${sp.targetRows} rows, then one merge`
          : `split tasks over row ranges of at most ${sp.targetRows} rows cut the distinct (group, value) ` +
            `pairs by hash into ${sp.pieces} pieces, one level-1 task each, then one merge`;
    out.push(`   partition ${sp.partition} (${sp.rows} rows, ${fmtBytes(sp.bytes)}): ${how}`);
  }
  return out;
}

function windowLines(w: NonNullable<Stats['windows']>[number]): string[] {
  if (w.splits.length === 0) return [];
  const target = w.targetBytes !== undefined ? `, target ${fmtBytes(w.targetBytes)}` : '';
  const out = [`${w.id}: skewed partitions of its shuffle${target}`];
  for (const sp of w.splits) {
    const how =
      sp.method === 'none'
        ? `not split: ${sp.reason}`
        : sp.method === 'aggregate'
          ? `split as a two-level aggregate: its rows dealt over ${sp.pieces} piece(s), partials combined per window partition and given back to its rows`
          : `split by ranges of its keys into ${sp.pieces} piece(s), each computed by a task, then carried over`;
    out.push(`   partition ${sp.partition} (${sp.rows} rows, ${fmtBytes(sp.bytes)}): ${how}`);
  }
  return out;
}

/**
 * Per operator, what its tasks did, in its own words (PhysicalOperator.ran), for the line under its first line in
 * the tree. A map task counts for the operator it read from (its `source`: a scan, or the operator whose rows it
 * took), a reduce or split task for its stage's; a failed attempt not at all (the one that ran again counts its rows).
 */
function operatorFigures(root: BoundNode, tasks: TaskStats[]): Map<string, string> {
  const by = new Map<string, TaskStats[]>();
  for (const t of tasks) {
    if (t.error) continue;
    const id = t.kind === 'map' && t.source ? t.source : t.stage;
    const ts = by.get(id);
    if (ts) ts.push(t);
    else by.set(id, [t]);
  }
  const out = new Map<string, string>();
  const visit = (n: BoundNode) => {
    const ts = by.get(n.id);
    const p = pipelineOf(n);
    if (ts && p.source === n && !out.has(n.id)) out.set(n.id, operatorOf(p.source).ran(ts));
    for (const c of children(n)) visit(c);
  };
  visit(root);
  return out;
}

/** Per stage: its tasks, their median and slowest time and input rows, what they spilled. */
function stageLines(tasks: TaskStats[]): string[] {
  const stages = new Map<string, TaskStats[]>();
  for (const t of tasks) {
    const k = `${t.stage} ${t.kind}`;
    stages.set(k, [...(stages.get(k) ?? []), t]);
  }
  const out: string[] = [];
  for (const [k, ts] of stages) {
    const ms = ts.map((t) => t.ms);
    const med = median(ms),
      max = Math.max(...ms);
    // input rows a task, the second pass over a split window partition's pieces left out (the same rows again)
    const rows = ts.filter((t) => !t.split?.endsWith('carried')).map((t) => t.rows);
    const rMed = rows.length ? median(rows) : 0,
      rMax = rows.length ? Math.max(...rows) : 0;
    out.push(
      `stage ${k}: ${ts.length} task(s), median ${med.toFixed(1)} ms, slowest ${max.toFixed(1)} ms ` +
        `(${med > 0 ? (max / med).toFixed(1) : '-'}x median); rows a task: median ${Math.round(rMed)}, slowest ` +
        `${rMax} (${rMed > 0 ? (rMax / rMed).toFixed(2) : '-'}x)${spillText(ts)}`,
    );
  }
  return out;
}
