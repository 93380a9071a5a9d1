// `skewjoin plan.json` and `skewjoin q.sql`: the run's flags as plan
// overrides, SQL compiled to a plan first, then explain, run, or print the
// compiled plan; the result printed as a table or JSON lines, or written to --output.
import fs from 'node:fs';
import path from 'node:path';
import { InputError, PlanError } from '../errors.js';
import { formatTable, jsonLines } from '../io/output.js';
import { explainAnalyze, explainPlan } from '../physical/explain.js';
import { type Overrides, STDOUT_FORMATS, loadPlan } from '../plan/load.js';
import { FORMATS } from '../io/result-file.js';
import type { Plan } from '../plan/spec.js';
import { markCompiled } from '../plan/compiled.js';
import type { OutputFormat } from '../plan/formats.js';
import type { FilterMode } from '../kernels/runtime-filter.js';
import { type Executed, execute } from '../scheduler/execute.js';
import { trace } from '../trace.js';
import { prestartPool } from './prestart.js';
import { describeQuery } from './describe.js';
import { progressDisplay, wantsProgress } from './progress.js';

export interface RunFlags {
  workers?: number;
  partitions?: number;
  skew?: boolean;
  skewFactor?: number;
  skewThreshold?: number | string;
  skewStrategy?: 'auto' | 'partition' | 'key';
  combiners?: boolean;
  eager?: boolean;
  /** false (`--no-reorder`): every join order kept as the plan (or SQL's planner) wrote it */
  reorder?: boolean;
  runtimeFilters?: FilterMode;
  memoryLimit?: number | string;
  spillDir?: string;
  broadcast?: boolean;
  broadcastThreshold?: number | string;
  explain?: boolean;
  analyze?: boolean;
  stats?: string;
  quiet?: boolean;
  json?: boolean;
  param?: Record<string, string>;
  source?: Record<string, string | string[]>;
  data?: string;
  printPlan?: boolean;
  plan?: boolean;
  output?: string;
  format?: OutputFormat;
  engine?: 'local' | 'spark';
  remote?: string;
  replaceOutput?: boolean;
}

export function overridesOf(f: RunFlags): Overrides {
  return {
    workers: f.workers,
    partitions: f.partitions,
    combiners: f.combiners === false ? false : undefined,
    eagerAggregation: f.eager === false ? false : undefined,
    runtimeFilters: f.runtimeFilters,
    memoryLimit: f.memoryLimit,
    spillDir: f.spillDir,
    broadcastBytes: f.broadcast === false ? 0 : f.broadcastThreshold,
    params: f.param,
    sources: f.source,
    data: f.data,
    fromCommandLine: true,
    skew: {
      enabled: f.skew === false ? false : undefined,
      factor: f.skewFactor,
      thresholdBytes: f.skewThreshold,
      strategy: f.skewStrategy,
    },
    // --format csv|jsonl|json without --output: standard output (runCommand refuses the binary formats there)
    ...(f.output || f.format ? { output: { path: f.output ?? '-', format: f.format } } : {}),
  };
}

