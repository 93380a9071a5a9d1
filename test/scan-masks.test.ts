// Filter-only columns read as their filter's outcome (physical/scan/masks.ts, io/parquet-mask.ts): which conjuncts
// a scan task evaluates on dictionaries, the outcomes against DuckDB's row by row (dictionary and PLAIN pages, nulls,
// row ranges, several row groups), the fallback for files the direct reader refuses, and whole queries.
import { beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { SELECT_SHARE, produceMasked, withMasks } from '../dist/physical/scan/masks.js';
import type { TaskSpec } from '../dist/physical/task.js';
import { readMasks } from '../dist/io/parquet-mask.js';
import { evalPredicate } from '../dist/expr/filter.js';
import type { Column } from '../dist/kernels/column.js';
import { inspectParquet } from '../dist/io/parquet.js';
import { runPlan } from '../dist/index.js';
import { duckRows, expectSame, sql, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-masks-');
const SNAPPY = path.join(dir, 'snappy.parquet'),
  ZSTD = path.join(dir, 'zstd.parquet'),
  ONE = path.join(dir, 'one-group.parquet');
const ROWS = 30_000;
// s: 7 strings and nulls (dictionary pages); u: a string per row and nulls (too many for a dictionary: PLAIN pages);
// d: dates with nulls; i: integers; k: kept by the projections
const TABLE = `SELECT i::BIGINT AS k, (i % 100)::INTEGER AS i,
  CASE WHEN i % 11 = 0 THEN NULL ELSE 'tag' || (i % 7) END AS s,
  CASE WHEN i % 17 = 0 THEN NULL ELSE 'u' || i || '-' || (i * 7919 % 10007) END AS u,
  CASE WHEN i % 13 = 0 THEN NULL ELSE DATE '1994-01-01' + (i % 900)::INTEGER END AS d
  FROM range(0, ${ROWS}) t(i)`;

/** each file's row groups (DuckDB rounds their size up to a multiple of 2,048 rows) */
const groups: Record<string, number[]> = {};

beforeAll(async () => {
  await writeParquet(SNAPPY, TABLE, 7000);
  await writeParquet(ONE, TABLE, ROWS);
  // the same rows compressed with zstd: a codec the direct reader does not take
  await sql(`COPY (${TABLE}) TO '${ZSTD}' (FORMAT parquet, ROW_GROUP_SIZE 7000, COMPRESSION zstd)`);
  for (const f of [SNAPPY, ZSTD, ONE]) {
    const info = await inspectParquet(f);
    expect(info.columns).toEqual(FIELDS.map(({ name, type }) => ({ name, type })));
    groups[f] = info.rowGroupRows.map((_, g) => g);
  }
  expect(groups[SNAPPY].length).toBeGreaterThan(2);
  expect(groups[ONE]).toEqual([0]);
});

const FIELDS = [
  { name: 'k', type: { id: 'int64' }, nullable: false },
  { name: 'i', type: { id: 'int32' }, nullable: true },
  { name: 's', type: { id: 'utf8' }, nullable: true },
  { name: 'u', type: { id: 'utf8' }, nullable: true },
  { name: 'd', type: { id: 'date32' }, nullable: true },
];
const DAY = (iso: string) => Date.parse(`${iso}T00:00:00Z`) / 86_400_000;

type Pred = Record<string, unknown>;
const scanTask = (file: string, pred: Pred, keep: number[], range: object = {}): TaskSpec =>
  ({
    source: { kind: 'scan', path: file, rowGroups: groups[file], fields: FIELDS, ...range },
    ops: [
      { kind: 'filter', pred },
      { kind: 'project', indices: keep },
    ],
    sink: { kind: 'collect' },
  }) as unknown as TaskSpec;

describe('which columns a scan task reads as masks', () => {
  it('reads each column of single-column conjuncts as a mask: in its place, or appended when it is kept', () => {
    const pred = {
      kind: 'and',
      preds: [
        { kind: 'cmp', col: 2, op: '=', value: 'tag1' },
        { kind: 'cmp', col: 4, op: '>=', value: DAY('1994-03-01') },
        { kind: 'cmp', col: 4, op: '<', value: DAY('1995-01-01') },
        { kind: 'cmp', col: 1, op: '<', value: 50 },
      ],
    };
    const t = withMasks(scanTask(SNAPPY, pred, [0, 1]));
    const src = t.source as { masks?: { col: number; pred: Pred; at?: number }[] };
    // s and d only filtered: masks in their places, d's two conjuncts as one; i is kept: read, its mask appended
    expect(src.masks?.map((m) => [m.col, m.at])).toEqual([
      [2, undefined],
      [4, undefined],
      [1, 5],
    ]);
    expect(src.masks?.[1].pred).toMatchObject({ kind: 'and', preds: [{ op: '>=' }, { op: '<' }] });
    expect(t.ops[0]).toMatchObject({
      kind: 'filter',
      pred: {
        kind: 'expr',
        expr: {
          fn: 'and',
          args: [
            { k: 'col', col: 2 },
            { k: 'col', col: 4 },
            { k: 'col', col: 5 },
          ],
        },
      },
    });
    expect(t.ops[1]).toEqual({ kind: 'project', indices: [0, 1] });
  });

  it('appends the mask of a column another conjunct reads; adds a projection where the filter had none', () => {
    const pred = {
      kind: 'and',
      preds: [
        { kind: 'cmp', col: 4, op: '>=', value: DAY('1994-03-01') },
        {
          kind: 'or',
          preds: [
            { kind: 'isNull', col: 4, isNull: true },
            { kind: 'cmp', col: 1, op: '=', value: 3 },
          ],
        },
      ],
    };
    const t = withMasks(scanTask(SNAPPY, pred, [0]));
    expect((t.source as { masks: unknown[] }).masks).toEqual([{ col: 4, pred: pred.preds[0], at: 5 }]);
    expect(t.ops[0]).toMatchObject({ pred: { kind: 'and', preds: [{ kind: 'or' }, { kind: 'expr' }] } });
    const one = { kind: 'cmp', col: 4, op: '<', value: DAY('1994-03-01') };
    const noProject = { ...scanTask(SNAPPY, one, [0]), ops: [{ kind: 'filter', pred: one }] } as unknown as TaskSpec;
    expect(withMasks(noProject).ops).toEqual([
      { kind: 'filter', pred: { kind: 'expr', expr: { k: 'col', col: 5, type: { id: 'bool' }, name: 'd (mask)' } } },
      { kind: 'project', indices: [0, 1, 2, 3, 4] },
    ]);
    // a string column read anyway is not read again as a mask
    const str = { kind: 'cmp', col: 2, op: '=', value: 'tag1' };
    expect(withMasks(scanTask(SNAPPY, str, [0, 2]))).toEqual(scanTask(SNAPPY, str, [0, 2]));
    // a multi-column conjunct alone: nothing to read as a mask
    const two = {
      kind: 'expr',
      expr: {
        k: 'fn',
        fn: '<',
        args: [
          { k: 'col', col: 0 },
          { k: 'col', col: 1 },
        ],
      },
    };
    expect(withMasks(scanTask(SNAPPY, two, [0]))).toEqual(scanTask(SNAPPY, two, [0]));
  });
});

const text = new TextDecoder();
/** A cell of one of the test file's columns as DuckDB reads it back (dates as text). */
function cell(c: Column, j: number): unknown {
  if (c.valid && !c.valid[j]) return null;
  if (c.offsets) return text.decode((c.values as Uint8Array).subarray(c.offsets[j], c.offsets[j + 1]));
  const v = Number(c.values[j]);
  return c.type.id === 'date32' ? new Date(v * 86_400_000).toISOString().slice(0, 10) : v;
}

/** DuckDB's outcome of a SQL condition for each row of a file, in file order (1 where it holds). */
async function duckOutcomes(file: string, cond: string, offset = 0, limit = ROWS): Promise<number[]> {
  const rows = await duckRows(
    `SELECT CASE WHEN ${cond} THEN 1 ELSE 0 END FROM read_parquet('${file}', file_row_number = true)
     WHERE file_row_number >= ${offset} AND file_row_number < ${offset + limit} ORDER BY file_row_number`,
  );
  return rows.map((r) => Number(r[0]));
}

const CASES: { name: string; col: number; pred: Pred; sql: string }[] = [
  { name: 'string =', col: 2, pred: { kind: 'cmp', col: 2, op: '=', value: 'tag3' }, sql: `s = 'tag3'` },
  {
    name: 'string IN',
    col: 2,
    pred: { kind: 'in', col: 2, values: ['tag0', 'tag6', 'none'] },
    sql: `s IN ('tag0', 'tag6', 'none')`,
  },
  { name: 'IS NULL', col: 2, pred: { kind: 'isNull', col: 2, isNull: true }, sql: 's IS NULL' },
  {
    name: 'NOT =',
    col: 2,
    pred: { kind: 'not', pred: { kind: 'cmp', col: 2, op: '=', value: 'tag3' } },
    sql: `NOT (s = 'tag3')`,
  },
  {
    name: 'LIKE on PLAIN pages',
    col: 3,
    pred: {
      kind: 'expr',
      expr: {
        k: 'fn',
        fn: '$like',
        args: [
          { k: 'col', col: 3, type: { id: 'utf8' }, name: 'u' },
          { k: 'lit', value: '%7-1%', type: { id: 'utf8' } },
        ],
        type: { id: 'bool' },
        what: 'test',
      },
    },
    sql: `u LIKE '%7-1%'`,
  },
  {
    name: 'date range',
    col: 4,
    pred: {
      kind: 'and',
      preds: [
        { kind: 'cmp', col: 4, op: '>=', value: DAY('1994-06-01') },
        { kind: 'cmp', col: 4, op: '<', value: DAY('1995-02-01') },
      ],
    },
    sql: `d >= DATE '1994-06-01' AND d < DATE '1995-02-01'`,
  },
  {
    name: 'integer OR',
    col: 1,
    pred: {
      kind: 'or',
      preds: [
        { kind: 'cmp', col: 1, op: '<', value: 5 },
        { kind: 'cmp', col: 1, op: '=', value: 77 },
      ],
    },
    sql: 'i < 5 OR i = 77',
  },
];

describe('outcomes read from dictionaries and pages', () => {
  for (const c of CASES) {
    it(`${c.name}: DuckDB's outcome for every row, several row groups and a row range of one`, async () => {
      const truth = (col: Column) => {
        const r = evalPredicate({ length: col.length, columns: FIELDS.map(() => col) }, c.pred as never);
        return r.map((x) => (x === 1 ? 1 : 0));
      };
      const [all] = readMasks(SNAPPY, groups[SNAPPY], [{ field: FIELDS[c.col], truth }]);
      expect(Array.from(all)).toEqual(await duckOutcomes(SNAPPY, c.sql));
      const range = { offset: 12_345, limit: 4_321 };
      const [part] = readMasks(ONE, [0], [{ field: FIELDS[c.col], truth }], range);
      expect(Array.from(part)).toEqual(await duckOutcomes(ONE, c.sql, range.offset, range.limit));
    });

    it(`${c.name}: the scan's rows, the other columns read at the rows kept or whole`, async () => {
      for (const [file, range, keep] of [
        [SNAPPY, {}, [0]],
        [ONE, { offset: 12_345, limit: 4_321 }, [0]],
        // the column kept too: read, its mask appended after the five columns (not a string column: see above)
        [SNAPPY, {}, [0, c.col]],
        [ONE, { offset: 12_345, limit: 4_321 }, [0, c.col]],
      ] as const) {
        if (keep.length > 1 && FIELDS[c.col].type.id === 'utf8') continue;
        const r = await produceMasked(withMasks(scanTask(file, c.pred, [...keep], range)).source as never, true);
        const at = keep.length > 1 ? FIELDS.length : c.col;
        const { offset = 0, limit = ROWS } = range as { offset?: number; limit?: number };
        const outcome = await duckOutcomes(file, c.sql, offset, limit);
        const kept = outcome.flatMap((x, j) => (x ? [offset + j] : []));
        // k is the row's number: the rows of the scan with the mask true are DuckDB's rows kept
        const rows = r.batches.flatMap((b) => {
          const k = b.columns[0].values as BigInt64Array,
            m = b.columns[at].values as Uint8Array;
          return Array.from({ length: b.length }, (_, j) => (m[j] ? [Number(k[j])] : [])).flat();
        });
        expect(rows).toEqual(kept);
        // and every other column's values at those rows are the file's (nulls, dictionary and PLAIN pages)
        const others = [1, 2, 3, 4].filter((i) => i !== at);
        const ours = r.batches.flatMap((b) =>
          Array.from({ length: b.length }, (_, j) => j)
            .filter((j) => (b.columns[at].values as Uint8Array)[j])
            .map((j) => others.map((i) => cell(b.columns[i], j))),
        );
        const theirs = await duckRows(
          `SELECT ${others.map((i) => (FIELDS[i].name === 'd' ? "strftime(d, '%Y-%m-%d')" : FIELDS[i].name)).join(', ')}
           FROM read_parquet('${file}') WHERE k IN (${kept.length ? kept.join(',') : -1}) ORDER BY k`,
        );
        const str = (v: unknown) => (v === null ? null : String(v));
        expect(ours.map((row) => row.map(str))).toEqual(theirs.map((row) => row.map(str)));
        // few rows kept (SELECT_SHARE): only those read (io/parquet-select.ts); else every row, its outcome beside it
        const rowsOut = r.batches.reduce((a, b) => a + b.length, 0);
        expect(rowsOut).toBe(kept.length <= outcome.length * SELECT_SHARE ? kept.length : outcome.length);
        expect(r.rows).toBe(outcome.length); // the rows read, as a scan reports them
        r.release?.();
      }
    });
  }

  it('a dictionary larger than the rows read: its values evaluated as the rows need them', async () => {
    const c = CASES[CASES.length - 1]; // i: 100 values in the dictionary, 50 rows read, 3 of them
    const seen: number[] = [];
    const truth = (col: Column) => {
      seen.push(col.length);
      const r = evalPredicate({ length: col.length, columns: FIELDS.map(() => col) }, c.pred as never);
      return r.map((x) => (x === 1 ? 1 : 0));
    };
    const [part] = readMasks(ONE, [0], [{ field: FIELDS[c.col], truth }], { offset: 777, limit: 50 });
    expect(Array.from(part)).toEqual(await duckOutcomes(ONE, c.sql, 777, 50));
    // the null's outcome first (one row), then only the values the rows read hold (at most 50), never all 100
    expect(seen[0]).toBe(1);
    expect(Math.max(...seen)).toBeLessThanOrEqual(51);
  });

  it('a codec the direct reader does not take: the columns read as before, the same outcomes', async () => {
    const c = CASES[1];
    expect(() => readMasks(ZSTD, [0], [{ field: FIELDS[2], truth: () => new Uint8Array(0) }])).toThrow(/codec/);
    const r = await produceMasked(withMasks(scanTask(ZSTD, c.pred, [0])).source as never, true);
    expect(r.rows).toBe(ROWS);
    expect(r.batches.flatMap((b) => Array.from(b.columns[c.col].values as Uint8Array))).toEqual(
      await duckOutcomes(ZSTD, c.sql),
    );
    r.release?.();
  });
});

describe('queries whose filters read columns only to filter', () => {
  const plan = (file: string, where: object, groupBy: string[] = [], sumK = true) => ({
    version: 1,
    sources: { t: { parquet: file } },
    query: {
      op: 'aggregate',
      groupBy,
      aggregates: [{ fn: 'count', as: 'n' }, ...(sumK ? [{ fn: 'sum', column: 'k', as: 'sk' }] : [])],
      input: { op: 'filter', where, input: { op: 'scan', source: 't' } },
    },
  });
  const where = {
    and: [
      { column: 's', in: ['tag1', 'tag2', 'tag5'] },
      { column: 'd', between: ['1994-02-01', '1995-07-01'] },
      { not: { column: 'u', like: '%3%' } },
      { column: 'i', cmp: '<', value: 60 },
    ],
  };
  const cond = `s IN ('tag1', 'tag2', 'tag5') AND d BETWEEN DATE '1994-02-01' AND DATE '1995-07-01'
    AND NOT (u LIKE '%3%') AND i < 60`;
  it('reports the masks each scan task read (three filter-only columns, and i, grouped on)', async () => {
    const r = await runPlan(plan(SNAPPY, where, ['i']), { workers: 2, inThreadBytes: 0, writeOutput: false });
    const scans = r.stats.tasks.filter((t) => t.kind === 'map');
    expect(scans.length).toBeGreaterThan(0);
    expect(scans.every((t) => t.masks === 4)).toBe(true);
  });

  for (const [name, opts] of [
    ['on the pool', { workers: 2, inThreadBytes: 0 }],
    ['on the calling thread', {}],
  ] as const) {
    for (const file of [SNAPPY, ZSTD, ONE]) {
      it(`${name}, ${path.basename(file)}: DuckDB's answer`, async () => {
        await expectSame(
          plan(file, where, ['i']),
          `SELECT i, count(*) AS n, sum(k) AS sk FROM read_parquet('${file}') WHERE ${cond} GROUP BY i`,
          opts,
        );
        // every column read is dropped after the filter: the scan reads masks only
        await expectSame(
          plan(
            file,
            {
              and: [
                { column: 's', cmp: '!=', value: 'tag4' },
                { column: 'd', isNull: true },
              ],
            },
            [],
            false,
          ),
          `SELECT count(*) AS n FROM read_parquet('${file}') WHERE s != 'tag4' AND d IS NULL`,
          opts,
        );
      });
    }
  }
});
