// The command line: `skewjoin plan.json`, `skewjoin gen`, `skewjoin bench`.
// Exit codes: 0 success, 2 bad plan or arguments, 3 input data error, 1 other.
import fs from 'node:fs';
import path from 'node:path';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { type Executed, execute } from '../exec/execute.js';
import { PlanError, SkewjoinError } from '../errors.js';
import { explainAnalyze, explainPlan } from '../exec/explain.js';
import { closePool } from '../exec/pool.js';
import { prestartPool } from './prestart.js';
import { interrupted } from './interrupt.js';
import { formatTable, jsonLines } from '../io/output.js';
import { type Overrides, loadPlan } from '../plan/load.js';
import { ByteSize, OUTPUT_FORMATS, type OutputFormat, type Plan, parseBytes } from '../plan/spec.js';
import { GEN_DEFAULTS, TPCH_DEFAULTS } from '../bench/defaults.js';
import { progressDisplay, wantsProgress } from './progress.js';
import { trace } from '../exec/trace.js';

const EXAMPLES = `
Examples:
  skewjoin plans/quickstart.json                  run a plan, print the first rows
  skewjoin plans/quickstart.json --json           print every row as JSON lines
  skewjoin plan.json --workers 4 --stats s.json   write run statistics
  skewjoin plan.json --explain                    show the physical plan, run nothing
  skewjoin plans/tpch/q05.json --param REGION=EUROPE --source lineitem=data/lineitem/
                                                  run with another parameter value and other files
  skewjoin q.sql --source lineitem=data/lineitem/   run a SQL query (docs/sql.md)
  skewjoin sql "SELECT count(*) FROM 'data/*.parquet'" --output n.csv
  skewjoin q.sql --source t=t.parquet --print-plan   print the plan compiled from SQL
  skewjoin gen --rows 5000000 --keys 1000000 --s 1.2 --out data/zipf
  skewjoin gen --tpch --scale 1 --out data/tpch-sf1    the TPC-H tables, 6M line items
  skewjoin bench --suite quick --out bench-out     skew benchmark against DuckDB, with report.html

Exit codes: 0 success, 2 bad plan or arguments, 3 input data error, 1 other.`;

function int(name: string, min = 1) {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`${name} must be an integer >= ${min}`);
    return n;
  };
}
/** `1.2,1.5`: `bench --s`. */
function sList(v: string): number[] {
  const xs = v.split(',').map((x) => Number(x.trim()));
  if (xs.some((x) => !Number.isFinite(x) || x < 0))
    throw new InvalidArgumentError(`--s must be Zipf exponents >= 0, comma-separated (e.g. 1.2,1.5); got "${v}"`);
  return xs;
}

/** `16,64,256`, or `none` for an empty list: `bench --simulate-workers`. */
function workerList(v: string): number[] {
  if (v.trim() === 'none') return [];
  const xs = v.split(',').map((x) => Number(x.trim()));
  if (xs.length === 0 || xs.some((n) => !Number.isInteger(n) || n < 1 || n > 4096)) {
    throw new InvalidArgumentError(
      `--simulate-workers must be worker counts from 1 to 4096, comma-separated (e.g. 16,64,256), or none; got "${v}"`,
    );
  }
  return [...new Set(xs)].sort((a, b) => a - b);
}
function num(name: string, min = 0) {
  return (v: string) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n < min) throw new InvalidArgumentError(`${name} must be a number >= ${min}`);
    return n;
  };
}
function size(name: string) {
  return (v: string) => {
    const r = ByteSize.safeParse(/^\d+(\.\d+)?$/.test(v) ? Number(v) : v);
    if (!r.success) throw new InvalidArgumentError(`${name} must be a size such as 1048576, "64KB", "256MB" or "1GB"`);
    return r.data;
  };
}

/** `NAME=VALUE` split at the first `=`; a repeated option collects into a record (a repeated source name into a list). */
function assignment(flag: string, list: boolean) {
  return (v: string, acc: Record<string, string | string[]> = {}) => {
    const i = v.indexOf('=');
    if (i <= 0) throw new InvalidArgumentError(`${flag} must be NAME=${list ? 'PATH' : 'VALUE'}, got "${v}"`);
    const [k, x] = [v.slice(0, i), v.slice(i + 1)];
    const prev = acc[k];
    return { ...acc, [k]: list && prev !== undefined ? [...(Array.isArray(prev) ? prev : [prev]), x] : x };
  };
}

interface RunFlags {
  workers?: number;
  partitions?: number;
  skew?: boolean;
  skewFactor?: number;
  skewThreshold?: number | string;
  skewStrategy?: 'auto' | 'partition' | 'key';
  combiners?: boolean;
  eager?: boolean;
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
  printPlan?: boolean;
  plan?: boolean;
  output?: string;
  format?: OutputFormat;
  engine?: 'local' | 'spark';
  remote?: string;
}

