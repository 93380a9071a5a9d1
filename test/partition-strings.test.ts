// A map task's string columns cut into partition blocks (shuffle/partition.ts): strings of one byte each take a path
// of their own (a row's byte lands where its row does); every other column of strings the general one. Each block
// must hold its rows' strings, in order, with nulls, whichever path a column took.
import { describe, expect, it } from 'vitest';
import { partitionBatches } from '../dist/shuffle/partition.js';
import { rng } from '../dist/bench/zipf.js';

type Str = string | null;

/** A batch of an int64 row number (the key) and one string column, its bytes starting `skew` bytes in. */
function batch(first: number, strs: Str[], skew: number, nullBytes: string) {
  const n = strs.length;
  const enc = strs.map((s) => new TextEncoder().encode(s ?? nullBytes));
  const total = enc.reduce((t, e) => t + e.length, 0);
  const bytes = new Uint8Array(skew + total);
  const offsets = new Int32Array(n + 1);
  offsets[0] = skew;
  enc.forEach((e, i) => {
    bytes.set(e, offsets[i]);
    offsets[i + 1] = offsets[i] + e.length;
  });
  const valid = strs.some((s) => s === null) ? Uint8Array.from(strs, (s) => (s === null ? 0 : 1)) : null;
  const ids = BigInt64Array.from({ length: n }, (_, i) => BigInt(first + i));
  return {
    length: n,
    columns: [
      { type: { id: 'int64' as const }, length: n, values: ids, valid: null },
      { type: { id: 'utf8' as const }, length: n, values: bytes, offsets, valid },
    ],
  };
}

/** The strings of every block, by row number, with each block's rows in their input order. */
function cut(batches: ReturnType<typeof batch>[], P: number) {
  const spec = { keys: [0], norms: [{ kind: 'int' as const }], partitions: P, spreadNulls: false, nullSeed: 0 };
  const { blocks, rows } = partitionBatches(batches, spec as any);
  const got = new Map<number, Str>();
  let n = 0;
  blocks.forEach((b: any, p: number) => {
    expect(b?.length ?? 0).toBe(rows[p]);
    if (!b) return;
    const ids = b.columns[0].values as BigInt64Array;
    const s = b.columns[1];
    for (let i = 0; i < b.length; i++) {
      if (i > 0) expect(ids[i] > ids[i - 1], `block ${p} keeps its rows in order`).toBe(true);
      const v =
        s.valid && !s.valid[i] ? null : new TextDecoder().decode(s.values.subarray(s.offsets[i], s.offsets[i + 1]));
      got.set(Number(ids[i]), v);
      n++;
    }
    expect(s.offsets[0]).toBe(0);
    expect(s.values.length).toBe(s.offsets[b.length]);
  });
  return { got, n };
}

/** `nullBytes`: what a null's string holds (a writer may leave a byte under it). */
function check(cols: Str[][], P: number, nullBytes = '') {
  let first = 0;
  const batches = cols.map((strs, k) => {
    const b = batch(first, strs, 3 * k, nullBytes);
    first += strs.length;
    return b;
  });
  const { got, n } = cut(batches, P);
  const want = cols.flat();
  expect(n).toBe(want.length);
  want.forEach((s, i) => expect(got.get(i), `row ${i}`).toBe(s === null ? null : s));
}

describe('string columns cut into partition blocks', () => {
  const next = rng(7);
  const flags = (n: number) => Array.from({ length: n }, () => 'ANR'[Math.floor(next() * 3)]);
  it('one byte a string, over several batches whose bytes start past 0: every block its rows’ flags', () => {
    check([flags(1000), flags(1), flags(2500)], 13);
  });
  it('one byte a string, with nulls (an empty null takes the general path; a null over a byte the unit path)', () => {
    const f = flags(800).map((s, i) => (i % 7 === 0 ? null : s));
    check([f, flags(300)], 5);
    check([f, flags(300)], 5, 'Z');
  });
  it('lengths 0 and 2 that add up to one byte a row: the general path, every string whole', () => {
    const strs = Array.from({ length: 1200 }, (_, i) => (i % 2 ? 'xy' : ''));
    check([strs, flags(400)], 9);
  });
  it('one batch of one-byte strings beside one of longer ones: the general path for both', () => {
    check([flags(600), ['status', 'ok', 'β', '', 'long string here']], 4);
  });
  it('multi-byte characters of one code point are not one byte', () => {
    check([Array.from({ length: 500 }, (_, i) => (i % 3 ? 'é' : 'e'))], 6);
  });
});
