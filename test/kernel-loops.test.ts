// Kernels whose row loops moved into functions of their own (so that V8
// recompiles a small loop, not the whole dispatcher, when a new column shape
// or comparator arrives): gatherMany, decimalSums and evalPredicate, each
// against a plain row-by-row reference on seeded random data with every rare
// path taken (missing rows, nulls, NaN, long strings, 128-bit carries).
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Batch, type Column, type DataType, decimalAt, gatherMany, valueAt } from '../dist/kernels/column.js';
import { decimalColumn, decimalSums, decimalSumsColumn } from '../dist/kernels/decimal.js';
import { evalPredicate } from '../dist/expr/filter.js';
import { hashJoin } from '../dist/kernels/join.js';
import { rowsAsStates } from '../dist/agg/partial.js';
import { minMax } from '../dist/agg/aggregate.js';
import { expectSame, tmpDir, writeParquet } from './helpers.js';
import { buildKeys } from '../dist/kernels/keys.js';
import type { BoundPredicate } from '../dist/plan/bound.js';

/** A small seeded generator (mulberry32): the same data every run. */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const enc = new TextEncoder();

function strings(vals: string[], valid: Uint8Array | null): Column {
  const parts = vals.map((s) => enc.encode(s));
  const offsets = new Int32Array(vals.length + 1);
  parts.forEach((p, i) => {
    offsets[i + 1] = offsets[i] + p.length;
  });
  const bytes = new Uint8Array(offsets[vals.length]);
  parts.forEach((p, i) => bytes.set(p, offsets[i]));
  return { type: { id: 'utf8' }, length: vals.length, values: bytes, offsets, valid };
}

/** A column of n rows of the given type, nulls where `nullRate` says (none at 0: valid is null). */
function column(type: DataType, n: number, r: () => number, nullRate: number): Column {
  const valid = nullRate > 0 ? Uint8Array.from({ length: n }, () => (r() < nullRate ? 0 : 1)) : null;
  switch (type.id) {
    case 'utf8':
      // short strings and some past 32 bytes (copied with set, not byte by byte)
      return strings(
        Array.from({ length: n }, (_, i) => (r() < 0.2 ? `long-${'x'.repeat(40)}-${i}` : `s${Math.floor(r() * 1000)}`)),
        valid,
      );
    case 'int16':
      return { type, length: n, values: Int16Array.from({ length: n }, () => Math.floor(r() * 60000) - 30000), valid };
    case 'int32':
      return { type, length: n, values: Int32Array.from({ length: n }, () => Math.floor(r() * 4e9) - 2e9), valid };
    case 'int64':
      return {
        type,
        length: n,
        values: BigInt64Array.from({ length: n }, () => BigInt(Math.floor(r() * 2 ** 52)) * (r() < 0.5 ? -3n : 5n)),
        valid,
      };
    case 'decimal': {
      const v = new BigInt64Array(2 * n);
      for (let i = 0; i < n; i++) {
        v[2 * i] = BigInt.asIntN(64, BigInt(Math.floor(r() * 2 ** 53)) << 11n);
        v[2 * i + 1] = BigInt(Math.floor(r() * 7) - 3);
      }
      return { type, length: n, values: v, valid };
    }
    case 'bool':
      return { type, length: n, values: Uint8Array.from({ length: n }, () => (r() < 0.5 ? 1 : 0)), valid };
    default:
      return {
        type,
        length: n,
        values: Float64Array.from({ length: n }, () => (r() < 0.05 ? NaN : r() * 200 - 100)),
        valid,
      };
  }
}