function overridesOf(f: RunFlags): Overrides {
  return {
    workers: f.workers,
    partitions: f.partitions,
    combiners: f.combiners === false ? false : undefined,
    eagerAggregation: f.eager === false ? false : undefined,
    memoryLimit: f.memoryLimit,
    spillDir: f.spillDir,
    broadcastBytes: f.broadcast === false ? 0 : f.broadcastThreshold,
    params: f.param,
    sources: f.source,
    fromCommandLine: true,
    skew: {
      enabled: f.skew === false ? false : undefined,
      factor: f.skewFactor,
      thresholdBytes: f.skewThreshold === undefined ? undefined : parseBytes(f.skewThreshold, 0),
      strategy: f.skewStrategy,
    },
    ...(f.output ? { output: { path: f.output, format: f.format } } : {}),
  };
}

async function runCommand(
  planFile: string,
  f: RunFlags,
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
  query?: string,
): Promise<number> {
  trace('cli: modules loaded');
  if (f.format && !f.output) throw new PlanError('--format', 'needs --output PATH');
  // SQL (`skewjoin q.sql`, `skewjoin sql "SELECT ..."`) compiles to a plan object first (src/sql)
  const sql = await sqlPlan(planFile, query, f);
  if (sql && (f.printPlan || f.plan)) {
    out.write(JSON.stringify(sql, null, 2) + '\n');
    return 0;
  }
  const overrides = sql ? { ...overridesOf(f), sources: undefined } : overridesOf(f);
  if (f.engine === 'spark')
    return (await import('../spark/cli.js')).runSparkCommand(sql ?? planFile, f, overrides, out, err);
  if (!f.explain || f.analyze) prestartPool(sql ?? planFile, f.workers, sql ? {} : f.source);
  const lp = await loadPlan(sql ?? planFile, overrides);
  trace('cli: plan loaded');
  if (f.explain && !f.analyze) {
    out.write(explainPlan(lp));
    return 0;
  }
  const display = wantsProgress(err, out, f) ? await progressDisplay(err) : null;
  // a result written to a file is not also kept in memory: it may be larger than memory
  let r: Executed;
  try {
    r = await execute(lp, true, { onProgress: display?.onProgress, keepBatches: !lp.output });
  } finally {
    display?.stop();
  }
  if (f.stats) writeStats(f.stats, r.stats);
  if (f.explain) out.write(explainAnalyze(lp, r.stats));
  if (!lp.output) {
    if (f.json) out.write(jsonLines(r.schema, r.batches));
    else if (!f.quiet && !f.explain) out.write(formatTable(r.schema, r.batches, TABLE_ROWS, ALL_ROWS));
  } else if (!f.quiet) {
    err.write(
      `wrote ${r.numRows} rows to ${path.relative(process.cwd(), r.outputPath!) || r.outputPath} in ${(r.stats.wallMs / 1000).toFixed(2)} s\n`,
    );
  }
  return 0;
}

