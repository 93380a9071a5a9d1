// The paths a fuzzed run took, read from its statistics, and the floor each
// must reach in the default run (300 plans; see belowFloors for other counts): a change
// that quietly routes plans around a path (every join broadcast again, no
// split, no spill, no retry) fails the fuzzer instead of passing it unexercised.
import type { Stats } from '../../dist/index.js';

export type PathCounts = Record<string, number>;

const JOIN_TYPES = ['inner', 'left', 'right', 'full', 'semi', 'anti'];

/** Add one run's paths to `counts`: joins by strategy and type, splits, spills, grace, eager aggregation, retries. */
export function countPaths(s: Stats, counts: PathCounts): void {
  const add = (k: string, n = 1) => {
    if (n > 0) counts[k] = (counts[k] ?? 0) + n;
  };
  for (const j of s.joins) {
    if (/^cross join/.test(j.reason)) add('cross join');
    else add(`${j.strategy} ${j.type}`);
    for (const x of j.splits) if (x.method !== 'none') add(`join split ${x.method}`);
  }
  for (const a of s.aggregates) {
    add('aggregate split two-level', a.splits.filter((x) => x.method === 'two-level').length);
  }
  add('split tasks', s.tasks.filter((t) => t.kind === 'split' && !/grace/.test(t.split ?? '')).length);
  add('plans spilling', s.spilledBytes > 0 ? 1 : 0);
  add('repeated subtrees held', (s.repeats ?? []).filter((r) => r.held).length);
  add('repeated subtrees not held', (s.repeats ?? []).filter((r) => !r.held).length);
  add('tasks reading spilled input', s.tasks.filter((t) => t.spillReadBytes > 0).length);
  const sortSpills = s.tasks.filter((t) => t.stage.startsWith('sort') && t.spilledBytes + t.spillReadBytes > 0);
  add('sort tasks spilling or reading spilled runs', sortSpills.length);
  add('grace join pieces', s.tasks.filter((t) => /grace piece/.test(t.split ?? '')).length);
  add('grace aggregate cuts', s.tasks.filter((t) => /grace (input|rows)/.test(t.split ?? '')).length);
  add('eager aggregations', s.eager.length);
  // plan rewrites, by the stages they name: an aggregate summed before its joins (plan/eager-push.ts), sibling
  // aggregates over one table computed as one (plan/siblings.ts)
  const named = new Set(s.tasks.map((t) => t.stage));
  add('aggregates summed before joins', [...named].filter((x) => /\.eager$/.test(x)).length);
  add('sibling aggregates merged', [...named].filter((x) => /\.siblings$/.test(x)).length);
  add('retried tasks', s.tasks.filter((t) => t.attempt > 1 && t.error === undefined).length);
  add('plans in the calling thread', s.inThread ? 1 : 0);
  add('scan tasks reading conjuncts as masks', s.tasks.filter((t) => (t.masks ?? 0) > 0).length);
  // runtime join filters (physical/join/filters.ts): from a broadcast or a shuffle join's side partitioned first
  const shuffled = new Set(s.joins.filter((j) => j.strategy === 'shuffle').map((j) => j.id));
  const ran = (s.runtimeFilters ?? []).filter((f) => f.rowsIn > 0);
  add('runtime filters from a built side', ran.filter((f) => !shuffled.has(f.join)).length);
  add('runtime filters across a shuffle', ran.filter((f) => shuffled.has(f.join)).length);
  add('runtime filters dropping rows', ran.filter((f) => f.rowsKept < f.rowsIn).length);
  // trees of inner joins whose order by cost differs from the plan's (plan/join-order.ts)
  add('join trees reordered', (s.joinOrders ?? []).filter((j) => j.reordered).length);
  add('join trees kept as written', (s.joinOrders ?? []).filter((j) => !j.reordered).length);
  for (const w of s.windows ?? []) {
    add('window partitions split', w.splits.filter((x) => x.method !== 'none').length);
    add('window partitions kept whole', w.splits.filter((x) => x.method === 'none').length);
  }
  // a filter keeping the first N rows of a window's partitions (plan/window-topn.ts)
  add('plans with a window marked top-N', (s.windows ?? []).some((w) => w.topN) ? 1 : 0);
  add(
    'top-N window partitions split',
    (s.windows ?? []).filter((w) => w.topN).flatMap((w) => w.splits.filter((x) => x.method !== 'none')).length,
  );
  const stages = new Set(s.tasks.map((t) => t.stage));
  add('window stages', [...stages].filter((x) => /^window-\d+$/.test(x)).length);
  // union-1, intersect-2.count, ...: one per set operation
  const setops = new Set([...stages].map((x) => /^(union|intersect|except)-\d+/.exec(x)?.[0]).filter(Boolean));
  add('set operations', setops.size);
  // sum/avg DISTINCT (or several distinct aggregates): a first aggregate by (groups, value) (plan/bind-grouping.ts)
  add('distinct aggregates by (group, value)', [...stages].filter((x) => x.endsWith('.partial')).length);
}