describe('gatherMany (loops in functions of their own)', () => {
  const types: DataType[] = [
    { id: 'int16' },
    { id: 'int32' },
    { id: 'int64' },
    { id: 'float64' },
    { id: 'bool' },
    { id: 'utf8' },
    { id: 'decimal', precision: 30, scale: 2 },
  ];
  for (const type of types) {
    it(`${type.id}: rows of several columns by index lists, -1 a null, with and without nulls`, () => {
      const r = rng(7);
      for (const [nullRate, missingRate] of [
        [0, 0],
        [0, 0.1],
        [0.2, 0],
        [0.2, 0.1],
      ]) {
        const cols = [column(type, 50, r, nullRate), column(type, 1, r, nullRate), column(type, 300, r, nullRate)];
        const idxs = cols.map((c, k) =>
          Int32Array.from({ length: [40, 3, 500][k] }, () => (r() < missingRate ? -1 : Math.floor(r() * c.length))),
        );
        // counts shorter than the index lists: only their first rows are taken
        const counts = [37, 3, 480];
        const out = gatherMany(type, cols, idxs, counts, false);
        const want: unknown[] = [];
        cols.forEach((c, k) => {
          for (let i = 0; i < counts[k]; i++) want.push(idxs[k][i] < 0 ? null : valueAt(c, idxs[k][i]));
        });
        const got = Array.from({ length: out.length }, (_, i) => valueAt(out, i));
        expect(got).toEqual(want);
        expect(out.valid === null).toBe(
          nullRate === 0 && !idxs.some((x, k) => x.subarray(0, counts[k]).some((j) => j < 0)),
        );
        if (missingRate === 0) {
          // a selection (no -1): the same rows without the scan for missing ones
          const sel = gatherMany(type, cols, idxs, counts, true);
          expect(Array.from({ length: sel.length }, (_, i) => valueAt(sel, i))).toEqual(want);
        }
      }
    });
  }
});

describe('decimalSums (loops in functions of their own)', () => {
  for (const precision of [18, 38]) {
    it(`decimal(${precision}, 2): exact sums per group, null for a group without values`, () => {
      const r = rng(precision);
      const n = 5000,
        G = 7;
      const type: DataType = { id: 'decimal', precision, scale: 2 };
      let c: Column;
      if (precision <= 18) {
        // values near ±2^62: the low words pass 2^31 (unsigned) and the sums carry
        const v = BigInt64Array.from({ length: n }, () =>
          BigInt.asIntN(64, (BigInt(Math.floor(r() * 2 ** 52)) << 10n) * (r() < 0.5 ? -1n : 1n)),
        );
        c = { type, length: n, values: v, valid: Uint8Array.from({ length: n }, () => (r() < 0.1 ? 0 : 1)) };
      } else {
        c = column(type, n, r, 0.1);
      }
      // group 6 gets only null rows
      const gid = Int32Array.from({ length: n }, (_, i) => (c.valid![i] === 0 && r() < 0.5 ? 6 : Math.floor(r() * 6)));
      const cnt = new Float64Array(G),
        want: bigint[] = new Array(G).fill(0n);
      for (let i = 0; i < n; i++) {
        if (!c.valid![i]) continue;
        cnt[gid[i]]++;
        want[gid[i]] += decimalAt(c, i);
      }
      const got = decimalSums(c, gid, G, cnt);
      expect(got.slice(0, 6)).toEqual(want.slice(0, 6));
      expect(got[6]).toBeNull();
    });
  }
});

