// The workloads of `skewjoin bench`: each suite's data sizes, plans, the same
// queries as DuckDB SQL, and the settings of each mode of skew handling measured.
import path from 'node:path';
import type { Overrides } from '../plan/load.js';
import type { Plan } from '../plan/spec.js';
import type { GenOptions } from './gen.js';

export interface BenchOptions {
  out: string;
  workers: number;
  repeat: number;
  suite: string;
  rows?: number;
  keys?: number;
  /** plan a run for each of these worker counts and schedule its tasks on them (default SIM_WORKERS; empty: none) */
  simulateWorkers?: number[];
  /** only the workloads at these Zipf s (default: all of the suite's) */
  s?: number[];
  /** only the workloads whose name contains one of these (case-insensitive; default: all) */
  workloads?: string[];
  /** runtime join filters in every mode's runs (`skewjoin --runtime-filters m bench`; default: the setting's) */
  runtimeFilters?: Overrides['runtimeFilters'];
}

/**
 * off, partition, key: skew handling off, by map ranges, by hot keys (combiners
 * on, eager aggregation off, so that the join itself is measured); auto:
 * everything on; no-combiners: raw rows through the aggregation shuffle. All
 * of these shuffle both sides of a join (broadcastBytes 0: the shuffle path is
 * what they measure); broadcast: auto with broadcast joins at the default threshold.
 */
export type Mode = 'off' | 'partition' | 'key' | 'auto' | 'no-combiners' | 'broadcast';

export interface Workload {
  name: string;
  s: number;
  data: Partial<GenOptions>;
  plan: (dir: string) => Plan;
  sql: (dir: string) => string;
  modes: Mode[];
  /** settings shared by the skewjoin modes */
  execution: Overrides;
}

function joinGroupBy(
  rightFile: string,
  rightCols: string[],
  groupBy: string,
  type: 'inner' | 'full' = 'inner',
): Pick<Workload, 'plan' | 'sql'> {
  const kw: Record<string, string> = { inner: 'JOIN', full: 'FULL OUTER JOIN' };
  return {
    plan: (dir) => ({
      version: 1,
      sources: { fact: { parquet: path.join(dir, 'fact.parquet') }, other: { parquet: path.join(dir, rightFile) } },
      query: {
        op: 'sort',
        by: [{ column: groupBy }],
        input: {
          op: 'aggregate',
          groupBy: [groupBy],
          aggregates: [
            { fn: 'count', as: 'n' },
            { fn: 'sum', column: 'amount', as: 'revenue' },
          ],
          input: {
            op: 'join',
            type,
            on: [['key', 'key']],
            left: { op: 'scan', source: 'fact', columns: ['key', 'amount'] },
            right: { op: 'scan', source: 'other', columns: rightCols },
          },
        },
      },
    }),
    sql: (dir) => `SELECT o.${groupBy}, count(*) AS n, sum(f.amount) AS revenue
      FROM read_parquet('${path.join(dir, 'fact.parquet')}') f ${kw[type]} read_parquet('${path.join(dir, rightFile)}') o ON f.key = o.key
      GROUP BY o.${groupBy} ORDER BY o.${groupBy} NULLS LAST`,
  };
}

function aggregateByKey(): Pick<Workload, 'plan' | 'sql'> {
  return {
    plan: (dir) => ({
      version: 1,
      sources: { fact: { parquet: path.join(dir, 'fact.parquet') } },
      query: {
        op: 'limit',
        count: 100,
        input: {
          op: 'sort',
          by: [{ column: 'n', desc: true }, { column: 'key' }],
          input: {
            op: 'aggregate',
            groupBy: ['key'],
            input: { op: 'scan', source: 'fact', columns: ['key', 'amount'] },
            aggregates: [
              { fn: 'count', as: 'n' },
              { fn: 'sum', column: 'amount', as: 'revenue' },
            ],
          },
        },
      },
    }),
    sql: (
      dir,
    ) => `SELECT key, count(*) AS n, sum(amount) AS revenue FROM read_parquet('${path.join(dir, 'fact.parquet')}')
      GROUP BY key ORDER BY n DESC, key LIMIT 100`,
  };
}

