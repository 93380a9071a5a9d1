// Finding the hot keys of the joins that Spark's AQE cannot split, by a sampling
// query on Spark per join side: the top keys of a random sample, their share of the
// sample, and how many input files their rows came from.
import type { BoundNode } from '../plan/bound.js';
import type { LoadedPlan } from '../plan/load.js';
import type { DataType } from '../kernels/column.js';
import { col } from './lower-expr.js';
import { Lowering } from './lower.js';
import type { HotKey, SaltPlan } from './salt.js';

type Join = Extract<BoundNode, { kind: 'join' }>;
type Side = 'left' | 'right';

/** Parquet bytes a sampling query reads about (the rest of a side is skipped by its random filter). */
const SAMPLE_BYTES = 8 * 1024 * 1024;
/** Decoded bytes per Parquet byte, at most (compression and encodings), for ruling out small sides. */
const DECODED_PER_PARQUET_BYTE = 10;
/** Keys looked at per side: the most frequent of the sample. */
const TOP_KEYS = 16;
/** Shuffle partitions Spark uses when the plan does not say (spark.sql.shuffle.partitions). */
const SPARK_PARTITIONS = 200;

/** A sampled key: rows in the sample, input files they came from. */
interface SampledKey {
  key: string | null;
  rows: number;
  files: number;
}
interface Sample {
  keys: SampledKey[];
  total: number;
  fraction: number;
}

/** Runs a query on Spark and gives its rows as plain values (engine.ts). */
export type Query = (sql: string) => Promise<unknown[][]>;

/** The sides of a join whose hot keys AQE cannot split ('always'), or can only when spread over input files. */
function saltableSides(j: Join): Record<Side, 'always' | 'oneFile'> | null {
  if (j.leftKeys.length !== 1 || j.type === 'semi' || j.type === 'anti') return null;
  if (j.type === 'full') return { left: 'always', right: 'always' };
  if (j.type === 'left') return { left: 'oneFile', right: 'always' };
  if (j.type === 'right') return { left: 'always', right: 'oneFile' };
  return { left: 'oneFile', right: 'oneFile' };
}

/** Whether input_file_name() means something for a side's rows: scans, filters and projections only. */
const fileLevel = (n: BoundNode): boolean =>
  n.kind === 'scan' || ((n.kind === 'filter' || n.kind === 'project' || n.kind === 'compute') && fileLevel(n.input));

const scanBytes = (n: BoundNode): number =>
  n.kind === 'scan'
    ? n.splits.reduce((a, s) => a + s.bytes, 0)
    : n.kind === 'join'
      ? scanBytes(n.left) + scanBytes(n.right)
      : 'input' in n
        ? scanBytes(n.input)
        : 0;

const rowBytes = (n: BoundNode) =>
  n.schema.reduce((a, f) => a + (f.type.id === 'utf8' ? 24 : f.type.id === 'decimal' ? 16 : 8), 0);

function sampleSql(side: BoundNode, key: number, fraction: number, lowering: Lowering): string {
  // input_file_name() has a meaning (and is allowed) only over one scan's rows
  const file = fileLevel(side) ? 'input_file_name()' : "''";
  const where = fraction < 1 ? ` WHERE rand(42) < ${fraction}` : '';
  return (
    `SELECT key, n, files, total FROM (SELECT CAST(k AS STRING) AS key, COUNT(*) AS n, COUNT(DISTINCT f) AS files, ` +
    `SUM(COUNT(*)) OVER () AS total ` +
    `FROM (SELECT ${col(key)} AS k, ${file} AS f FROM (${lowering.node(side)}) t${where}) t ` +
    `GROUP BY k) s ORDER BY n DESC LIMIT ${TOP_KEYS}`
  );
}

/**
 * The hot keys of a sample by the plan's skew rule, as AQE tests a partition: the key
 * alone holds more than `factor` times the median partition's rows (the rows of the
 * keys that are not hot, spread over the partitions), and its estimated bytes exceed
 * `thresholdBytes`.
 */
function hotKeys(s: Sample, side: BoundNode, lp: LoadedPlan, mode: 'always' | 'oneFile'): HotKey[] {
  const { factor, thresholdBytes } = lp.settings.skew;
  const partitions = lp.settings.partitions ?? SPARK_PARTITIONS;
  if (s.total === 0) return [];
  const big = s.keys.filter((k) => k.key !== null && k.rows / s.total > 1 / partitions);
  const medianShare = Math.max(0, 1 - big.reduce((a, k) => a + k.rows, 0) / s.total) / partitions;
  return s.keys
    .filter(
      (k) =>
        k.key !== null &&
        k.rows >= 2 &&
        k.rows / s.total > factor * medianShare &&
        (k.rows / s.fraction) * rowBytes(side) > thresholdBytes &&
        (mode === 'always' || (k.files === 1 && fileLevel(side))),
    )
    .map((k) => ({ text: k.key!, rows: Math.round(k.rows / s.fraction) }));
}

/** Salt plans for the plan's joins: each join's side with the most hot rows, when it has any. */
export async function planSalting(lp: LoadedPlan, query: Query): Promise<Map<string, SaltPlan>> {
  const out = new Map<string, SaltPlan>();
  const { enabled, strategy } = lp.settings.skew;
  if (!enabled || strategy === 'partition') return out;
  const lowering = new Lowering(lp.root);
  const joins: Join[] = [];
  const walk = (n: BoundNode) => {
    if (n.kind === 'join') {
      joins.push(n);
      walk(n.left);
      walk(n.right);
    } else if ('input' in n) walk(n.input);
  };
  walk(lp.root);
  const partitions = lp.settings.partitions ?? SPARK_PARTITIONS;
  for (const j of joins) {
    const sides = saltableSides(j);
    if (!sides) continue;
    let best: SaltPlan | null = null,
      bestRows = 0;
    for (const side of ['left', 'right'] as const) {
      const node = side === 'left' ? j.left : j.right;
      const key = side === 'left' ? j.leftKeys[0] : j.rightKeys[0];
      // a side whose Parquet bytes, decoded, cannot reach the threshold has no hot key; nor has a
      // side AQE splits, unless a key's rows may sit in one file
      const bytes = scanBytes(node);
      if (bytes * DECODED_PER_PARQUET_BYTE <= lp.settings.skew.thresholdBytes) continue;
      if (sides[side] === 'oneFile' && !fileLevel(node)) continue;
      const fraction = Math.min(1, SAMPLE_BYTES / Math.max(1, bytes));
      const rows = await query(sampleSql(node, key, fraction, lowering));
      const sample: Sample = {
        fraction,
        total: Number(rows[0]?.[3] ?? 0),
        keys: rows.map((r) => ({ key: r[0] === null ? null : String(r[0]), rows: Number(r[1]), files: Number(r[2]) })),
      };
      const keys = hotKeys(sample, node, lp, sides[side]);
      if (process.env.SKEWJOIN_DEBUG)
        process.stderr.write(
          `spark sample ${j.id}.${side}: ${JSON.stringify({ ...sample, keys: sample.keys.slice(0, 3) })} ` +
            `-> ${keys.length} hot\n`,
        );
      const hotRows = keys.reduce((a, k) => a + k.rows, 0);
      if (keys.length && hotRows > bestRows) {
        const share = Math.max(...keys.map((k) => k.rows)) / (sample.total / fraction);
        const keyType: DataType = node.schema[key].type;
        best = { side, keys, buckets: Math.max(2, Math.min(64, Math.ceil(share * partitions))), keyType };
        bestRows = hotRows;
      }
    }
    if (best) out.set(j.id, best);
  }
  return out;
}
