// The command line's Spark side: `skewjoin plan.json --engine spark [--remote URL]`
// (run, --explain, --stats, outputs) and `skewjoin lower --to spark plan.json`.
import fs from 'node:fs';
import path from 'node:path';
import type { LoadedPlan, Overrides } from '../plan/load.js';
import type { Plan } from '../plan/spec.js';
import { formatTable, jsonLines } from '../io/output.js';
import { progressDisplay, wantsProgress } from '../cli/progress.js';
import { type Lowered, Lowering, lowerPlan } from './lower.js';
import { type WindowSamplingStat, planWindowSplits } from './window-split.js';
import { executeOnSpark, loadForSpark, lowerWithSalting } from './engine.js';
import type { JoinDecision, SamplingStat } from './hot.js';
import { redact } from './remote.js';
import { formatSql } from './format.js';

export interface SparkFlags {
  remote?: string;
  explain?: boolean;
  analyze?: boolean;
  stats?: string;
  quiet?: boolean;
  json?: boolean;
  replaceOutput?: boolean;
}

/** The lowered SQL, settings and salting as `--explain` and `lower` print them. */
export function describeLowered(
  lp: LoadedPlan,
  l: Pick<Lowered, 'sql' | 'settings' | 'salted' | 'writeUri'> &
    Partial<Pick<Lowered, 'sources' | 'splitWindows'>> & {
      sampling?: SamplingStat[];
      decisions?: JoinDecision[];
      windowSampling?: WindowSamplingStat[];
      physicalPlan?: string;
    },
  where: string,
): string {
  const lines = [`engine: spark (${where})`];
  if (lp.plan.description) lines.push(`plan: ${lp.plan.description}`);
  lines.push('settings:', ...Object.entries(l.settings).map(([k, v]) => `  ${k}=${v}`));
  for (const s of l.sampling ?? []) {
    const hot = `${s.hotKeys} hot key${s.hotKeys === 1 ? '' : 's'}`;
    const files = s.files ? `, read from ${s.files} file${s.files > 1 ? 's' : ''}` : '';
    lines.push(
      s.method === 'skipped'
        ? `sampled ${s.join}.${s.side}: not sampled (${s.reason})`
        : s.method === 'local'
          ? `sampled ${s.join}.${s.side} here: ${s.rowsRead} of its ${s.sideRows} rows${files} in ${s.ms.toFixed(0)} ms; ${hot}`
          : `sampled ${s.join}.${s.side} on Spark: ${s.sampleRows} of its ${s.sideRows} rows (Spark reads them all) ` +
            `in ${s.ms.toFixed(0)} ms; ${hot}`,
    );
  }
  for (const d of l.decisions ?? []) lines.push(`${d.join}: ${d.reason}`);
  if (l.salted.length === 0) lines.push('salted joins: none');
  for (const s of l.salted)
    lines.push(`salted join ${s.join}: hot keys ${s.keys.map((k) => k.join(',')).join('; ')} over ${s.buckets} salts`);
  for (const s of l.windowSampling ?? [])
    lines.push(
      s.method === 'skipped'
        ? `sampled ${s.window}: not sampled (${s.reason})`
        : `sampled ${s.window} ${s.method === 'local' ? 'here' : 'on Spark'}: ${s.sampleRows} rows of its ` +
            `${s.sideRows} in ${s.ms.toFixed(0)} ms; ${s.hotKeys} hot partition${s.hotKeys === 1 ? '' : 's'}`,
    );
  for (const w of l.splitWindows ?? [])
    w.keys.forEach((k, i) =>
      lines.push(
        `split window ${w.window}: partition ${k.join(',')} in ${w.pieces[i]} pieces by ${w.orderBy} ` +
          `(cut at ${w.cuts[i].join(', ')}), then the pieces before each carried`,
      ),
    );
  if (l.writeUri) lines.push(`output: written by Spark to ${l.writeUri}`);
  for (const s of l.sources ?? [])
    lines.push(`source ${s.alias}: parquet, ${s.paths.length} paths: ${s.paths.join(', ')}`);
  lines.push('sql:', formatSql(l.sql));
  if (l.physicalPlan) lines.push("Spark's physical plan:", l.physicalPlan.trimEnd());
  lines.push('');
  return lines.join('\n');
}

export async function runSparkCommand(
  planFile: string | Plan,
  f: SparkFlags,
  o: Overrides,
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
): Promise<number> {
  const lp = await loadForSpark(planFile, o, f.remote);
  const where = redact(f.remote ?? process.env.SPARK_REMOTE ?? 'a local server');
  if (f.explain && !f.analyze) {
    out.write(describeLowered(lp, await lowerWithSalting(lp, f.remote), where));
    return 0;
  }
  const display = wantsProgress(err, out, f) ? await progressDisplay(err) : null;
  let r: Awaited<ReturnType<typeof executeOnSpark>>;
  try {
    r = await executeOnSpark(lp, {
      remote: f.remote,
      onProgress: display?.onProgress,
      keepBatches: !lp.output,
      explain: f.explain,
      replaceOutput: f.replaceOutput,
    });
  } finally {
    display?.stop();
  }
  if (f.stats) fs.writeFileSync(f.stats, JSON.stringify(r.stats, null, 2) + '\n');
  if (f.explain) {
    const s = r.stats.spark;
    out.write(describeLowered(lp, { ...s, writeUri: r.outputPath?.includes('://') ? r.outputPath : undefined }, where));
    for (const st of s.stages)
      out.write(`stage ${st.id}: ${st.tasks} tasks, slowest ${st.slowestMs} ms, median ${st.medianMs} ms\n`);
  }
  if (!lp.output) {
    if (f.json) out.write(jsonLines(r.schema, r.batches));
    else if (!f.quiet && !f.explain) out.write(formatTable(r.schema, r.batches));
  } else if (!f.quiet) {
    const shown =
      r.outputPath && !r.outputPath.includes('://')
        ? path.relative(process.cwd(), r.outputPath) || r.outputPath
        : r.outputPath;
    err.write(`wrote ${r.numRows} rows to ${shown} in ${(r.stats.wallMs / 1000).toFixed(2)} s (spark)\n`);
  }
  return 0;
}

/**
 * `skewjoin lower --to spark plan.json`: the SQL and settings, without a server (no salting: that needs a
 * sample; hot window partitions over local files are sampled here and split), but for sources Spark reads itself (URIs), whose schema comes from Spark (`remote`, else a local server).
 */
export async function lowerCommand(
  planFile: string | Plan,
  o: Overrides,
  out: NodeJS.WritableStream,
  remote?: string,
): Promise<number> {
  const lp = await loadForSpark(planFile, o, remote);
  lowerPlan(lp); // refusals first
  // hot window partitions of local files are sampled here (no server); join sides when the plan runs
  const windows = await planWindowSplits(lp, null, new Lowering(lp.root));
  const lowered = lowerPlan(lp, new Map(), windows.splits);
  out.write(
    describeLowered(
      lp,
      { ...lowered, windowSampling: windows.sampling },
      'lowered only; join sides are sampled when the plan runs',
    ),
  );
  return 0;
}