/** A running count and sum per key in id order (row_number and a cumulative sum), summed up for the comparison. */
function windowByKey(): Pick<Workload, 'plan' | 'sql'> {
  return {
    plan: (dir) => ({
      version: 1,
      sources: { fact: { parquet: path.join(dir, 'fact.parquet') } },
      query: {
        op: 'aggregate',
        groupBy: [],
        aggregates: [
          { fn: 'count', as: 'n' },
          { fn: 'sum', column: 'rn', as: 'rn' },
          { fn: 'sum', column: 'running', as: 'running' },
        ],
        input: {
          op: 'window',
          input: { op: 'scan', source: 'fact', columns: ['id', 'key', 'amount'] },
          partitionBy: ['key'],
          orderBy: [{ column: 'id' }],
          functions: [
            { fn: 'row_number', as: 'rn' },
            { fn: 'sum', column: 'amount', as: 'running' },
          ],
        },
      },
    }),
    sql: (dir) => `SELECT count(*) AS n, sum(rn) AS rn, sum(running) AS running FROM (
      SELECT row_number() OVER w AS rn, sum(amount) OVER w AS running
      FROM read_parquet('${path.join(dir, 'fact.parquet')}') WINDOW w AS (PARTITION BY key ORDER BY id))`,
  };
}

/** The window suite: a window partitioned by a Zipf key, its hot partitions split by ranges (auto) or not (off). */
function windowSuite(rows: number, keys: number, skewExec: Overrides): Workload[] {
  return [1.2, 0].map((s) => ({
    name: 'window by key',
    s,
    data: { rows, keys, s },
    ...windowByKey(),
    modes: ['off', 'auto'],
    execution: skewExec,
  }));
}

/**
 * The sort suite: ORDER BY a Zipf key, at s = 1.8 (key 0 holds about half the rows) and 0. With skew handling off
 * the hot key's rows stay in one range (one sort task holds them); auto deals them over several ranges
 * (physical/sort/range.ts). The key alone is scanned, so that rows of equal keys are the same in any order; a budget
 * of 32 MB sizes the sort's tasks (about 2 MB each) so that the ranges run as several tasks.
 */
function sortSuite(rows: number, keys: number): Workload[] {
  return [1.8, 0].map((s) => ({
    name: 'sort by key',
    s,
    data: { rows, keys, s },
    plan: (dir) => ({
      version: 1,
      sources: { fact: { parquet: path.join(dir, 'fact.parquet') } },
      query: { op: 'sort', by: [{ column: 'key' }], input: { op: 'scan', source: 'fact', columns: ['key'] } },
    }),
    sql: (dir) => `SELECT key FROM read_parquet('${path.join(dir, 'fact.parquet')}') ORDER BY key`,
    modes: ['off', 'auto'],
    execution: { memoryLimit: 32 * MB },
  }));
}

export const MB = 1024 * 1024;
const S_VALUES = [0, 0.8, 1, 1.2, 1.5];

/** The five workloads of the skew benchmark over every s, at a given size. */
function skewSuite(
  rows: number,
  keys: number,
  execution: Overrides,
  rowGroup: { rowGroupSize?: number } = {},
): Workload[] {
  const m2m = { rows: Math.round(rows / 20), keys: Math.round(keys / 10), m2mRows: 500, ...rowGroup };
  const fact = { rows, keys, ...rowGroup };
  return S_VALUES.flatMap(
    (s) =>
      [
        {
          name: 'fact⋈dim',
          s,
          data: { ...fact, s },
          ...joinGroupBy('dim.parquet', ['key', 'region'], 'region'),
          modes: ['off', 'partition', 'key', 'auto', 'broadcast'],
          execution,
        },
        {
          name: 'many-to-many',
          s,
          data: { ...m2m, s },
          ...joinGroupBy('m2m.parquet', ['key', 'grp'], 'grp'),
          modes: ['off', 'partition', 'key', 'auto'],
          execution,
        },
        {
          name: 'aggregate by key',
          s,
          data: { ...fact, s },
          ...aggregateByKey(),
          modes: ['no-combiners', 'auto'],
          execution,
        },
        {
          name: 'hot key, one mapper',
          s,
          data: { ...fact, s, sorted: true },
          ...joinGroupBy('dim.parquet', ['key', 'region'], 'region'),
          modes: ['off', 'partition', 'key', 'auto', 'broadcast'],
          execution,
        },
        {
          name: 'full outer',
          s,
          data: { ...fact, s },
          ...joinGroupBy('dim.parquet', ['key', 'region'], 'region', 'full'),
          modes: ['off', 'partition', 'key', 'auto'],
          execution,
        },
      ] as Workload[],
  );
}

/** The quick suite's fact rows and keys unless --rows and --keys say otherwise. */
const QUICK_ROWS = 1_000_000,
  QUICK_KEYS = 100_000;

