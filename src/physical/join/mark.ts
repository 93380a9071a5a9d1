// The map side of a semi or anti join whose left side was built (physical/join/marked.ts): a row operator that
// probes the left side's table with each batch of the right side and marks the table rows it matches in a byte
// array every task shares. It emits no rows: the left rows marked (semi) or not (anti) are the join's output.
import type { Batch } from '../../kernels/column.js';
import { JoinProbe } from '../../kernels/join.js';
import type { KeyBits } from '../../kernels/key-bits.js';
import { type Keys, buildKeys } from '../../kernels/keys.js';
import { KeyTable } from '../../kernels/table.js';
import type { KeyNorm } from '../../plan/bound.js';
import { type BroadcastTable, probeKeys } from './probe.js';

export interface MarkOp {
  kind: 'mark';
  /** the join's id (for --explain) */
  id: string;
  /** the left side's rows built into a table */
  table: BroadcastTable;
  /** key columns of the probing (right) rows, and their normal forms */
  keys: number[];
  norms: KeyNorm[];
  /** a byte per table row, in a SharedArrayBuffer: 1 once a probing row matched it (writes of 1 race harmlessly) */
  marks: Uint8Array;
  /**
   * When the table has a bitmap of its keys (kernels/key-bits.ts): a bit per value of its span instead, in shared
   * memory, set (atomically) where a probing row's key is a table key. No hash, no slot touched; marks is filled
   * from it once the probing is done (markedRows).
   */
  keyMarks: Int32Array | null;
}

/** Mark the table rows this batch's rows match; no rows out. */
export function markBatch(b: Batch, op: MarkOp): Batch[] {
  if (b.length === 0) return [];
  const t = op.table,
    marks = op.marks;
  if (op.keyMarks !== null && t.bits) {
    const k = buildKeys(b, op.keys, op.norms, undefined, false);
    if (k.parts.length === 1 && k.parts[0].kind === 'w') {
      markKeys(k, k.parts[0].w, t.bits, op.keyMarks);
      return [];
    }
  }
  const joiner = new JoinProbe('inner', t.keys, new KeyTable(t.keys, true, t));
  joiner.probe(probeKeys(b, { keys: op.keys, norms: op.norms, table: t }), (_pi, bi, n) => markRows(marks, bi, n));
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

/** The table rows whose key was marked (keyMarks) as row marks. */
export function markedRows(t: BroadcastTable, kb: KeyBits, keyMarks: Int32Array, marks: Uint8Array): void {
  const p = t.keys.parts[0] as { w: Int32Array },
    w = p.w,
    nulls = t.keys.anyNull;
  for (let i = 0; i < t.keys.n; i++) {
    if (nulls !== null && nulls[i] === 1) continue;
    const d = w[2 * i] - kb.base;
    if ((keyMarks[d >>> 5] & (1 << (d & 31))) !== 0) marks[i] = 1;
  }
}
