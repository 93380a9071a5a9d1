// The radix sort of fixed-width keys (kernels/radix.ts) gives the comparison
// sort's order exactly: every fixed-width type, negatives, -0, nulls first and
// last, descending, several keys, ties in input order.
import { describe, expect, it } from 'vitest';
import type { Batch, Column, DataType } from '../dist/kernels/column.js';
import { comparisonSort, sortIndices } from '../dist/kernels/sort.js';
import { radixOrder, sortWords } from '../dist/kernels/radix.js';

const N = 6000;
let seed = 12345;
const rand = () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed / 0x7fffffff;
};

function column(type: DataType, nulls: boolean): Column {
  const valid = nulls ? Uint8Array.from({ length: N }, () => (rand() < 0.1 ? 0 : 1)) : null;
  const few = () => Math.floor(rand() * 50) - 25; // many ties
  let values: Column['values'];
  switch (type.id) {
    case 'int8':
      values = Int8Array.from({ length: N }, few);
      break;
    case 'int16':
      values = Int16Array.from({ length: N }, () => few() * 1000);
      break;
    case 'int32':
    case 'date32':
      values = Int32Array.from({ length: N }, () => few() * 80000000);
      break;
    case 'uint32':
      values = Uint32Array.from({ length: N }, () => Math.floor(rand() * 4e9));
      break;
    case 'uint64':
      values = BigUint64Array.from({ length: N }, () => BigInt(Math.floor(rand() * 2 ** 52)) * 4099n);
      break;
    case 'int64':
    case 'timestamp':
      values = BigInt64Array.from({ length: N }, () => BigInt(few()) * 2n ** 40n + BigInt(few()));
      break;
    case 'float64':
      values = Float64Array.from(
        { length: N },
        () => [-0, 0, Infinity, -Infinity, 1e-300, -1e300][Math.floor(rand() * 12)] ?? few() / 7,
      );
      break;
    case 'float32':
      values = Float32Array.from({ length: N }, () => few() / 3);
      break;
    case 'decimal': {
      const v = new BigInt64Array(2 * N); // 128-bit: low lane, then the signed high lane
      for (let i = 0; i < N; i++) {
        v[2 * i] = BigInt(few()) * 2n ** 62n;
        v[2 * i + 1] = BigInt(few() % 3);
      }
      values = v;
      break;
    }
    default:
      throw new Error(type.id);
  }
  return { type, length: N, values, valid };
}

const TYPES: DataType[] = [
  { id: 'int8' },
  { id: 'int16' },
  { id: 'int32' },
  { id: 'date32' },
  { id: 'uint32' },
  { id: 'uint64' },
  { id: 'int64' },
  { id: 'timestamp', unit: 'microsecond', tz: null },
  { id: 'float64' },
  { id: 'float32' },
  { id: 'decimal', precision: 30, scale: 2 },
];

describe('radix sort of fixed-width keys', () => {
  it.each(TYPES.map((t) => [t.id, t] as const))(
    "%s: asc/desc, nulls first/last, the comparison sort's order",
    (_, type) => {
      for (const nulls of [false, true]) {
        const b: Batch = { length: N, columns: [column(type, nulls)] };
        for (const desc of [false, true])
          for (const nullsFirst of [false, true]) {
            const keys = [{ col: 0, desc, nullsFirst }];
            const radix = radixOrder(sortWords(b, keys)!, N);
            expect(Array.from(radix)).toEqual(Array.from(comparisonSort(b, keys)));
          }
      }
    },
  );
  it('several keys of different types, ties in input order; sortIndices takes the radix path', () => {
    const b: Batch = {
      length: N,
      columns: [column({ id: 'int8' }, true), column({ id: 'float64' }, false), column({ id: 'int64' }, true)],
    };
    const keys = [
      { col: 0, desc: true, nullsFirst: true },
      { col: 1, desc: false, nullsFirst: false },
      { col: 2, desc: true, nullsFirst: false },
    ];
    expect(Array.from(sortIndices(b, keys))).toEqual(Array.from(comparisonSort(b, keys)));
    // a key on its own leaves ties (many: 50 values) in input order
    const one = sortIndices(b, [{ col: 0, desc: false, nullsFirst: false }]);
    for (let i = 1; i < N; i++) {
      const a = b.columns[0],
        x = one[i - 1],
        y = one[i];
      const same =
        (a.valid![x] === 0 && a.valid![y] === 0) ||
        (a.valid![x] !== 0 && a.valid![y] !== 0 && a.values[x] === a.values[y]);
      if (same) expect(x).toBeLessThan(y);
    }
  });
  it('a string key: no words (the comparison sort is used)', () => {
    const s: Column = {
      type: { id: 'utf8' },
      length: 1,
      values: new Uint8Array([97]),
      offsets: new Int32Array([0, 1]),
      valid: null,
    };
    expect(sortWords({ length: 1, columns: [s] }, [{ col: 0, desc: false, nullsFirst: false }])).toBeNull();
  });
});