export function suites(o: BenchOptions): Record<string, Workload[]> {
  const rows = o.rows ?? 5_000_000,
    keys = o.keys ?? 1_000_000;
  /** Skew settings scaled to these data sizes (the defaults, 256 MB and 64 MB, are for larger inputs). */
  const skewExec: Overrides = {
    partitions: 64,
    skew: { factor: 2, thresholdBytes: 2 * MB, advisoryPartitionBytes: 4 * MB },
  };
  return {
    reference: [
      {
        name: 'join+groupby',
        s: 1,
        data: { rows, keys, s: 1 },
        ...joinGroupBy('dim.parquet', ['key', 'region'], 'region'),
        modes: ['auto', 'broadcast'],
        execution: {},
      },
    ],
    skew: skewOnlySuite(rows, keys, skewExec),
    combiners: combinersSuite(rows, keys),
    window: windowSuite(rows, keys, skewExec),
    // the sorted keys come back as rows for the comparison with DuckDB: 2M unless --rows says otherwise
    sort: sortSuite(o.rows ?? 2_000_000, keys),
    // thresholds scale with the data: about the mean partition, the target task twice that
    // and row groups of an eighth of the fact table, so that map ranges have map outputs to cut at any size
    // 1M rows: at 300K a reduce task held ~5K rows and the pool's per-task cost hid what splitting saves
    quick: skewSuite(
      o.rows ?? QUICK_ROWS,
      o.keys ?? QUICK_KEYS,
      {
        partitions: 32,
        skew: {
          factor: 2,
          thresholdBytes: Math.max(4096, ((o.rows ?? QUICK_ROWS) * 16) / 32),
          advisoryPartitionBytes: Math.max(8192, ((o.rows ?? QUICK_ROWS) * 32) / 32),
        },
      },
      { rowGroupSize: Math.max(1024, Math.ceil((o.rows ?? QUICK_ROWS) / 8)) },
    ),
    full: skewSuite(rows, keys, skewExec),
  };
}

/** The skew suite: fact ⋈ dim at s = 1.2 and 0, and a many-to-many join at 1.2. */
function skewOnlySuite(rows: number, keys: number, skewExec: Overrides): Workload[] {
  return [1.2, 0].flatMap(
    (s) =>
      [
        {
          name: 'fact⋈dim',
          s,
          data: { rows, keys, s },
          ...joinGroupBy('dim.parquet', ['key', 'region'], 'region'),
          modes: ['off', 'partition', 'key', 'broadcast'],
          execution: skewExec,
        },
        ...(s > 0
          ? [
              {
                name: 'many-to-many',
                s,
                data: { rows: Math.round(rows / 10), keys: Math.round(keys / 10), s, m2mRows: 1000 },
                ...joinGroupBy('m2m.parquet', ['key', 'grp'], 'grp'),
                modes: ['off', 'partition', 'key'],
                execution: skewExec,
              },
            ]
          : []),
      ] as Workload[],
  );
}

/** The combiners suite: aggregations with and without partial aggregation before the shuffle. */
function combinersSuite(rows: number, keys: number): Workload[] {
  return [
    {
      name: 'aggregate by key',
      s: 1.2,
      data: { rows, keys, s: 1.2 },
      ...aggregateByKey(),
      modes: ['auto', 'no-combiners'],
      execution: {},
    },
    {
      name: 'many-to-many join+groupby',
      s: 1,
      data: { rows: Math.round(rows * 0.4), keys: Math.round(keys / 10), s: 1, m2mRows: 20000 },
      ...joinGroupBy('m2m.parquet', ['key', 'grp'], 'grp'),
      modes: ['auto'],
      execution: {},
    },
  ];
}

/**
 * A mode's settings. inThreadBytes 0: every timed run takes the worker pool whatever its size (runtime/local.ts
 * keeps small inputs on the calling thread, one thread, where skew handling has nothing to balance).
 */
export function modeOverrides(mode: Mode, execution: Overrides, workers: number): Overrides {
  const base0 = { ...execution, inThreadBytes: 0 };
  if (mode === 'broadcast') return { ...base0, workers, skew: { ...base0.skew, enabled: true, strategy: 'auto' } };
  const base = { ...base0, broadcastBytes: 0 };
  if (mode === 'no-combiners')
    return { ...base, workers, combiners: false, skew: { ...base.skew, enabled: true, strategy: 'auto' } };
  if (mode === 'auto') return { ...base, workers, skew: { ...base.skew, enabled: true, strategy: 'auto' } };
  return {
    ...base,
    workers,
    eagerAggregation: false,
    skew: mode === 'off' ? { enabled: false } : { ...base.skew, enabled: true, strategy: mode },
  };
}
