// Concatenating batches (kernels/column.ts): straight into shared memory as a
// broadcast side is (one copy), the same rows as the plain concatenation, for
// fixed-width, 64-bit, 128-bit decimal and string columns with and without nulls.
import { describe, expect, it } from 'vitest';
import { type Batch, type Column, type Schema, concatBatches, valueAt } from '../dist/kernels/column.js';

const schema: Schema = [
  { name: 'i', type: { id: 'int32' } },
  { name: 'b', type: { id: 'int64' } },
  { name: 's', type: { id: 'utf8' } },
  { name: 'd', type: { id: 'decimal', precision: 30, scale: 2 } },
];

/** Rows [from, to): i, i*2^33, 's'+i (null every 3rd row when `nulls`), a decimal of two 64-bit lanes. */
function batch(from: number, to: number, nulls: boolean): Batch {
  const n = to - from,
    enc = new TextEncoder();
  const strs = Array.from({ length: n }, (_, k) => enc.encode(`s${from + k}`));
  const offsets = new Int32Array(n + 1);
  strs.forEach((x, k) => {
    offsets[k + 1] = offsets[k] + x.length;
  });
  const bytes = new Uint8Array(offsets[n]);
  strs.forEach((x, k) => bytes.set(x, offsets[k]));
  const dec = new BigInt64Array(2 * n);
  for (let k = 0; k < n; k++) {
    dec[2 * k] = BigInt(from + k);
    dec[2 * k + 1] = BigInt(k % 2);
  }
  const cols: Column[] = [
    { type: schema[0].type, length: n, values: Int32Array.from({ length: n }, (_, k) => from + k), valid: null },
    {
      type: schema[1].type,
      length: n,
      values: BigInt64Array.from({ length: n }, (_, k) => BigInt(from + k) << 33n),
      valid: null,
    },
    {
      type: schema[2].type,
      length: n,
      values: bytes,
      offsets,
      valid: nulls ? Uint8Array.from({ length: n }, (_, k) => ((from + k) % 3 ? 1 : 0)) : null,
    },
    { type: schema[3].type, length: n, values: dec, valid: null },
  ];
  return { length: n, columns: cols };
}

const rows = (b: Batch) => Array.from({ length: b.length }, (_, i) => b.columns.map((c) => String(valueAt(c, i))));
const arrays = (b: Batch) => b.columns.flatMap((c) => [c.values, c.offsets, c.valid].filter((a) => a != null));

describe('concatBatches into shared memory', () => {
  it("gives the plain concatenation's rows, every array in a SharedArrayBuffer", () => {
    for (const parts of [
      [batch(0, 5, false), batch(5, 12, true), batch(12, 12, false), batch(12, 20, false)],
      [batch(3, 9, true)],
      [],
    ]) {
      const plain = concatBatches(schema, parts),
        shared = concatBatches(schema, parts, true);
      expect(rows(shared)).toEqual(rows(plain));
      expect(shared.length).toBe(parts.reduce((a, b) => a + b.length, 0));
      for (const a of arrays(shared)) expect(a!.buffer).toBeInstanceOf(SharedArrayBuffer);
      // the plain form stays unshared: only a broadcast side pays for shared memory
      for (const a of arrays(plain)) expect(a!.buffer).not.toBeInstanceOf(SharedArrayBuffer);
    }
    // nulls of one part and none in another: the validity of the part without any is all ones
    const mixed = concatBatches(schema, [batch(0, 3, false), batch(3, 7, true)], true);
    expect(Array.from(mixed.columns[2].valid!)).toEqual([1, 1, 1, 0, 1, 1, 0]);
    expect(valueAt(mixed.columns[2], 6)).toBeNull();
    expect(valueAt(mixed.columns[2], 5)).toBe('s5');
  });
});
