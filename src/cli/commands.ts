// The subcommands of the command line (cli/main.ts): `lower` (the Spark SQL a
// plan becomes), `gen` (synthetic Zipf or TPC-H data) and `bench` (the skew
// benchmark against DuckDB). What each runs loads only when it is called.
import path from 'node:path';
import { type Command, Option } from 'commander';
import { GEN_DEFAULTS, TPCH_DEFAULTS } from '../bench/defaults.js';
import { PlanError } from '../errors.js';
import { assignment, int, num, sList, workerList } from './args.js';
import { type RunFlags, overridesOf, sqlPlan } from './run.js';

/** `skewjoin lower plan.json`: the Spark SQL and session settings of a plan. */
export function addLowerCommand(program: Command, out: NodeJS.WritableStream, setCode: (c: number) => void): void {
  program
    .command('lower')
    .description('print the Spark SQL and session settings that --engine spark sends for a plan')
    .argument('<plan>', 'the plan file, or a .sql file')
    .addOption(new Option('--to <target>', 'the target').choices(['spark']).default('spark'))
    .option(
      '--remote <url>',
      'the Spark Connect server that gives the schema of sources given as URIs (default: SPARK_REMOTE, else a local ' +
        'server)',
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
      // and the skew flags, which decide the hot window partitions lower splits
      const { skew, skewFactor, skewThreshold, skewStrategy, partitions } = g;
      const skewFlags = { skew, skewFactor, skewThreshold, skewStrategy, partitions };
      const flags = { ...skewFlags, ...o, param: o.param ?? g.param, source: o.source ?? g.source };
      // a .sql file compiles to a plan first, as for a run
      const sql = await sqlPlan(plan, undefined, flags);
      const overrides = sql ? { ...overridesOf(flags), sources: undefined } : overridesOf(flags);
      setCode(await (await import('../spark/cli.js')).lowerCommand(sql ?? plan, overrides, out, o.remote ?? g.remote));
    });
}

/** `skewjoin gen`: a synthetic Zipf dataset, or with --tpch the TPC-H tables. */
export function addGenCommand(program: Command, out: NodeJS.WritableStream, setCode: (c: number) => void): void {
  program
    .command('gen')
    .description(
      'write a synthetic Zipf dataset (fact.parquet, dim.parquet, optionally m2m.parquet), ' +
        'or with --tpch the eight TPC-H tables',
    )
    .option('--out <dir>', `output folder (default: ${GEN_DEFAULTS.out}, with --tpch: ${TPCH_DEFAULTS.out})`)
    .option('--tpch', 'write the TPC-H tables <out>/<table>.parquet at the scale factor --scale')
    .option(
      '--skew',
      "with --tpch: JCC-H's skew (dbgen -k): 5 hot customers hold 20% of the orders (the hottest 5%), 5 hot parts " +
        'and their 5 suppliers 20% of the line items (the hottest 5%), 5 hot dates 20% of the orders; the rest uniform',
    )
    .addOption(new Option('--jcch', 'the same as --skew').hideHelp())
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
      if ((o.skew || o.jcch) && !o.tpch) throw new PlanError('--skew', 'skews the TPC-H tables: give --tpch too');
      // the generators and the bench load only for their commands
      const files = o.tpch
        ? await (await import('../bench/tpch.js')).generateTpch({
            ...TPCH_DEFAULTS,
            scale: o.scale,
            skew: !!(o.skew || o.jcch),
            ...given,
          })
        : (await import('../bench/gen.js')).generate({ ...GEN_DEFAULTS, ...o, ...given, sorted: !!o.sorted });
      if (!program.opts().quiet) for (const f of files) out.write(`wrote ${f}\n`);
      setCode(0);
    });
}

/** `skewjoin bench`: the skew benchmark against DuckDB, or its report drawn again. */
export function addBenchCommand(program: Command, out: NodeJS.WritableStream, setCode: (c: number) => void): void {
  program
    .command('bench')
    .description('generate Zipf workloads and time skewjoin in each mode against DuckDB on the same files')
    .option(
      '--suite <name>',
      'quick (a few minutes), full (the published one), reference, skew, combiners, window or sort',
      'quick',
    )
    .option('--out <dir>', 'folder for datasets and results (results.json, results.csv, report.html)', 'bench-out')
    .option('--workers <n>', 'worker threads for skewjoin and DuckDB', int('--workers'), 2)
    .option(
      '--rows <n>',
      'fact rows (default: quick 1,000,000; sort 2,000,000; the other suites 5,000,000)',
      int('--rows'),
    )
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
      // the program's --runtime-filters applies to every mode's runs (default: the setting's default)
      const runtimeFilters = program.opts().runtimeFilters;
      setCode(await (await import('../bench/bench.js')).runBench({ ...o, runtimeFilters }, out));
    });
}
