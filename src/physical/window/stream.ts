// A window whose rows arrive in their order within each partition (a file written in time or key order and read in
// it: lineitem in l_orderkey order): its running functions computed in the input's row order from each partition's
// state, with no sort, no gather into sorted order and no shape. Applies when every partition's packed keys strictly
// increase in input order (no ties: ROWS and RANGE frames agree) and every function is row_number, rank, dense_rank
// (without ties: the row's place) or count/sum from the partition's start to the current row; else null, and the
// task sorts (window/source.ts). The rows leave in their input order: a window promises no order (PLAN-SPEC).
import { type Batch, type Column, isFloat, lanes } from '../../kernels/column.js';
import type { BoundWindowFn } from '../../plan/bound.js';
import { type Packed, exactIntegers } from './packed.js';

const TWO32 = 4294967296;
const SAFE = 2 ** 53;

/** Whether the function is computed here: a place, or count/sum over a cumulative frame of integers. */
function streamable(f: BoundWindowFn, b: Batch): boolean {
  if (f.fn === 'row_number' || f.fn === 'rank' || f.fn === 'dense_rank') return true;
  if ((f.fn !== 'count' && f.fn !== 'sum') || f.distinct || f.frame.start !== null || f.frame.end !== 0) return false;
  if (f.fn === 'count') return true;
  const c = b.columns[f.col];
  return (f.type.id === 'int64' || f.type.id === 'decimal') && !isFloat(c.type) && lanes(c.type) === 1;
}

/**
 * The functions' columns over `rows` in their input order, or null when a partition's rows are not in order, a
 * function is not one of these, or a sum leaves ±2^53 or its precision (the sorting path then computes or names it).
 */
export function streamWindow(rows: Batch, fns: BoundWindowFn[], p: Packed, ordered: boolean): Column[] | null {
  const { codes, part, partSpan } = p;
  if (part === null || !ordered || !fns.every((f) => streamable(f, rows))) return null;
  const n = rows.length;
  const last = new Float64Array(partSpan).fill(-1);
  for (let i = 0; i < n; i++) {
    const q = part[i],
      c = codes[i];
    if (c <= last[q]) return null;
    last[q] = c;
  }
  const out: Column[] = [];
  for (const f of fns) {
    const col = f.col >= 0 ? rows.columns[f.col] : null;
    const c = f.fn === 'sum' ? sums(f, col!, part, partSpan, n) : counts(col, part, partSpan, n);
    if (c === null) return null;
    out.push(c);
  }
  return out;
}

/** Each row's place in its partition so far (row_number; rank and dense_rank without ties), or its count of values. */
function counts(c: Column | null, part: Int32Array, partSpan: number, n: number): Column {
  const seen = new Int32Array(partSpan);
  const out = new BigInt64Array(n);
  const w = new Int32Array(out.buffer);
  const valid = c === null ? null : c.valid;
  if (valid === null) for (let i = 0; i < n; i++) w[2 * i] = ++seen[part[i]];
  else for (let i = 0; i < n; i++) w[2 * i] = seen[part[i]] += valid[i];
  return { type: { id: 'int64' }, length: n, values: out, valid: null };
}

/** Each row's partition's running sum, as int64 or decimal words; null where the partition held no value yet. */
function sums(f: BoundWindowFn, c: Column, part: Int32Array, partSpan: number, n: number): Column | null {
  const type = f.type;
  const v = c.values;
  const words = v instanceof BigInt64Array ? new Int32Array(v.buffer, v.byteOffset, 2 * n) : null;
  const small = words === null ? exactIntegers(c) : null;
  if (words === null && small === null) return null;
  const valid = c.valid;
  const wide = lanes(type) === 2;
  const stride = wide ? 4 : 2;
  const limit = Math.min(SAFE, type.id === 'decimal' ? 10 ** type.precision! : SAFE);
  const sum = new Float64Array(partSpan);
  const k = new Int32Array(partSpan);
  const out = new BigInt64Array(wide ? 2 * n : n);
  const w = new Int32Array(out.buffer);
  let nulls: Uint8Array | null = null;
  for (let i = 0; i < n; i++) {
    const q = part[i];
    if (valid === null || valid[i] === 1) {
      let x: number;
      if (words !== null) {
        const hi = words[2 * i + 1];
        if (hi >= 0x200000 || hi < -0x200000) return null;
        x = hi * TWO32 + (words[2 * i] >>> 0);
      } else x = small![i];
      const s = sum[q] + x;
      if (s >= limit || -s >= limit) return null;
      sum[q] = s;
      k[q]++;
    }
    if (k[q] === 0) {
      nulls ??= new Uint8Array(n).fill(1);
      nulls[i] = 0;
      continue;
    }
    const s = sum[q];
    const hi = Math.floor(s / TWO32);
    const at = stride * i;
    w[at] = (s - hi * TWO32) | 0;
    w[at + 1] = hi;
    if (wide) w[at + 2] = w[at + 3] = hi < 0 ? -1 : 0;
  }
  return { type, length: n, values: out, valid: nulls };
}
