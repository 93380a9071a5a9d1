// Results are written batch by batch as the final stage produces them, in
// every format: Parquet row group by row group (never the whole result in the
// WebAssembly module), Arrow IPC, CSV and JSON lines; a scan keeps its file
// order, a sort its order; a query failing after some rows were written
// leaves no file behind.
import fs from 'node:fs';
import path from 'node:path';
import * as arrow from 'apache-arrow';
import * as pw from 'parquet-wasm';
import { beforeAll, describe, expect, it } from 'vitest';
import { executePlan, loadPlan, runPlan } from '../dist/index.js';
import { duckRows, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-result-');
const file = (n: string) => path.join(dir, n);
const ROWS = 600_000;
/** on the pool: an in-thread run would decode in this process's WebAssembly module, whose memory the first test measures */
const POOL = { workers: 2, inThreadBytes: 0 } as const;

beforeAll(async () => {
  await writeParquet(
    file('t.parquet'),
    `SELECT i::BIGINT AS id, (i % 1000)::BIGINT AS g, (i * 0.5)::DOUBLE AS x,
    CASE WHEN i % 7 = 0 THEN NULL ELSE 's' || (i % 97) END AS s FROM range(0, ${ROWS}) t(i)`,
    50_000,
  );
});

const scan = { op: 'scan', source: 't' };
const plan = (query: object, out: string) => ({
  version: 1,
  sources: { t: { parquet: file('t.parquet') } },
  query,
  output: { path: out },
});
const T = `read_parquet('${file('t.parquet')}')`;

describe('a result written as it is produced', () => {
  it('Parquet: row group by row group, never the whole result in the WebAssembly module, file order kept', async () => {
    const before = pw.wasmMemory().buffer.byteLength;
    const out = file('scan.parquet');
    // the command line's way: nothing kept in memory
    const r = await executePlan(await loadPlan(plan(scan, out), POOL), true, { keepBatches: false });
    expect(r.numRows).toBe(ROWS);
    expect(r.batches).toEqual([]);
    const [[groups, rows]] = await duckRows(
      `SELECT count(DISTINCT row_group_id), sum(row_group_num_rows) / 4 FROM parquet_metadata('${out}')`,
    );
    expect(Number(groups)).toBeGreaterThan(3);
    expect(Number(rows)).toBe(ROWS);
    // Three times the rows (~60 MB as Arrow) need no more of the module's memory: one row group at a time.
    const grown = pw.wasmMemory().buffer.byteLength;
    const thrice = {
      ...plan(scan, file('thrice.parquet')),
      sources: { t: { parquet: [file('t.parquet'), file('t.parquet'), file('t.parquet')] } },
    };
    expect((await executePlan(await loadPlan(thrice, POOL), true, { keepBatches: false })).numRows).toBe(3 * ROWS);
    // (written whole, they would need 60 MB more; a few pages of allocator slack are fine)
    expect(pw.wasmMemory().buffer.byteLength - grown).toBeLessThan(16 * 1024 * 1024);
    expect(grown - before).toBeLessThan(32 * 1024 * 1024);
    const [[diff]] =
      await duckRows(`SELECT count(*) FROM (SELECT row_number() OVER () AS n, * FROM read_parquet('${out}')) a
      FULL JOIN (SELECT row_number() OVER () AS n, * FROM ${T}) b ON a.n = b.n
      WHERE a.id IS DISTINCT FROM b.id OR a.s IS DISTINCT FROM b.s OR a.x IS DISTINCT FROM b.x`);
    expect(Number(diff)).toBe(0);
  });

  it('a sorted result spanning several pieces (views of one batch) stays in order (Parquet, CSV and JSON lines)', async () => {
    const q = { op: 'sort', input: scan, by: [{ column: 'g', desc: true }, { column: 'id' }] };
    for (const [name, read] of [
      ['sorted.parquet', 'read_parquet'],
      ['sorted.csv', 'read_csv'],
      ['sorted.jsonl', 'read_json'],
    ] as const) {
      await runPlan(plan(q, file(name)), POOL);
      const [[diff, n]] = await duckRows(`SELECT count(*) FILTER (WHERE a.id IS DISTINCT FROM b.id), count(*) FROM
        (SELECT row_number() OVER () AS n, id FROM ${read}('${file(name)}')) a
        FULL JOIN (SELECT row_number() OVER (ORDER BY g DESC, id) AS n, id FROM ${T}) b ON a.n = b.n`);
      expect([Number(diff), Number(n)]).toEqual([0, ROWS]);
    }
  });

  it("CSV, JSON lines and Arrow IPC of a join + aggregate give DuckDB's answer", async () => {
    const q = {
      op: 'aggregate',
      input: scan,
      groupBy: ['g', 's'],
      aggregates: [
        { fn: 'count', as: 'n' },
        { fn: 'sum', column: 'id', as: 'total' },
      ],
    };
    const expected = await duckRows(
      `SELECT count(*), sum(n), sum(total), count(s) FROM (SELECT g, s, count(*) AS n, sum(id) AS total FROM ${T} GROUP BY g, s)`,
    );
    await runPlan(plan(q, file('agg.csv')), { ...POOL, partitions: 6 });
    expect(await duckRows(`SELECT count(*), sum(n), sum(total), count(s) FROM read_csv('${file('agg.csv')}')`)).toEqual(
      expected,
    );
    await runPlan(plan(q, file('agg.jsonl')), { ...POOL, partitions: 6 });
    expect(
      await duckRows(
        `SELECT count(*), sum(n), sum(total), count(s) FROM read_json('${file('agg.jsonl')}', format = 'newline_delimited')`,
      ),
    ).toEqual(expected);
    await runPlan(plan(q, file('agg.arrow')), { ...POOL, partitions: 6 });
    const t = arrow.tableFromIPC(fs.readFileSync(file('agg.arrow')));
    expect(t.batches.length).toBeGreaterThan(1); // one record batch per task's output, not one table
    let n = 0n,
      total = 0n,
      strings = 0;
    for (let i = 0; i < t.numRows; i++) {
      n += BigInt(t.getChild('n')!.get(i));
      total += BigInt(t.getChild('total')!.get(i));
      if (t.getChild('s')!.get(i) !== null) strings++;
    }
    expect([String(t.numRows), String(n), String(total), String(strings)]).toEqual(expected[0]);
  });

  it('JSON (.json): one array of objects, cells as in JSON lines; an empty result is []', async () => {
    const q = {
      op: 'aggregate',
      input: { op: 'filter', input: scan, where: { column: 'id', cmp: '<', value: 50_000 } },
      groupBy: ['g', 's'],
      aggregates: [
        { fn: 'count', as: 'n' },
        { fn: 'avg', column: 'x', as: 'ax' },
      ],
    };
    await runPlan(plan(q, file('agg.json')), { ...POOL, partitions: 6 });
    await runPlan(plan(q, file('agg2.jsonl')), { ...POOL, partitions: 6 });
    const text = fs.readFileSync(file('agg.json'), 'utf8');
    expect(text.startsWith('[\n{"g":')).toBe(true);
    expect(text.endsWith('}\n]\n')).toBe(true);
    const lines = fs
      .readFileSync(file('agg2.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    const rows = JSON.parse(text);
    expect(rows.length).toBe(lines.length);
    const key = (r: { g: number; s: string | null }) => `${r.g}|${r.s}`;
    const byKey = (rs: { g: number; s: string | null }[]) => [...rs].sort((a, b) => (key(a) < key(b) ? -1 : 1));
    expect(byKey(rows)).toEqual(byKey(lines));
    const [[n]] = await duckRows(`SELECT count(*) FROM (SELECT DISTINCT g, s FROM ${T} WHERE id < 50000)`);
    expect(rows.length).toBe(Number(n));
    const empty = { op: 'filter', input: scan, where: { column: 'id', cmp: '<', value: 0 } };
    await runPlan(plan(empty, file('empty.json')), POOL);
    expect(fs.readFileSync(file('empty.json'), 'utf8')).toBe('[]\n');
  });

  it('an empty result is a valid file with the schema', async () => {
    const q = { op: 'filter', input: scan, where: { column: 'id', cmp: '<', value: 0 } };
    await runPlan(plan(q, file('empty.parquet')), POOL);
    expect(await duckRows(`SELECT count(*) FROM read_parquet('${file('empty.parquet')}')`)).toEqual([['0']]);
    expect(
      (await duckRows(`DESCRIBE SELECT * FROM read_parquet('${file('empty.parquet')}')`)).map((r) => r[0]),
    ).toEqual(['id', 'g', 'x', 's']);
  });

  it('a query that fails after some of its rows were written leaves no file', async () => {
    await writeParquet(
      file('over.parquet'),
      `SELECT (i % 8)::BIGINT AS g, CASE WHEN i % 8 = 3 THEN 9223372036854775000 ELSE i END::BIGINT AS v FROM range(0, 80000) t(i)`,
      5000,
    );
    const outDir = file('fail');
    fs.mkdirSync(outDir);
    const p = {
      version: 1,
      sources: { t: { parquet: file('over.parquet') } },
      output: { path: path.join(outDir, 'r.parquet') },
      query: {
        op: 'aggregate',
        input: { op: 'scan', source: 't' },
        groupBy: ['g'],
        aggregates: [{ fn: 'sum', column: 'v', as: 'total' }],
      },
    };
    const e = await runPlan(p, { ...POOL, partitions: 8, combiners: false }).catch((x) => x);
    expect(String(e.message)).toMatch(/overflows a 64-bit integer/);
    expect(fs.readdirSync(outDir)).toEqual([]);
  });
});