describe('decimalSumsColumn (no bigint for sums within 2^53)', () => {
  const values = (c: Column) =>
    Array.from({ length: c.length }, (_, i) => (c.valid && !c.valid[i] ? null : decimalAt(c, i)));
  // per group: small sums, sums just inside and past ±2^53 (the bigint path), negative ones, and a group of nulls only
  const r = rng(3);
  const n = 4000,
    G = 9;
  const big = 2n ** 53n;
  const v = new BigInt64Array(n),
    valid = new Uint8Array(n).fill(1),
    gid = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const g = i % G;
    gid[i] = g;
    v[i] =
      g === 0
        ? BigInt(Math.floor(r() * 5000)) // small
        : g === 1
          ? -BigInt(Math.floor(r() * 5000)) // small, negative
          : g === 2
            ? big / 500n // about 0.9 x 2^53 in all: the word path
            : g === 3
              ? big / 400n // past 2^53: the bigint path
              : g === 4
                ? -(big / 400n) // past -2^53
                : g === 5
                  ? BigInt(Math.floor(r() * 2 ** 40)) * (r() < 0.5 ? -1n : 1n)
                  : g === 6
                    ? 3n
                    : g === 7
                      ? 7n
                      : 0n;
    if (g === 8 || r() < 0.05) valid[i] = 0;
  }
  const c: Column = { type: { id: 'decimal', precision: 18, scale: 2 }, length: n, values: v, valid };
  const cnt = new Float64Array(G);
  for (let i = 0; i < n; i++) if (valid[i]) cnt[gid[i]]++;
  for (const type of [
    { id: 'decimal', precision: 38, scale: 2 },
    { id: 'decimal', precision: 18, scale: 2 },
  ] as DataType[]) {
    it(`decimal(18, 2) summed into decimal(${type.precision}, 2): the bigint path's column`, () => {
      const got = decimalSumsColumn(c, gid, G, cnt, type, 'sum');
      const want = decimalColumn(decimalSums(c, gid, G, cnt), type, 'sum');
      expect(values(got)).toEqual(values(want));
      expect(got.valid && Array.from(got.valid)).toEqual(want.valid && Array.from(want.valid));
      expect(values(got)[8]).toBeNull();
      expect((values(got)[3] as bigint) > big).toBe(true);
    });
  }
  it("decimal(38, 2) (two lanes, as partial sums are) summed into decimal(38, 2): the bigint path's column", () => {
    // the same values sign-extended to 128 bits, and group 7 far past 64 bits
    const w = new BigInt64Array(2 * n);
    for (let i = 0; i < n; i++) {
      const x = gid[i] === 7 ? (BigInt(i) << 70n) * (i % 2 ? -1n : 1n) : v[i];
      w[2 * i] = BigInt.asIntN(64, x);
      w[2 * i + 1] = x >> 64n;
    }
    const c38: Column = { type: { id: 'decimal', precision: 38, scale: 2 }, length: n, values: w, valid };
    const type: DataType = { id: 'decimal', precision: 38, scale: 2 };
    const got = decimalSumsColumn(c38, gid, G, cnt, type, 'sum');
    const want = decimalColumn(decimalSums(c38, gid, G, cnt), type, 'sum');
    expect(values(got)).toEqual(values(want));
    expect(values(got).slice(0, 7)).toEqual(values(decimalSumsColumn(c, gid, G, cnt, type, 'sum')).slice(0, 7));
  });
  it("a sum past the type's digits is an error naming what is summed, on either path", () => {
    /** the column with only group g's values */
    const only = (g: number) => {
      const keep = Uint8Array.from(valid, (x, i) => (gid[i] === g ? x : 0));
      const k = new Float64Array(G);
      for (let i = 0; i < n; i++) if (keep[i]) k[gid[i]]++;
      return { col: { ...c, valid: keep } as Column, cnt: k };
    };
    const t = (p: number): DataType => ({ id: 'decimal', precision: p, scale: 2 });
    // small sums fit decimal(12, 2): the same values as the bigint path
    const g0 = only(0);
    expect(values(decimalSumsColumn(g0.col, gid, G, g0.cnt, t(12), 'x'))).toEqual(
      values(decimalColumn(decimalSums(g0.col, gid, G, g0.cnt), t(12), 'x')),
    );
    // within 2^53 but past 12 digits: caught on the word path's bound
    const g5 = only(5);
    expect(() => decimalColumn(decimalSums(g5.col, gid, G, g5.cnt), t(12), 'sum of "q"')).toThrow(/beyond 12 digits/);
    expect(() => decimalSumsColumn(g5.col, gid, G, g5.cnt, t(12), 'sum of "q"')).toThrow(
      /sum of "q": decimal result .* is beyond 12 digits/,
    );
    // past 2^53 and past 15 digits: the bigint path's error
    const g3 = only(3);
    expect(() => decimalSumsColumn(g3.col, gid, G, g3.cnt, t(15), 'sum of "q"')).toThrow(
      /sum of "q": decimal result .* is beyond 15 digits/,
    );
  });
});

