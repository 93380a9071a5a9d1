// Sampling a join side for hot keys (spark/hot.ts decides from the samples): row ranges spread over the side's
// row groups read here through our own engine when its files are local (counted per file, so that a key whose
// rows all sit in one file is found), else one query on Spark over a fraction of the side.
import { unmergeSplits } from '../plan/map-splits.js';
import type { BoundNode, FileSplit } from '../plan/bound.js';
import { children } from '../plan/fingerprint.js';
import type { LoadedPlan } from '../plan/load.js';
import { type Batch, type DataType, valueAt } from '../kernels/column.js';
import { formatDate, formatTimestamp } from '../io/output.js';
import { pruneColumns } from '../plan/prune.js';
import { col, literal, sparkType, str } from './lower-expr.js';
import type { Lowering } from './lower.js';
import { isUri } from '../plan/uri.js';
import type { HotKey } from './salt.js';

type Join = Extract<BoundNode, { kind: 'join' }>;
type Scan = Extract<BoundNode, { kind: 'scan' }>;
type Side = 'left' | 'right';

/** Rows a sample aims at: enough to see a key holding a few percent of a side to within a few percent. */
export const SAMPLE_ROWS = 64 * 1024;
/** Local sampling: row ranges spread evenly over the side (each file of more than 1/CLUSTERS of the rows gets one). */
const CLUSTERS = 32;
/** Decoded bytes per Parquet byte, at most (compression and encodings), for ruling out small sides. */
export const DECODED_PER_PARQUET_BYTE = 10;
/** Keys looked at per side: the most frequent of the sample. */
export const TOP_KEYS = 16;
/** Shuffle partitions Spark uses when the plan does not say (spark.sql.shuffle.partitions). */
export const SPARK_PARTITIONS = 200;

/** A sampled key: its values (our representation, or Spark's text), rows in the sample, whether they came from one file. */
interface SampledKey {
  key: HotKey['text'];
  sql: HotKey['sql'];
  rows: number;
  oneFile: boolean;
}
export interface Sample {
  keys: SampledKey[];
  /** the sample's rows (after the side's filters) */
  total: number;
  /** the share of the side's input rows sampled: a key's rows are estimated as its sample rows / fraction */
  fraction: number;
}

/** How one join side was sampled (stats.spark.sampling). */
export interface SamplingStat {
  join: string;
  side: Side;
  /** local: row ranges read here; spark: a query on Spark; skipped: see `reason` */
  method: 'local' | 'spark' | 'skipped';
  reason?: string;
  /** input rows the sample read (local: the ranges' rows; spark: all of the side's) */
  rowsRead: number;
  /** input rows of the side (of its largest scan, below a join) */
  sideRows: number;
  /** rows of the sample (after the side's filters) */
  sampleRows: number;
  fraction: number;
  /** files the local ranges came from */
  files?: number;
  ms: number;
  /** the Spark query (method spark) */
  sql?: string;
  hotKeys: number;
}

/** Runs a query on Spark and gives its rows as plain values (engine.ts). */
export type Query = (sql: string) => Promise<unknown[][]>;

/** The sides of a join whose hot keys AQE cannot split ('always'), or can only when spread over input files. */
export function saltableSides(j: Join): Record<Side, 'always' | 'oneFile'> | null {
  if (j.leftKeys.length === 0 || j.type === 'semi' || j.type === 'anti') return null;
  if (j.type === 'full') return { left: 'always', right: 'always' };
  if (j.type === 'left') return { left: 'oneFile', right: 'always' };
  if (j.type === 'right') return { left: 'always', right: 'oneFile' };
  return { left: 'oneFile', right: 'oneFile' };
}

/** Whether input_file_name() means something for a side's rows: scans, filters and projections only. */
export const fileLevel = (n: BoundNode): boolean =>
  n.kind === 'scan' || ((n.kind === 'filter' || n.kind === 'project' || n.kind === 'compute') && fileLevel(n.input));

export const scanOf = (n: BoundNode): Scan => (n.kind === 'scan' ? n : scanOf([...children(n)][0]));

/** Whether a scan's sizes are known (local files whose footers the binder read): false for a URI source. */
export const sized = (n: BoundNode): boolean =>
  n.kind === 'scan' ? n.splits.every((s) => !isUri(s.path)) : [...children(n)].every(sized);

export const scanBytes = (n: BoundNode): number =>
  n.kind === 'scan'
    ? n.splits.reduce((a, s) => a + s.bytes, 0)
    : [...children(n)].reduce((a, c) => a + scanBytes(c), 0);

/** Input rows of a side's largest scan (the rows a sample of it is a fraction of); 0 when unknown. */
export const scanRows = (n: BoundNode): number =>
  n.kind === 'scan' ? n.splits.reduce((a, s) => a + s.rows, 0) : Math.max(0, ...[...children(n)].map(scanRows));

