// Plain partitions mixed into a hot key's pieces. A piece of a hot key holds
// probing rows only (its key has one built row or so), a plain partition of a
// join against a dimension mostly built rows, and a built row costs about four
// probing rows (CPU time per task, fact ⋈ dim and the full outer join at
// s = 1.5: ~56 ns a probing row, ~220 ns a built row: the table and the groups
// of the fused aggregate). Tasks of one kind or the other cannot be even both
// by rows and by time; tasks that each hold a share of the hot keys' rows and
// a share of the plain partitions can. So the hot keys are cut into about one
// piece per task, and the plain partitions are dealt out over the pieces,
// each to the task it evens out best (by rows and by cost), within the target.
import type { JoinType } from '../plan/spec.js';
import { buildsLeft } from '../kernels/join.js';
import type { PlannedTask, ReducePlan, SideStats } from './decide.js';

/** What a built row costs against a probing row (see above). */
export const BUILD_ROW_COST = 4;

interface Group {
  rows: number;
  cost: number;
  bytes: number;
  riders: number[];
}

type HotTask = Extract<PlannedTask, { kind: 'hot-keys' }>;

/** A plain partition to deal out: its rows, its cost (built rows weigh more) and bytes. */
interface Unit {
  p: number;
  rows: number;
  cost: number;
  bytes: number;
}

/**
 * The plan with its hot keys cut into more pieces and its packed plain
 * partitions carried by those pieces (`riders`, one list per grid cell in the
 * order the executor makes them); the plan unchanged where there is nothing
 * to mix or a key is hot on its built side too (an output grid).
 */
export function mixPlan(plan: ReducePlan, left: SideStats, right: SideStats, type: JoinType): ReducePlan {
  const hot = plan.tasks.filter((t): t is HotTask => t.kind === 'hot-keys');
  const plain = plan.tasks.filter((t): t is Extract<PlannedTask, { kind: 'partitions' }> => t.kind === 'partitions');
  if (hot.length === 0 || plain.length === 0) return plan;
  if (
    hot.some((t) =>
      t.keys.some((k) => k.rightPieces !== 1 || k.leftRows < k.rightRows || buildsLeft(type, k.leftRows, k.rightRows)),
    )
  )
    return plan;
  const units = plain
    .flatMap((t) => t.partitions)
    .map((p): Unit => {
      const l = left.partitionRows[p],
        r = right.partitionRows[p];
      const built = buildsLeft(type, l, r) ? l : r;
      return {
        p,
        rows: l + r,
        cost: l + r + (BUILD_ROW_COST - 1) * built,
        bytes: left.partitionBytes[p] + right.partitionBytes[p],
      };
    });
  const H = hot.reduce((s, t) => s + t.keys.reduce((a, k) => a + k.leftRows, 0), 0);
  if (H === 0) return plan;
  const N = plain.length + hot.reduce((s, t) => s + t.keys.reduce((a, k) => a + k.leftPieces, 0), 0);
  // about one piece per task: H / N rows of hot keys each
  const { groups, cells, tasks } = hotCells(hot, H / N, left, right);
  const all = dealOut(units, groups, Math.max(N, groups.length), plan.targetBytes);
  const bytesOf = (ps: number[]) => ps.reduce((s, p) => s + left.partitionBytes[p] + right.partitionBytes[p], 0);
  const out: PlannedTask[] = plan.tasks.filter((t) => t.kind === 'map-range');
  for (const t of hot) {
    const riders = cells.get(t)!.map((g) => g.riders.sort((a, b) => a - b));
    out.push({ ...tasks.get(t)!, riders, bytes: t.bytes + bytesOf(riders.flat()) });
  }
  for (const g of all.slice(groups.length)) {
    if (g.riders.length)
      out.push({ kind: 'partitions', partitions: g.riders.sort((a, b) => a - b), bytes: bytesOf(g.riders) });
  }
  out.sort((a, b) => b.bytes - a.bytes);
  const splits = plan.splits.map((s) => {
    const t = hot.find((x) => x.partition === s.partition);
    if (!t || !s.keys) return s;
    const mixed = tasks.get(t)!.keys;
    const keysOut = s.keys.map((k, i) => ({ ...k, tasks: mixed[i].leftPieces * mixed[i].rightPieces }));
    return { ...s, keys: keysOut, tasks: keysOut.reduce((a, k) => a + k.tasks, 0) + 1 };
  });
  return { ...plan, tasks: out, splits };
}

/** The hot keys cut into pieces of about `share` rows: a group per piece, by task, and the tasks with their cuts. */
function hotCells(hot: HotTask[], share: number, left: SideStats, right: SideStats) {
  const rowBytes = (s: SideStats, p: number) => (s.partitionRows[p] > 0 ? s.partitionBytes[p] / s.partitionRows[p] : 0);
  const groups: Group[] = [];
  const cells = new Map<HotTask, Group[]>();
  const tasks = new Map<HotTask, HotTask>();
  for (const t of hot) {
    const mixed = t.keys.map((k) => ({ ...k, leftPieces: Math.max(k.leftPieces, Math.round(k.leftRows / share)) }));
    tasks.set(t, { ...t, keys: mixed });
    const lb = rowBytes(left, t.partition),
      rb = rowBytes(right, t.partition);
    const gs = mixed.flatMap((k) =>
      Array.from({ length: k.leftPieces }, (): Group => {
        const rows = k.leftRows / k.leftPieces;
        return {
          rows: rows + k.rightRows,
          cost: rows + BUILD_ROW_COST * k.rightRows,
          bytes: rows * lb + k.rightRows * rb,
          riders: [],
        };
      }),
    );
    cells.set(t, gs);
    groups.push(...gs);
  }
  return { groups, cells, tasks };
}

/**
 * The plain partitions dealt out over `n` tasks (the hot keys' groups, then tasks of plain partitions alone),
 * costliest first, each to the task it evens out best by rows and by cost within the target bytes.
 */
function dealOut(units: Unit[], groups: Group[], n: number, target: number): Group[] {
  const total = (f: (x: { rows: number; cost: number }) => number) =>
    [...groups, ...units].reduce((s, x) => s + f(x), 0);
  const R = total((x) => x.rows) / n,
    C = total((x) => x.cost) / n;
  const alone: Group[] = Array.from({ length: Math.max(0, n - groups.length) }, () => ({
    rows: 0,
    cost: 0,
    bytes: 0,
    riders: [],
  }));
  const all = [...groups, ...alone];
  const load = (g: Group, u: Unit) => Math.max((g.rows + u.rows) / R, (g.cost + u.cost) / C);
  for (const u of units.sort((a, b) => b.cost - a.cost || a.p - b.p)) {
    let best: Group | null = null;
    for (const g of all) if (g.bytes + u.bytes <= target && (!best || load(g, u) < load(best, u))) best = g;
    if (!best) all.push((best = { rows: 0, cost: 0, bytes: 0, riders: [] }));
    best.riders.push(u.p);
    best.rows += u.rows;
    best.cost += u.cost;
    best.bytes += u.bytes;
  }
  return all;
}
