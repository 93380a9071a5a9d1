// The direct Parquet reader (io/parquet-direct.ts) against DuckDB: every type
// it takes (integers, doubles, dates, timestamps, strings with empty and
// multi-byte values, decimals of precision 1 to 38 with negative and extreme
// values, as INT32, INT64 and FIXED_LEN_BYTE_ARRAY), nulls, dictionary and
// PLAIN pages, uncompressed, snappy and gzip, row groups and row ranges;
// files of parquet-rs (the parquet-wasm writer) and of our own encoder; what
// it does not take is refused (NotDirect) and read by parquet-wasm; corrupt
// data is an input error naming the file.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readDirect } from '../dist/io/parquet-direct.js';
import { WordLease, pooledBytes } from '../dist/io/word-pool.js';
import { NotDirect, openFooter } from '../dist/io/parquet-footer.js';
import { ParquetFileWriter } from '../dist/io/parquet-encode.js';
import { writeParquetBytes } from '../dist/io/parquet-write.js';
import { inspectParquet, readRowGroups, readRowGroupsInPlace } from '../dist/io/parquet.js';
import { type Batch, type Column, type Field, valueAt } from '../dist/kernels/column.js';
import { cli, duckRows, expectSame, ourRun, sql, tmpDir, writePlan } from './helpers.js';

// integers, dates and strings through parquet-wasm from the first task (io/parquet-direct.ts rents the direct
// reader for them first): the mixed reads below need both readers in one batch
process.env.SKEWJOIN_DIRECT_RENT = '0';

const dir = tmpDir('sj-direct-');
const file = (n: string) => path.join(dir, n);
const N = 5000;

/** A DuckDB expression for a DECIMAL(p, s) of row i: both extremes on rows 0 and 1, negatives on every third row. */
function decimalExpr(p: number, s: number): string {
  const max = 10n ** BigInt(p) - 1n,
    lowDigits = Math.min(p, 18);
  let k = `((i::HUGEINT * 2654435761) % ${10n ** BigInt(lowDigits)})`;
  if (p > 18) k = `(${k} * ${10n ** BigInt(p - 18)} + i % ${10n ** BigInt(p - 18)})`;
  k = `(CASE WHEN i = 0 THEN ${max} WHEN i = 1 THEN -${max} WHEN i % 3 = 1 THEN -${k} ELSE ${k} END)`;
  const text =
    s === 0
      ? `${k}::VARCHAR`
      : `(CASE WHEN ${k} < 0 THEN '-' ELSE '' END) || (abs(${k}) // ${10n ** BigInt(s)})::VARCHAR || '.' || lpad((abs(${k}) % ${10n ** BigInt(s)})::VARCHAR, ${s}, '0')`;
  return `CAST(${text} AS DECIMAL(${p},${s}))`;
}

const DECIMALS: [number, number][] = [
  [1, 0],
  [4, 4],
  [9, 2],
  [10, 3],
  [15, 2],
  [18, 6],
  [19, 0],
  [28, 10],
  [38, 5],
];

/** The columns of the test file, each with how DuckDB writes its canonical text. */
const COLUMNS: [string, string, string][] = [
  ['i32', 'CASE WHEN i % 11 = 3 THEN NULL ELSE (i * 37 - 90000)::INTEGER END', 'i32::VARCHAR'],
  ['i64', '(i::BIGINT * 1000000007 * (CASE WHEN i % 2 = 0 THEN -1 ELSE 1 END))', 'i64::VARCHAR'],
  ['low', '(i % 5)::INTEGER', 'low::VARCHAR'], // a small dictionary
  ['wide', '((i * 7919) % 4099)::BIGINT', 'wide::VARCHAR'], // a dictionary of 13-bit indices
  ['f64', 'CASE WHEN i % 7 = 0 THEN NULL ELSE i * 0.37 - 100 END', 'f64'],
  ['d', "DATE '1992-01-01' + (i % 2500)::INTEGER", "datediff('day', DATE '1970-01-01', d)"],
  ['ts', "TIMESTAMP '2001-02-03 04:05:06' + to_microseconds(i * 1000003)", 'epoch_us(ts)::VARCHAR'],
  [
    's',
    "CASE WHEN i % 13 = 0 THEN NULL WHEN i % 13 = 1 THEN '' WHEN i % 3 = 0 THEN 'é€😀' || i::VARCHAR ELSE repeat('x', i % 40) || i::VARCHAR END",
    's',
  ],
  ['flag', "CASE WHEN i % 17 = 0 THEN NULL ELSE ['A', 'N', 'R', 'ß'][i % 4 + 1] END", 'flag'],
  // dictionaries of one width: one byte (copied by a table of its bytes), with and without nulls, and three
  ['code', "CASE WHEN i % 19 = 0 THEN NULL ELSE ['A', 'N', 'R'][i % 3 + 1] END", 'code'],
  ['status', "['F', 'O', 'P'][i % 3 + 1]", 'status'],
  ['mode', "CASE WHEN i % 23 = 0 THEN NULL ELSE ['AIR', 'RAI', 'SHI', 'TRU'][i % 4 + 1] END", 'mode'],
  ...DECIMALS.map(([p, s], k): [string, string, string] => [
    `dec${p}_${s}`,
    k % 2 ? `CASE WHEN i % 9 = 4 THEN NULL ELSE ${decimalExpr(p, s)} END` : decimalExpr(p, s),
    `dec${p}_${s}::VARCHAR`,
  ]),
];

