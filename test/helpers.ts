// Test helpers: DuckDB as the oracle, temporary folders, and a typed
// comparison of both engines' answers (column types, then exact values).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import * as arrow from 'apache-arrow';
import {
  DuckDBDateValue,
  DuckDBDecimalValue,
  DuckDBInstance,
  DuckDBTimestampMillisecondsValue,
  DuckDBTimestampNanosecondsValue,
  DuckDBTimestampSecondsValue,
  DuckDBTimestampTZValue,
  DuckDBTimestampValue,
  type DuckDBConnection,
  type DuckDBValue,
} from '@duckdb/node-api';
import { afterAll, expect } from 'vitest';
import { runPlan, type RunOptions, type RunResult } from '../dist/index.js';
import { groupRows } from '../dist/agg/groups.js';
import { buildKeys, normFor } from '../dist/kernels/keys.js';
import type { Column } from '../dist/kernels/column.js';

export const ROOT = path.resolve(import.meta.dirname, '..');
export const BIN = path.join(ROOT, 'bin', 'skewjoin.js');

const made: string[] = [];
// Each test file imports this module afresh (vitest isolates files): its folders go when its tests are done.
afterAll(() => {
  for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** A new folder in the OS temp folder, removed once the test file's tests are done. */
export function tmpDir(prefix = 'sj-'): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(d);
  return d;
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

/*
 * Typed comparison. Every result is read as (column types, rows of canonical values):
 *
 * - column types: DuckDB's type name for each column; for our results the Arrow
 *   type of `toArrow()` mapped to DuckDB's name (ARROW_TO_DUCK below). Types must be equal, except
 *   where the spec keeps a narrower type than DuckDB on purpose (TYPE_ALLOWANCES).
 * - values, read exactly: integers of every width as bigint text; DATE as DuckDB's
 *   text of the day number; TIMESTAMP (any unit) as DuckDB's text of the epoch count
 *   in that unit (DuckDB's typed readers: `.days`, `.micros`, `.millis`, `.nanos`,
 *   never a JS Date, which drops microseconds); DECIMAL as DuckDB's text of the scaled
 *   bigint (its scale is in the type); strings and booleans as they are; floats as
 *   numbers, the only values compared with a tolerance: FLOAT_RTOL relative (sums and
 *   averages differ in the last bits with the summing order).
 */
const FLOAT_RTOL = 1e-9;

/** Our Arrow type → DuckDB's type name. */
function arrowToDuck(t: arrow.DataType): string {
  if (arrow.DataType.isInt(t)) {
    const n = { 8: 'TINYINT', 16: 'SMALLINT', 32: 'INTEGER', 64: 'BIGINT' }[t.bitWidth as 8 | 16 | 32 | 64];
    return t.isSigned ? n : `U${n}`;
  }
  if (arrow.DataType.isFloat(t))
    return t.precision === arrow.Precision.SINGLE
      ? 'FLOAT'
      : t.precision === arrow.Precision.DOUBLE
        ? 'DOUBLE'
        : String(t);
  if (arrow.DataType.isBool(t)) return 'BOOLEAN';
  if (arrow.DataType.isUtf8(t) || arrow.DataType.isLargeUtf8(t)) return 'VARCHAR';
  if (arrow.DataType.isDate(t)) return 'DATE';
  if (arrow.DataType.isTimestamp(t)) {
    if (t.timezone) return 'TIMESTAMP WITH TIME ZONE';
    return ['TIMESTAMP_S', 'TIMESTAMP_MS', 'TIMESTAMP', 'TIMESTAMP_NS'][t.unit];
  }
  if (arrow.DataType.isDecimal(t)) return `DECIMAL(${t.precision},${t.scale})`;
  return `unmapped Arrow type ${String(t)}`;
}

/**
 * Where our type may differ from DuckDB's for the same SQL: DuckDB sums integers
 * into HUGEINT (128 bits); the spec keeps integer sums int64 and fails on overflow.
 */
const TYPE_ALLOWANCES: Record<string, string> = { HUGEINT: 'BIGINT' };
const sameType = (ours: string, theirs: string) => ours === theirs || TYPE_ALLOWANCES[theirs] === ours;

type Cell = null | string | number | boolean;

const DUCK_INTEGERS = new Set([
  'TINYINT',
  'SMALLINT',
  'INTEGER',
  'BIGINT',
  'UTINYINT',
  'USMALLINT',
  'UINTEGER',
  'UBIGINT',
  'HUGEINT',
  'UHUGEINT',
]);

/** A DuckDB value of a column of type `type` in canonical form (see above). */
function canonDuck(v: DuckDBValue, type: string): Cell {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number' && DUCK_INTEGERS.has(type)) return String(v);
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'string') return v;
  if (
    v instanceof DuckDBDateValue ||
    v instanceof DuckDBTimestampValue ||
    v instanceof DuckDBTimestampMillisecondsValue ||
    v instanceof DuckDBTimestampSecondsValue ||
    v instanceof DuckDBTimestampNanosecondsValue ||
    v instanceof DuckDBTimestampTZValue ||
    v instanceof DuckDBDecimalValue
  )
    return v.toString();
  throw new Error(`test helper: no canonical form for DuckDB value ${String(v)} (${v.constructor?.name})`);
}

export interface Typed {
  types: string[];
  rows: Row[];
}

/** Rows of a DuckDB query, typed: column types and canonical values. */
export async function duckTable(query: string): Promise<Typed> {
  const r = await (await duck()).runAndReadAll(query);
  const types = r.columnTypes().map((t) => t.toString());
  return { types, rows: r.getRows().map((row) => row.map((v, i) => canonDuck(v, types[i]))) };
}

/** Rows of a DuckDB query, each value in canonical form. */
export async function duckRows(query: string): Promise<Row[]> {
  return (await duckTable(query)).rows;
}

/** Little-endian two's-complement words of `bits` bits at value i of a byte view. */
function wideInt(bytes: Uint8Array, i: number, bits: number): bigint {
  const n = bits / 8;
  const view = new DataView(bytes.buffer, bytes.byteOffset + i * n, n);
  // 64-bit words, not bytes: the fuzzer's wide join results hold many decimals
  if (n === 16) return (view.getBigInt64(8, true) << 64n) | view.getBigUint64(0, true);
  if (n === 8) return view.getBigInt64(0, true);
  let v = 0n;
  for (let b = n - 1; b >= 0; b--) v = (v << 8n) | BigInt(bytes[i * n + b]);
  return BigInt.asIntN(bits, v);
}

/** One Arrow chunk's values in canonical form, read from its buffers (never through JS Dates). */
function canonArrow(d: arrow.Data): Cell[] {
  const t = d.type as arrow.DataType;
  const out: Cell[] = [];
  const raw = d.values as any;
  const bytes = raw ? new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength) : new Uint8Array(0);
  for (let i = 0; i < d.length; i++) {
    if (!d.getValid(i)) {
      out.push(null);
      continue;
    }
    const k = d.offset + i;
    if (arrow.DataType.isInt(t)) out.push(String(raw[k]));
    else if (arrow.DataType.isFloat(t)) out.push(Number(raw[k]));
    else if (arrow.DataType.isBool(t)) out.push(((raw[k >> 3] >> (k & 7)) & 1) === 1);
    else if (arrow.DataType.isUtf8(t) || arrow.DataType.isLargeUtf8(t)) {
      const o = d.valueOffsets as Int32Array | BigInt64Array;
      out.push(new TextDecoder().decode(raw.subarray(Number(o[k]), Number(o[k + 1]))));
    } else if (arrow.DataType.isDate(t)) {
      if (t.unit !== arrow.DateUnit.DAY) throw new Error('test helper: date64 result');
      out.push(new DuckDBDateValue(raw[k]).toString());
    } else if (arrow.DataType.isTimestamp(t)) {
      const v = wideInt(bytes, k, 64);
      const T = t.timezone
        ? DuckDBTimestampTZValue
        : [
            DuckDBTimestampSecondsValue,
            DuckDBTimestampMillisecondsValue,
            DuckDBTimestampValue,
            DuckDBTimestampNanosecondsValue,
          ][t.unit];
      if (t.timezone && t.unit !== arrow.TimeUnit.MICROSECOND)
        throw new Error('test helper: a time zone timestamp not in microseconds');
      out.push(new (T as any)(v).toString());
    } else if (arrow.DataType.isDecimal(t)) {
      out.push(new DuckDBDecimalValue(wideInt(bytes, k, t.bitWidth), t.precision, t.scale).toString());
    } else throw new Error(`test helper: no canonical form for Arrow type ${String(t)}`);
  }
  return out;
}

