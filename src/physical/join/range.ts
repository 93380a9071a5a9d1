// A range join (JOIN_STRATEGIES.range): a keyless inner join whose filter bounds a column of one side by the other's
// (physical/join/range-condition.ts). Both sides run to the coordinator, as a cross join's do; the smaller one is
// sorted on its bound (intervals on their lower bound) into shared memory, and the larger one's rows are cut into
// tasks by the pairs they match (counted here by binary search), so that each task's output stays within a share
// of the budget as a cross join's tiles do; each task searches its rows (physical/join/range-source.ts). The filter
// above keeps its other conjuncts, or all of them where a key is not exact (physical/join/range-keys.ts).
import {
  type Batch,
  type Column,
  batchBytes,
  concatBatches,
  gatherBatch,
  rowCount,
  shareArray,
  shareBatch,
  viewBatch,
} from '../../kernels/column.js';
import {
  type BuiltKeys,
  type ProbeKeys,
  type RangeShape,
  SortedKeys,
  candidateRun,
  matchCounts,
  sortedOrder,
} from '../../kernels/range-join.js';
import { plannedWorkers } from '../../plan/load.js';
import type { Downstream, ExecContext } from '../operator.js';
import { type RowOp, type TaskResult, withSeed } from '../task.js';
import type { Side } from './decide.js';
import type { RangeCondition } from './range-condition.js';
import { type Keys, rangeKeys } from './range-keys.js';
import { relaxed, searchOf, validIn } from './range-search.js';
import type { RangeJoinSource } from './range-source.js';
import { pairTaskBytes, rowBytes } from './stage.js';
import type { JoinNode } from './tasks.js';

/** The fewest probing rows a task takes for the sake of parallelism (a quarter of a worker's share above it). */
const MIN_TASK_ROWS = 4096;

/** The shape of the search and each side's keys, from the bound and the side built. */
interface Prepared {
  shape: RangeShape;
  a: Keys;
  b?: Keys;
  x: Keys;
  y?: Keys;
}

function prepare(c: RangeCondition, built: Side, B: Batch, P: Batch): Prepared {
  const s = searchOf(c.bound, built);
  const [a, b] = s.built.map((e) => rangeKeys(B, e, s.scale));
  const [x, y] = s.probing.map((e) => rangeKeys(P, e, s.scale));
  return { shape: s.shape, a: a!, b, x: x!, y };
}

const f64 = (values: Float64Array, valid: Uint8Array | null = null): Column => ({
  type: { id: 'float64' },
  length: values.length,
  values: shareArray(values),
  valid: valid && shareArray(valid),
});

/**
 * The built side sorted: its rows with every key valid (and, for intervals, non-empty ones: they match nothing), in
 * the order of `a`; the sorted keys, and for intervals their upper bounds sorted alone (to count matches).
 */
function sortBuilt(pr: Prepared, B: Batch) {
  const valid = validIn([pr.a, pr.b], B.length);
  const { a, b } = pr;
  const s = pr.shape;
  const strict = s.kind === 'within' && (s.loStrict || s.hiStrict);
  const kept = new Int32Array(B.length);
  let m = 0;
  for (let i = 0; i < B.length; i++) {
    if (valid !== null && valid[i] === 0) continue;
    if (b && (strict ? a.keys[i] >= b.keys[i] : a.keys[i] > b.keys[i])) continue;
    kept[m++] = i;
  }
  const ka = new Float64Array(m);
  for (let i = 0; i < m; i++) ka[i] = a.keys[kept[i]];
  const order = sortedOrder(ka);
  const rows = new Int32Array(m),
    sa = new Float64Array(m),
    sb = b ? new Float64Array(m) : undefined;
  for (let i = 0; i < m; i++) {
    rows[i] = kept[order[i]];
    sa[i] = ka[order[i]];
    if (sb) sb[i] = b!.keys[rows[i]];
  }
  const keys: Batch = { length: m, columns: sb ? [f64(sa), f64(sb)] : [f64(sa)] };
  const bSorted = sb ? Float64Array.from(sb).sort() : undefined;
  return { build: shareBatch(gatherBatch(B, rows)), keys, built: { a: sa, b: sb } as BuiltKeys, bSorted };
}

/** The row operators the tasks run: the filter without the conjuncts the join answered, when its keys are exact. */
function opsAfter(ops: RowOp[], c: RangeCondition, exact: boolean): RowOp[] {
  if (!exact) return ops;
  const rest: RowOp[] = c.rest ? [{ kind: 'filter', pred: c.rest }] : [];
  return [...ops.slice(0, c.at), ...rest, ...ops.slice(c.at + 1)];
}

interface Piece {
  r0: number;
  r1: number;
  b0: number;
  b1: number;
}