async function writeDuck(name: string, compression: string, rowGroupSize = 2048): Promise<string> {
  const out = file(name);
  const cols = COLUMNS.map(([n, e]) => `${e} AS ${n}`).join(', ');
  await sql(
    `COPY (SELECT ${cols} FROM range(${N}) t(i) ORDER BY i) TO '${out}' (FORMAT parquet, COMPRESSION ${compression}, ROW_GROUP_SIZE ${rowGroupSize})`,
  );
  return out;
}

/** DuckDB writes a decimal below 1 without its leading zero (.9999): ours has it. */
const leadingZeros = (rows: unknown[][]) =>
  rows.map((r) => r.map((v) => (typeof v === 'string' ? v.replace(/^(-?)\.(\d)/, '$10.$2') : v)));

/** DuckDB's canonical rows of the file, rows [from, to). */
async function duckCanon(p: string, from = 0, to = N): Promise<unknown[][]> {
  const rows = await duckRows(
    `SELECT ${COLUMNS.map(([, , c]) => c).join(', ')} FROM (SELECT *, row_number() OVER () - 1 AS rn FROM '${p}') WHERE rn >= ${from} AND rn < ${to} ORDER BY rn`,
  );
  return leadingZeros(rows);
}

/** Our batches in the same canonical form (floats as numbers, the rest as text). */
function ourCanon(batches: Batch[]): unknown[][] {
  const out: unknown[][] = [];
  for (const b of batches) {
    for (let i = 0; i < b.length; i++) {
      out.push(
        b.columns.map((c: Column) => {
          const v = valueAt(c, i);
          return v === null || typeof v === 'string' || c.type.id === 'float64' ? v : String(v);
        }),
      );
    }
  }
  return out;
}

const allGroups = (p: string) => openFooter(p).footer.rowGroups.map((_, i) => i);

async function fieldsOf(p: string): Promise<Field[]> {
  return (await inspectParquet(p)).columns as Field[];
}

