// Map tasks sized by bytes, not by row groups: a Parquet row group much larger than
// the map stage's target task is read as several map tasks over row ranges
// (parquet-wasm's offset and limit), so that a file of a few big row groups still
// spreads over every worker the plan is sized for; consecutive row groups of one
// file much smaller than the target (DuckDB's 122,880 rows, Polars', a file
// appended to in small batches) are read by one task, up to the target, so that
// their fixed costs are paid once.
import { children } from './fingerprint.js';
import type { BoundNode, FileSplit } from './bound.js';
import { TASKS_PER_WORKER } from './defaults.js';
import { rangeCuts } from '../io/parquet-walk.js';

/** No row-range split smaller than this: below it a task's fixed costs (opening, the footer, dispatch) dominate. */
const MIN_MAP_SPLIT_BYTES = 1024 * 1024;

/**
 * Row groups are merged into a task up to this many bytes at most (the footer's row group sizes): about a row group
 * of `skewjoin gen`'s writer (500,000 rows of lineitem, 12.5 MB), whose tasks are what the map stages were tuned on;
 * a larger task decodes more before its first batch leaves and holds more at once.
 */
const MAX_MERGED_BYTES = 16 * 1024 * 1024;

/**
 * The splits of one scan sized to a target: target = the scan's bytes over TASKS_PER_WORKER tasks per worker (the
 * aim of reduce coalescing too), at least `minBytes`. A row group of more than twice the target is cut into row
 * ranges of about the target (no more than `cuts` says its pages allow); consecutive row groups of one file are
 * merged while they stay within the scan's bytes over TASKS_PER_WORKER tasks per worker (without the floor) and
 * MAX_MERGED_BYTES (not when `merge` is false).
 */
export function rowRangeSplits(
  splits: readonly FileSplit[],
  workers: number,
  minBytes = MIN_MAP_SPLIT_BYTES,
  merge = true,
  cuts: (s: FileSplit) => number | null = () => null,
): FileSplit[] {
  const total = splits.reduce((s, x) => s + x.bytes, 0);
  const target = Math.max(minBytes, total / (TASKS_PER_WORKER * workers), 1);
  // merged up to the scan's share a task without the floor of `minBytes`: a small file's row groups stay apart
  const share = Math.max(total / (TASKS_PER_WORKER * workers), 1);
  const merged = merge ? mergeFileSplits(splits, Math.min(share, MAX_MERGED_BYTES)) : splits;
  return merged.flatMap((s) => {
    if (s.wholeFile || s.rowGroups.length !== 1 || s.offset !== undefined || s.bytes <= 2 * target) return [s];
    // no finer than the row group's pages allow (a range decodes every page holding one of its rows)
    const n = Math.min(Math.ceil(s.bytes / target), s.rows, cuts(s) ?? Infinity);
    if (n <= 1) return [s];
    return Array.from({ length: n }, (_, i) => {
      const start = Math.floor((i * s.rows) / n),
        end = Math.floor(((i + 1) * s.rows) / n);
      return {
        path: s.path,
        rowGroups: s.rowGroups,
        rows: end - start,
        bytes: (s.bytes * (end - start)) / s.rows,
        offset: start,
      };
    });
  });
}

/** A Parquet split's row group: how finely its pages let it be cut (see io/parquet-walk.ts rangeCuts). */
const pageCuts = (s: FileSplit) => (s.csv || s.wholeFile ? null : rangeCuts(s.path, s.rowGroups[0]));

/**
 * Every scan of a bound plan with its row groups split or merged for `workers` (see rowRangeSplits); a plan with a
 * limit keeps its row groups apart (a limit skips the tasks it does not need).
 */
export function splitScans(node: BoundNode, workers: number, minBytes = MIN_MAP_SPLIT_BYTES): BoundNode {
  const merge = !hasLimit(node);
  return mapSplits(node, (splits) => rowRangeSplits(splits, workers, minBytes, merge, pageCuts));
}

/** The plan with every scan's splits replaced by `f` of them. */
function mapSplits(node: BoundNode, f: (splits: readonly FileSplit[]) => FileSplit[]): BoundNode {
  switch (node.kind) {
    case 'scan':
      return { ...node, splits: f(node.splits) };
    case 'join':
      return { ...node, left: mapSplits(node.left, f), right: mapSplits(node.right, f) };
    case 'union':
      return { ...node, inputs: node.inputs.map((n) => mapSplits(n, f)) };
    case 'values':
      return node;
    default:
      return { ...node, input: mapSplits(node.input, f) } as BoundNode;
  }
}

/** A split of whole row groups (not a row range, not a whole file): one that can join its neighbours. */
const plain = (x: FileSplit) => !x.wholeFile && x.offset === undefined && x.rowGroups.length > 0;

/**
 * A scan's row groups of one file read by one task, up to `capBytes` a task:
 * what a run on the calling thread takes (runtime/local.ts). Its tasks run one
 * after another there, so several tasks only add fixed costs: each task's
 * partial aggregate, with a `count_distinct`, repeats most of the groups of
 * the others, and every task's output is partitioned and merged again. Row
 * ranges (offset) and whole-file splits stay as they are.
 */
const groupRowsOf = (s: FileSplit) => s.groupRows ?? (s.rowGroups.length === 1 ? [s.rows] : null);

/** Merged splits taken apart again into one split a row group (where their rows a row group are known). */
export function unmergeSplits(splits: readonly FileSplit[]): FileSplit[] {
  return splits.flatMap((s) =>
    s.rowGroups.length > 1 && s.groupRows?.length === s.rowGroups.length
      ? s.rowGroups.map((g, i) => ({
          path: s.path,
          rowGroups: [g],
          rows: s.groupRows![i],
          bytes: (s.bytes * s.groupRows![i]) / s.rows,
        }))
      : [s],
  );
}

export function mergeFileSplits(splits: readonly FileSplit[], capBytes: number): FileSplit[] {
  const out: FileSplit[] = [];
  for (const s of splits) {
    const last = out.at(-1);
    if (last && plain(last) && plain(s) && last.path === s.path && last.bytes + s.bytes <= capBytes) {
      const a = groupRowsOf(last),
        b = groupRowsOf(s);
      out[out.length - 1] = {
        ...last,
        ...(a && b ? { groupRows: [...a, ...b] } : {}),
        rowGroups: [...last.rowGroups, ...s.rowGroups],
        rows: last.rows + s.rows,
        bytes: last.bytes + s.bytes,
      };
    } else {
      out.push(s);
    }
  }
  return out;
}

/**
 * Every scan of a bound plan with its row groups merged per file (see mergeFileSplits); a plan with a limit is left as
 * it is (a limit skips the tasks it does not need).
 */
export function mergeScans(node: BoundNode, capBytes: number): BoundNode {
  return hasLimit(node) ? node : mapSplits(node, (splits) => mergeFileSplits(splits, capBytes));
}

const hasLimit = (n: BoundNode): boolean => n.kind === 'limit' || [...children(n)].some(hasLimit);