/** A result's Arrow table, typed: DuckDB's names for its column types, canonical values. */
export function arrowTyped(table: arrow.Table): Typed {
  const types = table.schema.fields.map((f) => arrowToDuck(f.type));
  const cols = table.schema.fields.map((_, c) => table.batches.flatMap((b) => canonArrow(b.data.children[c])));
  const rows = Array.from({ length: table.numRows }, (_, i) => cols.map((col) => col[i]));
  return { types, rows };
}

/** A sort key: exact for everything but floats, cut to 6 digits (the tolerance is checked pairwise after sorting). */
const rowKey = (r: Row) =>
  JSON.stringify(r.map((v) => (typeof v === 'number' ? (Number.isNaN(v) ? 'NaN' : Number(v.toPrecision(6))) : v)));
export const sorted = (rows: Row[]) =>
  [...rows].sort((a, b) => {
    const x = rowKey(a),
      y = rowKey(b);
    return x < y ? -1 : x > y ? 1 : 0;
  });

function floatClose(a: number, b: number): boolean {
  if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) && Number.isNaN(b);
  if (!Number.isFinite(a) || !Number.isFinite(b)) return a === b;
  return Math.abs(a - b) <= FLOAT_RTOL * Math.max(1, Math.abs(a), Math.abs(b));
}