describe("the direct reader gives DuckDB's values", () => {
  for (const compression of ['uncompressed', 'snappy', 'gzip']) {
    it(`every type it takes, nulls, dictionaries, ${compression}`, async () => {
      const p = await writeDuck(`all-${compression}.parquet`, compression);
      const fields = await fieldsOf(p);
      expect(fields.map((f) => f.name)).toEqual(COLUMNS.map(([n]) => n));
      const batches = readDirect(p, allGroups(p), fields);
      expect(batches.every((b) => b.length <= 1 << 17)).toBe(true);
      const ours = ourCanon(batches),
        theirs = await duckCanon(p);
      const bad = ours.findIndex((r, i) => JSON.stringify(r) !== JSON.stringify(theirs[i]));
      if (bad >= 0) expect([bad, ours[bad]]).toEqual([bad, theirs[bad]]);
      expect(ours).toEqual(theirs);
      // decimals of precision <= 18 in one 8-byte lane, above in two
      const dec = fields.findIndex((f) => f.name === 'dec15_2'),
        dec38 = fields.findIndex((f) => f.name === 'dec38_5');
      expect(batches[0].columns[dec].values.length).toBe(batches[0].length);
      expect(batches[0].columns[dec38].values.length).toBe(2 * batches[0].length);
    });
  }

  it('words leased from the thread pool: arrays given back are reused dirty, and every word is written again', async () => {
    const p = await writeDuck('lease.parquet', 'snappy');
    const fields = await fieldsOf(p);
    const theirs = await duckCanon(p);
    const first = new WordLease();
    const a = readDirect(p, allGroups(p), fields, {}, undefined, first);
    expect(ourCanon(a)).toEqual(theirs);
    const dec = fields.findIndex((f) => f.name === 'dec10_3'); // a null on every ninth row
    const buffers = new Set(a.flatMap((b) => b.columns.map((c) => c.values.buffer)));
    // dirty the arrays, give them back: the next read takes the same ones and writes every word (nulls' too)
    for (const b of a) for (const c of b.columns) if (c.type.id !== 'utf8') new Uint8Array(c.values.buffer).fill(0xa5);
    first.release();
    expect(pooledBytes()).toBeGreaterThan(0);
    const second = new WordLease();
    const b = readDirect(p, allGroups(p), fields, {}, undefined, second);
    expect(b.some((x) => buffers.has(x.columns[dec].values.buffer))).toBe(true);
    expect(ourCanon(b)).toEqual(theirs);
    second.release();
    // the engine's read (decimals direct, the rest through parquet-wasm): release gives the decimals' words back
    const before = pooledBytes();
    const batches = await readRowGroupsInPlace(p, allGroups(p), fields);
    expect(ourCanon(batches.batches)).toEqual(theirs);
    batches.release();
    expect(pooledBytes()).toBeGreaterThanOrEqual(before);
  });

  it('row groups chosen, a row range inside them, and batches cut to given lengths', async () => {
    const p = await writeDuck('groups.parquet', 'snappy', 1000); // DuckDB makes row groups of at least 2,048 rows
    const fields = await fieldsOf(p);
    expect(openFooter(p).footer.rowGroups.map((g) => g.rows)).toEqual([2048, 2048, 904]);
    // groups 0 and 2 hold rows 0-2047 and 4096-4999: skip 2000 of them, take 148 (48, then 100)
    const ranged = readDirect(p, [0, 2], fields, { offset: 2000, limit: 148 });
    expect(ourCanon(ranged)).toEqual([...(await duckCanon(p, 2000, 2048)), ...(await duckCanon(p, 4096, 4196))]);
    const cut = readDirect(p, [1], fields, { offset: 10 }, [500, 1, 1537]);
    expect(cut.map((b) => b.length)).toEqual([500, 1, 1537]);
    expect(ourCanon(cut)).toEqual(await duckCanon(p, 2058, 4096));
    expect(() => readDirect(p, [1], fields, {}, [999])).toThrow(NotDirect);
  });

  it('v2 data pages (levels outside the compressed values); their DELTA encodings refused', async () => {
    const p = file('v2.parquet');
    await sql(`COPY (SELECT i::INTEGER AS a, CASE WHEN i % 5 = 0 THEN NULL ELSE 'é' || (i % 7)::VARCHAR END AS s, (i * 0.01)::DECIMAL(15,2) AS d,
      CASE WHEN i % 4 = 0 THEN NULL ELSE (i % 3 - 1)::DECIMAL(15,2) END AS d2 FROM range(5000) t(i)) TO '${p}' (FORMAT parquet, PARQUET_VERSION V2)`);
    const fields = await fieldsOf(p);
    const pick = (names: string[]) => fields.filter((f) => names.includes(f.name));
    const got = readDirect(p, allGroups(p), pick(['s', 'd2']));
    expect(ourCanon(got)).toEqual(leadingZeros(await duckRows(`SELECT s, d2::VARCHAR FROM '${p}'`)));
    expect(() => readDirect(p, allGroups(p), pick(['d']))).toThrow(NotDirect); // DELTA_BINARY_PACKED
  });

  it('what it does not take is refused, and parquet-wasm reads it', async () => {
    const p = await writeDuck('zstd.parquet', 'zstd');
    const fields = await fieldsOf(p);
    expect(() => readDirect(p, allGroups(p), fields)).toThrow(NotDirect);
    expect(ourCanon(await readRowGroups(p, allGroups(p), fields))).toEqual(await duckCanon(p));
    // a bool column: not a type it takes
    const b = file('bool.parquet');
    await sql(`COPY (SELECT i % 3 = 0 AS b, i::DECIMAL(9,2) AS x FROM range(100) t(i)) TO '${b}' (FORMAT parquet)`);
    const bf = await fieldsOf(b);
    expect(() => readDirect(b, [0], bf)).toThrow(NotDirect);
  });
});

