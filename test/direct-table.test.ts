// Direct tables (an array indexed by key - base) over 64-bit keys: the
// integer path for keys within 32 bits and the general one beyond give the
// arrays of a naive construction (nulls left out, duplicates chained in row
// order); and broadcast joins on keys around the 32-bit edges against DuckDB.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { directTable } from '../dist/kernels/table.js';
import { buildKeys } from '../dist/kernels/keys.js';
import type { Column } from '../dist/kernels/column.js';
import { expectSame, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-direct-');

function keysOf(xs: (bigint | null)[]) {
  const c: Column = {
    type: { id: 'int64' },
    length: xs.length,
    values: BigInt64Array.from(xs, (x) => x ?? 0n),
    valid: xs.includes(null) ? Uint8Array.from(xs, (x) => (x === null ? 0 : 1)) : null,
  };
  return buildKeys({ length: xs.length, columns: [c] }, [0], [{ kind: 'int' }], undefined, false);
}

/** What a direct table must hold: each key's first row, each row's next with its key, whether no key repeats. */
function naive(xs: (bigint | null)[]) {
  const present = xs.filter((x): x is bigint => x !== null);
  const min = present.reduce((a, b) => (b < a ? b : a));
  const max = present.reduce((a, b) => (b > a ? b : a));
  const direct = new Array<number>(Number(max - min) + 1).fill(-1),
    next = new Array<number>(xs.length).fill(-1);
  let unique = true;
  for (let i = xs.length - 1; i >= 0; i--) {
    if (xs[i] === null) continue;
    const d = Number(xs[i]! - min);
    if (direct[d] >= 0) unique = false;
    next[i] = direct[d];
    direct[d] = i;
  }
  return { direct, next, unique, base: Number(min) };
}

describe('a direct table over 64-bit keys', () => {
  const cases: Record<string, (bigint | null)[]> = {
    'dense ids with nulls and repeats': Array.from({ length: 3000 }, (_, i) =>
      i % 37 === 0 ? null : BigInt((i * 7) % 2500),
    ),
    'negative, down to -2^31': Array.from({ length: 2000 }, (_, i) => BigInt(-(2 ** 31) + ((i * 13) % 1900))),
    'up to 2^31 - 1': Array.from({ length: 2000 }, (_, i) => BigInt(2 ** 31 - 1 - ((i * 11) % 1500))),
    'across 2^31 (beyond 32 bits)': Array.from({ length: 2000 }, (_, i) =>
      i % 50 === 7 ? null : BigInt(2 ** 31 - 700 + ((i * 3) % 1400)),
    ),
    'across -2^31': Array.from({ length: 2000 }, (_, i) => BigInt(-(2 ** 31) - 600 + ((i * 17) % 1300))),
    'past 2^32, unique': Array.from({ length: 1500 }, (_, i) => (1n << 40n) + BigInt(1499 - i)),
    'unique ids': Array.from({ length: 1500 }, (_, i) => BigInt((i * 7) % 1500)),
  };
  for (const [name, xs] of Object.entries(cases)) {
    it(name, () => {
      const t = directTable(keysOf(xs), true)!;
      expect(t).not.toBeNull();
      const want = naive(xs);
      expect(t.base).toBe(want.base);
      expect(t.unique).toBe(want.unique);
      expect(Array.from(t.direct!)).toEqual(want.direct);
      expect(Array.from(t.next)).toEqual(want.next);
      expect(t.direct!.buffer).toBeInstanceOf(SharedArrayBuffer);
    });
  }
  it('no table where the keys are all null or spread too thin', () => {
    expect(directTable(keysOf([null, null]))).toBeNull();
    expect(directTable(keysOf([0n, 1n, 1n << 20n]))).toBeNull();
    expect(directTable(keysOf([-(1n << 31n), (1n << 31n) - 1n]))).toBeNull();
  });
});

describe("broadcast joins on keys around the 32-bit edges: DuckDB's answer", () => {
  const files: Record<string, string> = {
    inside: `(-2147483648 + i * 3)`,
    across: `(2147483647 - 3000 + i)`,
    wide: `(1099511627776 + i)`,
  };
  beforeAll(async () => {
    for (const [name, key] of Object.entries(files)) {
      await writeParquet(
        path.join(dir, `${name}-dim.parquet`),
        `SELECT CASE WHEN i % 97 = 5 THEN NULL ELSE ${key}::BIGINT END AS k, 'g' || (i % 6) AS g FROM range(0, 6000) t(i)`,
        2048,
      );
      // fact keys: the dimension's and some that miss it (outside its span, or between its keys)
      await writeParquet(
        path.join(dir, `${name}-fact.parquet`),
        `SELECT CASE WHEN i % 53 = 0 THEN NULL ELSE (${key.replace(/\bi\b/g, '((i * 7) % 6100)')} + (i % 5 = 0)::INTEGER)::BIGINT END AS k,
        (i % 100)::DOUBLE AS v FROM range(0, 20000) t(i)`,
        4096,
      );
    }
  });
  for (const name of Object.keys(files)) {
    it(`keys ${name}`, async () => {
      const f = path.join(dir, `${name}-fact.parquet`),
        d = path.join(dir, `${name}-dim.parquet`);
      const plan = {
        version: 1,
        sources: { f: { parquet: f }, d: { parquet: d } },
        query: {
          op: 'aggregate',
          groupBy: ['g'],
          aggregates: [
            { fn: 'count', as: 'n' },
            { fn: 'sum', column: 'v', as: 's' },
          ],
          input: {
            op: 'join',
            type: 'inner',
            on: [['k', 'k']],
            left: { op: 'scan', source: 'f' },
            right: { op: 'scan', source: 'd' },
          },
        },
      };
      const rows = await expectSame(
        plan,
        `SELECT g, count(*) AS n, sum(v) AS s FROM read_parquet('${f}') f JOIN read_parquet('${d}') d USING (k) GROUP BY g`,
      );
      expect(rows.length).toBe(6);
    });
  }
});
