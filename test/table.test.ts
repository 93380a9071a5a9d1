// The join tables of kernels/table.ts: a direct table (keys over a dense
// range) and the compact slot table give the same pairs as a nested loop,
// for every join type, with duplicates, nulls, negative keys and keys past
// 2^32; probe keys without hashes find rows in a direct table.
import { describe, expect, it } from 'vitest';
import type { Batch, DataType } from '../dist/kernels/column.js';
import { buildKeys } from '../dist/kernels/keys.js';
import { KeyTable, directTable } from '../dist/kernels/table.js';
import { JoinProbe } from '../dist/kernels/join.js';

let seed = 777;
const rand = () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed / 0x7fffffff;
};

const INT64: DataType = { id: 'int64' };
const INT32: DataType = { id: 'int32' };
const NORM = [{ kind: 'int' as const }];

function batch(keys: (number | null)[], type: DataType): Batch {
  const valid = keys.some((k) => k === null) ? Uint8Array.from(keys, (k) => (k === null ? 0 : 1)) : null;
  const values =
    type.id === 'int64' ? BigInt64Array.from(keys, (k) => BigInt(k ?? 0)) : Int32Array.from(keys, (k) => k ?? 0);
  return { length: keys.length, columns: [{ type, length: keys.length, values, valid }] };
}

/** Pairs [probe row, build row] (-1: missing) of a nested loop (rows per key looked up in a Map): nulls never match. */
function nestedLoop(type: string, probe: (number | null)[], build: (number | null)[]): string[] {
  const out: string[] = [];
  const matched = new Set<number>();
  const rows = new Map<number, number[]>();
  build.forEach((b, j) => {
    if (b !== null) rows.set(b, [...(rows.get(b) ?? []), j]);
  });
  probe.forEach((p, i) => {
    const hits = p === null ? [] : (rows.get(p) ?? []);
    hits.forEach((j) => matched.add(j));
    if (type === 'semi') {
      if (hits.length) out.push(`${i},-1`);
      return;
    }
    if (type === 'anti') {
      if (!hits.length) out.push(`${i},-1`);
      return;
    }
    hits.forEach((j) => out.push(`${i},${j}`));
    if (!hits.length && (type === 'left' || type === 'full')) out.push(`${i},-1`);
  });
  if (type === 'right' || type === 'full')
    build.forEach((_, j) => {
      if (!matched.has(j)) out.push(`-1,${j}`);
    });
  return out.sort();
}

function joined(type: any, probe: (number | null)[], build: (number | null)[], kt: DataType, hashedProbe = true) {
  const bk = buildKeys(batch(build, kt), [0], NORM);
  const table = new KeyTable(bk, true);
  const j = new JoinProbe(type, bk, table);
  const out: string[] = [];
  const emit = (pa: Int32Array, pb: Int32Array, n: number) => {
    for (let k = 0; k < n; k++) out.push(`${pa[k]},${pb[k]}`);
  };
  j.probe(buildKeys(batch(probe, kt), [0], NORM, undefined, hashedProbe || table.direct === null), emit);
  j.finish(emit);
  return { pairs: out.sort(), table };
}

const TYPES = ['inner', 'left', 'right', 'full', 'semi', 'anti'];

describe('join tables', () => {
  const cases: {
    name: string;
    build: (number | null)[];
    layout: 'direct' | 'slots';
    unique: boolean;
    kt?: DataType;
  }[] = [
    {
      name: 'dense unique ids',
      build: Array.from({ length: 3000 }, (_, i) => 3000 - i),
      layout: 'direct',
      unique: true,
    },
    {
      name: 'dense with duplicates and nulls',
      build: Array.from({ length: 3000 }, () => (rand() < 0.05 ? null : Math.floor(rand() * 1500))),
      layout: 'direct',
      unique: false,
    },
    {
      name: 'negative keys',
      build: Array.from({ length: 2000 }, (_, i) => i - 1000),
      layout: 'direct',
      unique: true,
      kt: INT32,
    },
    {
      name: 'keys past 2^32',
      build: Array.from({ length: 2000 }, (_, i) => 5_000_000_000 + 3 * i),
      layout: 'direct',
      unique: true,
    },
    {
      name: 'sparse keys',
      build: Array.from({ length: 2000 }, (_, i) => i * 1_000_003),
      layout: 'slots',
      unique: true,
    },
    {
      name: 'sparse with duplicates',
      build: Array.from({ length: 2000 }, (_, i) => (i % 700) * 99_991),
      layout: 'slots',
      unique: false,
    },
    { name: 'only nulls', build: [null, null, null], layout: 'slots', unique: true },
  ];
  for (const c of cases) {
    it(`${c.name}: ${c.layout} layout, every join type as a nested loop`, () => {
      const kt = c.kt ?? INT64;
      const values = c.build.filter((x): x is number => x !== null);
      const lo = values.length ? Math.min(...values) : 0,
        hi = values.length ? Math.max(...values) : 0;
      // probe keys: in the table's range, around its edges, beyond it, nulls
      const probe = Array.from({ length: 2500 }, () => {
        const r = rand();
        if (r < 0.05) return null;
        if (r < 0.1) return lo - 1 - Math.floor(rand() * 3);
        if (r < 0.15) return hi + 1 + Math.floor(rand() * 3);
        return values.length ? values[Math.floor(rand() * values.length)] + (rand() < 0.2 ? 1 : 0) : 7;
      });
      for (const type of TYPES) {
        const { pairs, table } = joined(type, probe, c.build, kt);
        expect(table.direct !== null ? 'direct' : 'slots').toBe(c.layout);
        expect(table.unique).toBe(c.unique);
        expect(pairs, type).toEqual(nestedLoop(type, probe, c.build));
      }
    });
  }

  it('directTable: from keys without hashes when their range is dense, else null', () => {
    const dense = buildKeys(batch([5, 3, null, 4, 3], INT64), [0], NORM, undefined, false);
    const t = directTable(dense)!;
    expect(t).not.toBeNull();
    expect([t.base, t.unique, Array.from(t.direct!)]).toEqual([3, false, [1, 3, 0]]);
    expect(Array.from(t.next)).toEqual([-1, 4, -1, -1, -1]);
    expect(directTable(buildKeys(batch([0, 1e6, 2e6], INT64), [0], NORM, undefined, false))).toBeNull();
    expect(directTable(buildKeys(batch([null, null], INT64), [0], NORM, undefined, false))).toBeNull();
  });

  it('a direct table is probed by keys without hashes', () => {
    const build = Array.from({ length: 500 }, (_, i) => i * 2);
    const probe = Array.from({ length: 800 }, (_, i) => (i % 9 === 0 ? null : i));
    const { pairs, table } = joined('left', probe, build, INT64, false);
    expect(table.direct).not.toBeNull();
    expect(buildKeys(batch(probe, INT64), [0], NORM, undefined, false).hash.length).toBe(0);
    expect(pairs).toEqual(nestedLoop('left', probe, build));
  });
});
