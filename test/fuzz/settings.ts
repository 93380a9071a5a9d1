// Random execution settings for the fuzzer, drawn so that every path runs some
// of the time: workers, partitions, skew handling with thresholds low enough to
// split on tiny data (each strategy), combiners and eager aggregation on or
// off, broadcasts off (every join shuffled), runs on the pool or the calling
// thread, memory budgets small enough to spill (grace joins, spilled shuffle
// blocks and sort runs), and now and then a worker that dies mid-task (a retry).
import type { RunOptions } from '../../dist/index.js';
import type { Rand } from './random.js';

export interface FuzzSettings {
  opts: RunOptions & { workers: number };
  /** SKEWJOIN_FAULTS for the run, '' for none */
  faults: string;
}

/** Crash rules for stages most plans have: the first task of each kind, once (rules that match nothing do nothing). */
const FAULTS = [
  'join-1:map:0',
  'join-1:reduce:0',
  'join-1:split:0',
  'aggregate-1:reduce:0',
  'aggregate-1:map:1',
  'sort-1:map:0',
  'join-2:reduce:1',
].map((r) => `crash:${r}:once`);

export function randomSettings(r: Rand, spillDir: string): FuzzSettings {
  const low = r.chance(0.6); // thresholds that make tiny partitions skewed
  const opts: FuzzSettings['opts'] = {
    workers: r.int(1, 3),
    ...(r.chance(0.7) ? { partitions: r.int(1, 8) } : {}),
    combiners: r.chance(0.6),
    eagerAggregation: r.chance(0.6),
    // runtime join filters chosen by the rule (off by default: plan/load.ts)
    runtimeFilters: 'auto',
    skew: {
      enabled: r.chance(0.85),
      strategy: r.pick(['auto', 'partition', 'key', 'key'] as const),
      ...(low
        ? {
            factor: r.pick([1, 1.5, 2]),
            thresholdBytes: r.pick([1, 64, 512]),
            advisoryPartitionBytes: r.pick([64, 256, 2048]),
          }
        : {}),
    },
    // 0: no broadcast, every equi-join shuffled (the tables are small enough to broadcast otherwise)
    ...(r.chance(0.5) ? { broadcastBytes: 0 } : {}),
    // 0: every task on the worker pool; else small inputs run on the calling thread
    ...(r.chance(0.8) ? { inThreadBytes: 0 } : {}),
    // 1 byte: every held block spills; 16-64 KB: some do, and reduce tasks are cut into grace pieces
    ...(r.chance(0.35) ? { memoryLimit: r.pick([1, 16384, 65536]), spillDir } : {}),
  };
  const faults = r.chance(0.12) ? r.some(FAULTS, 1, 3).join(',') : '';
  return { opts, faults };
}

/** SKEWJOIN_FUZZ_ONLY=558,675: the case numbers to run alone (to look at a failure again); empty: all. */
export function onlyCases(): number[] {
  return (process.env.SKEWJOIN_FUZZ_ONLY ?? '')
    .split(',')
    .filter((x) => x !== '')
    .map(Number);
}
