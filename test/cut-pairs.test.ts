// A join's matches cut straight into a sort's ranges (shuffle/cut-pairs.ts) must
// give the very blocks the path it replaces gives: the matches gathered into
// joined batches (physical/join/gather.ts), then cut by rangePartition. Checked byte
// for byte over every column type a block holds (nulls, strings with empty
// ones, booleans, wide decimals), a number key (the words path of rangeIds)
// and a string key (the comparator path), boundaries repeated by a hot value,
// with and without the right side's columns. The queries through it (every
// join type, spills, skew splits) are DuckDB-checked in sort-join.test.ts.
import { describe, expect, it } from 'vitest';
import { GatherSink } from '../dist/physical/join/gather.js';
import { rangePartition } from '../dist/shuffle/range-partition.js';
import { cutPairs } from '../dist/shuffle/cut-pairs.js';

let seed = 99;
const rnd = (m: number) => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed % m;
};
const enc = new TextEncoder();

function strings(xs: (string | null)[]) {
  const bytes = xs.map((x) => enc.encode(x ?? ''));
  const offsets = new Int32Array(xs.length + 1);
  bytes.forEach((b, i) => {
    offsets[i + 1] = offsets[i] + b.length;
  });
  const values = new Uint8Array(offsets[xs.length]);
  bytes.forEach((b, i) => values.set(b, offsets[i]));
  return {
    type: { id: 'utf8' },
    length: xs.length,
    values,
    offsets,
    valid: Uint8Array.from(xs, (x) => (x === null ? 0 : 1)),
  };
}

/** Left rows: a float64 sort key with a hot value (0) and nulls, an int64, a string key; right rows: bool, wide decimal, string, int32. */
function left(n: number) {
  const v = Float64Array.from({ length: n }, () => (rnd(3) === 0 ? 0 : rnd(500) / 4));
  const vValid = Uint8Array.from({ length: n }, () => (rnd(11) === 0 ? 0 : 1));
  return {
    length: n,
    columns: [
      { type: { id: 'float64' }, length: n, values: v, valid: vValid },
      {
        type: { id: 'int64' },
        length: n,
        values: BigInt64Array.from({ length: n }, () => BigInt(rnd(1e9) - 5e8)),
        valid: null,
      },
      strings(Array.from({ length: n }, () => (rnd(9) === 0 ? null : rnd(7) === 0 ? '' : `s${rnd(40)}`))),
    ],
  };
}
function right(n: number) {
  const dec = new BigInt64Array(2 * n);
  for (let i = 0; i < n; i++) {
    dec[2 * i] = BigInt(rnd(1e9));
    dec[2 * i + 1] = BigInt(rnd(5) - 2);
  }
  return {
    length: n,
    columns: [
      {
        type: { id: 'bool' },
        length: n,
        values: Uint8Array.from({ length: n }, () => rnd(2)),
        valid: Uint8Array.from({ length: n }, () => (rnd(5) === 0 ? 0 : 1)),
      },
      { type: { id: 'decimal', precision: 38, scale: 2 }, length: n, values: dec, valid: null },
      strings(Array.from({ length: n }, () => `region-${rnd(5)}`)),
      { type: { id: 'int32' }, length: n, values: Int32Array.from({ length: n }, () => rnd(1000)), valid: null },
    ],
  };
}

/** Matches: for each left batch, chunks of up to 300 pairs (left rows in order, right rows at random, some left rows twice). */
function matches() {
  const r = right(700);
  const chunks = [];
  for (const n of [1000, 1, 2500, 40]) {
    const l = left(n);
    const li: number[] = [],
      ri: number[] = [];
    for (let i = 0; i < n; i++)
      for (let k = rnd(3); k > 0; k--) {
        li.push(i);
        ri.push(rnd(r.length));
      }
    for (let a = 0; a < li.length; a += 300)
      chunks.push({ l, r, li: Int32Array.from(li.slice(a, a + 300)), ri: Int32Array.from(ri.slice(a, a + 300)) });
  }
  return chunks;
}

const bytesOf = (a: ArrayBufferView | null | undefined) =>
  a ? Array.from(new Uint8Array(a.buffer, a.byteOffset, a.byteLength)) : null;

