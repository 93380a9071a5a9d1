// The tables a query names: their files (--source / options.sources, or a
// path in FROM), their columns and types, and what the Parquet footers tell
// the planner: row counts, null counts and integer min/max per column.
import path from 'node:path';
import { type DataType, isInteger } from '../kernels/column.js';
import { inspectParquet } from '../io/parquet.js';
import { type ColStats, footerStats, maxOf, minOf } from '../io/parquet-stats.js';
import { dataFiles, dataTried, resolveSourceOverrides } from '../plan/sources.js';
import { isCsvPath, loadSource } from '../plan/bind-sources.js';
import type { CsvOptions } from '../io/csv-infer.js';
import type { SourceSpec } from '../plan/spec.js';
import { planTypeName } from '../expr/types.js';
import { InputError } from '../errors.js';

export type { ColStats };
export interface TableInfo {
  /** the plan's source name */
  source: string;
  files: string[];
  columns: { name: string; type: DataType | string }[];
  rows: number;
  stats: Map<string, ColStats>;
  /** CSV files: their options, for the plan's source */
  csv?: CsvOptions;
}

export class Catalog {
  private tables = new Map<string, TableInfo>();
  private paths = new Map<string, TableInfo>();
  constructor(
    private sources: Record<string, string | string[]>,
    private baseDir: string,
    private cli: boolean,
    /** `--data DIR` (`options.data`), absolute */
    private data?: string,
  ) {}

  names() {
    return [...new Set([...Object.keys(this.sources), ...this.tables.keys()])];
  }
  /** How to bind a table the query names that is not bound, and what --data tried. */
  bindHint(name: string): { how: string; tried: string } {
    const how = this.cli ? `--source ${name}=PATH or --data DIR` : 'options.sources or options.data';
    return { how, tried: this.data ? `; ${dataTried(this.data, name, this.cli)}` : '' };
  }
  table(name: string): TableInfo | undefined {
    return this.tables.get(name);
  }
  pathTable(p: string): TableInfo | undefined {
    return this.paths.get(p);
  }

  /** A table the query names: from `sources`, else from the `data` folder; nothing when neither has it. */
  async loadTable(name: string): Promise<void> {
    if (this.tables.has(name)) return;
    let files: string[] | null;
    if (name in this.sources) {
      const given = { [name]: this.sources[name] };
      files = (await resolveSourceOverrides([name], given, this.baseDir, this.cli)).get(name)!;
    } else files = this.data ? await dataFiles(this.data, name) : null;
    if (files) this.tables.set(name, await describe(name, files));
  }

  /**
   * `FROM 'data/*.parquet'`: a source named after the file (lineitem.parquet: lineitem), unique in the plan;
   * `csv`: read_csv's options (CSV whatever the name).
   */
  async loadPath(p: string, label: string, csv?: CsvOptions): Promise<void> {
    if (this.paths.has(p)) return;
    const files = (
      await resolveSourceOverrides(['path'], { path: p }, this.baseDir, this.cli).catch((e) => {
        if (!(e instanceof InputError)) throw e;
        throw new InputError(e.message.replace(/^(--source |options\.sources\.)path=[^:]*/, label), e.file);
      })
    ).get('path')!;
    let base =
      path
        .basename(p)
        .replace(/\.(parquet|csv)$/i, '')
        .replace(/[^A-Za-z0-9_]/g, '_') || 'file';
    if (/^_*$/.test(base)) base = 'file';
    const taken = new Set([...this.names(), ...[...this.paths.values()].map((t) => t.source)]);
    let source = base;
    for (let k = 2; taken.has(source); k++) source = `${base}_${k}`;
    this.paths.set(p, await describe(source, files, csv));
  }

  /** The plan's `sources`, for the tables and paths the query read. */
  planSources(used: Set<string>): Record<string, SourceSpec> {
    const out: Record<string, SourceSpec> = {};
    for (const t of [...this.tables.values(), ...this.paths.values()]) {
      if (!used.has(t.source)) continue;
      const files = t.files.length === 1 ? t.files[0] : t.files;
      out[t.source] = t.csv ? { csv: files, ...t.csv } : { parquet: files };
    }
    return out;
  }
}

/** A table of CSV files: columns and types (given or inferred), rows estimated, no statistics. */
async function describeCsv(source: string, files: string[], csv: CsvOptions): Promise<TableInfo> {
  if (files.some((f) => !isCsvPath(f)) && files.some(isCsvPath)) {
    throw new InputError(`table ${source} mixes CSV and Parquet files: ${files.join(', ')}`, files[0]);
  }
  const info = await loadSource(source, files, 1, undefined, csv);
  const first = info.files[0];
  const rows = info.files.reduce((s, f) => s + f.rowGroupRows.reduce((a, b) => a + b, 0), 0);
  const columns = first.columns as { name: string; type: DataType }[];
  const types = Object.fromEntries(columns.map((c) => [c.name, planTypeName(c.type)]));
  const opts: CsvOptions = { header: csv.header ?? true, delimiter: csv.delimiter ?? ',', columns: types };
  return { source, files, columns, rows, stats: new Map(), csv: opts };
}

async function describe(source: string, files: string[], csv?: CsvOptions): Promise<TableInfo> {
  if (csv || files.some(isCsvPath)) return describeCsv(source, files, csv ?? {});
  const first = await inspectParquet(files[0]);
  let rows = 0;
  const stats = new Map<string, ColStats>();
  for (const f of files) {
    const s = footerStats(f);
    rows += s.rows;
    for (const [k, v] of s.stats) {
      const p = stats.get(k);
      stats.set(k, p ? { nulls: p.nulls + v.nulls, min: minOf(p.min, v.min), max: maxOf(p.max, v.max) } : v);
    }
  }
  // min/max count as a range of values for integer and date columns only (not scaled decimals)
  for (const c of first.columns) {
    const s = stats.get(c.name);
    const ranged = typeof c.type !== 'string' && (isInteger(c.type) || c.type.id === 'date32');
    if (s && !ranged) stats.set(c.name, { nulls: s.nulls });
  }
  return { source, files, columns: first.columns, rows, stats };
}