/**
 * Expect two typed results to be equal: the same column types (see TYPE_ALLOWANCES) and
 * the same rows, as multisets or in order; floats within FLOAT_RTOL, everything else exact.
 */
export function expectTypedEqual(ours: Typed, theirs: Typed, ordered = false): void {
  const typesOk = ours.types.length === theirs.types.length && ours.types.every((t, i) => sameType(t, theirs.types[i]));
  if (!typesOk) expect(ours.types, "column types (ours, then DuckDB's)").toEqual(theirs.types);
  const a = ordered ? ours.rows : sorted(ours.rows),
    b = ordered ? theirs.rows : sorted(theirs.rows);
  expect(a.length, 'row count').toBe(b.length);
  const same = (x: Row, y: Row) =>
    x.length === y.length &&
    x.every((v, i) => {
      const w = y[i];
      if (typeof v === 'number' && typeof w === 'number') return floatClose(v, w);
      return v === w;
    });
  for (let i = 0; i < a.length; i++) {
    if (!same(a[i], b[i])) expect(a[i], `row ${i} of ${a.length}`).toEqual(b[i]);
  }
}

/** Run a plan with skewjoin; its result as `toArrow()` gives it, typed. */
/**
 * Comparisons run their tasks on the worker pool (inThreadBytes 0), so that
 * moving and sharing data between threads is what they test; direct runPlan
 * calls on small test data run on the calling thread.
 */
const POOL: RunOptions = { inThreadBytes: 0 };

/** Run a plan on the pool without writing its output: the result and its statistics. */
export async function ourRun(plan: object, opts: RunOptions = {}, dir = tmpDir()): Promise<RunResult> {
  return runPlan(plan, { baseDir: dir, writeOutput: false, ...POOL, ...opts });
}

async function ourTable(plan: object, opts: RunOptions = {}, dir = tmpDir()): Promise<Typed> {
  return arrowTyped((await ourRun(plan, opts, dir)).toArrow());
}

export async function ourRows(plan: object, opts: RunOptions = {}, dir = tmpDir()): Promise<Row[]> {
  return (await ourTable(plan, opts, dir)).rows;
}

/** Compare skewjoin's result with DuckDB's: column types, then rows as multisets (or in order). */
export async function expectSame(plan: object, query: string, opts: RunOptions = {}, ordered = false) {
  const [ours, theirs] = await Promise.all([ourTable(plan, opts), duckTable(query)]);
  expectTypedEqual(ours, theirs, ordered);
  return ours.rows;
}

export function cli(args: string[], cwd = ROOT) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, SKEWJOIN_DEBUG: '' },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

export function writePlan(dir: string, plan: object, name = 'plan.json'): string {
  const f = path.join(dir, name);
  fs.writeFileSync(f, JSON.stringify(plan, null, 2));
  return f;
}

/**
 * A Parquet file and a DuckDB query hold the same rows as multisets (EXCEPT ALL
 * both ways, inside DuckDB). Returns the file's row count.
 */
export async function expectFileMatchesQuery(file: string, query: string): Promise<number> {
  const ours = `read_parquet('${file}')`;
  const [[diff, n, m]] = await duckRows(`SELECT
    (SELECT count(*) FROM (SELECT * FROM ${ours} EXCEPT ALL SELECT * FROM (${query}))) +
    (SELECT count(*) FROM (SELECT * FROM (${query}) EXCEPT ALL SELECT * FROM ${ours})),
    (SELECT count(*) FROM ${ours}), (SELECT count(*) FROM (${query}))`);
  expect({ rows: Number(n), differing: Number(diff) }).toEqual({ rows: Number(m), differing: 0 });
  return Number(n);
}

/**
 * Compare as multisets inside DuckDB (EXCEPT ALL both ways): for results too
 * large to compare row by row in JavaScript. Column types are compared as in
 * expectSame; values exactly (no float tolerance: for join results, not sums). Returns skewjoin's row count.
 */
export async function expectSameInDuck(plan: object, query: string, opts: RunOptions = {}): Promise<number> {
  const dir = tmpDir();
  const out = path.join(dir, 'ours.parquet');
  const r = await runPlan({ ...plan, output: { path: out } }, { baseDir: dir, ...POOL, ...opts });
  const types = r.toArrow().schema.fields.map((f) => arrowToDuck(f.type));
  expectTypedEqual(
    { types, rows: [] },
    { types: (await duckTable(`SELECT * FROM (${query}) LIMIT 0`)).types, rows: [] },
  );
  const n = await expectFileMatchesQuery(out, query);
  expect(r.numRows).toBe(n);
  fs.rmSync(dir, { recursive: true, force: true });
  return r.numRows;
}

/** The hash grouping of some columns (what groupsOf does without its fast paths): the reference for those paths. */
export function hashGroups(cols: Column[], sel?: { idx: Int32Array; n: number }) {
  const keys = buildKeys(
    { length: cols[0].length, columns: cols },
    cols.map((_, i) => i),
    cols.map((c) => normFor(c.type)),
  );
  return groupRows(keys, sel);
}
