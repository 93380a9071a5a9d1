// The 22 TPC-H plans of plans/tpch on Spark (--engine spark, the shared local server
// of test/spark-setup.ts) against DuckDB running the official SQL (test/tpch/qNN.sql)
// with the specification's validation values (the plans' defaults, tpch.test.ts checks) on SF 0.01.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runPlan } from '../dist/index.js';
import { ROOT, arrowTyped, duckTable, expectTypedEqual, sql } from './helpers.js';
import { officialSql } from './tpch-queries.js';
import { NO_SPARK, REMOTE, requireSpark } from './spark-helpers.js';

const DATA = path.join(ROOT, 'datasets', 'tpch');
const TABLES = ['region', 'nation', 'supplier', 'customer', 'part', 'partsupp', 'orders', 'lineitem'];
const QUERIES = Array.from({ length: 22 }, (_, i) => `q${String(i + 1).padStart(2, '0')}`);
const planFile = (q: string) => path.join(ROOT, 'plans', 'tpch', `${q}.json`);

beforeAll(async () => {
  if (NO_SPARK) return;
  requireSpark();
  for (const t of TABLES)
    await sql(`CREATE OR REPLACE VIEW ${t} AS SELECT * FROM read_parquet('${path.join(DATA, `${t}.parquet`)}')`);
});

describe.skipIf(NO_SPARK)('TPC-H plans on Spark against the official SQL (SF 0.01)', () => {
  for (const q of QUERIES) {
    it(q, async () => {
      const r = await runPlan(planFile(q), { engine: 'spark', remote: REMOTE });
      const theirs = await duckTable(officialSql(q));
      expect(theirs.rows.length).toBeGreaterThan(0);
      expectTypedEqual(arrowTyped(r.toArrow()), theirs);
      expect(r.stats).toMatchObject({ engine: 'spark', spark: { applicationId: expect.stringMatching(/./) } });
    });
  }
});
