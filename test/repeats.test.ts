// An aggregate whose subtree a plan repeats (a view read twice, TPC-H q15) is
// computed once (physical/aggregate/repeats.ts): DuckDB's answer, one aggregation stage
// fewer in the statistics, and nothing shared between subtrees that differ.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { fingerprint } from '../dist/plan/fingerprint.js';
import { loadPlan } from '../dist/plan/load.js';
import { expectSame, ourRun, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-repeats-');
const F = path.join(dir, 'sales.parquet');

beforeAll(async () => {
  await writeParquet(
    F,
    `SELECT (i % 97)::INTEGER AS k, (i % 13)::DOUBLE AS v, DATE '2020-01-01' + (i % 60)::INTEGER AS d
    FROM range(0, 20000) t(i)`,
    3000,
  );
});

/** Revenue per key over a date range: the view. */
const view = (from = '2020-01-10') => ({
  op: 'aggregate',
  groupBy: ['k'],
  aggregates: [{ fn: 'sum', expr: { fn: '*', args: [{ column: 'v' }, { value: 2 }] }, as: 'rev' }],
  input: {
    op: 'filter',
    where: { column: 'd', cmp: '>=', value: from },
    input: { op: 'scan', source: 's', columns: ['k', 'v', 'd'] },
  },
});
/** The keys whose revenue is the maximum: the view joined with its own maximum (q15's shape). */
const plan = (from2?: string) => ({
  version: 1,
  sources: { s: { parquet: F } },
  query: {
    op: 'sort',
    by: [{ column: 'k' }],
    input: {
      op: 'join',
      type: 'inner',
      on: [['rev', 'top']],
      left: view(),
      right: {
        op: 'aggregate',
        groupBy: [],
        aggregates: [{ fn: 'max', column: 'rev', as: 'top' }],
        input: view(from2),
      },
    },
  },
});
const SQL = (
  from2 = '2020-01-10',
) => `WITH v AS (SELECT k, sum(v * 2) AS rev FROM read_parquet('${F}') WHERE d >= DATE '2020-01-10' GROUP BY k),
  w AS (SELECT k, sum(v * 2) AS rev FROM read_parquet('${F}') WHERE d >= DATE '${from2}' GROUP BY k)
  SELECT v.k, v.rev, m.top FROM v JOIN (SELECT max(rev) AS top FROM w) m ON v.rev = m.top ORDER BY v.k`;

describe('a repeated aggregate', () => {
  it.each([
    ['on the pool, shuffle joins', { broadcastBytes: 0 }],
    ['on the pool, broadcast joins', {}],
    ['on the calling thread', { inThreadBytes: 1 << 30 }],
  ])("is computed once, with DuckDB's answer (%s)", async (_, opts) => {
    await expectSame(plan(), SQL(), opts, true);
    const r = await ourRun(plan(), opts);
    // the view's aggregation ran once, the maximum once: two aggregation stages, not three
    expect(r.stats.aggregates.length).toBe(2);
  });

  it('is not shared with one that differs in a literal', async () => {
    await expectSame(plan('2020-01-20'), SQL('2020-01-20'), { broadcastBytes: 0 }, true);
    const r = await ourRun(plan('2020-01-20'), { broadcastBytes: 0 });
    expect(r.stats.aggregates.length).toBe(3);
  });

  it('fingerprints ignore node ids and expression paths, not types or values', async () => {
    const lp = await loadPlan(plan(), {}, dir);
    const join = (lp.root as any).input;
    // each copy under the projection onto its reader's columns (plan/share.ts)
    expect(join.left.id).toMatch(/\.shared$/);
    const left = join.left.input,
      inner = join.right.input.input;
    expect(left.id).not.toBe(inner.id);
    expect(fingerprint(left)).toBe(fingerprint(inner));
    const other = await loadPlan(plan('2020-01-20'), {}, dir);
    expect(fingerprint((other.root as any).input.right.input)).not.toBe(fingerprint(left));
  });
});