describe('evalPredicate (loops in functions of their own)', () => {
  // three-valued reference: true 1, false 0, null 2
  const F = 0,
    T = 1,
    N = 2;
  const r = rng(11);
  const n = 400;
  const x: Column = column({ id: 'float64' }, n, r, 0.15); // NaN among the values
  const y: Column = column({ id: 'int32' }, n, r, 0);
  const s: Column = strings(
    Array.from({ length: n }, () => ['a', 'b', 'c'][Math.floor(r() * 3)]),
    Uint8Array.from({ length: n }, () => (r() < 0.1 ? 0 : 1)),
  );
  const b: Batch = { length: n, columns: [x, y, s] };
  const isNull = (c: Column, i: number) => c.valid !== null && c.valid[i] === 0;
  const cmp = (op: string, d: number): boolean =>
    (({ '=': d === 0, '!=': d !== 0, '<': d < 0, '<=': d <= 0, '>': d > 0, '>=': d >= 0 }) as Record<string, boolean>)[
      op
    ];
  const ref = (p: BoundPredicate, i: number): number => {
    switch (p.kind) {
      case 'isNull':
        return isNull(b.columns[p.col], i) === p.isNull ? T : F;
      case 'cmp': {
        const c = b.columns[p.col];
        if (p.value === null || isNull(c, i)) return N;
        const v = valueAt(c, i) as number | string;
        const d =
          typeof v === 'string' ? (v < String(p.value) ? -1 : v > String(p.value) ? 1 : 0) : v - Number(p.value);
        // NaN sorts above every number, as in DuckDB (the literal is never NaN here)
        return cmp(p.op, d !== d ? 1 : d) ? T : F;
      }
      case 'in': {
        const c = b.columns[p.col];
        if (isNull(c, i)) return N;
        const v = valueAt(c, i);
        return p.values.some((w) => w !== null && String(w) === String(v)) ? T : p.values.includes(null) ? N : F;
      }
      case 'not': {
        const v = ref(p.pred, i);
        return v === N ? N : 1 - v;
      }
      case 'and': {
        const vs = p.preds.map((q) => ref(q, i));
        return vs.includes(F) ? F : vs.includes(N) ? N : T;
      }
      case 'or': {
        const vs = p.preds.map((q) => ref(q, i));
        return vs.includes(T) ? T : vs.includes(N) ? N : F;
      }
      default:
        throw new Error(p.kind);
    }
  };
  const preds: BoundPredicate[] = [
    ...['=', '!=', '<', '<=', '>', '>='].map((op) => ({ kind: 'cmp', col: 0, op, value: 10 }) as BoundPredicate),
    { kind: 'cmp', col: 1, op: '<', value: 0 },
    { kind: 'cmp', col: 2, op: '>=', value: 'b' },
    { kind: 'cmp', col: 0, op: '=', value: null },
    { kind: 'isNull', col: 0, isNull: true },
    { kind: 'isNull', col: 1, isNull: true },
    { kind: 'isNull', col: 1, isNull: false },
    { kind: 'in', col: 2, values: ['a', 'c'] },
    { kind: 'in', col: 2, values: ['a', null] },
    { kind: 'not', pred: { kind: 'cmp', col: 0, op: '>', value: 0 } },
    {
      kind: 'and',
      preds: [
        { kind: 'cmp', col: 0, op: '>', value: -50 },
        { kind: 'in', col: 2, values: ['b', null] },
        { kind: 'cmp', col: 1, op: '!=', value: 3 },
      ],
    },
    {
      kind: 'or',
      preds: [
        { kind: 'cmp', col: 0, op: '<', value: -50 },
        { kind: 'isNull', col: 2, isNull: true },
        { kind: 'in', col: 2, values: ['c', null] },
      ],
    },
  ];
  for (const p of preds) {
    it(`${JSON.stringify(p)}: SQL's three-valued result on every row`, () => {
      const got = Array.from(evalPredicate(b, p));
      const want = Array.from({ length: n }, (_, i) => ref(p, i));
      expect(got).toEqual(want);
      // each outcome occurs, so that every path of the loop ran
      if (p.kind !== 'isNull' && !(p.kind === 'cmp' && p.value === null)) expect(new Set(got).size).toBeGreaterThan(1);
    });
  }
});

