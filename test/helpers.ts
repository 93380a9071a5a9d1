// Test helpers: DuckDB as the oracle, temporary folders, and a canonical
// form of result rows so that both engines' answers compare as multisets.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { expect } from 'vitest';
import { runPlan, type RunOptions } from '../dist/index.js';

export const ROOT = path.resolve(import.meta.dirname, '..');
export const BIN = path.join(ROOT, 'bin', 'skewjoin.js');

export function tmpDir(prefix = 'sj-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

let con: DuckDBConnection | null = null;
export async function duck(): Promise<DuckDBConnection> {
  if (!con) con = await (await DuckDBInstance.create(':memory:')).connect();
  return con;
}

/** Run SQL in DuckDB (statements without results). */
export async function sql(text: string): Promise<void> {
  await (await duck()).run(text);
}

/** Write the result of a DuckDB query to a Parquet file. */
export async function writeParquet(file: string, query: string, rowGroupSize = 1000): Promise<string> {
  await sql(`COPY (${query}) TO '${file}' (FORMAT parquet, ROW_GROUP_SIZE ${rowGroupSize})`);
  return file;
}

export type Row = unknown[];

function canon(v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : Number.isNaN(v) ? 'NaN' : v.toPrecision(10);
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'object' && v && 'toString' in v) return String(v);
  return v;
}

/** Rows of a DuckDB query, each value in canonical form. */
export async function duckRows(query: string): Promise<Row[]> {
  const r = await (await duck()).runAndReadAll(query);
  return (r.getRowsJS() as unknown[][]).map((row) => row.map(canon));
}

export const sorted = (rows: Row[]) => [...rows].sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));

/**
 * Run a plan with skewjoin, write its result to Parquet with skewjoin's
 * writer, and read it back through DuckDB, so both engines' values take the same form.
 */
/**
 * Comparisons run their tasks on the worker pool (inThreadBytes 0), so that
 * moving and sharing data between threads is what they test; direct runPlan
 * calls on small test data run on the calling thread.
 */
const POOL: RunOptions = { inThreadBytes: 0 };

export async function ourRows(plan: object, opts: RunOptions = {}, dir = tmpDir()): Promise<Row[]> {
  const out = path.join(dir, `out-${Math.random().toString(36).slice(2)}.parquet`);
  const r = await runPlan({ ...plan, output: { path: out } }, { baseDir: dir, ...POOL, ...opts });
  expect(r.outputPath).toBe(out);
  return duckRows(`SELECT * FROM read_parquet('${out}')`);
}

/** Compare skewjoin's result with DuckDB's as multisets (or in order). */
export async function expectSame(plan: object, query: string, opts: RunOptions = {}, ordered = false) {
  const [ours, theirs] = await Promise.all([ourRows(plan, opts), duckRows(query)]);
  if (ordered) expect(ours).toEqual(theirs);
  else expect(sorted(ours)).toEqual(sorted(theirs));
  return ours;
}

export function cli(args: string[], cwd = ROOT) {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd, encoding: 'utf8', env: { ...process.env, SKEWJOIN_DEBUG: '' } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

export function writePlan(dir: string, plan: object, name = 'plan.json'): string {
  const f = path.join(dir, name);
  fs.writeFileSync(f, JSON.stringify(plan, null, 2));
  return f;
}

/**
 * Compare as multisets inside DuckDB (EXCEPT ALL both ways): for results too
 * large to compare row by row in JavaScript. Returns skewjoin's row count.
 */
export async function expectSameInDuck(plan: object, query: string, opts: RunOptions = {}): Promise<number> {
  const dir = tmpDir();
  const out = path.join(dir, 'ours.parquet');
  const r = await runPlan({ ...plan, output: { path: out } }, { baseDir: dir, ...POOL, ...opts });
  const ours = `read_parquet('${out}')`;
  const [[diff, n, m]] = await duckRows(`SELECT
    (SELECT count(*) FROM (SELECT * FROM ${ours} EXCEPT ALL SELECT * FROM (${query}))) +
    (SELECT count(*) FROM (SELECT * FROM (${query}) EXCEPT ALL SELECT * FROM ${ours})),
    (SELECT count(*) FROM ${ours}), (SELECT count(*) FROM (${query}))`);
  expect({ rows: Number(n), differing: Number(diff) }).toEqual({ rows: Number(m), differing: 0 });
  expect(r.numRows).toBe(Number(n));
  fs.rmSync(dir, { recursive: true, force: true });
  return r.numRows;
}