/** A key value of ours as text (for --explain and the stats) and as a Spark literal of its column's type. */
export function keyOf(v: unknown, t: DataType): { text: string; sql: string } {
  if (t.id === 'decimal') return { text: String(v), sql: `CAST(${str(String(v))} AS ${sparkType(t)})` };
  const text =
    t.id === 'date32'
      ? formatDate(Number(v))
      : t.id === 'timestamp'
        ? formatTimestamp(BigInt(v as bigint), t.unit ?? 'microsecond', t.tz)
        : String(v);
  return { text, sql: literal(v as Parameters<typeof literal>[0], t) };
}

/**
 * Row ranges spread evenly over a scan's row groups: CLUSTERS ranges of SAMPLE_ROWS /
 * CLUSTERS rows each, centred on evenly spaced rows of the whole scan, each inside one
 * split (all of the splits when they hold no more than SAMPLE_ROWS); null when a split's
 * rows are unknown (a URI, a file read whole).
 */
export function sampleRanges(merged: readonly FileSplit[]): FileSplit[] | null {
  // row groups merged into one map task (plan/map-splits.ts) sampled one row group at a time
  const splits = unmergeSplits(merged);
  if (splits.some((s) => s.wholeFile || isUri(s.path) || !(s.rows > 0) || s.rowGroups.length !== 1)) return null;
  const total = splits.reduce((a, s) => a + s.rows, 0);
  if (total <= SAMPLE_ROWS) return [...splits];
  const size = Math.floor(SAMPLE_ROWS / CLUSTERS);
  const out: FileSplit[] = [];
  let i = 0,
    start = 0; // splits[i] holds rows start .. start + rows of the scan
  for (let c = 0; c < CLUSTERS; c++) {
    const at = Math.floor(((c + 0.5) * total) / CLUSTERS);
    while (start + splits[i].rows <= at) start += splits[i++].rows;
    const s = splits[i];
    const len = Math.min(size, s.rows);
    const from = Math.max(0, Math.min(at - start - Math.floor(len / 2), s.rows - len));
    const prev = out.at(-1);
    const offset = (s.offset ?? 0) + from;
    // ranges of a small split may meet: never read a row twice
    if (prev && prev.path === s.path && prev.rowGroups[0] === s.rowGroups[0] && prev.offset! + prev.rows > offset) {
      const end = Math.max(prev.offset! + prev.rows, offset + len);
      prev.bytes = (prev.bytes / prev.rows) * (end - prev.offset!);
      prev.rows = end - prev.offset!;
      continue;
    }
    out.push({ path: s.path, rowGroups: s.rowGroups, rows: len, bytes: (s.bytes * len) / s.rows, offset });
  }
  return out;
}

/** The side with its scan's splits replaced (a file-level side: one scan under filters and projections). */
function withSplits(n: BoundNode, splits: FileSplit[]): BoundNode {
  if (n.kind === 'scan') return { ...n, splits };
  return { ...n, input: withSplits((n as { input: BoundNode }).input, splits) } as BoundNode;
}

/**
 * A count per `by` of `input` over `splits`, run here through our engine: on this thread (a sample is small), one
 * partition, no skew handling of its own. Null when our reader refuses a file or type: Spark samples instead (and
 * reports the error, if it has one).
 */
export async function countHere(
  lp: LoadedPlan,
  input: BoundNode,
  splits: FileSplit[],
  by: number[],
  id: string,
): Promise<Batch[] | null> {
  const { execute } = await import('../scheduler/execute.js');
  const root = pruneColumns({
    id,
    kind: 'aggregate',
    input: withSplits(input, splits),
    groupBy: by,
    aggs: [{ fn: 'count', col: -1, as: '__n', type: { id: 'int64' } }],
    schema: [
      ...by.map((k, i) => ({ name: `__k${i}`, type: input.schema[k].type })),
      { name: '__n', type: { id: 'int64' } },
    ],
  });
  try {
    const settings = { ...lp.settings, workers: 1, partitions: 1, inThreadBytes: Number.MAX_SAFE_INTEGER };
    const r = await execute(
      { ...lp, root, output: undefined, settings: { ...settings, skew: { ...lp.settings.skew, enabled: false } } },
      false,
    );
    return r.batches;
  } catch (e) {
    if (process.env.SKEWJOIN_DEBUG) process.stderr.write(`spark sample ${id}: local read failed: ${e}\n`);
    return null;
  }
}

/**
 * A local sample of a file-level side over local files: its row ranges (sampleRanges) run
 * through our engine on this thread, a count per key, one file at a time. Null when the
 * files cannot be sampled here (URIs, unknown row counts, a type or file our reader refuses).
 */
