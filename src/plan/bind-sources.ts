// A plan's sources resolved to files (paths against the plan's folder, globs expanded, URIs passed to Spark) and
// their Parquet footers read: columns, row groups, sizes (plan/bind.ts binds the query over them).
import fs from 'node:fs';
import path from 'node:path';
import { type SparkSources, isUri } from './uri.js';
import { globFiles, isPattern } from './glob.js';
import { InputError, PlanError, jsonPath } from '../errors.js';
import { type FileInfo, inspectParquet } from '../io/parquet.js';
import { type Field, typeName } from '../kernels/column.js';
import { type CsvFile, type CsvOptions, inspectCsv } from '../io/csv-infer.js';

type P = (string | number)[];

/** A source's file: its Parquet footer's facts, or a CSV file's columns and chunks (one "row group" each). */
type SourceFile = FileInfo & { csv?: CsvFile };

export interface SourceInfo {
  name: string;
  files: SourceFile[];
}

/** A file read as CSV: any file of a CSV source, and a `.csv` file given to a Parquet source or by --data. */
export const isCsvPath = (f: string) => /\.csv$/i.test(f);

/**
 * The files of a source: paths resolved against `baseDir`, globs expanded. A URI stays as
 * it is (Spark reads it), and so does a glob that matches nothing here when Spark is to find
 * the files missing here (`spark.missing`).
 */
export async function resolveSourceFiles(
  pattern: string | string[],
  baseDir: string,
  at: P,
  spark?: SparkSources,
): Promise<string[]> {
  const list = Array.isArray(pattern) ? pattern : [pattern];
  const out: string[] = [];
  for (let i = 0; i < list.length; i++) {
    if (isUri(list[i])) {
      out.push(list[i]);
      continue;
    }
    const abs = path.resolve(baseDir, list[i]);
    if (await isPattern(list[i])) {
      const found = await globFiles(abs);
      if (found.length === 0 && spark?.missing) out.push(abs);
      else if (found.length === 0) {
        // Missing input data (exit 3), not a plan mistake; the message still names the field.
        throw new InputError(
          `${jsonPath(Array.isArray(pattern) ? [...at, i] : at)}: glob "${list[i]}" matches no file`,
          abs,
        );
      }
      out.push(...found);
    } else {
      out.push(abs);
    }
  }
  return out;
}

/**
 * A source file Spark reads itself: a URI, or (`spark.missing`) a local path not found
 * here, which Spark may find (a cluster's mount; a glob), as an unencoded `file:` URI
 * (Hadoop's Path parses it). Its columns come from Spark; its row groups and sizes are unknown.
 */
async function uriInfo(name: string, f: string, workers: number, spark?: SparkSources): Promise<FileInfo | null> {
  const local = !isUri(f);
  if (local && spark?.localRefused)
    throw new PlanError(`sources.${name}`, `${f} is a path on this machine: ${spark.localRefused}`);
  if (local && (!spark?.missing || fs.existsSync(f))) return null;
  if (!spark)
    throw new InputError(`source "${name}": ${f} is a URI, which only --engine spark reads (Spark reads it itself)`, f);
  const uri = local ? `file://${f}` : f;
  return {
    path: uri,
    columns: await spark.schema(uri, workers),
    rowGroupRows: [0],
    rowGroupBytes: [0],
    wholeFile: true,
  };
}

export async function loadSource(
  name: string,
  files: string[],
  workers: number,
  spark?: SparkSources,
  csv?: CsvOptions,
): Promise<SourceInfo> {
  // a file's error names the source it belongs to, which may be one of several or an override's
  const named = (e: unknown) =>
    e instanceof InputError && !e.message.startsWith('source "')
      ? new InputError(`source "${name}": ${e.message}`, e.file, e.column)
      : e;
  // CSV files in order: the first one's columns are the others'
  let like: Field[] | undefined;
  const csvFiles = new Map<string, SourceFile>();
  for (const f of files) {
    if (!csv && !isCsvPath(f)) continue;
    try {
      const c = inspectCsv(f, csv ?? {}, `sources.${name}`, like);
      like ??= c.columns;
      const bytes = c.chunks.map((x) => x.end - x.start);
      csvFiles.set(f, {
        path: f,
        columns: c.columns,
        rowGroupRows: c.chunks.map((x) => x.rows),
        rowGroupBytes: bytes,
        csv: c,
      });
    } catch (e) {
      throw named(e);
    }
  }
  const infos: SourceFile[] = await Promise.all(
    files.map(async (f) => {
      try {
        return csvFiles.get(f) ?? (await uriInfo(name, f, workers, spark)) ?? (await inspectParquet(f));
      } catch (e) {
        throw named(e);
      }
    }),
  );
  const first = infos[0];
  for (const info of infos.slice(1)) {
    for (const c of first.columns) {
      const d = info.columns.find((x) => x.name === c.name);
      if (!d)
        throw new InputError(
          `source "${name}": ${info.path} has no column "${c.name}" (found in ${first.path})`,
          info.path,
          c.name,
        );
      const a = typeof c.type === 'string' ? c.type : typeName(c.type);
      const b = typeof d.type === 'string' ? d.type : typeName(d.type);
      if (a !== b) {
        throw new InputError(
          `source "${name}": column "${c.name}" is ${a} in ${first.path} but ${b} in ${info.path}`,
          info.path,
          c.name,
        );
      }
    }
    if (info.columns.length !== first.columns.length) {
      const extra = info.columns.find((x) => !first.columns.some((c) => c.name === x.name))!;
      throw new InputError(
        `source "${name}": ${info.path} has column "${extra.name}" that ${first.path} lacks`,
        info.path,
        extra.name,
      );
    }
  }
  return { name, files: infos };
}