/** Batches of the test's engine columns: ids, a string with empty, multi-byte and null values, decimals with nulls. */
function engineBatches(n: number): { fields: Field[]; batches: Batch[] } {
  const fields: Field[] = [
    { name: 'id', type: { id: 'int64' } },
    { name: 's', type: { id: 'utf8' } },
    { name: 'd9', type: { id: 'decimal', precision: 9, scale: 2 } },
    { name: 'd18', type: { id: 'decimal', precision: 18, scale: 0 } },
    { name: 'd38', type: { id: 'decimal', precision: 38, scale: 3 } },
  ];
  const enc = new TextEncoder();
  const strs = Array.from({ length: n }, (_, i) =>
    i % 4 === 0 ? '' : i % 4 === 1 ? `ü${i}` : `row ${i} of a longer string`,
  );
  const bytes = strs.map((x) => enc.encode(x));
  const offsets = new Int32Array(n + 1);
  bytes.forEach((b, i) => {
    offsets[i + 1] = offsets[i] + b.length;
  });
  const values = new Uint8Array(offsets[n]);
  bytes.forEach((b, i) => values.set(b, offsets[i]));
  const valid = Uint8Array.from({ length: n }, (_, i) => (i % 10 === 9 ? 0 : 1));
  const id = BigInt64Array.from({ length: n }, (_, i) => BigInt(i));
  const d9 = BigInt64Array.from({ length: n }, (_, i) =>
    i === 0 ? 999999999n : BigInt((i * 7919) % 99999999) * (i % 2 ? -1n : 1n),
  );
  const d18 = BigInt64Array.from({ length: n }, (_, i) =>
    i === 1 ? -(10n ** 18n - 1n) : BigInt(i) * 123456789012n * (i % 3 ? 1n : -1n),
  );
  const d38 = new BigInt64Array(2 * n);
  for (let i = 0; i < n; i++) {
    const x =
      i === 2
        ? 10n ** 38n - 1n
        : i === 3
          ? -(10n ** 38n - 1n)
          : BigInt(i) * 10n ** 30n * (i % 2 ? -1n : 1n) + BigInt(i);
    d38[2 * i] = BigInt.asIntN(64, x);
    d38[2 * i + 1] = x >> 64n;
  }
  const cols: Column[] = [
    { type: fields[0].type, length: n, values: id, valid: null },
    { type: fields[1].type, length: n, values, offsets, valid },
    { type: fields[2].type, length: n, values: d9, valid },
    { type: fields[3].type, length: n, values: d18, valid: null },
    { type: fields[4].type, length: n, values: d38, valid },
  ];
  return { fields, batches: [{ length: n, columns: cols }] };
}

describe('files of other writers', () => {
  it('parquet-rs (the parquet-wasm writer: dictionary pages, small row groups)', async () => {
    const { fields, batches } = engineBatches(3000);
    const p = file('rs.parquet');
    fs.writeFileSync(p, writeParquetBytes(fields, batches, 700));
    const got = readDirect(p, allGroups(p), await fieldsOf(p));
    expect(ourCanon(got)).toEqual(ourCanon(batches));
  });

  it('our own encoder (PLAIN pages; decimals as INT32, INT64 and big-endian FIXED_LEN_BYTE_ARRAY)', async () => {
    const { fields, batches } = engineBatches(2500);
    const p = file('own.parquet');
    const chunks: Uint8Array[] = [];
    const w = new ParquetFileWriter(fields, (b) => chunks.push(b.slice()), { rowGroupSize: 1000 });
    w.write(batches[0]);
    w.finish();
    fs.writeFileSync(p, Buffer.concat(chunks));
    const leaves = openFooter(p).footer.leaves!;
    expect(leaves.map((l) => l.phys)).toEqual([2, 6, 1, 2, 7]);
    expect(ourCanon(readDirect(p, allGroups(p), await fieldsOf(p)))).toEqual(ourCanon(batches));
    // and DuckDB reads the same values
    const duck = await duckRows(`SELECT id::VARCHAR, s, d9::VARCHAR, d18::VARCHAR, d38::VARCHAR FROM '${p}'`);
    expect(ourCanon(readDirect(p, allGroups(p), await fieldsOf(p)))).toEqual(duck);
  });
});