async function sqlPlan(planFile: string, query: string | undefined, f: RunFlags): Promise<Plan | undefined> {
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
      throw new PlanError(
        '',
        `cannot read SQL file ${planFile}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      );
    }
  } else if (text === undefined) throw new PlanError('sql', 'expected the query text: skewjoin sql "SELECT ..."');
  const { compileSql } = await import('../sql/compile.js');
  return compileSql(text!, { sources: f.source, fromCommandLine: true });
}

/** Rows the terminal table shows, and how to see them all when there are more. */
const TABLE_ROWS = 20;
const ALL_ROWS = '--json prints every row, --output FILE writes them to a file';

/** This package's version, from its package.json (dist/cli/ and dist/bundle/ both sit two folders below it). */
function packageVersion(): string {
  try {
    return JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;
  } catch {
    return '(unknown version)';
  }
}

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

export function buildProgram(
  out: NodeJS.WritableStream,
  err: NodeJS.WritableStream,
  setCode: (c: number) => void,
): Command {
  const program = new Command('skewjoin')
    .description(
      'Run a query plan (plan.json) over Parquet files: joins and aggregations that stay fast on skewed data.',
    )
    .argument('[plan]', 'the plan file (see plans/ and the README), a .sql file, or "sql" followed by the query text')
    .argument('[query]', 'after "sql": the SQL text')
    .option('--workers <n>', 'worker threads (default: available parallelism)', int('--workers'))
    .option('--partitions <n>', 'shuffle partitions (default: chosen from the input size)', int('--partitions'))
    .option('--no-skew', 'plain hash shuffle, no skew handling')
    .option('--skew-factor <x>', 'a partition is skewed above this many times the median', num('--skew-factor'))
    .option('--skew-threshold <size>', 'and above this many bytes ("256MB")', size('--skew-threshold'))
    .addOption(
      new Option('--skew-strategy <s>', 'how skewed partitions are split').choices(['auto', 'partition', 'key']),
    )
    .option('--no-combiners', 'no partial aggregation before the shuffle')
    .option('--no-eager', 'no eager aggregation (partial aggregates below a join)')
    .option(
      '--broadcast-threshold <size>',
      'broadcast a join side at most this big (default 24MB; 0: never)',
      size('--broadcast-threshold'),
    )
    .option('--no-broadcast', 'never broadcast a join side: shuffle both')
    .option(
      '--memory-limit <size>',
      'budget for data held in memory ("4GB"); above it the query spills to disk (default: half the physical memory)',
      size('--memory-limit'),
    )
    .option('--spill-dir <dir>', 'where spill files go (default: the OS temp folder)')
    .option('--param <NAME=VALUE>', 'value of a plan parameter (repeatable)', assignment('--param', false))
    .option(
      '--source <NAME=PATH>',
      'read source NAME from a file, glob or folder instead (repeatable; relative to the current folder)',
      assignment('--source', true),
    )
    .option('--explain', 'print the physical plan; with --analyze, run and print it with run figures')
    .option('--analyze', 'with --explain: run the query first')
    .option('--stats <file>', 'write run statistics as JSON to this file')
    .option('--json', 'print the result as JSON lines instead of a table')
    .option('--output <path>', 'write the result to this file (format from the extension, or --format)')
    .addOption(new Option('--format <format>', 'format of --output').choices([...OUTPUT_FORMATS]))
    .option('--print-plan', 'SQL: print the compiled plan JSON instead of running it')
    .addOption(new Option('--plan', 'SQL: same as --print-plan').hideHelp())
    .option('--quiet', 'print nothing on success')
    .addOption(
      new Option('--engine <engine>', 'where the plan runs: here, or on Apache Spark through Spark Connect')
        .choices(['local', 'spark'])
        .default('local'),
    )
    .option(
      '--remote <url>',
      'with --engine spark: the Spark Connect server, sc://host:port[/;token=...] (default: SPARK_REMOTE, else a local server)',
    )
    .version(`skewjoin ${packageVersion()}`, '-V, --version', 'print the version')
    .addHelpText('after', EXAMPLES)
    .action(async (plan: string | undefined, query: string | undefined, flags: RunFlags) => {
      if (!plan) {
        out.write(program.helpInformation());
        setCode(2);
        return;
      }
      setCode(await runCommand(plan, flags, out, err, query));
    });

  // before the subcommands, which copy these settings when they are made: a mistake in `gen` or
  // `bench` exits 2 through main() too, not 1 from inside commander
  program.exitOverride();
  program.configureOutput({ writeOut: (s) => out.write(s), writeErr: (s) => err.write(s) });

  program
    .command('lower')
    .description('print the Spark SQL and session settings that --engine spark sends for a plan')
    .argument('<plan>', 'the plan file')
    .addOption(new Option('--to <target>', 'the target').choices(['spark']).default('spark'))
    .option(
      '--remote <url>',
      'the Spark Connect server that gives the schema of sources given as URIs (default: SPARK_REMOTE, else a local server)',
    )
    .option('--param <NAME=VALUE>', 'value of a plan parameter (repeatable)', assignment('--param', false))
    .option(
      '--source <NAME=PATH>',
      'read source NAME from a file, glob or folder instead (repeatable)',
      assignment('--source', true),
    )
    .action(async (plan: string, o: RunFlags) => {
      // --param and --source are also the run's options: commander may give them to the program
      const g = program.opts() as RunFlags;
      const flags = { ...o, param: o.param ?? g.param, source: o.source ?? g.source };
      setCode(
        await (await import('../spark/cli.js')).lowerCommand(plan, overridesOf(flags), out, o.remote ?? g.remote),
      );
    });

  program
    .command('gen')
    .description(
      'write a synthetic Zipf dataset (fact.parquet, dim.parquet, optionally m2m.parquet), or with --tpch the eight TPC-H tables',
    )
    .option('--out <dir>', `output folder (default: ${GEN_DEFAULTS.out}, with --tpch: ${TPCH_DEFAULTS.out})`)
    .option('--tpch', 'write the TPC-H tables <out>/<table>.parquet at the scale factor --scale')
    .option('--scale <sf>', 'TPC-H scale factor: 1 = 6M line items', num('--scale', 0.0001), TPCH_DEFAULTS.scale)
    .option('--rows <n>', 'fact rows', int('--rows'), GEN_DEFAULTS.rows)
    .option('--keys <m>', 'distinct keys (dimension rows)', int('--keys'), GEN_DEFAULTS.keys)
    .option('--s <s>', 'Zipf exponent (0 = uniform)', num('--s'), GEN_DEFAULTS.s)
    .option(
      '--seed <n>',
      `random seed (default: ${GEN_DEFAULTS.seed}, with --tpch: ${TPCH_DEFAULTS.seed})`,
      int('--seed', 0),
    )
    .option(
      '--row-group-size <n>',
      `rows per Parquet row group (default: ${GEN_DEFAULTS.rowGroupSize}, with --tpch: ${TPCH_DEFAULTS.rowGroupSize})`,
      int('--row-group-size'),
    )
    .option('--files <n>', 'fact table files', int('--files'), GEN_DEFAULTS.files)
    .option(
      '--m2m-rows <n>',
      'rows of a second skewed table over the same keys (0: none)',
      int('--m2m-rows', 0),
      GEN_DEFAULTS.m2mRows,
    )
    .option(
      '--null-keys <fraction>',
      'fraction of fact rows with a null key',
      num('--null-keys'),
      GEN_DEFAULTS.nullKeys,
    )
    .option('--sorted', 'sort the fact table by key')
    .action(async (o) => {
      const given = Object.fromEntries(
        Object.entries({ out: o.out, seed: o.seed, rowGroupSize: o.rowGroupSize }).filter(([, v]) => v !== undefined),
      );
      // the generators and the bench load only for their commands
      const files = o.tpch
        ? await (await import('../bench/tpch.js')).generateTpch({ ...TPCH_DEFAULTS, scale: o.scale, ...given })
        : (await import('../bench/gen.js')).generate({ ...GEN_DEFAULTS, ...o, ...given, sorted: !!o.sorted });
      if (!program.opts().quiet) for (const f of files) out.write(`wrote ${f}\n`);
      setCode(0);
    });

  program
    .command('bench')
    .description('generate Zipf workloads and time skewjoin in each mode against DuckDB on the same files')
    .option('--suite <name>', 'quick (a few minutes), full (the published one), reference, skew or combiners', 'quick')
    .option('--out <dir>', 'folder for datasets and results (results.json, results.csv, report.html)', 'bench-out')
    .option('--workers <n>', 'worker threads for skewjoin and DuckDB', int('--workers'), 2)
    .option('--rows <n>', 'fact rows (default: quick 1,000,000; the other suites 5,000,000)', int('--rows'))
    .option('--keys <m>', 'keys (default: quick 100,000; the other suites 1,000,000)', int('--keys'))
    .option('--repeat <r>', 'runs per measurement (the median is reported)', int('--repeat'), 3)
    .option(
      '--simulate-workers <list>',
      'worker counts to plan each run for and schedule its measured tasks on, comma-separated, or "none"',
      workerList,
      [16, 64, 256],
    )
    .option('--s <list>', "only the workloads at these Zipf s, comma-separated (default: all of the suite's)", sList)
    .option(
      '--workloads <list>',
      'only the workloads whose name contains one of these, comma-separated (e.g. "full outer,aggregate")',
      (v: string) =>
        v
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean),
    )
    .option('--report-only <dir>', 'run nothing: draw report.html and charts/ again from <dir>/results.json')
    .addOption(
      new Option(
        '--engine <engine>',
        'spark: the skews AQE cannot split, on a local Spark, AQE alone against AQE with salting',
      )
        .choices(['local', 'spark'])
        .default('local'),
    )
    .action(async (o) => {
      // --engine is also the run's option: commander may give it to the program
      if (o.engine === 'spark' || program.opts().engine === 'spark') {
        setCode(await (await import('../spark/bench.js')).runSparkBench(o, out));
        return;
      }
      if (o.reportOnly) {
        const file = await (await import('../bench/report.js')).reportFromResults(o.reportOnly);
        if (!program.opts().quiet) out.write(`wrote ${file} and ${path.join(o.reportOnly, 'charts')}/\n`);
        setCode(0);
        return;
      }
      setCode(await (await import('../bench/bench.js')).runBench(o, out));
    });

  return program;
}

export async function main(
  argv: string[],
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Promise<number> {
  let code = 0;
  const program = buildProgram(out, err, (c) => {
    code = c;
  });
  try {
    await program.parseAsync(argv);
  } catch (e) {
    if (interrupted()) {
      // the interrupt handler reports and exits (cli/interrupt.ts)
    } else if (e instanceof CommanderError) {
      code = e.exitCode === 0 ? 0 : 2;
    } else if (e instanceof SkewjoinError) {
      err.write(`skewjoin: ${e instanceof PlanError ? 'plan error' : 'error'}: ${e.message}\n`);
      code = e.exitCode;
    } else {
      err.write(`skewjoin: internal error: ${(e as Error).message ?? e}\n`);
      if (process.env.SKEWJOIN_DEBUG) err.write(`${(e as Error).stack}\n`);
      code = 1;
    }
  } finally {
    await closePool();
  }
  return code;
}