describe('the compact probe (its pair loop a function of its own)', () => {
  // keys with chains far longer than a chunk of pairs (65,536), unique keys, nulls and misses
  const r = rng(5);
  const ints = (vals: (number | null)[]): Batch => ({
    length: vals.length,
    columns: [
      {
        type: { id: 'int64' },
        length: vals.length,
        values: BigInt64Array.from(vals, (v) => BigInt(v ?? 0)),
        valid: vals.some((v) => v === null) ? Uint8Array.from(vals, (v) => (v === null ? 0 : 1)) : null,
      },
    ],
  });
  const keysOf = (b: Batch) => buildKeys(b, [0], [{ kind: 'int' }]);
  const cases: [string, (number | null)[], (number | null)[]][] = [
    // 300 build rows of key 1 and 700 probe rows of it: 210,000 pairs, chains cut by the chunk
    [
      'long chains',
      Array.from({ length: 400 }, (_, i) => (i < 300 ? 1 : i % 50)),
      Array.from({ length: 1000 }, (_, i) => (i < 700 ? 1 : i % 60)),
    ],
    // unique keys over a dense range (a direct table) and a sparse one (compact slots), nulls on both sides
    [
      'unique, dense',
      Array.from({ length: 3000 }, (_, i) => (i % 97 === 0 ? null : i)),
      Array.from({ length: 90000 }, () => (r() < 0.05 ? null : Math.floor(r() * 4000))),
    ],
    [
      'unique, sparse',
      Array.from({ length: 3000 }, (_, i) => i * 1_000_003),
      Array.from({ length: 70000 }, () => Math.floor(r() * 3500) * 1_000_003),
    ],
    [
      'repeated keys, nulls',
      Array.from({ length: 5000 }, () => (r() < 0.02 ? null : Math.floor(r() * 300))),
      Array.from({ length: 20000 }, () => (r() < 0.02 ? null : Math.floor(r() * 400))),
    ],
  ];
  for (const [what, build, probe] of cases) {
    for (const type of ['inner', 'left', 'right', 'full', 'semi', 'anti'] as const) {
      it(`${what}, ${type}: the pairs of a nested loop`, () => {
        const got = hashJoin(type, keysOf(ints(probe)), keysOf(ints(build)));
        const pairs = new Set<string>();
        for (let k = 0; k < got.n; k++) pairs.add(`${got.left[k]},${got.right[k]}`);
        expect(pairs.size).toBe(got.n);
        const byKey = new Map<number, number[]>();
        build.forEach((v, j) => {
          if (v !== null) byKey.set(v, [...(byKey.get(v) ?? []), j]);
        });
        const want = new Set<string>();
        const matchedBuild = new Set<number>();
        probe.forEach((v, i) => {
          const js = v === null ? [] : (byKey.get(v) ?? []);
          if (type === 'semi') {
            if (js.length) want.add(`${i},-1`);
            return;
          }
          if (type === 'anti') {
            if (!js.length) want.add(`${i},-1`);
            return;
          }
          for (const j of js) {
            want.add(`${i},${j}`);
            matchedBuild.add(j);
          }
          if (!js.length && (type === 'left' || type === 'full')) want.add(`${i},-1`);
        });
        if (type === 'right' || type === 'full')
          build.forEach((_, j) => {
            if (!matchedBuild.has(j)) want.add(`-1,${j}`);
          });
        expect(got.n).toBe(want.size);
        for (const x of want) if (!pairs.has(x)) throw new Error(`missing pair ${x}`);
      });
    }
  }
});

