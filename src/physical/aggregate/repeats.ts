// Repeated subplans computed once. A plan has no common table expressions: a
// view read twice is spelled as two identical subtrees (TPC-H q15 reads its
// revenue view for the rows and again for their maximum). An aggregate whose
// whole subtree occurs more than once runs once; its rows are held on the
// coordinator (within the memory budget) until its last reader has them.
import { type Batch, batchesBytes } from '../../kernels/column.js';
import type { BoundNode } from '../../plan/bound.js';
import type { Spiller } from '../../spill/spiller.js';

type AggregateNode = Extract<BoundNode, { kind: 'aggregate' }>;

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

function* children(n: BoundNode): Generator<BoundNode> {
  if (n.kind === 'join') {
    yield n.left;
    yield n.right;
  } else if (n.kind !== 'scan') yield n.input;
}

interface Entry {
  readers: number;
  rows?: Promise<Batch[]>;
  held: number;
}

export class Repeats {
  /** each repeated aggregate node: the key of its subtree */
  private readonly keyOf = new Map<BoundNode, string>();
  private readonly entries = new Map<string, Entry>();

  constructor(
    root: BoundNode,
    private readonly budget: Spiller,
  ) {
    // each aggregate's fingerprint, taken once, and how often each occurs
    const keys = new Map<BoundNode, string>(),
      counts = new Map<string, number>();
    const count = (n: BoundNode) => {
      if (n.kind === 'aggregate') {
        const k = fingerprint(n);
        keys.set(n, k);
        counts.set(k, (counts.get(k) ?? 0) + 1);
      }
      for (const c of children(n)) count(c);
    };
    count(root);
    // the outermost repeats only: what lies inside one is computed once with it
    const mark = (n: BoundNode) => {
      const k = keys.get(n);
      if (k !== undefined && counts.get(k)! > 1) {
        this.keyOf.set(n, k);
        const e = this.entries.get(k) ?? { readers: 0, held: 0 };
        e.readers++;
        this.entries.set(k, e);
        return;
      }
      for (const c of children(n)) mark(c);
    };
    mark(root);
  }

  get size(): number {
    return this.entries.size;
  }

  has(node: BoundNode): node is AggregateNode {
    return this.keyOf.has(node);
  }

  /**
   * The rows of a repeated aggregate: `compute` runs it for the first reader;
   * the others get the same rows, held until the last has them (or computed
   * again when holding them would exceed the memory budget left).
   */
  async rows(node: AggregateNode, compute: () => Promise<Batch[]>): Promise<Batch[]> {
    const e = this.entries.get(this.keyOf.get(node)!)!;
    e.readers--;
    if (!e.rows) {
      e.rows = compute();
      const rows = await e.rows;
      const bytes = batchesBytes(rows);
      if (e.readers > 0 && bytes <= this.budget.free()) {
        e.held = bytes;
        this.budget.reserve(bytes);
      } else {
        e.rows = undefined;
      }
      return rows;
    }
    const rows = await e.rows;
    if (e.readers === 0) this.drop(e);
    return rows;
  }

  private drop(e: Entry): void {
    e.rows = undefined;
    this.budget.release(e.held);
    e.held = 0;
  }

  /** Release what is still held (a reader that never came: the run ended early or failed). */
  close(): void {
    for (const e of this.entries.values()) this.drop(e);
  }
}