describe('through the engine', () => {
  it('decimal columns decoded directly, the others by parquet-wasm in the same batches; same answers as DuckDB', async () => {
    const p = await writeDuck('engine.parquet', 'snappy', 1500);
    const plan = (columns: string[], agg: object[]) => ({
      version: 1,
      sources: { t: { parquet: p } },
      query: { op: 'aggregate', groupBy: ['flag'], aggregates: agg, input: { op: 'scan', source: 't', columns } },
    });
    const mixed = plan(
      ['flag', 'dec15_2', 'dec28_10', 'i32'],
      [
        { fn: 'sum', expr: { column: 'dec15_2' }, as: 'a' },
        { fn: 'sum', expr: { column: 'dec28_10' }, as: 'b' },
        { fn: 'sum', expr: { column: 'i32' }, as: 'c' },
        { fn: 'count', as: 'n' },
      ],
    );
    await expectSame(
      mixed,
      `SELECT flag, sum(dec15_2) a, sum(dec28_10) b, sum(i32)::BIGINT c, count(*)::BIGINT n FROM '${p}' GROUP BY flag`,
    );
    const r = await ourRun(mixed);
    expect(r.stats.tasks.filter((t) => t.kind === 'map').map((t) => t.read)).toContain('in-place');
    // only decimals: no parquet-wasm at all
    const onlyDec = {
      version: 1,
      sources: { t: { parquet: p } },
      query: {
        op: 'aggregate',
        groupBy: [],
        aggregates: [{ fn: 'sum', expr: { column: 'dec9_2' }, as: 'a' }],
        input: { op: 'scan', source: 't', columns: ['dec9_2'] },
      },
    };
    const r2 = await ourRun(onlyDec);
    expect(new Set(r2.stats.tasks.filter((t) => t.kind === 'map').map((t) => t.read))).toEqual(new Set(['direct']));
    await expectSame(onlyDec, `SELECT sum(dec9_2) a FROM '${p}'`);
  });

  it("a mixed read lines the direct columns up with parquet-wasm's batches", async () => {
    const p = await writeDuck('inplace.parquet', 'snappy', 5000);
    const fields = (await fieldsOf(p)).filter((f) => ['s', 'dec18_6', 'i64', 'dec38_5'].includes(f.name));
    const r = await readRowGroupsInPlace(p, [0], fields, false, { offset: 7, limit: 4000 });
    try {
      expect(r.viewsIntoModule).toBe(true);
      const got = ourCanon(r.batches);
      const want = await duckRows(
        `SELECT i64::VARCHAR, s, dec18_6::VARCHAR, dec38_5::VARCHAR FROM (SELECT *, row_number() OVER () - 1 AS rn FROM '${p}') WHERE rn >= 7 AND rn < 4007 ORDER BY rn`,
      );
      expect(got).toEqual(want);
    } finally {
      r.release();
    }
  });

  it('corrupt pages in a column it reads: exit 3 naming the file, no output left', async () => {
    const p = await writeDuck('corrupt.parquet', 'snappy', 2500);
    const { footer } = openFooter(p);
    const leaf = footer.leaves!.findIndex((l) => l.name === 'dec15_2');
    const chunk = footer.rowGroups[1].chunks[leaf];
    const bytes = fs.readFileSync(p);
    bytes.fill(0xff, chunk.start, chunk.start + 64); // the first page header
    const bad = file('corrupt2.parquet');
    fs.writeFileSync(bad, bytes);
    const fields = (await fieldsOf(bad)).filter((f) => f.name === 'dec15_2');
    expect(() => readDirect(bad, [1], fields)).toThrow();
    expect(() => readDirect(bad, [1], fields)).not.toThrow(NotDirect);
    const work = tmpDir('sj-direct-cli-');
    const planFile = writePlan(work, {
      version: 1,
      sources: { t: { parquet: bad } },
      output: { path: 'out/result.parquet' },
      query: {
        op: 'aggregate',
        groupBy: [],
        aggregates: [{ fn: 'sum', expr: { column: 'dec15_2' }, as: 'a' }],
        input: { op: 'scan', source: 't', columns: ['dec15_2'] },
      },
    });
    const r = cli([planFile]);
    expect(r.stderr).toContain('corrupt2.parquet');
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('corrupt2.parquet');
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
    const left = fs
      .readdirSync(work, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => e.name);
    expect(left).toEqual(['plan.json']);
  });
});