describe('pass-through states (rows widened word by word)', () => {
  it('sums of narrow integers and 64-bit decimals become int64 and decimal(38) states of the same values', () => {
    const r = rng(9);
    const n = 3000;
    const valid = Uint8Array.from({ length: n }, () => (r() < 0.1 ? 0 : 1));
    const cols: Column[] = [
      { type: { id: 'int32' }, length: n, values: Int32Array.from({ length: n }, (_, i) => i % 7), valid: null }, // the group column
      {
        type: { id: 'int8' },
        length: n,
        values: Int8Array.from({ length: n }, () => Math.floor(r() * 256) - 128),
        valid,
      },
      {
        type: { id: 'int16' },
        length: n,
        values: Int16Array.from({ length: n }, () => Math.floor(r() * 65536) - 32768),
        valid: null,
      },
      {
        type: { id: 'int32' },
        length: n,
        values: Int32Array.from({ length: n }, () => Math.floor(r() * 2 ** 32) - 2 ** 31),
        valid,
      },
      {
        type: { id: 'uint32' },
        length: n,
        values: Uint32Array.from({ length: n }, () => Math.floor(r() * 2 ** 32)),
        valid: null,
      },
      {
        type: { id: 'uint64' },
        length: n,
        values: BigUint64Array.from({ length: n }, () => BigInt(Math.floor(r() * 2 ** 53)) << 8n),
        valid: null,
      },
      {
        type: { id: 'decimal', precision: 18, scale: 2 },
        length: n,
        values: BigInt64Array.from(
          { length: n },
          () => BigInt(Math.floor(r() * 2 ** 53)) * (r() < 0.5 ? -977n : 1009n),
        ),
        valid,
      },
    ];
    const b: Batch = { length: n, columns: cols };
    const aggs = cols.slice(1).map((c, k) => ({ fn: 'sum', col: k + 1, as: `s${k}`, type: c.type }) as any);
    const out = rowsAsStates(b, [0], aggs);
    // group column, then (sum, count) per aggregate
    expect(out.columns.length).toBe(1 + 2 * aggs.length);
    aggs.forEach((a: any, k: number) => {
      const sum = out.columns[1 + 2 * k],
        cnt = out.columns[2 + 2 * k],
        src = cols[a.col];
      expect(sum.type.id).toBe(src.type.id === 'decimal' ? 'decimal' : 'int64');
      for (let i = 0; i < n; i++) {
        const isNull = src.valid !== null && src.valid[i] === 0;
        expect(valueAt(cnt, i)).toBe(isNull ? 0n : 1n);
        if (isNull) {
          expect(valueAt(sum, i)).toBeNull();
          continue;
        }
        const want = src.type.id === 'decimal' ? decimalAt(src, i) : BigInt((src.values as any)[i]);
        const got = src.type.id === 'decimal' ? decimalAt(sum, i) : (sum.values as BigInt64Array)[i];
        if (got !== want) throw new Error(`${src.type.id} row ${i}: ${got} != ${want}`);
      }
    });
  });
});

