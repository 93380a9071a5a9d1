// Salting the hot keys of a join that Spark's adaptive execution cannot split:
// full outer joins, the non-preserved side of left/right joins, and a hot key
// whose rows sit in one input file. One pass over each side; only hot keys change:
//
//   split side:  salt = pmod(hash(the row's columns), N) for a hot key, else 0
//   other side:  a hot key's row replicated over salts 0..N-1 (explode), else salt 0
//   the join as written, on (key, salt)
//   then the replicated side's copies left unmatched are dropped
//
// Outer semantics stay exact: every hot key has rows on the split side (it was sampled
// there), so a replicated row matches in at least one salt and its other copies, which
// found no partner in their salt, are not rows of the join; a split-side row is never copied.
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
  // null keys are not hot (they match nothing): coalesce makes the test false for them
  const hot = (k: string) => `coalesce(${k} IN (${list}), FALSE)`;
  const splitLeft = plan.side === 'left';
  const splitNode = splitLeft ? n.left : n.right;
  const all = splitNode.schema.map((_, i) => col(i)).join(', ');
  const salt = (key: string) => `CASE WHEN ${hot(key)} THEN pmod(hash(${all}), ${plan.buckets}) ELSE 0 END`;
  const copies = (key: string) =>
    `explode(CASE WHEN ${hot(key)} THEN sequence(0, ${plan.buckets - 1}) ELSE array(0) END)`;
  const side = (m: BoundNode, s: string) => `(SELECT *, ${s} AS __salt FROM (${lower(m)}) t)`;
  const left = side(n.left, splitLeft ? salt(lk) : copies(lk));
  const right = side(n.right, splitLeft ? copies(rk) : salt(rk));
  const copyPreserved = n.type === 'full' || n.type === (splitLeft ? 'right' : 'left');
  if (!copyPreserved) return plainJoin(n, left, right, n.type, ' AND l.__salt = r.__salt');
  // a replicated preserved row's copies that found no partner (the split side's salt is null there)
  const nl = n.left.schema.length;
  const copyKey = splitLeft ? col(nl + n.rightKeys[0]) : col(n.leftKeys[0]);
  const marker = `${splitLeft ? 'l' : 'r'}.__salt AS __split_salt`;
  const joined = plainJoin(n, left, right, n.type, ' AND l.__salt = r.__salt', [marker]);
  const cols = n.schema.map((_, i) => col(i)).join(', ');
  return `SELECT ${cols} FROM (${joined}) j WHERE NOT (j.__split_salt IS NULL AND ${hot(`j.${copyKey}`)})`;
}
