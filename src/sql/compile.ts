// SQL in: parse a SELECT, load what the footers of its tables say, plan it
// (select.ts) and emit a plan of the PLAN-SPEC contract, which runPlan runs.
import path from 'node:path';
import type { Plan } from '../plan/spec.js';
import { markCompiled } from '../plan/compiled.js';
import { parseSql } from './parser.js';
import { Catalog } from './catalog.js';
import { Namer } from './scope.js';
import type { Ctx, SqlOptions } from './context.js';
import { planSelect, planWhere } from './select.js';
import { prune } from './prune.js';
import type { Pos } from './lexer.js';
import { indexPositions, locate, typeErrorShown } from './positions.js';
import type { CsvOptions } from '../io/csv-infer.js';
import type { RunOptions, RunResult } from '../api.js';
import { ExecutionError, SkewjoinError } from '../errors.js';

export type { SqlOptions };

/** Table names and paths anywhere in the query, with the position of their first use. */
function tablesOf(ast: unknown, names: Map<string, Pos>, paths: Map<string, { pos: Pos; csv?: CsvOptions }>): void {
  if (!ast || typeof ast !== 'object') return;
  if (Array.isArray(ast)) {
    for (const x of ast) tablesOf(x, names, paths);
    return;
  }
  const o = ast as Record<string, unknown>;
  if (o.k === 'table' && typeof o.name === 'string' && !names.has(o.name)) names.set(o.name, o.pos as Pos);
  if (o.k === 'path' && typeof o.path === 'string' && !paths.has(o.path)) {
    paths.set(o.path, { pos: o.pos as Pos, csv: o.csv as CsvOptions | undefined });
  }
  for (const v of Object.values(o)) if (v && typeof v === 'object') tablesOf(v, names, paths);
}

/**
 * Compile SQL text to a plan object (valid against plans/plan.schema.json).
 * Throws PlanError (exit 2) with line and column, InputError (exit 3) for files.
 */
export async function compileSql(text: string, options: SqlOptions = {}): Promise<Plan> {
  try {
    return await compile(text, options);
  } catch (e) {
    throw typeErrorShown(e, text);
  }
}

async function compile(text: string, options: SqlOptions): Promise<Plan> {
  const ast = parseSql(text);
  const baseDir = path.resolve(options.baseDir ?? '.');
  const data = options.data === undefined ? undefined : path.resolve(baseDir, options.data);
  const catalog = new Catalog(options.sources ?? {}, baseDir, options.fromCommandLine ?? false, data);
  const names = new Map<string, Pos>(),
    paths = new Map<string, { pos: Pos; csv?: CsvOptions }>();
  tablesOf(ast, names, paths);
  for (const n of names.keys()) await catalog.loadTable(n);
  for (const [p, { pos, csv }] of paths) await catalog.loadPath(p, `line ${pos.line}, column ${pos.col}`, csv);
  const params = new Map<string, string>();
  const ctx: Ctx = {
    catalog,
    namer: new Namer(),
    params,
    ctes: new Map(),
    usedSources: new Set(),
    planSelect: (q, parent, corr, top) => planSelect(ctx, q, parent, corr, top),
    planWhere: (q, parent, corr) => planWhere(ctx, q, parent, corr).rel,
  };
  const rel = planSelect(ctx, ast, undefined, undefined, true);
  const query = prune(rel.node, new Set(rel.cols.map((c) => c.id)));
  const plan: Plan = {
    description: `compiled from SQL: ${text.trim().replace(/\s+/g, ' ').slice(0, 200)}`,
    version: 1,
    sources: catalog.planSources(ctx.usedSources),
    query,
  };
  if (params.size) {
    plan.params = Object.fromEntries([...params].map(([k, t]) => [k, { type: t.replace('?', '') }]));
  }
  compiled.set(plan, { text, index: indexPositions(plan.query, 'query') });
  return plan;
}

const compiled = new WeakMap<Plan, { text: string; index: Map<string, Pos> }>();

/**
 * An error raised for a plan compileSql made (binding it, say) told at the SQL's line and column, with a caret under
 * the spot, where it names a JSON path of the plan; anything else as it is.
 */
export function sqlLocated(plan: Plan, e: unknown): unknown {
  const c = compiled.get(plan);
  return c ? locate(e, c.text, c.index) : e;
}

export interface RunSqlOptions extends Omit<RunOptions, 'sources'>, SqlOptions {}

/** Compile SQL and run the plan (api.ts runPlan): runPlan's result and errors, SQL's with line and column. */
export async function runSql(text: string, options: RunSqlOptions = {}): Promise<RunResult> {
  const { sources, data, fromCommandLine, ...rest } = options;
  // loaded here, not with the compiler: the command line compiles SQL without them, and their Arrow JS (~100
  // modules, 60-90 ms) would load on the calling thread before every SQL run's first task
  const [{ runPlan }, { describeSql, descriptionResult }] = await Promise.all([
    import('../api.js'),
    import('./describe.js'),
  ]);
  let plan: Plan;
  try {
    // DESCRIBE 'file': its columns, nothing run (sql/describe.ts)
    const t0 = performance.now();
    const d = await describeSql(text, { sources, data, baseDir: options.baseDir, fromCommandLine });
    if (d) return descriptionResult(d, performance.now() - t0);
    // run here and nowhere else: planning takes it without the schema's check (plan/compiled.ts)
    plan = markCompiled(await compileSql(text, { sources, data, baseDir: options.baseDir, fromCommandLine }));
  } catch (e) {
    if (e instanceof SkewjoinError) throw e;
    const err = new ExecutionError(`internal error compiling SQL: ${(e as Error)?.message ?? e}`);
    if (e instanceof Error && e.stack) err.stack = e.stack;
    throw err;
  }
  return runPlan(plan, rest).catch((e) => {
    throw sqlLocated(plan, e);
  });
}