describe('min and max of small integers (best values kept per group)', () => {
  it('int8 to uint32 with nulls, negatives and a group of nulls only: the row-by-row answer', () => {
    const r = rng(21);
    const n = 2000,
      G = 13;
    const gid = Int32Array.from({ length: n }, () => Math.floor(r() * G));
    const cases: Column[] = [
      {
        type: { id: 'int8' },
        length: n,
        values: Int8Array.from({ length: n }, () => Math.floor(r() * 256) - 128),
        valid: null,
      },
      {
        type: { id: 'int16' },
        length: n,
        values: Int16Array.from({ length: n }, () => Math.floor(r() * 65536) - 32768),
        valid: null,
      },
      {
        type: { id: 'int32' },
        length: n,
        values: Int32Array.from({ length: n }, () => Math.floor(r() * 2 ** 32) - 2 ** 31),
        valid: null,
      },
      {
        type: { id: 'uint32' },
        length: n,
        values: Uint32Array.from({ length: n }, () => Math.floor(r() * 2 ** 32)),
        valid: null,
      },
      {
        type: { id: 'date32' },
        length: n,
        values: Int32Array.from({ length: n }, () => Math.floor(r() * 20000) - 5000),
        valid: null,
      },
    ];
    for (const c0 of cases) {
      // group 12 has only nulls
      const c: Column = {
        ...c0,
        valid: Uint8Array.from({ length: n }, (_, i) => (gid[i] === 12 || r() < 0.1 ? 0 : 1)),
      };
      for (const max of [false, true]) {
        const got = minMax(c, { gid, nGroups: G, first: new Int32Array(G) }, max);
        const want: (number | null)[] = new Array(G).fill(null);
        for (let i = 0; i < n; i++) {
          if (!c.valid![i]) continue;
          const x = (c.values as Int32Array)[i],
            w = want[gid[i]];
          if (w === null || (max ? x > w : x < w)) want[gid[i]] = x;
        }
        expect(got.type).toEqual(c.type);
        expect(
          Array.from({ length: G }, (_, k) => (got.valid && !got.valid[k] ? null : (got.values as Int32Array)[k])),
        ).toEqual(want);
      }
    }
  });
});

describe('substr over ASCII bytes', () => {
  it("every start and length case, nulls in either argument, ASCII and not: DuckDB's substrings", async () => {
    const dir = tmpDir('sj-substr-');
    const col = (c: string) => ({ column: c }),
      v = (x: unknown) => ({ value: x });
    const sub = (...args: object[]) => ({ fn: 'substr', args: [col('s'), ...args] });
    const cases: [object, string][] = [
      [sub(v(1), v(2)), 'substr(s, 1, 2)'],
      [sub(v(3)), 'substr(s, 3)'],
      [sub(v(0), v(3)), 'substr(s, 0, 3)'],
      [sub(v(-3)), 'substr(s, -3)'],
      [sub(v(-4), v(2)), 'substr(s, -4, 2)'],
      [sub(v(2), v(-1)), 'substr(s, 2, -1)'],
      [sub(v(40), v(2)), 'substr(s, 40, 2)'],
      [sub(col('k')), 'substr(s, k)'],
      [sub(col('k'), col('len')), 'substr(s, k, len)'],
    ];
    // an ASCII file (the byte path) and one with a non-ASCII string among them (the general path)
    for (const [name, odd] of [
      ['ascii', `'plain'`],
      ['utf8', `'héllo-wörld'`],
    ]) {
      const file = path.join(dir, `${name}.parquet`);
      await writeParquet(
        file,
        `SELECT i,
        CASE WHEN i % 13 = 0 THEN NULL WHEN i = 1500 THEN ${odd} ELSE repeat(chr((65 + i % 26)::INTEGER), (i % 7)::INTEGER) || '-' || (i * 37)::VARCHAR END AS s,
        CASE WHEN i % 17 = 0 THEN NULL ELSE (i % 11) - 5 END::INTEGER AS k, ((i % 9) - 3)::BIGINT AS len
        FROM range(0, 2000) t(i)`,
        1000,
      );
      const plan = {
        version: 1,
        sources: { t: { parquet: file } },
        query: {
          op: 'project',
          input: { op: 'scan', source: 't' },
          columns: ['i', ...cases.map(([e], j) => ({ name: `x${j}`, expr: e }))],
        },
      };
      await expectSame(
        plan,
        `SELECT i, ${cases.map(([, q], j) => `${q} AS x${j}`).join(', ')} FROM read_parquet('${file}')`,
      );
    }
  });
});