export async function runCommand(
  planFile: string,
  f: RunFlags,
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
  query?: string,
): Promise<number> {
  trace('cli: modules loaded');
  if (f.format && !FORMATS[f.format].stdout && !f.output)
    throw new PlanError('--format', `${f.format} needs --output PATH (standard output takes ${STDOUT_FORMATS})`);
  const described = await describeQuery(planFile, query, f, out);
  if (described !== undefined) return described;
  // SQL (`skewjoin q.sql`, `skewjoin sql "SELECT ..."`) compiles to a plan object first (src/sql)
  const sql = await sqlPlan(planFile, query, f);
  if (sql && (f.printPlan || f.plan)) {
    out.write(JSON.stringify(sql, null, 2) + '\n');
    return 0;
  }
  const overrides = sql ? { ...overridesOf(f), sources: undefined, data: undefined } : overridesOf(f);
  // an error at a JSON path of a plan compiled from SQL is told at the SQL's line and column
  const located = async <T>(p: Promise<T>): Promise<T> =>
    sql ? p.catch(async (e) => Promise.reject((await import('../sql/compile.js')).sqlLocated(sql, e))) : p;
  if (f.engine === 'spark')
    return located((await import('../spark/cli.js')).runSparkCommand(sql ?? planFile, f, overrides, out, err));
  if (!f.explain || f.analyze) prestartPool(sql ?? planFile, f.workers, sql ? {} : f.source);
  const lp = await located(
    loadPlan(sql ?? planFile, f.reorder === false ? { ...overrides, joinOrder: 'written' } : overrides),
  );
  trace('cli: plan loaded');
  if (f.explain && !f.analyze) {
    out.write(explainPlan(lp));
    return 0;
  }
  const toStdout = lp.output?.path === '-';
  const display = wantsProgress(err, out, f) && !toStdout ? await progressDisplay(err) : null;
  // a result written to a file is not also kept in memory: it may be larger than memory
  let r: Executed;
  try {
    r = await execute(lp, true, { onProgress: display?.onProgress, keepBatches: !lp.output, stdout: out });
  } finally {
    display?.stop();
  }
  if (f.stats) writeStats(f.stats, r.stats);
  if (f.explain) out.write(explainAnalyze(lp, r.stats));
  if (!lp.output) {
    if (f.json) out.write(jsonLines(r.schema, r.batches));
    else if (!f.quiet && !f.explain) out.write(formatTable(r.schema, r.batches, TABLE_ROWS, ALL_ROWS));
  } else if (!f.quiet && !toStdout) {
    const where = path.relative(process.cwd(), r.outputPath!) || r.outputPath;
    err.write(`wrote ${r.numRows} rows to ${where} in ${(r.stats.wallMs / 1000).toFixed(2)} s\n`);
  }
  return 0;
}

export async function sqlPlan(planFile: string, query: string | undefined, f: RunFlags): Promise<Plan | undefined> {
  if (planFile !== 'sql' && !planFile.endsWith('.sql')) {
    if (query !== undefined) throw new PlanError('', `unexpected argument "${query}" after the plan file`);
    if (f.printPlan || f.plan)
      throw new PlanError('--print-plan', 'prints the plan compiled from SQL: give a .sql file or sql "SELECT ..."');
    return undefined;
  }
  let text = query;
  if (planFile !== 'sql') {
    try {
      text = fs.readFileSync(planFile, 'utf8');
    } catch (e) {
      // an input file missing or unreadable, as a data file is (exit 3)
      const code = (e as NodeJS.ErrnoException).code;
      const why = code === 'ENOENT' ? 'file not found' : `cannot read (${code ?? (e as Error).message})`;
      throw new InputError(`SQL file ${planFile}: ${why}`, planFile);
    }
  } else if (text === undefined) throw new PlanError('sql', 'expected the query text: skewjoin sql "SELECT ..."');
  const { compileSql } = await import('../sql/compile.js');
  // run by this process (or printed): planning takes it without the schema's check (plan/compiled.ts)
  return markCompiled(await compileSql(text!, { sources: f.source, data: f.data, fromCommandLine: true }));
}

/** Rows the terminal table shows, and how to see them all when there are more. */
const TABLE_ROWS = 20;
const ALL_ROWS = '--json prints every row, --output FILE writes them to a file';

/** `--stats FILE`: a file that cannot be written is the option's mistake, said in words. */
function writeStats(file: string, stats: unknown): void {
  try {
    fs.writeFileSync(file, JSON.stringify(stats, null, 2) + '\n');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const dir = path.dirname(path.resolve(file));
    const why =
      code === 'EACCES' || code === 'EPERM'
        ? `permission denied: cannot create files in ${dir}`
        : code === 'ENOENT'
          ? `folder ${dir} does not exist`
          : (code ?? (e as Error).message);
    throw new PlanError('--stats', `cannot write ${file}: ${why}`);
  }
}
