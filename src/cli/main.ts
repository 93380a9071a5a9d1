// The command line: `skewjoin plan.json`, `skewjoin gen`, `skewjoin bench`.
// Exit codes: 0 success, 2 bad plan or arguments, 3 input data error, 1 other.
// The run's flags and what a run does are in cli/run.ts, the subcommands in
// cli/commands.ts, the option values' parsers in cli/args.ts.
import fs from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { OutputClosedError, PlanError, SkewjoinError } from '../errors.js';
import { OUTPUT_FORMATS } from '../plan/formats.js';
import { closePool } from '../runtime/pool.js';
import { assignment, int, num, size } from './args.js';
import { addBenchCommand, addGenCommand, addLowerCommand } from './commands.js';
import { interrupted } from './interrupt.js';
import { addDescribeCommand } from './describe.js';
import { type RunFlags, runCommand } from './run.js';

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
  skewjoin sql "SELECT count(*) FROM nation" --data data/tpch-sf1   tables from a folder
  skewjoin describe data/orders.csv               a file's columns and types
  skewjoin gen --rows 5000000 --keys 1000000 --s 1.2 --out data/zipf
  skewjoin gen --tpch --scale 1 --out data/tpch-sf1    the TPC-H tables, 6M line items
  skewjoin bench --suite quick --out bench-out     skew benchmark against DuckDB, with report.html

Exit codes: 0 success, 2 bad plan or arguments, 3 input data error, 1 other.`;

/** This package's version, from its package.json (dist/cli/ and dist/bundle/ both sit two folders below it). */
function packageVersion(): string {
  try {
    return JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;
  } catch {
    return '(unknown version)';
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
    .argument('[query]', 'after "sql": the SQL text');
  addRunOptions(program);
  program
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
  addLowerCommand(program, out, setCode);
  addGenCommand(program, out, setCode);
  addBenchCommand(program, out, setCode);
  addDescribeCommand(program, out, setCode);
  return program;
}

/** The options of a run (`skewjoin plan.json [options]`), in the order the help lists them. */
function addRunOptions(program: Command): void {
  program
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
    .option('--no-reorder', 'keep every join order as written (no join order by cost)')
    .addOption(
      new Option('--runtime-filters <mode>', "runtime join filters into the other side's scan (default off)").choices([
        'auto',
        'off',
        'bitmap',
        'bloom',
        'minmax',
      ]),
    )
    .option(
      '--broadcast-threshold <size>',
      'broadcast a join side at most this big (default 24MB; 0: never)',
      size('--broadcast-threshold'),
    )
    .option('--no-broadcast', 'never broadcast a join side: shuffle both')
    .option(
      '--memory-limit <size>',
      'budget for data held in memory ("4GB"); above it the query spills to disk (default: half the physical memory)',
      size('--memory-limit', true),
    )
    .option('--spill-dir <dir>', 'where spill files go (default: the OS temp folder)')
    .option('--param <NAME=VALUE>', 'value of a plan parameter (repeatable)', assignment('--param', false))
    .option(
      '--source <NAME=PATH>',
      'read source NAME from a file, glob or folder instead (repeatable; relative to the current folder)',
      assignment('--source', true),
    )
    .option(
      '--data <dir>',
      'bind every table the plan or query names (and --source does not) to DIR/name.parquet, DIR/name/ or DIR/name.csv',
    )
    .option('--explain', 'print the physical plan; with --analyze, run and print it with run figures')
    .option('--analyze', 'with --explain: run the query first')
    .option('--stats <file>', 'write run statistics as JSON to this file')
    .option('--json', 'print the result as JSON lines instead of a table')
    .option(
      '--output <path>',
      'write the result to this file (format from the extension, or --format); "-": stream CSV or JSON lines to standard output',
    )
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
      'with --engine spark: the Spark Connect server, sc://host:port[/;token=...] ' +
        '(default: SPARK_REMOTE, else a local server)',
    )
    .option(
      '--replace-output',
      "with --engine spark: replace the files of a URI output folder (Spark's INSERT OVERWRITE)",
    );
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
    } else if (e instanceof OutputClosedError) {
      // the reader of the output went away (`| head`): it has what it wanted (cli/interrupt.ts)
      code = 0;
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
