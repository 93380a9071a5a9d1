// Finding the hot keys of the joins that Spark's AQE cannot split, from a small sample
// of each join side: the top keys, their share of the sample, and whether each one's
// rows came from one input file (AQE's split unit is one map task's block).
//
// Two ways to sample, cheapest first:
//  - local: the side is a scan (with filters, projections, computed columns) of local
//    Parquet files whose footers the binder read. A few small row ranges, spread evenly
//    over every file's row groups, are run through our own engine on this thread (the
//    side's filters and expressions, then a count per key), one file at a time so that
//    each key knows its files. No Spark job; the client reads those ranges only, never
//    the rows Spark computes on.
//  - spark: any other side (a URI source, a join or an aggregate below the join): one
//    query on Spark over a random fraction of the side (`rand(42) < f`), its keys counted
//    in one aggregation with the grand total (GROUPING SETS) and, per key, whether its
//    rows came from one file (MIN(file) = MAX(file)). It reads the side's key column in full.
//
// Every key found is a key of the side itself (the sample is a subset of its rows): the
// salted join relies on that (salt.ts).
import type { BoundNode } from '../plan/bound.js';
import type { LoadedPlan } from '../plan/load.js';
import { children } from '../plan/fingerprint.js';
import { Lowering } from './lower.js';
import { type SaltDecision, saltOrAqe } from './decide.js';
import type { HotKey, SaltPlan } from './salt.js';
import {
  DECODED_PER_PARQUET_BYTE,
  fileLevel,
  localSample,
  type Query,
  saltableSides,
  type Sample,
  SAMPLE_ROWS,
  sampleRanges,
  type SamplingStat,
  scanBytes,
  scanRows,
  sized,
  SPARK_PARTITIONS,
  sparkSample,
  TOP_KEYS,
} from './sample.js';

export type { Query, SamplingStat };
export { SAMPLE_ROWS, sampleRanges };

type Join = Extract<BoundNode, { kind: 'join' }>;

const rowBytes = (n: BoundNode) =>
  n.schema.reduce((a, f) => a + (f.type.id === 'utf8' ? 24 : f.type.id === 'decimal' ? 16 : 8), 0);

/**
 * The hot keys of a sample by the plan's skew rule, as AQE tests a partition: the key
 * alone holds more than `factor` times the median partition's rows (the rows of the
 * keys that are not hot, spread over the partitions), and its estimated bytes exceed
 * `thresholdBytes`.
 */
export function hotKeys(
  s: Sample,
  side: BoundNode,
  lp: LoadedPlan,
  mode: 'always' | 'oneFile',
  partitions: number,
): HotKey[] {
  const { factor, thresholdBytes } = lp.settings.skew;
  if (s.total === 0) return [];
  const big = s.keys.filter((k) => k.rows / s.total > 1 / partitions);
  const medianShare = Math.max(0, 1 - big.reduce((a, k) => a + k.rows, 0) / s.total) / partitions;
  return s.keys
    .filter(
      (k) =>
        k.rows >= 2 &&
        k.rows / s.total > factor * medianShare &&
        (k.rows / s.fraction) * rowBytes(side) > thresholdBytes &&
        (mode === 'always' || (k.oneFile && fileLevel(side))),
    )
    .map((k) => ({ text: k.key, sql: k.sql, rows: Math.round(k.rows / s.fraction) }));
}

/** The copied side's estimated rows of a hot key: a key not among its sampled top keys has at most the least of them. */
function copiedRowsOf(k: HotKey, copied: Sample): number {
  const hit = copied.keys.find((c) => c.key.join('\u0000') === k.text.join('\u0000'));
  if (hit) return hit.rows / copied.fraction;
  return copied.keys.length >= TOP_KEYS ? Math.min(...copied.keys.map((c) => c.rows)) / copied.fraction : 0;
}

/**
 * The most salts that keep the copied side's growth per hot key within the rows the salt spreads: a hot key with
 * `h` rows on the split side and `c` on the copied side gets its `c` rows copied N times, N - 1 extra copies of
 * at most `h` rows, so N <= 1 + h / c.
 */
function copyBound(keys: HotKey[], copied: Sample): number {
  let bound = Number.POSITIVE_INFINITY;
  for (const k of keys) {
    const c = copiedRowsOf(k, copied);
    if (c > 0) bound = Math.min(bound, Math.floor(1 + k.rows / c));
  }
  return bound;
}

