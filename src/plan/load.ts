// Loading a plan: read the JSON, validate it against the spec schema, apply
// command-line overrides, and bind it against the source files.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PlanError } from '../errors.js';
import { bindPlan } from './bind.js';
import { type ParamInput, applyParams } from './params.js';
import { isCompiled } from './compiled.js';
import { dataSources, resolveSourceOverrides } from './sources.js';
import type { SparkSources } from './uri.js';
import { deriveJoinFilters } from './derive-filters.js';
import { pushAggregates } from './eager-push.js';
import { type JoinOrderNote, orderJoins } from './join-order.js';
import { mergeSiblings } from './siblings.js';
import { pruneColumns } from './prune.js';
import { shareRepeats } from './share.js';
import { topNWindows } from './window-topn.js';
import { splitScans } from './map-splits.js';
import type { BoundNode } from './bound.js';
import { DEFAULT_BROADCAST_BYTES, DEFAULT_IN_THREAD_BYTES, SHARED_BUILD_BYTES } from './defaults.js';
import type { Plan } from './spec.js';
import { OUTPUT_FORMATS, type OutputFormat } from './formats.js';
import { FORMATS } from '../io/result-file.js';

/** The formats standard output takes, for messages. */
export const STDOUT_FORMATS = OUTPUT_FORMATS.filter((f) => FORMATS[f].stdout).join(', ');
import { parseBytes, parseSize } from './bytes.js';
import type { FilterMode } from '../kernels/runtime-filter.js';

export interface SkewSettings {
  enabled: boolean;
  factor: number;
  thresholdBytes: number;
  advisoryPartitionBytes: number;
  strategy: 'auto' | 'partition' | 'key';
}

/** Execution settings with every default filled in. */
export interface Settings {
  workers: number;
  /** undefined: chosen by the engine from the input size */
  partitions: number | undefined;
  combiners: boolean;
  /** partial aggregates below a join, where the aggregate above it allows (needs combiners) */
  eagerAggregation: boolean;
  skew: SkewSettings;
  /** budget for data held in memory; above it the engine spills */
  memoryLimit: number;
  /**
   * a join side at most this many bytes is broadcast to the other side's map tasks; 0: never
   * (physical/join/broadcast.ts)
   */
  broadcastBytes: number;
  /**
   * Internal (not in the plan format): with the default broadcastBytes, a side up to this many bytes is built in
   * shared memory too when the other side is larger (physical/join/decide.ts sideBounds); 0 when broadcastBytes was
   * set.
   */
  sharedBuildBytes?: number;
  /**
   * Internal (not in the plan format): the bytes a repeated subtree's rows may take while held for its other
   * readers (physical/repeats.ts); default a share of the memory budget. 0: every reader computes it.
   */
  repeatBytes?: number;
  /** runtime join filters (kernels/runtime-filter.ts, physical/join/filters.ts): auto, off, or one kind forced */
  runtimeFilters: FilterMode;
  /** inputs (Parquet bytes) up to this size run on the calling thread, without workers (runtime/local.ts) */
  inThreadBytes: number;
  /** parent folder of the query's spill folder (absolute) */
  spillDir: string;
  /**
   * Internal (not in the plan format): plan as if for this many workers while the
   * tasks run on `workers` threads: partitions, coalescing, map splits, sort ranges.
   * `skewjoin bench --simulate-workers` sets it to replay a larger cluster's plan.
   */
  planWorkers?: number;
  /** Internal: each task's statistics carry the CPU time of its thread (`skewjoin bench` sets it). */
  taskCpuTime?: boolean;
}

/** The worker count the plan is sized for: `planWorkers` when set, else the real one. */
export function plannedWorkers(s: Pick<Settings, 'workers' | 'planWorkers'>): number {
  return s.planWorkers ?? s.workers;
}

