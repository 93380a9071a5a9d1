// Grouping integers of a narrow range by value (agg/dense-groups.ts): the hash grouping's ids and first rows (groups
// numbered in order of first appearance), one column or two (the narrower numbered first, either side), negative
// values, a selection, a range just inside and just past the limit, the thread's tables left clean for the next call;
// and aggregates grouped by such columns against DuckDB, with a filter's selection, on the pool and the calling thread.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { denseGroups } from '../dist/agg/dense-groups.js';
import type { Column } from '../dist/kernels/column.js';
import { expectSame, hashGroups, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-dense-');
const T = `read_parquet('${path.join(dir, 't.parquet')}')`;

const int32Col = (xs: ArrayLike<number>, valid: Uint8Array | null = null): Column => ({
  type: { id: 'int32' },
  length: xs.length,
  values: Int32Array.from(xs),
  valid,
});

function expectLikeHash(cols: Column[], sel?: { idx: Int32Array; n: number }) {
  const d = denseGroups(cols, undefined, false, sel?.idx ?? null, sel?.n ?? cols[0].length);
  expect(d).not.toBeNull();
  const h = hashGroups(cols, sel);
  expect(d!.nGroups).toBe(h.nGroups);
  expect(Array.from(d!.gid)).toEqual(Array.from(h.gid));
  expect(Array.from(d!.first)).toEqual(Array.from(h.first));
}

/** A deterministic pseudo-random integer in [0, m). */
let seed = 7;
const rand = (m: number) => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed % m;
};

describe('integers of a narrow range grouped by value', () => {
  it("one column, negative values too: the hash grouping's ids and first rows", () => {
    expectLikeHash([int32Col(Array.from({ length: 5000 }, () => rand(700) - 350))]);
    expectLikeHash([int32Col([5])]);
  });
  it('two columns, the narrower numbered first on either side', () => {
    const n = 20000;
    const supp = Array.from({ length: n }, () => 1 + rand(3000));
    // a flag's short code: its length and byte, a range of thousands holding three values
    const flag = Array.from({ length: n }, () => 1 | ([65, 78, 82][rand(3)] << 8));
    expectLikeHash([int32Col(supp), int32Col(flag)]);
    expectLikeHash([int32Col(flag), int32Col(supp)]);
    expectLikeHash([int32Col(supp.map((x) => -x)), int32Col(supp.map((x) => x % 7))]);
  });
  it('a selection: its rows grouped, every other row one past the last group', () => {
    const n = 9000;
    const a = int32Col(Array.from({ length: n }, () => rand(400)));
    const b = int32Col(Array.from({ length: n }, () => rand(5)));
    const idx = Int32Array.from(Array.from({ length: n }, (_, i) => i).filter((i) => i % 3 !== 1));
    expectLikeHash([a], { idx, n: idx.length });
    expectLikeHash([a, b], { idx, n: idx.length });
  });
  it('declines nulls, other types, more than two columns, and a range past its slots; calls after leave no trace', () => {
    const n = 1000;
    const wide = int32Col(Array.from({ length: n }, (_, i) => i * 1000));
    // 2 x 1000 rows allow 65,536 slots at least: a range of 999,001 is past them
    expect(denseGroups([wide], undefined, false, null, n)).toBeNull();
    const some = int32Col([1, 2, 3], Uint8Array.from([1, 0, 1]));
    expect(denseGroups([some], undefined, false, null, 3)).toBeNull();
    const big: Column = { type: { id: 'int64' }, length: 1, values: new BigInt64Array(1), valid: null };
    expect(denseGroups([big], undefined, false, null, 1)).toBeNull();
    const x = int32Col([1, 2, 3]);
    expect(denseGroups([x, x, x], undefined, false, null, 3)).toBeNull();
    // just inside: 65,536 slots for one column
    expectLikeHash([int32Col([0, 65535, 7, 0, 65535])]);
    // two columns whose slots (wide range x distinct narrow values) pass the limit either way round: declined
    const a = int32Col(Array.from({ length: 100 }, (_, i) => i * 1000));
    const b = int32Col(Array.from({ length: 100 }, (_, i) => i));
    expect(denseGroups([a, b], undefined, false, null, 100)).toBeNull();
    // numbered the other way round: the narrower range holds more values (59,401 x 100 slots, 100 x 100)
    expectLikeHash([int32Col(Array.from({ length: 100 }, (_, i) => i * 600)), b]);
    expectLikeHash([int32Col([3, 3, 1]), int32Col([9, 8, 9])]);
    expectLikeHash([int32Col([3, 3, 1])]);
  });
});

describe("aggregates grouped by integers of a narrow range: DuckDB's answer", () => {
  beforeAll(async () => {
    await writeParquet(
      path.join(dir, 't.parquet'),
      `SELECT (i * 7919 % 5000)::INTEGER AS supp, ['A', 'N', 'R'][1 + (i * 13) % 3] AS flag,
        (i % 97 - 48)::INTEGER AS small, DATE '1995-01-01' + (i % 400)::INTEGER AS day, (i * 0.25)::DOUBLE AS v,
        (i % 50)::DECIMAL(12, 2) AS q
      FROM range(0, 60000) t(i)`,
      4096,
    );
  });
  const plan = (groupBy: string[], where?: object) => ({
    version: 1,
    sources: { t: { parquet: path.join(dir, 't.parquet') } },
    query: {
      op: 'aggregate',
      groupBy,
      aggregates: [
        { fn: 'count', as: 'n' },
        { fn: 'sum', column: 'q', as: 'q' },
        { fn: 'max', column: 'v', as: 'm' },
      ],
      input: where ? { op: 'filter', where, input: { op: 'scan', source: 't' } } : { op: 'scan', source: 't' },
    },
  });
  for (const by of [['supp', 'flag'], ['flag', 'supp'], ['small'], ['day'], ['supp', 'small']])
    for (const workers of [0, 2])
      it(`grouped by ${by.join(', ')}, ${workers ? 'on the pool' : 'on the calling thread'}`, async () => {
        const opts = workers ? { workers, inThreadBytes: 0 } : { inThreadBytes: 1e9 };
        await expectSame(
          plan(by),
          `SELECT ${by.join(', ')}, count(*) AS n, sum(q) AS q, max(v) AS m FROM ${T} GROUP BY ${by.join(', ')}`,
          opts,
        );
      });
  it("over a filter's selection", async () => {
    await expectSame(
      plan(['supp', 'flag'], { column: 'v', cmp: '>', value: 2000 }),
      `SELECT supp, flag, count(*) AS n, sum(q) AS q, max(v) AS m FROM ${T} WHERE v > 2000 GROUP BY supp, flag`,
    );
  });
});
