// Whether `skew.strategy: "auto"` salts a join's hot keys on Spark or leaves the join to
// AQE alone: one rule (saltOrAqe), from what is known before the query runs: the samples'
// estimates of the hot key and of both sides, the cluster's cores, the plan's shape.

/** What the decision is made from (rows are estimates from the samples, or the files' footers). */
export interface SaltCase {
  /** 'key' forces salting; 'auto' decides */
  strategy: 'auto' | 'key';
  /** the cores Spark runs tasks on, and where that number came from (shown in the reason) */
  cores: number;
  coresFrom: string;
  /** the split side's rows (the side whose hot key is spread over the salts) */
  splitRows: number;
  /** the copied side's rows (the side whose rows of a hot key are replicated once per salt) */
  copiedRows: number;
  /** the largest hot key's rows on the split side */
  hotRows: number;
  /** the copied side's rows of that hot key */
  copiedPerHot: number;
  /** an outer join whose preserved side is the copied one: the exactness check reads the split side once more */
  exactCheck: boolean;
  /** an aggregation grouped by the join's keys above the join: the salted join's output is shuffled again */
  groupByKey: boolean;
}

export interface SaltDecision {
  salt: boolean;
  reason: string;
  /** the estimated join stage time (in rows of work per core) with AQE alone and salted */
  aqeCost: number;
  saltCost: number;
}

/** Cores below which salting never pays: a stage's wall is bounded by its tasks' time over the cores, not its straggler. */
const MIN_SALT_CORES = 5;
/** The salted join's work against AQE's on the same rows: the `__j`/`__rep` columns, a wider shuffle, the copies. */
const SALT_OVERHEAD = 1.3;
/** The salted run's fixed cost in rows of join work: the sampling and the extra stage (~6 s at ~3 us a row). */
const SALT_FIXED_ROWS = 2_000_000;

const fmt = (n: number) =>
  n >= 1e9
    ? `${(n / 1e9).toFixed(1)}G`
    : n >= 1e6
      ? `${(n / 1e6).toFixed(1)}M`
      : n >= 1e4
        ? `${(n / 1e3).toFixed(0)}K`
        : `${Math.round(n)}`;

/**
 * Salt or AQE alone, by the figures of `skewjoin bench --engine spark` (docs/spark.md, "What we salt that
 * Spark does not": the salted and AQE-only runs' task times replayed on 4-64 simulated executors):
 *
 * - salting pays only where the hot key's task dominates its stage: the heavy copied side (a 66 s hot task of
 *   80 s of tasks) runs 1.8x faster salted from 8 executors on (38.6 s against 69.7 s), about even on 4, and
 *   worse on 2 cores (126 s against 75 s): on few cores a stage's wall is its tasks' time over the cores, which
 *   salting raises, not its straggler. Hence no salting below MIN_SALT_CORES (5) cores;
 * - elsewhere AQE alone is 1.2-1.3x better even on 16-64 executors (full outer hot key 12.3 s salted against
 *   10.2 s, the 4.3 s straggler it removed cost ~6 s of sampling, an extra stage and a wider shuffle: the
 *   fixed cost SALT_FIXED_ROWS at the ~3 us a row the straggler took; with a GROUP BY on the key after the
 *   join 11.6 s against 8.9 s: the salted join's output is shuffled once more);
 * - at 30M rows the full outer join's 21.4 s straggler against 90.6 s of tasks pays from about 5-8 executors.
 *
 * As a cost in rows of work per core: the hot key's task reads its h rows and the c copied rows and writes
 * h * c; the stage's work W is both sides' rows and the output (one row per split row for the other keys).
 * AQE alone takes max(hot task, W / cores); salted takes (1.3 W + the exactness check's read of the split
 * side + the output once more under a GROUP BY on the key) / cores + the fixed cost. Salt when that is less.
 */