/**
 * The tasks: runs of probing rows whose matches add up to at most `pairs` (and at most `maxRows` rows); a row with
 * more matches alone, its run of built positions cut into pieces of `pairs`; rows without a match in none (one
 * empty task when no row matches).
 */
function cutTasks(counts: Float64Array, pairs: number, maxRows: number, m: number, runOf: (i: number) => Int32Array) {
  const n = counts.length,
    out: Piece[] = [];
  let i = 0;
  while (i < n) {
    if (counts[i] === 0) {
      i++;
      continue;
    }
    if (counts[i] > pairs) {
      const [from, to] = runOf(i);
      for (let b = from; b < to; b += pairs) out.push({ r0: i, r1: i + 1, b0: b, b1: Math.min(to, b + pairs) });
      i++;
      continue;
    }
    let j = i,
      sum = 0;
    while (j < n && j - i < maxRows && counts[j] <= pairs && sum + counts[j] <= pairs) sum += counts[j++];
    out.push({ r0: i, r1: j, b0: 0, b1: m });
    i = j;
  }
  if (out.length === 0) out.push({ r0: 0, r1: 0, b0: 0, b1: m });
  return out;
}

/**
 * The range join of `node` under `c` (join/range-condition.ts), for the operators `ops` above it: both sides
 * collected, the smaller sorted, the larger's rows in tasks (as runCross in join/stage.ts, `d.sink` and `d.combine`
 * taken by every task).
 */
export async function runRange(
  ex: ExecContext,
  node: JoinNode,
  ops: RowOp[],
  { sink, combine }: Downstream,
  c: RangeCondition,
): Promise<TaskResult[]> {
  const [lb, rb] = await Promise.all([ex.collectBatches(node.left), ex.collectBatches(node.right)]);
  const built: Side = rowCount(lb) <= rowCount(rb) ? 'left' : 'right';
  const B = concatBatches(built === 'left' ? node.left.schema : node.right.schema, built === 'left' ? lb : rb);
  const P = concatBatches(built === 'left' ? node.right.schema : node.left.schema, built === 'left' ? rb : lb, true);
  const pr = prepare(c, built, B, P);
  const exact = [pr.a, pr.b, pr.x, pr.y].every((k) => k === undefined || k.exact);
  const shape = exact ? pr.shape : relaxed(pr.shape);
  const s = sortBuilt({ ...pr, shape }, B);
  const probeValid = validIn([pr.x, pr.y], P.length);
  const probeKeys: Batch = {
    length: P.length,
    columns: pr.y ? [f64(pr.x.keys, probeValid), f64(pr.y.keys)] : [f64(pr.x.keys, probeValid)],
  };
  const pk: ProbeKeys = { x: pr.x.keys, y: pr.y?.keys, valid: probeValid };
  const counts = matchCounts(shape, s.built, pk, s.bSorted);
  const target = pairTaskBytes(ex);
  const pairs = Math.max(1, Math.floor(target / Math.max(1, rowBytes(s.build) + rowBytes(P))));
  const maxRows = Math.max(MIN_TASK_ROWS, Math.ceil(P.length / (4 * plannedWorkers(ex.settings))));
  const run = new Int32Array(2),
    sorted = new SortedKeys(s.built.a);
  const runOf = (i: number) => {
    candidateRun(shape, sorted, pk, i, run);
    return run;
  };
  const pieces = cutTasks(counts, pairs, maxRows, s.build.length, runOf);
  const total = counts.reduce((a, n) => a + n, 0);
  const probing = built === 'left' ? 'right' : 'left';
  ex.report('join', {
    id: node.id,
    type: node.type,
    strategy: 'range',
    reason:
      `range join on ${c.text}: the smaller side (${built}) sorted on ${shape.kind === 'within' ? 'its lower bound' : 'its bound'}, ` +
      `each row of the ${probing} side binary searched; ${total} pair(s) in ${pieces.length} task(s)` +
      (exact ? '' : '; a key not exact (past 2^53, or NaN): the filter above checks every pair'),
    broadcast: { side: built, rows: s.build.length, bytes: batchBytes(s.build) },
    targetBytes: target,
    tasks: pieces.length,
    splits: [],
  });
  const after = opsAfter(ops, c, exact);
  const schemas = { leftSchema: node.left.schema, rightSchema: node.right.schema };
  return Promise.all(
    pieces.map((t, i) => {
      const source: RangeJoinSource = {
        kind: 'rangeJoin',
        shape,
        built,
        ...schemas,
        build: s.build,
        keys: s.keys,
        probe: viewBatch(P, t.r0, t.r1),
        probeKeys: viewBatch(probeKeys, t.r0, t.r1),
        window: [t.b0, t.b1],
      };
      return ex.run(
        { source, ops: after, combine, sink: withSeed(sink, i) },
        { stage: node.id, kind: 'reduce', partition: i, split: `range join: ${built} side sorted` },
      );
    }),
  );
}
