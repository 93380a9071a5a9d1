// `DESCRIBE 'file'` (and `skewjoin describe FILE`): the columns and types of a file, a glob, read_csv(...) or a
// table the query could name (--source, --data), as the plan would read them: Parquet from its footer, CSV from
// its header and a sample (io/csv-infer.ts).
import path from 'node:path';
import type { Batch, Column, Field } from '../kernels/column.js';
import { planTypeName } from '../expr/types.js';
import type { CsvOptions } from '../io/csv-infer.js';
import { Catalog, type TableInfo } from './catalog.js';
import type { SqlOptions } from './context.js';
import { sqlError } from './lexer.js';
import { parseDescribe } from './parser.js';
import type { RunResult } from '../api.js';
import { tableToArrow } from '../io/arrow.js';
import { type RowOptions, batchRows } from '../io/rows.js';
import { emptyStats } from '../physical/stats.js';

export interface ColumnDescription {
  name: string;
  /** the plan's type name (int64, float64, decimal(15,2), utf8, date, timestamp, bool, ...) */
  type: string;
}

const described = (t: TableInfo): ColumnDescription[] =>
  t.columns.map((c) => ({ name: c.name, type: typeof c.type === 'string' ? c.type : planTypeName(c.type) }));

const catalogOf = (o: SqlOptions) => {
  const baseDir = path.resolve(o.baseDir ?? '.');
  const data = o.data === undefined ? undefined : path.resolve(baseDir, o.data);
  return new Catalog(o.sources ?? {}, baseDir, o.fromCommandLine ?? false, data);
};

/** The columns of a file or glob (`csv`: read as CSV with these options whatever its name). */
export async function describeFile(
  file: string,
  options: SqlOptions & { csv?: CsvOptions } = {},
): Promise<ColumnDescription[]> {
  const catalog = catalogOf(options);
  await catalog.loadPath(file, file, options.csv);
  return described(catalog.pathTable(file)!);
}

/** The columns a `DESCRIBE ...` statement asks for; null when the text is another statement. */
export async function describeSql(text: string, options: SqlOptions = {}): Promise<ColumnDescription[] | null> {
  const item = parseDescribe(text);
  if (!item) return null;
  const catalog = catalogOf(options);
  if (item.k === 'path') {
    await catalog.loadPath(item.path, `line ${item.pos.line}, column ${item.pos.col}`, item.csv);
    return described(catalog.pathTable(item.path)!);
  }
  if (item.k !== 'table') throw sqlError(item.pos, 'DESCRIBE takes a path in quotes, read_csv(...) or a table name');
  await catalog.loadTable(item.name);
  const t = catalog.table(item.name);
  if (!t) {
    const { how, tried } = catalog.bindHint(item.name);
    throw sqlError(item.pos, `table "${item.name}" does not exist; bind it with ${how}${tried}`);
  }
  return described(t);
}

/** A description as a result: DuckDB's DESCRIBE columns `column_name`, `column_type`. */
export function descriptionBatch(cols: ColumnDescription[]): { schema: Field[]; batches: Batch[] } {
  const text = (xs: string[]): Column => {
    const bytes = xs.map((x) => Buffer.from(x, 'utf8'));
    const offsets = new Int32Array(xs.length + 1);
    bytes.forEach((b, i) => {
      offsets[i + 1] = offsets[i] + b.length;
    });
    return {
      type: { id: 'utf8' },
      length: xs.length,
      values: new Uint8Array(Buffer.concat(bytes)),
      offsets,
      valid: null,
    };
  };
  const schema: Field[] = [
    { name: 'column_name', type: { id: 'utf8' } },
    { name: 'column_type', type: { id: 'utf8' } },
  ];
  const batch = { length: cols.length, columns: [text(cols.map((c) => c.name)), text(cols.map((c) => c.type))] };
  return { schema, batches: [batch] };
}

/** A description as runSql's result (no task ran: empty statistics). */
export function descriptionResult(cols: ColumnDescription[], ms: number): RunResult {
  const { schema, batches } = descriptionBatch(cols);
  const stats = emptyStats(ms);
  return {
    schema,
    batches,
    numRows: cols.length,
    stats,
    toArrow: () => tableToArrow(schema, batches),
    toRows: (o?: RowOptions) => batchRows(schema, batches, o),
  };
}
