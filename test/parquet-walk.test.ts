// The one page walk (io/parquet-walk.ts) through its three readers on files DuckDB wrote: the whole chunks
// (io/parquet-direct.ts), a filter's outcomes (io/parquet-mask.ts) and the rows kept (io/parquet-select.ts), each
// against DuckDB's reading of the same file: v1 and v2 data pages, PLAIN and dictionary pages, nulls, several row
// groups and row ranges across them; batches lined up with parquet-wasm's across row groups. And map tasks sized by
// bytes (plan/map-splits.ts): many small row groups read by fewer tasks, a huge one still cut into row ranges.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { readDirect } from '../dist/io/parquet-direct.js';
import { readMasks } from '../dist/io/parquet-mask.js';
import { readSelected } from '../dist/io/parquet-select.js';
import { openFooter } from '../dist/io/parquet-footer.js';
import { readRowGroupsInPlace } from '../dist/io/parquet.js';
import { rowRangeSplits } from '../dist/plan/map-splits.js';
import { type Batch, type Column, type Field, valueAt } from '../dist/kernels/column.js';
import { duckRows, expectSame, ourRun, sql, tmpDir } from './helpers.js';

const dir = tmpDir('sj-walk-');
const N = 20_000;
// a: integers (a dictionary), b: a distinct big integer a row (PLAIN), d: dates with nulls, s: 9 strings and nulls
// (a dictionary), u: a string a row (PLAIN), m: decimals with nulls
const TABLE = `SELECT (i % 50)::INTEGER AS a, (i::BIGINT * 1000003) AS b,
  CASE WHEN i % 7 = 0 THEN NULL ELSE DATE '1995-01-01' + (i % 400)::INTEGER END AS d,
  CASE WHEN i % 11 = 0 THEN NULL ELSE 'k' || (i % 9) END AS s,
  'u' || (i * 7919 % 100003) AS u,
  CASE WHEN i % 5 = 0 THEN NULL ELSE ((i % 1000) * 0.01 - 3)::DECIMAL(15,2) END AS m
  FROM range(0, ${N}) t(i)`;
const FIELDS: Field[] = [
  { name: 'a', type: { id: 'int32' }, nullable: false },
  { name: 'b', type: { id: 'int64' }, nullable: false },
  { name: 'd', type: { id: 'date32' }, nullable: true },
  { name: 's', type: { id: 'utf8' }, nullable: true },
  { name: 'u', type: { id: 'utf8' }, nullable: true },
  { name: 'm', type: { id: 'decimal', precision: 15, scale: 2 }, nullable: true },
];
const CANON = `a::VARCHAR, b::VARCHAR, datediff('day', DATE '1970-01-01', d)::VARCHAR, s, u, m::VARCHAR`;
const FILES: Record<string, string> = {
  v1: path.join(dir, 'v1.parquet'),
  v2: path.join(dir, 'v2.parquet'),
  // no dictionaries: every page PLAIN (integers, dates, strings with nulls, decimals)
  plain: path.join(dir, 'plain.parquet'),
};

beforeAll(async () => {
  await sql(`COPY (${TABLE}) TO '${FILES.v1}' (FORMAT parquet, ROW_GROUP_SIZE 4096)`);
  await sql(`COPY (${TABLE}) TO '${FILES.v2}' (FORMAT parquet, ROW_GROUP_SIZE 4096, PARQUET_VERSION V2)`);
  await sql(`COPY (${TABLE}) TO '${FILES.plain}' (FORMAT parquet, ROW_GROUP_SIZE 6144, DICTIONARY_SIZE_LIMIT 1)`);
  for (const f of Object.values(FILES)) expect(openFooter(f).footer.rowGroups.length).toBeGreaterThan(2);
  // dictionaries where DuckDB chose them, none in the PLAIN file
  const encodings = async (f: string) =>
    (await duckRows(`SELECT DISTINCT encodings FROM parquet_metadata('${f}')`)).map((r) => String(r[0])).sort();
  expect(await encodings(FILES.v1)).toContain('PLAIN_DICTIONARY');
  expect(await encodings(FILES.v1)).toContain('PLAIN');
  expect(await encodings(FILES.plain)).toEqual(['PLAIN']);
});