/**
 * Whether an aggregation above the join (through filters, projections and computed columns) groups by the
 * join's keys of one side: AQE's join leaves its output partitioned by them, the salted join (on `__j`) does not.
 */
function groupedByKey(root: BoundNode, j: Join): boolean {
  const nl = j.left.schema.length;
  const keySets = [j.leftKeys, j.rightKeys.map((k) => nl + k)];
  // the column of `n` (index `c`) traced down to the join's output, or -1 when it is computed or the path leaves
  const trace = (n: BoundNode, c: number): number => {
    if (n === j) return c;
    if (n.kind === 'filter') return trace(n.input, c);
    if (n.kind === 'project') return trace(n.input, n.indices[c]);
    if (n.kind === 'compute') return c < n.input.schema.length ? trace(n.input, c) : -1;
    return -1;
  };
  let found = false;
  const walk = (n: BoundNode) => {
    if (n.kind === 'aggregate' && n.groupBy.length) {
      const cols = new Set(n.groupBy.map((g) => trace(n.input, g)));
      if (keySets.some((ks) => ks.every((k) => cols.has(k)))) found = true;
    }
    for (const c of children(n)) walk(c);
  };
  walk(root);
  return found;
}

/** Every join of a plan, top down. */
function joinsOf(root: BoundNode): Join[] {
  const joins: Join[] = [];
  const walk = (n: BoundNode) => {
    if (n.kind === 'join') {
      joins.push(n);
      walk(n.left);
      walk(n.right);
    } else if ('input' in n) walk(n.input);
  };
  walk(root);
  return joins;
}

/** How `auto` decided for a join with hot keys (stats.spark.decisions, --explain): salted or AQE alone, and why. */
export interface JoinDecision {
  join: string;
  salted: boolean;
  reason: string;
}

/** The cores Spark runs on (decide.ts clusterCores), null when unknown. */
export type Cores = { cores: number; from: string } | null;
/** Cores assumed when the server does not say (a standalone cluster's own cores). */
const ASSUMED_CORES = 8;

/**
 * Salt plans for the plan's joins (each join's side with the most hot rows, when it has any and saltOrAqe says
 * it pays), how each side was sampled, and each decision. `partitions`: the shuffle partitions Spark will use
 * (the plan's, else the server's spark.sql.shuffle.partitions); `cores`: the cores it runs tasks on.
 */
export async function planSalting(
  lp: LoadedPlan,
  query: Query,
  partitions = lp.settings.partitions ?? SPARK_PARTITIONS,
  cores: Cores = null,
): Promise<{ plans: Map<string, SaltPlan>; sampling: SamplingStat[]; decisions: JoinDecision[] }> {
  const plans = new Map<string, SaltPlan>();
  const sampling: SamplingStat[] = [];
  const decisions: JoinDecision[] = [];
  const { enabled, strategy } = lp.settings.skew;
  if (!enabled || strategy === 'partition') return { plans, sampling, decisions };
  const lowering = new Lowering(lp.root);
  for (const j of joinsOf(lp.root)) {
    const sides = saltableSides(j);
    if (!sides) continue;
    let best: SaltPlan | null = null,
      bestRows = 0,
      splitRows = 0;
    const samples: Partial<Record<'left' | 'right', Sample>> = {};
    for (const side of ['left', 'right'] as const) {
      const got = await sampleSide(lp, j, side, sides[side], query, lowering, sampling, partitions);
      if (!got) continue;
      const { found, total } = got;
      samples[side] = got.sample;
      const hotRows = found.reduce((a, k) => a + k.rows, 0);
      if (found.length && hotRows > bestRows) {
        const share = Math.max(...found.map((k) => k.rows)) / total;
        best = { side, keys: found, buckets: Math.max(2, Math.min(64, Math.ceil(share * partitions))) };
        bestRows = hotRows;
        splitRows = total;
      }
    }
    if (!best) continue;
    const copied = samples[copiedSide(best.side)];
    if (copied) best.buckets = Math.max(2, Math.min(best.buckets, copyBound(best.keys, copied)));
    const d = decide(lp, j, best, splitRows, copied, cores, strategy);
    decisions.push({ join: j.id, salted: d.salt, reason: d.reason });
    if (d.salt) plans.set(j.id, best);
  }
  return { plans, sampling, decisions };
}

