// What a subtree of the bound plan computes, as a string: two subtrees with the same fingerprint give the same rows
// (a plan has no common table expressions: a view read twice is spelled as two identical subtrees). Used to compute
// repeated subplans once (plan/share.ts, physical/repeats.ts).
import type { BoundNode } from './bound.js';

/** What a node computes: its subtree without the node ids (bigints and typed arrays spelled out). */
export function fingerprint(node: BoundNode): string {
  return JSON.stringify(node, function (this: unknown, k, v) {
    // a node's id names it, it does not change what it computes (a DataType's `id` does)
    if (k === 'id' && this !== null && typeof this === 'object' && 'kind' in this && 'schema' in this) return undefined;
    if (k === 'what') return undefined; // where an expression is in the plan, for its errors
    if (typeof v === 'bigint') return `${v}n`;
    if (ArrayBuffer.isView(v)) return Array.from(v as unknown as ArrayLike<number | bigint>, String);
    return v;
  });
}

/** A node's inputs. */
export function* children(n: BoundNode): Generator<BoundNode> {
  if (n.kind === 'join') {
    yield n.left;
    yield n.right;
  } else if (n.kind === 'union') yield* n.inputs;
  else if (n.kind !== 'scan' && n.kind !== 'values') yield n.input;
}

/** The node a pipeline starting at `n` reads from: `n` below its filters, projections and computed columns. */
export function sourceBelow(n: BoundNode): BoundNode {
  while (n.kind === 'filter' || n.kind === 'project' || n.kind === 'compute') n = n.input;
  return n;
}

/**
 * Whether a subtree is worth computing once for several readers: one whose pipeline starts at a join or an
 * aggregate. A scan (filtered or not) is not: holding its rows saves one decode of them, and a fact table's rows
 * would weigh on the budget; a join or an aggregate is most of its readers' work.
 */
export function shareable(n: BoundNode): boolean {
  const s = sourceBelow(n);
  return s.kind === 'join' || s.kind === 'aggregate';
}