/** DuckDB's canonical rows [from, to) of the file (row numbers as written). */
async function duckCanon(file: string, from = 0, to = N, where = 'true'): Promise<unknown[][]> {
  const rows = await duckRows(
    `SELECT ${CANON} FROM (SELECT *, row_number() OVER () - 1 AS rn FROM '${file}') WHERE rn >= ${from} AND rn < ${to} AND (${where}) ORDER BY rn`,
  );
  // DuckDB writes a decimal below 1 without its leading zero
  return rows.map((r) => r.map((v) => (typeof v === 'string' ? v.replace(/^(-?)\.(\d)/, '$10.$2') : v)));
}

function canon(cols: Column[], n: number): unknown[][] {
  const out: unknown[][] = [];
  for (let i = 0; i < n; i++)
    out.push(
      cols.map((c) => {
        const v = valueAt(c, i);
        return v === null || typeof v === 'string' ? v : String(v);
      }),
    );
  return out;
}
const canonBatches = (bs: Batch[]) => bs.flatMap((b) => canon(b.columns, b.length));
const groupsOf = (f: string) => openFooter(f).footer.rowGroups.map((_, i) => i);
// v2: DuckDB writes the big integers, the distinct strings and some decimal chunks DELTA (not taken): the
// dictionary columns only (a, d with nulls, s with nulls)
const V2 = new Set(['a', 'd', 's']);
const fieldsFor = (kind: string) => (kind === 'v2' ? FIELDS.filter((f) => V2.has(f.name)) : FIELDS);
const canonFor = (kind: string, rows: unknown[][]) =>
  kind === 'v2' ? rows.map((r) => r.filter((_, i) => V2.has(FIELDS[i].name))) : rows;

describe("the page walk's three readers against DuckDB on DuckDB-written files", () => {
  for (const kind of Object.keys(FILES)) {
    it(`${kind}: whole chunks, several row groups, a row range across row groups`, async () => {
      const f = FILES[kind];
      const fields = fieldsFor(kind);
      expect(canonBatches(readDirect(f, groupsOf(f), fields))).toEqual(canonFor(kind, await duckCanon(f)));
      // a row range that starts in the first group read and ends two groups later
      const got = readDirect(f, groupsOf(f), fields, { offset: 4000, limit: 5000 });
      expect(canonBatches(got)).toEqual(canonFor(kind, await duckCanon(f, 4000, 9000)));
    });

    it(`${kind}: a filter's outcomes (dictionary and PLAIN pages, nulls) and the rows it keeps`, async () => {
      const f = FILES[kind];
      const fields = fieldsFor(kind);
      const sField = FIELDS[3],
        dField = FIELDS[2];
      // s IN ('k1', 'k4'), d < 1995-03-01: 1 where it holds, 0 elsewhere and for nulls
      const sTruth = (c: Column) => {
        const o = new Uint8Array(c.length);
        for (let i = 0; i < c.length; i++) {
          const v = valueAt(c, i);
          o[i] = v === 'k1' || v === 'k4' ? 1 : 0;
        }
        return o;
      };
      const limit = Date.parse('1995-03-01T00:00:00Z') / 86_400_000;
      const dTruth = (c: Column) => {
        const o = new Uint8Array(c.length);
        for (let i = 0; i < c.length; i++) o[i] = c.valid && !c.valid[i] ? 0 : (c.values[i] as number) < limit ? 1 : 0;
        return o;
      };
      const range = { offset: 3000, limit: 12000 };
      const [sm, dm] = readMasks(
        f,
        groupsOf(f),
        [
          { field: sField, truth: sTruth },
          { field: dField, truth: dTruth },
        ],
        range,
      );
      const want = await duckRows(
        `SELECT coalesce(s IN ('k1', 'k4'), false)::INTEGER, coalesce(d < DATE '1995-03-01', false)::INTEGER FROM (SELECT *, row_number() OVER () - 1 AS rn FROM '${f}') WHERE rn >= 3000 AND rn < 15000 ORDER BY rn`,
      );
      expect(Array.from(sm)).toEqual(want.map((r) => Number(r[0])));
      expect(Array.from(dm)).toEqual(want.map((r) => Number(r[1])));
      // the rows both keep, every column read at those rows only
      const sel: number[] = [];
      for (let i = 0; i < sm.length; i++) if (sm[i] && dm[i]) sel.push(i);
      expect(sel.length).toBeGreaterThan(100);
      const cols = readSelected(f, groupsOf(f), fields, Int32Array.from(sel), range);
      const kept = await duckCanon(f, 3000, 15000, `s IN ('k1', 'k4') AND d < DATE '1995-03-01'`);
      expect(canon(cols, sel.length)).toEqual(canonFor(kind, kept));
    });
  }

  it('decimals direct beside parquet-wasm columns over several row groups: batches lined up across groups', async () => {
    const f = FILES.v1;
    const got = await readRowGroupsInPlace(f, [1, 2, 3], FIELDS, false, { offset: 100 });
    try {
      expect(canonBatches(got.batches)).toEqual(await duckCanon(f, 4096 + 100, 4 * 4096));
    } finally {
      got.release();
    }
  });
});

