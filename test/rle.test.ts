// Parquet's RLE/bit-packed hybrid decoder (io/rle.ts) against an encoder written here from the format's text:
// RLE runs short and long (one-byte and multi-byte headers, under and over fill's loop cutoff), bit-packed runs
// of every width it takes, short and long (their bytes copied by a loop or by set), mixed, and a run cut short by
// the count asked for.
import { describe, expect, it } from 'vitest';
import { CorruptPage, rleHybrid } from '../dist/io/rle.js';

/** ULEB128 of n. */
function varint(n: number, out: number[]): void {
  while (n >= 0x80) {
    out.push((n % 0x80) | 0x80);
    n = Math.floor(n / 0x80);
  }
  out.push(n);
}

type Run = { rle: number; value: number } | { packed: number[] };

/** The runs encoded at bitWidth; a bit-packed run's values padded with zeros to groups of 8. */
function encode(runs: Run[], bitWidth: number): Uint8Array {
  const out: number[] = [];
  for (const r of runs) {
    if ('rle' in r) {
      varint(r.rle * 2, out);
      for (let k = 0; k < (bitWidth + 7) >> 3; k++) out.push((r.value >>> (8 * k)) & 0xff);
    } else {
      const groups = Math.ceil(r.packed.length / 8);
      varint(groups * 2 + 1, out);
      const bytes = new Uint8Array(groups * bitWidth);
      r.packed.forEach((v, i) => {
        for (let b = 0; b < bitWidth; b++) {
          const bit = i * bitWidth + b;
          if ((v >>> b) & 1) bytes[bit >> 3] |= 1 << (bit & 7);
        }
      });
      out.push(...bytes);
    }
  }
  return Uint8Array.from(out);
}

const expand = (runs: Run[]) => runs.flatMap((r) => ('rle' in r ? Array(r.rle).fill(r.value) : r.packed));

/** A deterministic mix of runs of values below 2^bitWidth. */
function mixed(bitWidth: number, seed: number): Run[] {
  let x = seed;
  const rnd = (n: number) => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x % n;
  };
  const top = 2 ** bitWidth;
  const runs: Run[] = [];
  for (let k = 0; k < 40; k++) {
    if (rnd(2)) runs.push({ rle: [1, 8, 31, 32, 33, 63, 64, 200, 20000][rnd(9)], value: rnd(top) });
    else runs.push({ packed: Array.from({ length: 8 * [1, 2, 7, 8, 9, 70][rnd(6)] }, () => rnd(top)) });
  }
  return runs;
}

describe('RLE/bit-packed hybrid', () => {
  for (const bitWidth of [1, 2, 3, 6, 8, 13, 17, 24]) {
    it(`width ${bitWidth}: runs of every length, bit-packed runs short and long`, () => {
      const runs = mixed(bitWidth, bitWidth * 7 + 1);
      const want = expand(runs);
      const buf = encode(runs, bitWidth);
      const out = new Int32Array(want.length);
      expect(rleHybrid(buf, 0, buf.length, bitWidth, out, want.length)).toBe(buf.length);
      expect(Array.from(out)).toEqual(want);
      // fewer values than the runs hold: the last run read cut short
      const part = new Int32Array(want.length - 5);
      rleHybrid(buf, 0, buf.length, bitWidth, part, part.length);
      expect(Array.from(part)).toEqual(want.slice(0, part.length));
    });
  }

  it('data that ends inside a run is a corrupt page, not a wrong value', () => {
    const buf = encode([{ packed: Array.from({ length: 64 }, (_, i) => i % 4) }], 2);
    const out = new Int32Array(64);
    expect(() => rleHybrid(buf, 0, buf.length - 1, 2, out, 64)).toThrow(CorruptPage);
  });
});