describe('cutPairs', () => {
  const chunks = matches();
  // the boundaries: rows of the joined output (sorted by the key), some repeated (the hot value 0 and a string)
  const cases = [
    ['a number key with nulls (first)', [{ col: 0, desc: false, nullsFirst: true }]],
    ['an int64 key with no nulls (two words: the inline search)', [{ col: 1, desc: false, nullsFirst: false }]],
    [
      'a string key, descending, then the number',
      [
        { col: 2, desc: true, nullsFirst: false },
        { col: 0, desc: false, nullsFirst: false },
      ],
    ],
  ] as const;
  it.each(cases)(
    '%s: the blocks of gather + rangePartition, byte for byte, with and without the right side',
    (_, by) => {
      for (const withRight of [true, false]) {
        const g = new GatherSink(withRight);
        for (const c of chunks) g.add(c.l, c.r, c.li, c.ri, c.li.length);
        g.flush();
        const joined = g.batches[0];
        // boundaries picked from the joined rows by hand: sorted order is not needed for a byte comparison, but
        // rangeIds needs sorted boundaries, so take the rows of a few key values in key order
        const pick = sortedBounds(joined, by);
        const bounds = { length: pick.length, columns: joined.columns.map((c: any) => gatherCol(c, pick)) };
        const want = rangePartition(g.batches, by as any, bounds, 17);
        const got = cutPairs(chunks, withRight, by as any, bounds, 17);
        expect(got.rows).toEqual(want.rows);
        expect(got.bytes).toEqual(want.bytes);
        expect(want.rows.filter((n: number) => n > 0).length).toBeGreaterThan(5);
        got.blocks.forEach((b: any, p: number) => {
          const w = want.blocks[p];
          if (w === null) {
            expect(b).toBeNull();
            return;
          }
          expect(b.length).toBe(w.length);
          b.columns.forEach((c: any, k: number) => {
            expect(c.type).toEqual(w.columns[k].type);
            expect(bytesOf(c.values)).toEqual(bytesOf(w.columns[k].values));
            expect(bytesOf(c.offsets)).toEqual(bytesOf(w.columns[k].offsets));
            expect(bytesOf(c.valid)).toEqual(bytesOf(w.columns[k].valid));
          });
        });
      }
    },
  );

  it('a projection between the join and the sort (columns chosen and reordered): the blocks of gather, project, rangePartition', () => {
    // joined columns: left 0 float64, 1 int64, 2 utf8; right 3 bool, 4 decimal, 5 utf8, 6 int32
    const select = [5, 0, 2, 6];
    const by = [
      { col: 2, desc: false, nullsFirst: false },
      { col: 1, desc: true, nullsFirst: true },
    ];
    const g = new GatherSink(true);
    for (const c of chunks) g.add(c.l, c.r, c.li, c.ri, c.li.length);
    g.flush();
    const projected = g.batches.map((b: any) => ({ length: b.length, columns: select.map((i) => b.columns[i]) }));
    const pick = sortedBounds(projected[0], by);
    const bounds = { length: pick.length, columns: projected[0].columns.map((c: any) => gatherCol(c, pick)) };
    const want = rangePartition(projected, by as any, bounds, 5);
    const got = cutPairs(chunks, true, by as any, bounds, 5, select);
    expect(got.rows).toEqual(want.rows);
    expect(want.rows.filter((n: number) => n > 0).length).toBeGreaterThan(5);
    got.blocks.forEach((b: any, p: number) => {
      const w = want.blocks[p];
      if (w === null) {
        expect(b).toBeNull();
        return;
      }
      expect(b.columns.map((c: any) => c.type)).toEqual(w.columns.map((c: any) => c.type));
      b.columns.forEach((c: any, k: number) => {
        expect(bytesOf(c.values)).toEqual(bytesOf(w.columns[k].values));
        expect(bytesOf(c.offsets)).toEqual(bytesOf(w.columns[k].offsets));
        expect(bytesOf(c.valid)).toEqual(bytesOf(w.columns[k].valid));
      });
    });
  });
});

/** Row numbers of the joined rows at 12 evenly spaced places of their sort order, repeated where the hot value falls. */
function sortedBounds(b: any, by: readonly { col: number; desc: boolean; nullsFirst: boolean }[]): Int32Array {
  const cell = (c: any, i: number) =>
    c.valid && c.valid[i] === 0
      ? null
      : c.offsets
        ? new TextDecoder().decode(c.values.subarray(c.offsets[i], c.offsets[i + 1]))
        : c.values[i];
  const cmp = (i: number, j: number) => {
    for (const k of by) {
      const x = cell(b.columns[k.col], i),
        y = cell(b.columns[k.col], j);
      if (x === y) continue;
      if (x === null) return k.nullsFirst ? -1 : 1;
      if (y === null) return k.nullsFirst ? 1 : -1;
      return (x < y ? -1 : 1) * (k.desc ? -1 : 1);
    }
    return 0;
  };
  const order = Array.from({ length: b.length }, (_, i) => i).sort(cmp);
  return Int32Array.from({ length: 12 }, (_, k) => order[Math.floor(((k + 1) * order.length) / 13)]);
}

function gatherCol(c: any, idx: Int32Array) {
  if (c.offsets) {
    const xs = Array.from(idx, (i) =>
      c.valid && c.valid[i] === 0 ? null : new TextDecoder().decode(c.values.subarray(c.offsets[i], c.offsets[i + 1])),
    );
    return strings(xs);
  }
  const lanes = c.values.length / c.length;
  const values = new c.values.constructor(idx.length * lanes);
  idx.forEach((i, j) => {
    for (let l = 0; l < lanes; l++) values[j * lanes + l] = c.values[i * lanes + l];
  });
  return { type: c.type, length: idx.length, values, valid: c.valid ? Uint8Array.from(idx, (i) => c.valid[i]) : null };
}
