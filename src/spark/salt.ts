// Salting the hot keys of a join that Spark's adaptive execution cannot split:
// full outer joins, the non-preserved side of left/right joins, and a hot key
// whose rows sit in one input file. Only the hot keys are rewritten:
//
//   non-hot rows of both sides   -> the join as written (Spark, AQE)
//   hot rows of the split side   -> salt = pmod(hash(the row's columns), N)
//   hot rows of the other side   -> replicated over salts 0..N-1; inner join on (key, salt)
//   hot rows of a preserved side whose key the other side lacks -> emitted once, nulls beside
//
// so outer semantics stay exact: a replicated row never emits its unmatched row N times.
import type { BoundNode } from '../plan/bound.js';
import type { DataType } from '../kernels/column.js';
import { col, sparkType, str } from './lower-expr.js';
import { plainJoin } from './lower.js';

type Join = Extract<BoundNode, { kind: 'join' }>;

export interface HotKey {
  text: string;
  rows: number;
}
/** How one join is salted: the side whose hot keys are split, the keys, the salt count. */
export interface SaltPlan {
  side: 'left' | 'right';
  keys: HotKey[];
  buckets: number;
  keyType: DataType;
}

export function saltedJoin(n: Join, plan: SaltPlan, lower: (m: BoundNode) => string): string {
  const lk = col(n.leftKeys[0]),
    rk = col(n.rightKeys[0]);
  const list = plan.keys
    .map((k) => (plan.keyType.id === 'utf8' ? str(k.text) : `CAST(${str(k.text)} AS ${sparkType(plan.keyType)})`))
    .join(', ');
  // null keys are not hot (they match nothing): coalesce keeps NOT hot(k) true for them
  const hot = (k: string) => `coalesce(${k} IN (${list}), FALSE)`;
  const all = (m: BoundNode) => m.schema.map((_, i) => col(i)).join(', ');
  const [splitKey, copyKey] = plan.side === 'left' ? [lk, rk] : [rk, lk];
  const split = plan.side === 'left' ? 'sl' : 'sr',
    copy = plan.side === 'left' ? 'sr' : 'sl';
  const splitNode = plan.side === 'left' ? n.left : n.right;
  const salt = `pmod(hash(${all(splitNode)}), ${plan.buckets})`;
  const salted = `(SELECT *, ${salt} AS __salt FROM ${split} WHERE ${hot(splitKey)})`;
  const copied = `(SELECT *, explode(sequence(0, ${plan.buckets - 1})) AS __salt FROM ${copy} WHERE ${hot(copyKey)})`;
  const [hl, hr] = plan.side === 'left' ? [salted, copied] : [copied, salted];
  const parts = [
    plainJoin(n, `(SELECT * FROM sl WHERE NOT ${hot(lk)})`, `(SELECT * FROM sr WHERE NOT ${hot(rk)})`, n.type),
    plainJoin(n, hl, hr, 'inner', ' AND l.__salt = r.__salt'),
  ];
  if (n.type === 'left' || n.type === 'full') parts.push(unmatched(n, 'left', hot));
  if (n.type === 'right' || n.type === 'full') parts.push(unmatched(n, 'right', hot));
  return `WITH sl AS (${lower(n.left)}), sr AS (${lower(n.right)}) ${parts.join(' UNION ALL ')}`;
}

/** Hot rows of a preserved side whose key has no row on the other side: once each, the other side's columns null. */
function unmatched(n: Join, side: 'left' | 'right', hot: (k: string) => string): string {
  const nl = n.left.schema.length;
  const [mine, theirs, mk, tk] =
    side === 'left'
      ? ['sl', 'sr', col(n.leftKeys[0]), col(n.rightKeys[0])]
      : ['sr', 'sl', col(n.rightKeys[0]), col(n.leftKeys[0])];
  const left = n.left.schema.map(
    (f, i) => (side === 'left' ? `m.${col(i)}` : `CAST(NULL AS ${sparkType(f.type)})`) + ` AS ${col(i)}`,
  );
  const right = n.right.schema.map(
    (f, i) => (side === 'right' ? `m.${col(i)}` : `CAST(NULL AS ${sparkType(f.type)})`) + ` AS ${col(nl + i)}`,
  );
  return (
    `SELECT ${[...left, ...right].join(', ')} FROM (SELECT * FROM ${mine} WHERE ${hot(mk)}) m ` +
    `LEFT ANTI JOIN (SELECT DISTINCT ${tk} AS k FROM ${theirs} WHERE ${hot(tk)}) o ON m.${mk} = o.k`
  );
}
