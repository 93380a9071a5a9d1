// Window functions in SQL against DuckDB, in the shapes ETL is written in: the latest row per key (QUALIFY and a
// subquery), the top 3 per key, running totals, gaps between events (lag), named windows, windows over aggregates,
// a window in ORDER BY, a RANGE of days.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runSql } from '../dist/index.js';
import { arrowTyped, duckTable, expectTypedEqual, sql, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-window-sql-');
const S: Record<string, string> = {};

beforeAll(async () => {
  // events: a hot customer (1), others with a few events each, tied dates, null amounts
  S.events = await writeParquet(
    path.join(dir, 'events.parquet'),
    `SELECT i AS id, CASE WHEN i % 4 = 0 THEN 1 ELSE 2 + i % 37 END AS customer,
      DATE '2024-01-01' + ((i * 7) % 90)::INTEGER AS day,
      CASE WHEN i % 13 = 0 THEN NULL ELSE ((i * 31) % 500)::DECIMAL(10,2) / 4 END::DECIMAL(10,2) AS amount,
      ['web','shop','app'][1 + i % 3] AS channel
    FROM range(0, 2000) t(i)`,
    400,
  );
  await sql(`CREATE OR REPLACE VIEW events AS SELECT * FROM read_parquet('${S.events}')`);
});

async function same(text: string, ordered = false, duckText = text) {
  const r = await runSql(text, { sources: S, workers: 2, inThreadBytes: 0 });
  const theirs = await duckTable(duckText);
  expectTypedEqual(arrowTyped(r.toArrow()), theirs, ordered);
  return theirs.rows;
}

describe('window functions in SQL', () => {
  it('the latest row per key: QUALIFY row_number() = 1, and the same through a subquery', async () => {
    const rows = await same(
      `SELECT customer, id, day FROM events
       QUALIFY row_number() OVER (PARTITION BY customer ORDER BY day DESC, id DESC) = 1`,
    );
    expect(rows.length).toBe(38);
    await same(`SELECT customer, id, day FROM (
        SELECT *, row_number() OVER (PARTITION BY customer ORDER BY day DESC, id DESC) AS rn FROM events) t
      WHERE rn = 1`);
    // an alias in QUALIFY
    await same(`SELECT customer, id, row_number() OVER (PARTITION BY customer ORDER BY day DESC, id DESC) AS rn
      FROM events QUALIFY rn <= 2`);
  });

  it('the top 3 per key by rank (ties kept), dense_rank, ordered output', async () => {
    await same(
      `SELECT customer, amount, rank() OVER (PARTITION BY customer ORDER BY amount DESC NULLS LAST) AS r
       FROM events QUALIFY r <= 3 ORDER BY customer, r, amount`,
      false,
    );
    await same(`SELECT id, dense_rank() OVER (PARTITION BY channel ORDER BY day) AS dr FROM events`);
  });

  it('DISTINCT window aggregates: count(DISTINCT x) OVER (PARTITION BY ...), sliding sum and avg, in QUALIFY', async () => {
    await same(`SELECT id, count(DISTINCT channel) OVER (PARTITION BY customer) AS channels,
        sum(DISTINCT amount) OVER (PARTITION BY customer ORDER BY day, id ROWS BETWEEN 3 PRECEDING AND 1 FOLLOWING) AS sd,
        avg(DISTINCT amount) OVER (PARTITION BY channel ORDER BY day RANGE BETWEEN INTERVAL 5 DAY PRECEDING AND CURRENT ROW) AS ad,
        max(DISTINCT day) OVER (PARTITION BY customer) AS last_day
      FROM events`);
    const rows = await same(`SELECT customer, id FROM events
      QUALIFY count(DISTINCT channel) OVER (PARTITION BY customer ORDER BY day, id) = 3`);
    expect(rows.length).toBeGreaterThan(0);
    await expect(runSql('SELECT lag(DISTINCT id) OVER (ORDER BY day) FROM events', { sources: S })).rejects.toThrow(
      /DISTINCT is for count, sum, avg, min and max over a window; lag\(\) is not an aggregate/,
    );
  });

  it('running totals, moving averages over rows and a RANGE of days, named windows', async () => {
    await same(`SELECT id, sum(amount) OVER (PARTITION BY customer ORDER BY day, id) AS running,
        avg(amount) OVER (PARTITION BY customer ORDER BY day, id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS ma3,
        count(*) OVER (PARTITION BY customer ORDER BY day RANGE BETWEEN INTERVAL 7 DAY PRECEDING AND CURRENT ROW) AS wk
      FROM events`);
    await same(`SELECT id, sum(amount) OVER w AS s, min(amount) OVER w AS lo, max(day) OVER (w ROWS UNBOUNDED PRECEDING) AS hi
      FROM events WINDOW w AS (PARTITION BY channel ORDER BY id)`);
  });

  it('gaps between events: lag, lead with a default', async () => {
    await same(`SELECT id, customer, id - lag(id) OVER (PARTITION BY customer ORDER BY day, id) AS gap, lag(day) OVER (PARTITION BY customer ORDER BY day, id) AS prev_day,
        lead(amount, 2, 0) OVER (PARTITION BY customer ORDER BY day, id) AS next2,
        first_value(channel) OVER (PARTITION BY customer ORDER BY day, id) AS first_channel,
        ntile(3) OVER (PARTITION BY customer ORDER BY day, id) AS third
      FROM events`);
  });

  it('windows over aggregates (applied after GROUP BY), a whole-table window, a window in ORDER BY', async () => {
    await same(`SELECT customer, sum(amount) AS total,
        rank() OVER (ORDER BY sum(amount) DESC NULLS LAST) AS r,
        sum(sum(amount)) OVER () AS grand,
        percent_rank() OVER (PARTITION BY count(*) > 50 ORDER BY customer) AS pr
      FROM events GROUP BY customer`);
    await same(
      `SELECT customer, count(*) AS n FROM events GROUP BY customer
       ORDER BY row_number() OVER (ORDER BY count(*) DESC, customer) LIMIT 5`,
      true,
    );
  });

  it('errors: nested windows, an unknown window name, a window in WHERE', async () => {
    const err = (t: string) =>
      runSql(t, { sources: S }).then(
        () => 'ran',
        (e: Error) => e.message,
      );
    expect(await err('SELECT sum(rank() OVER (ORDER BY id)) OVER () FROM events')).toMatch(/cannot be nested/);
    expect(await err('SELECT rank() OVER w FROM events')).toMatch(/window "w" is not defined/);
    expect(await err('SELECT id FROM events WHERE rank() OVER (ORDER BY id) = 1')).toMatch(
      /window functions are allowed in SELECT, QUALIFY and ORDER BY only/,
    );
    expect(await err('SELECT id FROM events QUALIFY id = 1')).toMatch(/QUALIFY needs a window function/);
  });
});
