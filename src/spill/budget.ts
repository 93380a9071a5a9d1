// How `memoryLimit` is shared out. The accounting (spill/spiller.ts) sees the
// data the coordinator holds: shuffle blocks, sort runs, broadcast tables. It
// does not see the process itself: Node and the coordinator's modules, each
// worker thread's heap and WebAssembly memory (the Parquet decoder grows to
// its largest row group and never shrinks), and a running task's working set
// (hash table, output not yet handed back). Those are set aside first.
import type { SkewSettings } from '../plan/load.js';

/**
 * Set aside for the process (Node, the coordinator's heap, two started worker
 * threads' modules, the Parquet writer's WebAssembly memory): the RSS of a
 * 2-worker run 2 s in, before its first task, was 210 MB (a bare `node`: 40 MB).
 */
const PROCESS_ALLOWANCE = 224 * 1024 * 1024;
/**
 * Set aside per worker thread (its heap, Parquet decoder and the task it
 * runs): a 5M-row join, sort and Parquet write with a 50 MB data budget (1/10
 * of the scale) peaked at 562 MB whole-process RSS, 176 MB per worker
 * above that start.
 */
const WORKER_ALLOWANCE = 192 * 1024 * 1024;

/**
 * Bytes of data the coordinator may hold before it spills: the limit less the
 * allowances, but at least half the limit (a limit too small for them, as in
 * tests that force spills, keeps its proportions).
 */
export function dataBudget(memoryLimit: number, workers: number): number {
  return Math.max(memoryLimit / 2, memoryLimit - PROCESS_ALLOWANCE - workers * WORKER_ALLOWANCE);
}

/**
 * A running task's share of the data budget: what one join's build side, one
 * aggregation's partition or one sort range may hold (its hash table or
 * sort order and its output come on top, within the same order of size).
 */
export const taskShare = (budget: number, workers: number): number => budget / (2 * workers);

/**
 * Skew settings under a budget: a join's reduce task (its probe side, hash
 * table and output, all about the size of its input) is sized to a quarter of
 * a task's share, and a partition above half of it counts as skewed when it
 * also passes the skew factor. At the scale (1 GB, 2 workers) tasks of
 * the 64 MB default held up to 82 MB of probe rows and gave 85 MB of output each.
 */
export function budgetedSkew(skew: SkewSettings, share: number): SkewSettings {
  return {
    ...skew,
    advisoryPartitionBytes: Math.max(1, Math.min(skew.advisoryPartitionBytes, share / 4)),
    thresholdBytes: Math.max(1, Math.min(skew.thresholdBytes, share / 2)),
  };
}