describe('map tasks sized by bytes', () => {
  const group = (g: number, bytes: number, rows = 1000) => ({ path: 'f', rowGroups: [g], rows, bytes });
  const MB = 1024 * 1024;

  it('many small row groups are read by fewer tasks, up to the target; a huge one is still cut into row ranges', () => {
    // 64 row groups of 2 MB = 128 MB: target 128 / (4 * 2) = 16 MB, so 8 groups a task
    const small = Array.from({ length: 64 }, (_, g) => group(g, 2 * MB));
    const tasks = rowRangeSplits(small, 2);
    expect(tasks).toHaveLength(8);
    expect(tasks.map((t) => t.rowGroups.length)).toEqual(Array(8).fill(8));
    expect(tasks.flatMap((t) => t.rowGroups)).toEqual(small.map((s) => s.rowGroups[0]));
    // at most 16 MB a task however large the scan (a larger task decodes more before its first batch leaves)
    const many = Array.from({ length: 400 }, (_, g) => group(g, 2 * MB));
    expect(rowRangeSplits(many, 2)).toHaveLength(50);
    // not merged when the plan has a limit (merge false), nor across files
    expect(rowRangeSplits(small, 2, undefined, false)).toHaveLength(64);
    expect(rowRangeSplits([group(0, MB), { ...group(1, MB), path: 'g' }], 2)).toHaveLength(2);
    // a huge row group beside small ones is still cut into row ranges of about the target
    const huge = rowRangeSplits([group(0, 100 * MB, 100_000), group(1, MB), group(2, MB)], 2);
    expect(huge.filter((t) => t.offset !== undefined).length).toBeGreaterThan(4);
    expect(huge.at(-1)!.rowGroups).toEqual([1, 2]);
  });

  it("a query over a file of many small row groups gives DuckDB's answer with merged tasks", async () => {
    const f = path.join(dir, 'small-groups.parquet');
    await sql(
      `COPY (SELECT i % 37 AS g, i AS v, (i * 0.01)::DECIMAL(15,2) AS m FROM range(0, 300000) t(i)) TO '${f}' (FORMAT parquet, ROW_GROUP_SIZE 2048)`,
    );
    expect(openFooter(f).footer.rowGroups.length).toBeGreaterThan(100);
    const plan = {
      version: 1,
      sources: { t: { parquet: f } },
      query: {
        op: 'aggregate',
        groupBy: ['g'],
        aggregates: [
          { fn: 'sum', column: 'm', as: 'sm' },
          { fn: 'count', as: 'n' },
          { fn: 'max', column: 'v', as: 'mx' },
        ],
        input: { op: 'filter', where: { column: 'v', cmp: '>=', value: 1000 }, input: { op: 'scan', source: 't' } },
      },
    };
    // 147 row groups of about 40 KB: merged into tasks of the target (the scan's bytes over 8), not one a group
    const r = await ourRun(plan, { workers: 2 });
    const maps = r.stats.tasks.filter((t) => t.kind === 'map');
    expect(maps.length).toBeGreaterThanOrEqual(4);
    expect(maps.length).toBeLessThanOrEqual(16);
    await expectSame(
      plan,
      `SELECT g, sum(m) AS sm, count(*) AS n, max(v) AS mx FROM '${f}' WHERE v >= 1000 GROUP BY g`,
      { workers: 2 },
    );
  });
});
