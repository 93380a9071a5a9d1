// Decimal products narrowed for the combiner: a computed decimal column of
// 128-bit type (TPC-H q01's `l_extendedprice * (1 - l_discount) * (1 +
// l_tax)` is decimal(38,6)) whose values fit 64 bits is written in 64-bit
// lanes (decimal(18, s)) when only sums and averages read it before the
// combiner: half the bytes written and read, and the 64-bit sum loop. The sum
// state's type comes from the scale alone (decimal(38, s)), so the states are
// the same; rows that pass through the combiner as they are get their
// schema's lanes back first.
import type { Batch, Column, Schema } from '../kernels/column.js';
import { lanes } from '../kernels/column.js';
import type { BoundAggregate } from '../plan/bound.js';
import { stateOf } from './functions.js';

/** Columns of the combiner's input that only sum and avg read (not grouped by, not min/max/count_distinct). */
export function sumOnlyColumns(groupBy: number[], aggs: BoundAggregate[]): Set<number> {
  const out = new Set<number>(),
    other = new Set<number>(groupBy);
  for (const a of aggs) {
    if (a.col < 0) continue;
    const kind = stateOf(a)?.kind;
    if (kind === 'sum') out.add(a.col);
    else if (kind !== 'count') other.add(a.col);
  }
  for (const c of other) out.delete(c);
  return out;
}

/** 64-bit decimal lanes sign-extended to 128 bits. */
export function decimalLanes128(src: BigInt64Array, n: number): BigInt64Array {
  const out = new BigInt64Array(2 * n);
  widen64(new Int32Array(src.buffer, src.byteOffset, 2 * n), new Int32Array(out.buffer), n);
  return out;
}

function widen64(s: Int32Array, w: Int32Array, n: number): void {
  for (let i = 0; i < n; i++) {
    const hi = s[2 * i + 1];
    w[4 * i] = s[2 * i];
    w[4 * i + 1] = hi;
    w[4 * i + 2] = w[4 * i + 3] = hi >> 31;
  }
}

/**
 * `b` with every decimal column narrowed to 64-bit lanes given its schema's 128-bit lanes back (the same batch if
 * none).
 */
export function widenNarrowed(b: Batch, schema: Schema): Batch {
  let columns: Column[] | null = null;
  b.columns.forEach((c, i) => {
    const t = schema[i]?.type;
    if (!t || t.id !== 'decimal' || c.type.id !== 'decimal' || lanes(c.type) === lanes(t)) return;
    columns ??= b.columns.slice();
    columns[i] = { ...c, type: t, values: decimalLanes128(c.values as BigInt64Array, c.length) };
  });
  return columns ? { length: b.length, columns } : b;
}