/** Overrides from the command line or the library caller; they win over the plan's `execution`. */
export interface Overrides {
  workers?: number;
  partitions?: number;
  combiners?: boolean;
  eagerAggregation?: boolean;
  /** sizes as numbers of bytes or text ("64KB"), as everywhere (plan/bytes.ts) */
  skew?: Partial<Omit<SkewSettings, 'thresholdBytes' | 'advisoryPartitionBytes'>> & {
    thresholdBytes?: number | string;
    advisoryPartitionBytes?: number | string;
  };
  memoryLimit?: number | string;
  broadcastBytes?: number | string;
  inThreadBytes?: number | string;
  runtimeFilters?: FilterMode;
  /** relative to the current directory */
  spillDir?: string;
  /** values of the plan's `params` (`--param NAME=VALUE`) */
  params?: Record<string, ParamInput>;
  /** files replacing a declared source's (`--source NAME=PATH`): a file, a glob, a folder, or a list */
  sources?: Record<string, string | string[]>;
  /**
   * a folder binding every table the plan scans (and `sources` does not give) to DIR/name.parquet, DIR/name/ or
   * DIR/name.csv (`--data DIR`); relative to `baseDir`
   */
  data?: string;
  /** internal: plan for this many workers, run on `workers` (Settings.planWorkers) */
  planWorkers?: number;
  /** internal: measure each task's thread CPU time (Settings.taskCpuTime) */
  taskCpuTime?: boolean;
  /** internal: the shared-build bound (Settings.sharedBuildBytes), whatever broadcastBytes says */
  sharedBuildBytes?: number;
  /** internal: the bytes a repeated subtree's rows may take while held (Settings.repeatBytes) */
  repeatBytes?: number;
  /** the overrides came from the command line: errors name `--param`/`--source`, not the options */
  fromCommandLine?: boolean;
  /** replaces the plan's `output` (`--output`, `--format`); a relative path is relative to the current folder */
  output?: { path: string; format?: OutputFormat };
  /**
   * internal (`--engine spark`): the schema of a source Spark reads itself, a URI (and, on a
   * remote server, a local path not found here) (plan/uri.ts); without it a URI is an input error
   */
  sparkSources?: SparkSources;
}

/** What `loadPlan` and `runPlan` take beside the plan: the overrides and the folder of relative paths. */
export interface LoadOptions extends Overrides {
  /**
   * Folder that a plan object's relative paths, and `sources` overrides, resolve against
   * (default: the current directory). A plan file's own paths resolve against its folder.
   */
  baseDir?: string;
  /**
   * Internal (not in the plan format): 'written' keeps every join order as the plan wrote it; default 'cost': trees
   * of inner joins ordered by estimated cost (plan/join-order.ts), a join with `"reorder": false` kept as written.
   */
  joinOrder?: 'cost' | 'written';
  /**
   * Internal (not in the plan format): 'join' plans every distinct INTERSECT and EXCEPT a join can take as a semi or
   * anti join (tests on small files, whose estimates would not); default 'cost': where it is expected to pay
   * (plan/setop-joins.ts).
   */
  setOps?: 'cost' | 'join';
}

export interface LoadedPlan {
  plan: Plan;
  baseDir: string;
  root: BoundNode;
  settings: Settings;
  output?: { path: string; format: OutputFormat };
  /** what the join order decided for each tree of three or more inner joins (--explain) */
  joinOrder?: JoinOrderNote[];
}