/** saltOrAqe (decide.ts) for one join's salt plan, from the samples' estimates. */
function decide(
  lp: LoadedPlan,
  j: Join,
  best: SaltPlan,
  splitRows: number,
  copied: Sample | undefined,
  cores: Cores,
  strategy: 'auto' | 'key',
): SaltDecision {
  const copiedNode = best.side === 'left' ? j.right : j.left;
  const hot = best.keys.reduce((a, k) => (k.rows > a.rows ? k : a));
  const copiedRows = copied
    ? copied.total / copied.fraction
    : sized(copiedNode) && scanRows(copiedNode) > 0
      ? scanRows(copiedNode)
      : splitRows;
  return saltOrAqe({
    strategy,
    cores: cores?.cores ?? ASSUMED_CORES,
    coresFrom: cores?.from ?? `not given by the server: assumed ${ASSUMED_CORES}, set SKEWJOIN_SPARK_CORES`,
    splitRows,
    copiedRows,
    hotRows: hot.rows,
    // a copied side not sampled (small, or keys alone): one row per key assumed
    copiedPerHot: copied ? copiedRowsOf(hot, copied) : 1,
    exactCheck: j.type === 'full' || j.type === copiedSide(best.side),
    groupByKey: groupedByKey(lp.root, j),
  });
}

const copiedSide = (split: 'left' | 'right') => (split === 'left' ? 'right' : 'left');

/**
 * One side of a join sampled for hot keys (locally when its files are, else by a query on Spark), recorded in
 * `sampling`; null when the side is skipped (too small, split by AQE, or keys alone).
 */
async function sampleSide(
  lp: LoadedPlan,
  j: Join,
  side: 'left' | 'right',
  mode: 'always' | 'oneFile',
  query: Query,
  lowering: Lowering,
  sampling: SamplingStat[],
  partitions: number,
): Promise<{ found: ReturnType<typeof hotKeys>; total: number; sample: Sample } | null> {
  const node = side === 'left' ? j.left : j.right;
  const keys = side === 'left' ? j.leftKeys : j.rightKeys;
  const skip = (reason: string) => {
    sampling.push({
      join: j.id,
      side,
      method: 'skipped',
      reason,
      rowsRead: 0,
      sideRows: 0,
      sampleRows: 0,
      fraction: 0,
      ms: 0,
      hotKeys: 0,
    });
    return null;
  };
  // a side whose Parquet bytes, decoded, cannot reach the threshold has no hot key; nor has a
  // side AQE splits, unless a key's rows may sit in one file
  if (sized(node) && scanBytes(node) * DECODED_PER_PARQUET_BYTE <= lp.settings.skew.thresholdBytes)
    return skip('too small to reach skew.thresholdBytes');
  if (mode === 'oneFile' && !fileLevel(node)) return skip('AQE splits it (not a scan: its rows are not in one file)');
  // the salt spreads a hot key's rows by their other columns: a side of keys alone cannot be spread
  if (node.schema.length === keys.length) return skip('no column beside the keys to spread a hot key by');
  const t0 = performance.now();
  const local = await localSample(lp, node, keys);
  const got = local ?? { ...(await sparkSample(node, keys, query, lowering)), files: undefined };
  const ms = performance.now() - t0;
  const found = hotKeys(got.sample, node, lp, mode, partitions);
  sampling.push({
    join: j.id,
    side,
    method: local ? 'local' : 'spark',
    rowsRead: got.rowsRead,
    sideRows: got.sideRows,
    sampleRows: got.sample.total,
    fraction: got.sample.fraction,
    ...(got.files !== undefined ? { files: got.files } : {}),
    ...('sql' in got ? { sql: got.sql } : {}),
    ms,
    hotKeys: found.length,
  });
  if (process.env.SKEWJOIN_DEBUG)
    process.stderr.write(
      `spark sample ${j.id}.${side} (${local ? 'local' : 'spark'}, ${ms.toFixed(0)} ms): ` +
        `${JSON.stringify({ ...got.sample, keys: got.sample.keys.slice(0, 3) })} -> ${found.length} hot\n`,
    );
  return { found, total: got.sample.total / got.sample.fraction, sample: got.sample };
}
