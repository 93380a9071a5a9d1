// The keys' bitmap probed before a compact table's slots (kernels/key-bits.ts): the same pairs as the table
// alone for every join type, over sparse keys, negatives, nulls and probe keys outside the range or past 32 bits;
// none where a key is past 32 bits or the span is too wide (wider allowed for a large table).
import { describe, expect, it } from 'vitest';
import { keyBits } from '../dist/kernels/key-bits.js';
import { JoinProbe } from '../dist/kernels/join.js';
import { KeyTable } from '../dist/kernels/table.js';
import { buildKeys } from '../dist/kernels/keys.js';
import type { Column } from '../dist/kernels/column.js';

function keysOf(xs: (bigint | null)[]) {
  const c: Column = {
    type: { id: 'int64' },
    length: xs.length,
    values: BigInt64Array.from(xs, (x) => x ?? 0n),
    valid: xs.includes(null) ? Uint8Array.from(xs, (x) => (x === null ? 0 : 1)) : null,
  };
  return buildKeys({ length: xs.length, columns: [c] }, [0], [{ kind: 'int' }]);
}

function pairs(
  type: 'inner' | 'left' | 'semi' | 'anti',
  build: ReturnType<typeof keysOf>,
  t: KeyTable,
  probe: ReturnType<typeof keysOf>,
) {
  const out: number[] = [];
  new JoinProbe(type, build, t).probe(probe, (a, b, n) => {
    for (let i = 0; i < n; i++) out.push(a[i], b[i]);
  });
  return out;
}

describe("a compact table's keys as a bitmap", () => {
  const builds: Record<string, (bigint | null)[]> = {
    'sparse ids with nulls and repeats': Array.from({ length: 3000 }, (_, i) =>
      i % 41 === 0 ? null : BigInt((i * 13) % 30000),
    ),
    'negative, down to -2^31': Array.from({ length: 2000 }, (_, i) => BigInt(-(2 ** 31) + ((i * 37) % 60000))),
    'up to 2^31 - 1': Array.from({ length: 2000 }, (_, i) => BigInt(2 ** 31 - 1 - ((i * 29) % 50000))),
  };
  const probe = (xs: (bigint | null)[]) => {
    const present = xs.filter((x): x is bigint => x !== null);
    const min = present.reduce((a, b) => (b < a ? b : a)),
      max = present.reduce((a, b) => (b > a ? b : a));
    // every key of the range and around it, keys past 32 bits with the same low word, and nulls
    const ks: (bigint | null)[] = [];
    for (let k = min - 70n; k <= max + 70n; k += 3n) ks.push(k);
    for (let i = 0; i < 200; i++) ks.push(present[i] + (1n << 32n), present[i] - (1n << 32n), null);
    return ks;
  };
  for (const [name, xs] of Object.entries(builds)) {
    it(name, () => {
      const b = keysOf(xs),
        p = keysOf(probe(xs));
      const plain = new KeyTable(b, true);
      expect(plain.slots).not.toBeNull();
      const bits = keyBits(b);
      expect(bits).not.toBeNull();
      const withBits = new KeyTable(b, true, { ...plain, bits });
      for (const type of ['inner', 'left', 'semi', 'anti'] as const) {
        const want = pairs(type, b, plain, p);
        expect(want.length).toBeGreaterThan(0);
        expect(pairs(type, b, withBits, p)).toEqual(want);
      }
    });
  }

  it('none past 32 bits or over 64 values a row', () => {
    expect(keyBits(keysOf([1n, 2n, 1n << 33n]))).toBeNull();
    expect(keyBits(keysOf([-(1n << 31n) - 1n, 5n]))).toBeNull();
    expect(keyBits(keysOf([0n, 1000n]))).toBeNull();
    expect(keyBits(keysOf([0n, 127n]))).toMatchObject({ base: 0, span: 128 });
  });

  it('a large table: up to 2^26 values however sparse (TPC-H q04: 575K orders over 60M keys)', () => {
    const sparse = (n: number, step: number) => keysOf(Array.from({ length: n }, (_, i) => BigInt(i * step)));
    expect(keyBits(sparse(1 << 16, 200))).toMatchObject({ base: 0, span: ((1 << 16) - 1) * 200 + 1 });
    expect(keyBits(sparse((1 << 16) - 1, 200))).toBeNull(); // fewer rows: 64 values a row at most
    expect(keyBits(sparse(1 << 16, 1100))).toBeNull(); // past 2^26 values
  });
});