function readPlanFile(file: string): unknown {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new PlanError(
      '',
      `cannot read plan file ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new PlanError('', `plan file ${jsonSyntaxError(file, text, (e as Error).message)}`);
  }
}

/**
 * `plan.json:5:3: not valid JSON: ...` and the line with a caret under the place: V8 gives a character
 * position (`at position 80`), which no editor goes to. Without a position (the text ended early) the
 * place is the end of the text.
 */
function jsonSyntaxError(file: string, text: string, message: string): string {
  const m = message.match(/at position (\d+)/);
  const at = m ? Number(m[1]) : text.trimEnd().length;
  const before = text.slice(0, at).split('\n');
  const line = before.length,
    column = before[before.length - 1].length + 1;
  const source = (text.split('\n')[line - 1] ?? '').replace(/\r$/, '');
  // V8's message without the position it restates, and without the excerpt of the text in quotes
  const why = message
    .replace(/ in JSON at position \d+.*$/s, '')
    .replace(/, ".*" is not valid JSON$/s, '')
    .replace(/ \(line \d+ column \d+\)$/, '');
  const shownLine = source.length > 100 ? source.slice(Math.max(0, column - 50), column + 50) : source;
  const caret = source.length > 100 ? Math.min(column - 1, 49) : column - 1;
  return `${file}:${line}:${column}: not valid JSON: ${why}\n  ${shownLine}\n  ${' '.repeat(caret)}^`;
}

/** `baseDir` resolves a relative `execution.spillDir` (the plan's folder). */
function resolveSettings(plan: Plan, o: Overrides = {}, baseDir = '.'): Settings {
  const ex = plan.execution ?? {};
  const sk = ex.skew ?? {};
  // an option's name as the caller wrote it: the flag, the library option, or the plan's field
  const cli = o.fromCommandLine ?? false;
  const opt = (flag: string, field: string) => (cli ? flag : `options.${field}`);
  const size = (flag: string, field: string, given: unknown, inPlan: unknown, dflt: number, memory = false) =>
    given !== undefined
      ? parseSize(opt(flag, field), given, memory)
      : parseBytes(`execution.${field}`, inPlan, dflt, memory);
  const os_ = o.skew ?? {};
  const skew: SkewSettings = {
    enabled: sk.enabled ?? true,
    factor: sk.factor ?? 5,
    strategy: sk.strategy ?? 'auto',
    ...Object.fromEntries(Object.entries(os_).filter(([, v]) => v !== undefined)),
    thresholdBytes: size(
      '--skew-threshold',
      'skew.thresholdBytes',
      os_.thresholdBytes,
      sk.thresholdBytes,
      256 * 1024 ** 2,
    ),
    advisoryPartitionBytes: size(
      '--skew-advisory',
      'skew.advisoryPartitionBytes',
      os_.advisoryPartitionBytes,
      sk.advisoryPartitionBytes,
      64 * 1024 ** 2,
    ),
  };
  const memoryLimit = size(
    '--memory-limit',
    'memoryLimit',
    o.memoryLimit,
    ex.memoryLimit,
    Math.floor(os.totalmem() / 2),
    true,
  );
  return {
    workers: o.workers ?? ex.workers ?? os.availableParallelism(),
    partitions: o.partitions ?? ex.partitions,
    combiners: o.combiners ?? ex.combiners ?? true,
    eagerAggregation: o.eagerAggregation ?? ex.eagerAggregation ?? true,
    // off unless asked: at SF 1 they cost more than they saved (docs/performance.md "Runtime join filters")
    runtimeFilters: o.runtimeFilters ?? ex.runtimeFilters ?? 'off',
    skew,
    memoryLimit,
    inThreadBytes: size(
      '--in-thread-bytes',
      'inThreadBytes',
      o.inThreadBytes,
      ex.inThreadBytes,
      DEFAULT_IN_THREAD_BYTES,
    ),
    broadcastBytes: size(
      '--broadcast-threshold',
      'broadcastBytes',
      o.broadcastBytes,
      ex.broadcastBytes,
      DEFAULT_BROADCAST_BYTES,
    ),
    sharedBuildBytes:
      o.sharedBuildBytes ??
      (o.broadcastBytes === undefined && ex.broadcastBytes === undefined
        ? Math.min(SHARED_BUILD_BYTES, Math.floor(memoryLimit / 16))
        : 0),
    spillDir:
      o.spillDir !== undefined
        ? path.resolve(o.spillDir)
        : ex.spillDir !== undefined
          ? path.resolve(baseDir, ex.spillDir)
          : os.tmpdir(),
    ...(o.planWorkers !== undefined ? { planWorkers: o.planWorkers } : {}),
    ...(o.repeatBytes !== undefined ? { repeatBytes: o.repeatBytes } : {}),
    ...(o.taskCpuTime ? { taskCpuTime: true } : {}),
  };
}

function outputOf(plan: Plan, baseDir: string, cli: boolean): LoadedPlan['output'] {
  if (!plan.output) return undefined;
  const [formatField, pathField] = cli ? ['--format', '--output'] : ['output.format', 'output.path'];
  let format = plan.output.format;
  // "-": standard output, rows streamed as text (io/result-file.ts)
  if (plan.output.path === '-') {
    if (format && !FORMATS[format].stdout)
      throw new PlanError(formatField, `standard output ("-") takes ${STDOUT_FORMATS}, got "${format}"`);
    return { path: '-', format: format ?? 'csv' };
  }
  const p = path.resolve(baseDir, plan.output.path);
  if (!format) {
    const ext = path.extname(p).toLowerCase();
    format = OUTPUT_FORMATS.find((f) => FORMATS[f].extensions.includes(ext));
    if (!format) {
      throw new PlanError(
        pathField,
        `cannot tell the format from extension "${ext || '(none)'}"; ` +
          `${cli ? 'give --format' : 'set output.format to'} one of ${OUTPUT_FORMATS.join(', ')}`,
      );
    }
  }
  // A missing output folder is created when the result is written (PLAN-SPEC, Errors); a file in its way is a plan
  // error now.
  let dir = path.dirname(p);
  while (!fs.existsSync(dir) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  if (!fs.statSync(dir).isDirectory())
    throw new PlanError('output.path', `cannot create the output folder: ${dir} is a file`);
  return { path: p, format };
}

/**
 * Load a plan from a file path or an object (then `options.baseDir` resolves its
 * relative paths; default the current directory), validate and bind it.
 * A third argument `baseDir` is the older form of `options.baseDir`; both given and different
 * is an error. Any object is taken here (plans compiled from SQL, the Spark bench's): the
 * library exports it typed as `Plan | string` (src/index.ts).
 */
export async function loadPlan(
  source: Plan | string | object,
  options: LoadOptions = {},
  baseDir?: string,
): Promise<LoadedPlan> {
  const both = baseDir !== undefined && options.baseDir !== undefined;
  if (both && path.resolve(baseDir) !== path.resolve(options.baseDir!)) {
    const [a, b] = [JSON.stringify(options.baseDir), JSON.stringify(baseDir)];
    throw new PlanError(
      'baseDir',
      `given twice with different values: ${a} in the options and ${b} as the third argument`,
    );
  }
  const base = path.resolve(options.baseDir ?? baseDir ?? '.');
  const obj = typeof source === 'string' ? readPlanFile(source) : source;
  const dir = typeof source === 'string' ? path.dirname(path.resolve(source)) : base;
  const cli = options.fromCommandLine ?? false;
  // A plan the SQL compiler made here is built to the schema: the schema's check (zod: 30 ms to load, 20 ms to
  // check a plan) is for plans written by hand; the tests check every compiled plan too (SKEWJOIN_CHECK_PLANS).
  let plan: Plan;
  if (isCompiled(obj) && !process.env.SKEWJOIN_CHECK_PLANS) {
    plan = applyParams(obj, (obj as Plan).params ?? {}, options.params, cli) as Plan;
  } else {
    const v = await import('./validate.js');
    plan = v.validatePlan(applyParams(obj, v.declaredParams(obj), options.params, cli));
  }
  const settings = resolveSettings(plan, options, dir);
  const output = options.output
    ? outputOf({ ...plan, output: options.output }, process.cwd(), cli)
    : outputOf(plan, dir, false);
  // override paths are the caller's: relative to baseDir (the current folder by default), not to the plan
  const files = await resolveSourceOverrides(
    Object.keys(plan.sources),
    options.sources ?? {},
    base,
    cli,
    !!options.sparkSources?.missing,
  );
  if (options.data) {
    const given = new Set(Object.keys(options.sources ?? {}));
    for (const [k, v] of await dataSources(plan, path.resolve(base, options.data), given, cli)) files.set(k, v);
  }
  const uri = options.sparkSources && { spark: options.sparkSources, workers: settings.workers };
  // join trees ordered by cost (plan/join-order.ts) first, so that what follows sees the chosen order; filters
  // derived below joins (plan/derive-filters.ts); aggregates computed before the joins below them
  // (plan/eager-push.ts); repeated subtrees made identical before pruning (plan/share.ts), computed once when run
  // (physical/repeats.ts)
  const bound = await bindPlan(plan, dir, files, uri, {
    broadcastBytes: settings.broadcastBytes,
    mode: options.setOps ?? 'cost',
  });
  const mode = options.joinOrder ?? (uri ? 'written' : 'cost');
  const ordered = await orderJoins(bound, { broadcastBytes: settings.broadcastBytes, mode });
  // windows under a top-N filter (row_number/rank/dense_rank at most N) keep only their first rows
  // (plan/window-topn.ts)
  const derived = topNWindows(deriveJoinFilters(ordered.root));
  // sibling aggregates over one table computed by one scan (plan/siblings.ts), then shared as repeats
  const shared = shareRepeats(mergeSiblings(pushAggregates(derived, settings.eagerAggregation && settings.combiners)));
  const root = splitScans(pruneColumns(shared.root, shared.copies), plannedWorkers(settings));
  const joinOrder = ordered.notes.length ? { joinOrder: ordered.notes } : {};
  return { plan, baseDir: dir, root, settings, output, ...joinOrder };
}
