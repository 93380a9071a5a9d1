// `skewjoin describe FILE` and a SQL `DESCRIBE ...` given as the query: the columns and types of a file as a
// plan reads them (sql/describe.ts), printed as a table or, with --json, JSON lines.
import fs from 'node:fs';
import type { Command } from 'commander';
import { formatTable, jsonLines } from '../io/output.js';

async function print(cols: { name: string; type: string }[], json: boolean, out: NodeJS.WritableStream) {
  const { descriptionBatch } = await import('../sql/describe.js');
  const { schema, batches } = descriptionBatch(cols);
  out.write(json ? jsonLines(schema, batches) : formatTable(schema, batches, Number.MAX_SAFE_INTEGER));
}

/** `skewjoin describe FILE`: a Parquet or CSV file's columns and types. */
export function addDescribeCommand(program: Command, out: NodeJS.WritableStream, setCode: (c: number) => void): void {
  program
    .command('describe')
    .description("print a Parquet or CSV file's columns and types (CSV: from its header and a sample)")
    .argument('<file>', 'a file, a glob or a folder (*.csv files are read as CSV)')
    .option('--csv', 'read the file as CSV whatever its name')
    .option('--delimiter <c>', 'CSV: the field delimiter (default ",")')
    .option('--no-header', 'CSV: the first line is data; columns are named column0, column1, ...')
    .option('--json', 'JSON lines instead of a table')
    .action(async (file: string, o: { csv?: boolean; delimiter?: string; header: boolean; json?: boolean }) => {
      const { describeFile } = await import('../sql/describe.js');
      const asCsv = o.csv || o.delimiter !== undefined || !o.header;
      const csv = asCsv
        ? { header: o.header, ...(o.delimiter !== undefined ? { delimiter: o.delimiter } : {}) }
        : undefined;
      await print(await describeFile(file, { fromCommandLine: true, csv }), !!o.json, out);
      setCode(0);
    });
}

/**
 * A SQL `DESCRIBE ...` as the run's query (`skewjoin sql "DESCRIBE 'f.csv'"`, a .sql file): printed, and the exit
 * code; undefined for any other query or plan.
 */
export async function describeQuery(
  planFile: string,
  query: string | undefined,
  f: { source?: Record<string, string | string[]>; data?: string; json?: boolean },
  out: NodeJS.WritableStream,
): Promise<number | undefined> {
  let text = planFile === 'sql' ? query : undefined;
  if (planFile.endsWith('.sql')) {
    try {
      text = fs.readFileSync(planFile, 'utf8');
    } catch {
      return undefined; // the run reports it
    }
  }
  if (text === undefined || !/^\s*describe\b/i.test(text)) return undefined;
  const { describeSql } = await import('../sql/describe.js');
  const cols = await describeSql(text, { sources: f.source, data: f.data, fromCommandLine: true });
  if (!cols) return undefined;
  await print(cols, !!f.json, out);
  return 0;
}