export function saltOrAqe(c: SaltCase): SaltDecision {
  const per = Math.max(1, c.copiedPerHot);
  const hotOut = c.hotRows * per;
  const hotTask = c.hotRows + c.copiedPerHot + hotOut;
  const out = Math.max(0, c.splitRows - c.hotRows) + hotOut;
  const work = c.splitRows + c.copiedRows + out;
  const cores = Math.max(1, c.cores);
  const aqeCost = Math.max(hotTask, work / cores);
  const saltCost =
    (SALT_OVERHEAD * work + (c.exactCheck ? c.splitRows : 0) + (c.groupByKey ? out : 0)) / cores + SALT_FIXED_ROWS;
  const est =
    `hot key ~${fmt(c.hotRows)} of ${fmt(c.splitRows)} rows x ${fmt(c.copiedPerHot)} copied rows: a task of ~${fmt(hotTask)} ` +
    `rows of work against ~${fmt(work)} in the stage on ${c.cores} cores (${c.coresFrom})`;
  if (c.strategy === 'key')
    return { salt: true, reason: `skew.strategy "key" salts the hot keys (${est})`, aqeCost, saltCost };
  if (c.cores < MIN_SALT_CORES)
    return {
      salt: false,
      reason:
        `AQE alone: ${c.cores} cores (${c.coresFrom}), below the ${MIN_SALT_CORES} from which a hot key's task ` +
        `bounds its stage (salting raises the tasks' total time) (${est})`,
      aqeCost,
      saltCost,
    };
  const why = c.groupByKey ? ', the join grouped by its key after it (its output shuffled again)' : '';
  if (saltCost < aqeCost)
    return {
      salt: true,
      reason: `salted: est. ${fmt(saltCost)} rows per core salted against ${fmt(aqeCost)} with AQE alone${why} (${est})`,
      aqeCost,
      saltCost,
    };
  return {
    salt: false,
    reason: `AQE alone: est. ${fmt(aqeCost)} rows per core against ${fmt(saltCost)} salted${why} (${est})`,
    aqeCost,
    saltCost,
  };
}

/**
 * The cores a Spark application runs tasks on, from its settings (Spark Connect's Config): `override` (the
 * SKEWJOIN_SPARK_CORES environment variable or the library's option) first, then spark.default.parallelism,
 * the master's local[N] or local-cluster[n, c, m], spark.executor.instances x spark.executor.cores, a dynamic
 * allocation's maxExecutors x cores, spark.cores.max; null when none says (a standalone cluster's own cores).
 */
export function clusterCores(conf: Map<string, string>, override?: number): { cores: number; from: string } | null {
  if (override !== undefined && override > 0) return { cores: override, from: 'the given cores' };
  const num = (k: string) => {
    const n = Number(conf.get(k) ?? '');
    return conf.get(k) && Number.isInteger(n) && n > 0 ? n : undefined;
  };
  const par = num('spark.default.parallelism');
  if (par) return { cores: par, from: `spark.default.parallelism=${par}` };
  const master = conf.get('spark.master') ?? '';
  const local = /^local(?:\[(\d+|\*)(?:,\s*\d+)?\])?$/.exec(master);
  if (local && local[1] !== '*') return { cores: Number(local[1] ?? 1), from: `spark.master=${master}` };
  const lc = /^local-cluster\[\s*(\d+)\s*,\s*(\d+)\s*,/.exec(master);
  if (lc) return { cores: Number(lc[1]) * Number(lc[2]), from: `spark.master=${master}` };
  const per = num('spark.executor.cores') ?? 1;
  const inst = num('spark.executor.instances');
  if (inst) return { cores: inst * per, from: `spark.executor.instances=${inst} x ${per} cores` };
  const max =
    conf.get('spark.dynamicAllocation.enabled') === 'true' ? num('spark.dynamicAllocation.maxExecutors') : undefined;
  if (max) return { cores: max * per, from: `spark.dynamicAllocation.maxExecutors=${max} x ${per} cores` };
  const coresMax = num('spark.cores.max');
  if (coresMax) return { cores: coresMax, from: `spark.cores.max=${coresMax}` };
  return null;
}

/** The settings clusterCores reads (asked of the server once per run, with the others). */
export const CORE_SETTINGS = [
  'spark.default.parallelism',
  'spark.master',
  'spark.executor.cores',
  'spark.executor.instances',
  'spark.dynamicAllocation.enabled',
  'spark.dynamicAllocation.maxExecutors',
  'spark.cores.max',
];
