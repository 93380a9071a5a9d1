// The map side of a semi or anti join whose left side was built (physical/join/marked.ts): a row operator that
// marks, for each batch of the right side, the left rows (or the left keys) its rows match, in memory every task
// shares. It emits no rows: the left rows marked (semi) or not (anti) are the join's output.
import { type Batch, gatherSelected } from '../../kernels/column.js';
import { JoinProbe } from '../../kernels/join.js';
import type { KeyBits } from '../../kernels/key-bits.js';
import { type Keys, buildKeys } from '../../kernels/keys.js';
import { KeyTable } from '../../kernels/table.js';
import type { KeyNorm } from '../../plan/bound.js';
import { type BroadcastTable, probeKeys } from './probe.js';

/**
 * What a probing row marks: the left side's table rows it matches (a byte a row, writes of 1 race harmlessly), or,
 * when the left side's one integer key has a bitmap (kernels/key-bits.ts), its key's bit in a second bitmap over
 * the same span, set atomically: no table built, no hash, no slot touched (physical/join/marked.ts reads the left
 * rows' marks from it once the probing is done). Both in shared memory, marked by every task.
 */
export type MarkTarget =
  | { kind: 'rows'; table: BroadcastTable; marks: Uint8Array }
  | { kind: 'keys'; bits: KeyBits; keyMarks: Int32Array };

export interface MarkOp {
  kind: 'mark';
  /** the join's id (for --explain) */
  id: string;
  /** key columns of the probing (right) rows, and their normal forms */
  keys: number[];
  norms: KeyNorm[];
  target: MarkTarget;
  /**
   * keep: mark nothing, keep the rows whose key the left side has (a keys target's bitmap), before the right
   * side's filters: they then look at those rows only (TPC-H q04: 4% of the line items, whose date comparison
   * is then skipped for the rest)
   */
  keep?: boolean;
}

/** Mark what this batch's rows match; no rows out. */
export function markBatch(b: Batch, op: MarkOp): Batch[] {
  if (b.length === 0) return [];
  const t = op.target;
  if (t.kind === 'keys') {
    const k = buildKeys(b, op.keys, op.norms, undefined, false),
      p = k.parts[0];
    if (k.parts.length !== 1 || p.kind !== 'w') throw new Error('mark: the probing key is not one integer key');
    if (op.keep) return [keepKnown(b, k, p.w, t.bits)];
    markKeys(k, p.w, t.bits, t.keyMarks);
    return [];
  }
  const joiner = new JoinProbe('inner', t.table.keys, new KeyTable(t.table.keys, true, t.table));
  const marks = t.marks;
  joiner.probe(probeKeys(b, { keys: op.keys, norms: op.norms, table: t.table }), (_pi, bi, n) =>
    markRows(marks, bi, n),
  );
  return [];
}

function markRows(marks: Uint8Array, rows: Int32Array, n: number): void {
  for (let i = 0; i < n; i++) marks[rows[i]] = 1;
}

function markKeys(k: Keys, w: Int32Array, kb: KeyBits, marks: Int32Array): void {
  const nulls = k.anyNull,
    { bits, base, span } = kb;
  for (let i = 0; i < k.n; i++) {
    if (nulls !== null && nulls[i] === 1) continue;
    const lo = w[2 * i],
      d = lo - base;
    if (w[2 * i + 1] !== lo >> 31 || d < 0 || d >= span) continue;
    const word = d >>> 5,
      bit = 1 << (d & 31);
    if ((bits[word] & bit) !== 0 && (marks[word] & bit) === 0) Atomics.or(marks, word, bit);
  }
}

/** The rows of `b` whose key's bit is set. */
function keepKnown(b: Batch, k: Keys, w: Int32Array, kb: KeyBits): Batch {
  const idx = new Int32Array(b.length);
  const n = knownRows(k, w, kb, idx);
  return n === b.length ? b : { length: n, columns: b.columns.map((c) => gatherSelected(c, idx, n)) };
}

function knownRows(k: Keys, w: Int32Array, kb: KeyBits, idx: Int32Array): number {
  const nulls = k.anyNull,
    { bits, base, span } = kb;
  let n = 0;
  for (let i = 0; i < k.n; i++) {
    if (nulls !== null && nulls[i] === 1) continue;
    const lo = w[2 * i],
      d = lo - base;
    if (w[2 * i + 1] !== lo >> 31 || d < 0 || d >= span) continue;
    if ((bits[d >>> 5] & (1 << (d & 31))) !== 0) idx[n++] = i;
  }
  return n;
}

/** The left rows (their keys `k`, one integer key) whose key was marked, as a byte a row. */
export function markedRows(k: Keys, kb: KeyBits, keyMarks: Int32Array): Uint8Array {
  const w = (k.parts[0] as { w: Int32Array }).w,
    nulls = k.anyNull,
    marks = new Uint8Array(k.n);
  for (let i = 0; i < k.n; i++) {
    if (nulls !== null && nulls[i] === 1) continue;
    const d = w[2 * i] - kb.base;
    if ((keyMarks[d >>> 5] & (1 << (d & 31))) !== 0) marks[i] = 1;
  }
  return marks;
}