export async function localSample(
  lp: LoadedPlan,
  side: BoundNode,
  keys: number[],
): Promise<{ sample: Sample; rowsRead: number; sideRows: number; files: number } | null> {
  if (!fileLevel(side)) return null;
  const scan = scanOf(side);
  const ranges = sampleRanges(scan.splits);
  if (!ranges) return null;
  const byFile = new Map<string, FileSplit[]>();
  for (const r of ranges) byFile.set(r.path, [...(byFile.get(r.path) ?? []), r]);
  const types = keys.map((k) => side.schema[k].type);
  const counts = new Map<string, { key: string[]; sql: string[]; rows: number; files: number }>();
  let total = 0;
  for (const [, splits] of byFile) {
    const batches = await countHere(lp, side, splits, keys, `${side.id}.sample`);
    if (!batches) return null;
    for (const b of batches) {
      const n = b.columns[keys.length];
      for (let i = 0; i < b.length; i++) {
        const rows = Number(valueAt(n, i));
        total += rows;
        const vs = keys.map((_, c) => valueAt(b.columns[c], i));
        if (vs.some((v) => v === null)) continue; // null keys match nothing: never hot
        const ks = vs.map((v, c) => keyOf(v, types[c]));
        const id = JSON.stringify(ks.map((k) => k.sql));
        const e = counts.get(id);
        if (e) {
          e.rows += rows;
          e.files++;
        } else counts.set(id, { key: ks.map((k) => k.text), sql: ks.map((k) => k.sql), rows, files: 1 });
      }
    }
  }
  const rowsRead = ranges.reduce((a, s) => a + s.rows, 0);
  const all = scan.splits.reduce((a, s) => a + s.rows, 0);
  const top = [...counts.values()].sort((a, b) => b.rows - a.rows).slice(0, TOP_KEYS);
  return {
    sample: {
      total,
      fraction: rowsRead / all,
      keys: top.map((k) => ({ key: k.key, sql: k.sql, rows: k.rows, oneFile: k.files === 1 })),
    },
    rowsRead,
    sideRows: all,
    files: byFile.size,
  };
}

/**
 * The sampling query on Spark: a `fraction` of the side's rows, counted per key with the
 * grand total (the GROUPING SETS row whose grouping_id is not 0, first), and per key
 * whether its rows came from one input file. One shuffle; keys come back as text.
 */
function sampleSql(side: BoundNode, keys: number[], fraction: number, lowering: Lowering): string {
  // input_file_name() has a meaning (and is allowed) only over one scan's rows
  const file = fileLevel(side) ? 'input_file_name()' : "''";
  const where = fraction < 1 ? ` WHERE rand(42) < ${fraction}` : '';
  const ks = keys.map((_, i) => `k${i}`).join(', ');
  return (
    `SELECT ${keys.map((_, i) => `CAST(k${i} AS STRING)`).join(', ')}, n, one, g FROM (` +
    `SELECT ${ks}, COUNT(*) AS n, MIN(f) = MAX(f) AS one, grouping_id() AS g ` +
    `FROM (SELECT ${keys.map((k, i) => `${col(k)} AS k${i}`).join(', ')}, ${file} AS f ` +
    `FROM (${lowering.node(side)}) t${where}) t GROUP BY GROUPING SETS ((${ks}), ())) s ` +
    `ORDER BY g DESC, n DESC LIMIT ${TOP_KEYS + 1}`
  );
}

export async function sparkSample(
  side: BoundNode,
  keys: number[],
  query: Query,
  lowering: Lowering,
): Promise<{ sample: Sample; rowsRead: number; sideRows: number; sql: string }> {
  // the side's input rows: from the footers, else (a URI source) counted by Spark (Parquet footers only)
  let rows = sized(side) ? scanRows(side) : 0;
  if (!rows) rows = Number((await query(`SELECT COUNT(*) FROM (${lowering.node(side)}) t`))[0]?.[0] ?? 0);
  const fraction = Math.min(1, SAMPLE_ROWS / Math.max(1, rows));
  const sql = sampleSql(side, keys, fraction, lowering);
  const res = await query(sql);
  const nk = keys.length;
  const totalRow = res.find((r) => Number(r[nk + 2]) !== 0);
  const types = keys.map((k) => side.schema[k].type);
  const sample: Sample = {
    fraction,
    total: Number(totalRow?.[nk] ?? 0),
    keys: res
      .filter((r) => Number(r[nk + 2]) === 0 && r.slice(0, nk).every((v) => v !== null))
      .map((r) => ({
        key: r.slice(0, nk).map(String),
        sql: r
          .slice(0, nk)
          .map((v, c) =>
            types[c].id === 'utf8' ? str(String(v)) : `CAST(${str(String(v))} AS ${sparkType(types[c])})`,
          ),
        rows: Number(r[nk]),
        oneFile: r[nk + 1] === true,
      })),
  };
  return { sample, rowsRead: rows, sideRows: rows, sql };
}
