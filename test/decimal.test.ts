// DECIMAL end to end against DuckDB: files of every physical form (DuckDB
// writes p=5 as int32, p=15 as int64, p=30 as fixed-length bytes), filters,
// keys, sums, min/max, sort and every output format, compared as exact text.
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runPlan } from '../dist/index.js';
import { duckRows, sorted, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-dec-');
const file = (n: string) => path.join(dir, n);
const opts = { baseDir: dir, workers: 2, partitions: 3, broadcastBytes: 0 } as const;

/** Our rows as text (toRows gives decimals as exact strings). */
async function ours(query: object, extra: object = {}): Promise<unknown[][]> {
  const r = await runPlan(
    { version: 1, sources: { d: { parquet: 'd.parquet' }, e: { parquet: 'e.parquet' } }, query, ...extra },
    opts,
  );
  return r.toRows().map((row) => Object.values(row).map((v) => (v === null ? null : String(v))));
}
/** DuckDB's rows with every column cast to text. */
async function theirs(select: string): Promise<unknown[][]> {
  return (await duckRows(select)).map((r) => r.map((v) => (v === null ? null : String(v))));
}
const D = `read_parquet('${file('d.parquet')}')`,
  E = `read_parquet('${file('e.parquet')}')`;

beforeAll(async () => {
  // Edge values: negatives, zero, nulls, the largest magnitudes of each precision.
  await writeParquet(
    file('d.parquet'),
    `SELECT i % 7 AS g,
      CASE WHEN i % 11 = 0 THEN NULL ELSE (((i * 37) % 19999 - 9999) / 100)::DECIMAL(5,2) END AS p5,
      CASE WHEN i = 3 THEN 9999999999999.99::DECIMAL(15,2) WHEN i = 4 THEN -9999999999999.99::DECIMAL(15,2)
           ELSE (((i * 7919) % 2000003 - 1000000) / 100)::DECIMAL(15,2) END AS p15,
      CASE WHEN i = 5 THEN '99999999999999999999999999.999'::DECIMAL(30,3) WHEN i % 13 = 0 THEN NULL
           ELSE ((i::HUGEINT * 123456789012345678901 - 600000000000000000000000)::DECIMAL(30,0) * 0.001::DECIMAL(4,3))::DECIMAL(30,3) END AS p30,
      (i % 5)::DECIMAL(4,1) AS k1, (i % 5) AS ki
    FROM range(0, 400) t(i)`,
    64,
  );
  await writeParquet(file('e.parquet'), `SELECT (i % 6)::DECIMAL(9,3) AS k3, 'e' || i AS name FROM range(0, 12) t(i)`);
});

describe('decimal files of every physical form', () => {
  it('read exactly (p = 5, 15, 30; nulls, negatives, extremes)', async () => {
    const got = await ours({ op: 'project', input: { op: 'scan', source: 'd' }, columns: ['p5', 'p15', 'p30'] });
    expect(sorted(got)).toEqual(sorted(await theirs(`SELECT p5::VARCHAR, p15::VARCHAR, p30::VARCHAR FROM ${D}`)));
    expect(got.length).toBe(400);
  });

  it('filters against literals of any scale, exactly', async () => {
    const where = {
      and: [
        { column: 'p15', cmp: '>=', value: -5000.125 },
        { column: 'p5', cmp: '<', value: '10.5' },
        { column: 'p30', cmp: '>=', value: -5.8e20 },
        { column: 'p30', cmp: '<=', value: '5e22' },
      ],
    };
    const got = await ours({ op: 'filter', input: { op: 'scan', source: 'd', columns: ['p5', 'p15', 'p30'] }, where });
    const want = await theirs(
      `SELECT p5::VARCHAR, p15::VARCHAR, p30::VARCHAR FROM ${D} WHERE p15 >= -5000.125 AND p5 < 10.5 AND p30 BETWEEN -5.8e20 AND 5e22`,
    );
    expect(want.length).toBeGreaterThan(10);
    expect(sorted(got)).toEqual(sorted(want));
  });

  it('exact sums as decimal(38, s), min, max, avg per group', async () => {
    const got = await ours({
      op: 'aggregate',
      input: { op: 'scan', source: 'd' },
      groupBy: ['g'],
      aggregates: ['p5', 'p15', 'p30'].flatMap((c) =>
        ['sum', 'min', 'max'].map((fn) => ({ fn, column: c, as: `${fn}_${c}` })),
      ),
    });
    const want = await theirs(
      `SELECT g, ${['p5', 'p15', 'p30'].flatMap((c) => ['sum', 'min', 'max'].map((fn) => `${fn}(${c})::VARCHAR`)).join(', ')} FROM ${D} GROUP BY g`,
    );
    expect(sorted(got)).toEqual(sorted(want));
  });

  it('sums with and without combiners agree with DuckDB (states merged in 128 bits)', async () => {
    for (const combiners of [true, false]) {
      const r = await runPlan(
        {
          version: 1,
          sources: { d: { parquet: 'd.parquet' } },
          query: {
            op: 'aggregate',
            input: { op: 'scan', source: 'd' },
            groupBy: [],
            aggregates: [
              { fn: 'sum', column: 'p30', as: 's' },
              { fn: 'avg', column: 'p15', as: 'a' },
            ],
          },
        },
        { ...opts, combiners },
      );
      const [row] = r.toRows();
      const [[s, a]] = await duckRows(`SELECT sum(p30)::VARCHAR, avg(p15) FROM ${D}`);
      expect(row.s).toBe(s);
      expect(Number(row.a).toPrecision(10)).toBe(Number(a).toPrecision(10));
      expect(r.schema[0].type).toEqual({ id: 'decimal', precision: 38, scale: 3 });
    }
  });

  it('group and join keys match by value across scales and with integers, never via floats', async () => {
    const byKey = await ours({
      op: 'aggregate',
      input: { op: 'scan', source: 'd' },
      groupBy: ['k1'],
      aggregates: [{ fn: 'count', as: 'n' }],
    });
    expect(sorted(byKey)).toEqual(sorted(await theirs(`SELECT k1::VARCHAR, count(*)::VARCHAR FROM ${D} GROUP BY k1`)));
    for (const [l, r] of [
      ['k1', 'k3'],
      ['ki', 'k3'],
    ]) {
      const got = await ours({
        op: 'aggregate',
        groupBy: ['name'],
        aggregates: [{ fn: 'count', as: 'n' }],
        input: {
          op: 'join',
          type: 'inner',
          left: { op: 'scan', source: 'd' },
          right: { op: 'scan', source: 'e' },
          on: [[l, r]],
        },
      });
      const want = await theirs(`SELECT name, count(*)::VARCHAR FROM ${D} JOIN ${E} ON ${l} = k3 GROUP BY name`);
      expect(want.length).toBe(10);
      expect(sorted(got)).toEqual(sorted(want));
    }
  });

  it('through a broadcast table and a fused probe, in the thread and on the pool (64- and 128-bit lanes)', async () => {
    const sources = { d: { parquet: 'd.parquet' }, e: { parquet: 'e.parquet' } };
    const scan = (source: string) => ({ op: 'scan', source });
    const cases: [object, string, 'left' | 'right'][] = [
      // d (p30: two lanes a row) is the table built; e probes it
      [
        { op: 'join', type: 'left', left: scan('e'), right: scan('d'), on: [['k3', 'k1']] },
        `SELECT e.*, d.* FROM ${E} e LEFT JOIN ${D} d ON k3 = k1`,
        'right',
      ],
      // d probes e's table: its decimal columns read in place, gathered with the matches
      [
        { op: 'join', type: 'inner', left: scan('d'), right: scan('e'), on: [['k1', 'k3']] },
        `SELECT d.*, e.* FROM ${D} d JOIN ${E} e ON k1 = k3`,
        'right',
      ],
      // the probe fused with the partial aggregate: 128-bit sums from the probing rows
      [
        {
          op: 'aggregate',
          groupBy: ['name'],
          aggregates: [
            { fn: 'sum', column: 'p30', as: 's30' },
            { fn: 'sum', column: 'p15', as: 's15' },
            { fn: 'max', column: 'p5', as: 'm5' },
          ],
          input: { op: 'join', type: 'inner', left: scan('d'), right: scan('e'), on: [['k1', 'k3']] },
        },
        `SELECT name, sum(p30), sum(p15), max(p5) FROM ${D} d JOIN ${E} e ON k1 = k3 GROUP BY name`,
        'right',
      ],
    ];
    for (const [query, sql, side] of cases) {
      const want = await theirs(sql);
      expect(want.length).toBeGreaterThanOrEqual(10);
      for (const inThreadBytes of [undefined, 0]) {
        const r = await runPlan({ version: 1, sources, query }, { baseDir: dir, workers: 2, inThreadBytes });
        expect(r.stats.joins.map((j) => [j.strategy, j.broadcast?.side])).toEqual([['broadcast', side]]);
        expect(r.stats.inThread).toBe(inThreadBytes === undefined);
        // never through Arrow IPC: in place, or (a scan of decimal columns only) by the direct reader
        const reads = r.stats.tasks.filter((t) => t.kind === 'map' && t.read);
        expect(reads.length).toBeGreaterThan(0); // (every() of nothing is true)
        expect(reads.every((t) => t.read === 'in-place' || t.read === 'direct')).toBe(true);
        expect(sorted(r.toRows().map((row) => Object.values(row).map((v) => (v === null ? null : String(v)))))).toEqual(
          sorted(want),
        );
      }
    }
  });

  it('sorts by 64- and 128-bit decimals with nulls', async () => {
    for (const c of ['p15', 'p30']) {
      const got = await ours({
        op: 'sort',
        input: { op: 'scan', source: 'd', columns: [c] },
        by: [{ column: c, desc: true, nulls: 'first' }],
      });
      expect(got).toEqual(await theirs(`SELECT ${c}::VARCHAR FROM ${D} ORDER BY ${c} DESC NULLS FIRST`));
    }
  });

  it('every output format: Parquet and Arrow as decimal, CSV and JSON lines as exact text', async () => {
    const query = {
      op: 'filter',
      input: { op: 'scan', source: 'd', columns: ['p5', 'p15', 'p30'] },
      where: { column: 'p30', isNull: false },
    };
    for (const ext of ['parquet', 'arrow', 'csv', 'jsonl']) {
      const out = file(`out.${ext}`);
      await runPlan({ version: 1, sources: { d: { parquet: 'd.parquet' } }, query, output: { path: out } }, opts);
      const want = await theirs(`SELECT p5::VARCHAR, p15::VARCHAR, p30::VARCHAR FROM ${D} WHERE p30 IS NOT NULL`);
      if (ext === 'parquet') {
        expect(await theirs(`SELECT typeof(p5), typeof(p15), typeof(p30) FROM read_parquet('${out}') LIMIT 1`)).toEqual(
          [['DECIMAL(5,2)', 'DECIMAL(15,2)', 'DECIMAL(30,3)']],
        );
        expect(
          sorted(await theirs(`SELECT p5::VARCHAR, p15::VARCHAR, p30::VARCHAR FROM read_parquet('${out}')`)),
        ).toEqual(sorted(want));
      } else if (ext === 'arrow') {
        const arrow = await import('apache-arrow');
        const t = arrow.tableFromIPC(fs.readFileSync(out));
        expect(String(t.schema.fields[2].type)).toBe('Decimal[30e+3]');
        expect(t.numRows).toBe(want.length);
      } else if (ext === 'csv') {
        const lines = fs
          .readFileSync(out, 'utf8')
          .trim()
          .split('\n')
          .slice(1)
          .map((l) => l.split(',').map((x) => (x === '' ? null : x)));
        expect(sorted(lines)).toEqual(sorted(want));
      } else {
        const rows = fs
          .readFileSync(out, 'utf8')
          .trim()
          .split('\n')
          .map((l) => Object.values(JSON.parse(l)));
        expect(sorted(rows)).toEqual(sorted(want));
        expect(typeof rows[0][1]).toBe('string');
      }
    }
  });

  // parquetjs-lite 0.8.7 cannot write a DECIMAL column ("invalid parquet type: DECIMAL"), so no file of it here.
});
