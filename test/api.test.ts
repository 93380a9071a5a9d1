// The library's surface: toRows() dates and timestamps (ISO text by default, Date or the raw
// numbers on request, checked against DuckDB's text of the same values), and baseDir taken the
// same way by loadPlan and runPlan.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PlanError, definePlan, loadPlan, runPlan } from '../dist/index.js';
import { duck, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-api-');
const QUERY = `SELECT i AS id, DATE '1996-09-24' + i::INT AS d, TIMESTAMP '1996-09-24 10:30:00.123456' + i * INTERVAL 1 HOUR AS ts,
  (TIMESTAMPTZ '1969-12-31 23:59:59.999999+00' + i * INTERVAL 1 SECOND) AS tz FROM range(3) t(i) UNION ALL SELECT 3, NULL, NULL, NULL`;

const plan = definePlan({
  version: 1,
  sources: { t: { parquet: 'dates.parquet' } },
  query: { op: 'sort', by: [{ column: 'id' }], input: { op: 'scan', source: 't' } },
});

beforeAll(async () => {
  await (await duck()).run("SET TimeZone = 'UTC'");
  await writeParquet(path.join(dir, 'dates.parquet'), QUERY);
});

describe('toRows()', () => {
  it('gives dates and timestamps as ISO text by default, as --json prints them', async () => {
    const r = await runPlan(plan, { baseDir: dir });
    const want = (
      await (
        await duck()
      ).runAndReadAll(`SELECT strftime(d, '%Y-%m-%d'), strftime(ts, '%Y-%m-%dT%H:%M:%S.%f'),
      strftime(tz, '%Y-%m-%dT%H:%M:%S.%f') || 'Z' FROM (${QUERY}) ORDER BY id`)
    ).getRows();
    expect(r.toRows().map((x) => [x.d, x.ts, x.tz])).toEqual(want);
    expect(r.toRows()[0]).toEqual({
      id: 0n,
      d: '1996-09-24',
      ts: '1996-09-24T10:30:00.123456',
      tz: '1969-12-31T23:59:59.999999Z',
    });
  });

  it('gives Date objects with { dates: "date" } (a date at midnight UTC; below a millisecond dropped)', async () => {
    const [row, , , nulls] = (await runPlan(plan, { baseDir: dir })).toRows({ dates: 'date' });
    expect(row.d).toBeInstanceOf(Date);
    expect((row.d as Date).toISOString()).toBe('1996-09-24T00:00:00.000Z');
    expect((row.ts as Date).toISOString()).toBe('1996-09-24T10:30:00.123Z');
    // before 1970: rounded toward the past, not toward zero
    expect((row.tz as Date).toISOString()).toBe('1969-12-31T23:59:59.999Z');
    expect(nulls).toEqual({ id: 3n, d: null, ts: null, tz: null });
  });

  it('gives the stored numbers with { dates: "raw" }: days since 1970, a bigint count of the unit', async () => {
    const [row] = (await runPlan(plan, { baseDir: dir })).toRows({ dates: 'raw' });
    expect(row.d).toBe(9763);
    expect(row.ts).toBe(843561000123456n);
    expect(row.tz).toBe(-1n);
  });

  it('refuses an unknown form, naming the value', async () => {
    const r = await runPlan(plan, { baseDir: dir });
    expect(() => r.toRows({ dates: 'epoch' as 'raw' })).toThrow(
      'toRows: dates must be "iso", "date" or "raw", got "epoch"',
    );
  });
});

describe('baseDir', () => {
  it('is an option of loadPlan as of runPlan', async () => {
    const lp = await loadPlan(plan, { baseDir: dir });
    expect(lp.baseDir).toBe(dir);
    expect(lp.root.kind).toBe('sort');
    // without it the plan's relative path is the current folder's: the file is not there
    await expect(loadPlan(plan)).rejects.toThrow(/dates\.parquet/);
  });

  it('the older third argument still works; both, different, is an error naming both', async () => {
    expect((await loadPlan(plan, {}, dir)).baseDir).toBe(dir);
    const e = await loadPlan(plan, { baseDir: dir }, '/elsewhere').catch((x) => x);
    expect(e).toBeInstanceOf(PlanError);
    expect(e.message).toBe(
      `baseDir: given twice with different values: ${JSON.stringify(dir)} in the options and "/elsewhere" as the third argument`,
    );
  });
});