/**
 * Floors of the default run (300 plans), about half of what seed 20261130 counted when they were set
 * (in brackets; docs/testing.md): room for a changed generator, none for a path no plan takes.
 */
const FLOORS: PathCounts = {
  ...Object.fromEntries(JOIN_TYPES.map((t) => [`shuffle ${t}`, 8])), // [16 .. 29]
  'broadcast inner': 10, // [20]
  'cross join': 10, // [21]
  'joins on keys of differing types': 100, // [203]
  'join split map-range': 8, // [17]
  'join split hot-key': 5, // [10]
  'aggregate split two-level': 6, // [13]
  'split tasks': 40, // [96]
  'plans spilling': 14, // [28]
  'tasks reading spilled input': 800, // [1721]
  'sort tasks spilling or reading spilled runs': 40, // [96]
  'grace join pieces': 400, // [908]
  'grace aggregate cuts': 200, // [453]
  'eager aggregations': 3, // [5]
  'retried tasks': 5, // [10]
  'plans in the calling thread': 40, // [92]
  'scan tasks reading conjuncts as masks': 25, // [54]
  'runtime filters from a built side': 10, // [20]
  'runtime filters across a shuffle': 19, // [39]
  'runtime filters dropping rows': 27, // [55]
};

/**
 * Floors of the 90 window plans (a third of them top-N) and 60 set-operation plans of the default run (one table:
 * each run counts only its own paths, the other's keys are checked where they belong), about half of what seed
 * 20261130 counted.
 */
export const WINDOW_FLOORS: PathCounts = {
  'window stages': 45, // [90]
  'window partitions split': 20, // [40]
  // a filter keeping a window's first N rows a partition marks it (plan/window-topn.ts); its map tasks prune when
  // they keep a quarter of their rows or less (fuzz.test.ts: its shuffle carried fewer rows than its input has)
  'plans with a window marked top-N': 15, // [30]
  'top-N windows pruned in map tasks': 5, // [10]
  // a hot partition of a top-N window split after the pruning (with the section's thresholds that force splits)
  'top-N window partitions split': 8, // [17]
};
/** Floors of the 60 plans of inner join chains of the default run (about half of what seed 20261130 counted). */
export const CHAIN_FLOORS: PathCounts = {
  'join trees reordered': 11, // [23]
  'join trees kept as written': 18, // [37]
  // a chain aggregated by its last input's join key (plan/eager-push.ts), with decimal sums (the generator's
  // eagerAggregate, counted by fuzz.test.ts when the plan ran an `.eager` stage)
  'aggregates summed before joins': 3, // [6]
  'eager decimal sums': 3, // [6]
};
/** Floors of the 100 plans reading a subtree twice of the default run (about half of what seed 20261130 counted). */
export const REPEAT_FLOORS: PathCounts = {
  // two semi joins against aggregates of one scan by one key (the generator's siblings: TPC-H q21's shape)
  'sibling aggregates merged': 5, // [10]
};
export const SET_FLOORS: PathCounts = {
  'set operations': 9, // [17]
  'distinct aggregates by (group, value)': 5, // [12]
};

/**
 * Paths under their floor, as messages; empty when every floor is met. Plan i is the same in every run of a
 * seed, so a run of more than 300 plans holds the default run's and its floors apply as they are; the task
 * counts are heavy-tailed (a few plans cut hundreds of grace pieces), so they do not grow with the plans.
 * Fewer plans scale the floors down.
 */
export function belowFloors(counts: PathCounts, plans: number, floors = FLOORS, per = 300): string[] {
  const scale = Math.min(1, plans / per);
  return Object.entries(floors)
    .filter(([k, f]) => (counts[k] ?? 0) < Math.floor(f * scale))
    .map(([k, f]) => `${k}: ${counts[k] ?? 0} < floor ${Math.floor(f * scale)}`);
}
