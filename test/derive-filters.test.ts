// Filters derived below a join from an OR over it (src/plan/derive-filters.ts)
// against DuckDB: every join type, with terms on the null-extended side that
// would change the answer if they were pushed there, both predicate forms
// (simple column tests and expressions), a side that already has a filter, a
// filter over one side only moved down whole, nested joins, and --explain.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { explainPlan, loadPlan } from '../dist/index.js';
import { expectSame, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-derive-');
const A = path.join(dir, 'a.parquet'),
  B = path.join(dir, 'b.parquet'),
  C = path.join(dir, 'c.parquet');

beforeAll(async () => {
  await writeParquet(
    A,
    `SELECT i::BIGINT AS a_k, CASE WHEN i % 13 = 0 THEN NULL ELSE (i % 11)::INTEGER END AS a_x,
       'g' || (i % 4) AS a_s FROM range(0, 600) t(i)`,
    150,
  );
  await writeParquet(
    B,
    `SELECT (i * 3)::BIGINT AS b_k, CASE WHEN i % 7 = 0 THEN NULL ELSE (i % 17)::INTEGER END AS b_y,
       'h' || (i % 5) AS b_t FROM range(0, 300) t(i)`,
    100,
  );
  await writeParquet(C, `SELECT (i * 2)::BIGINT AS c_k, (i % 9)::INTEGER AS c_z FROM range(0, 500) t(i)`, 100);
});

const scan = (source: string) => ({ op: 'scan', source });
const join = (type: string, left: object, right: object, on: [string, string][]) => ({
  op: 'join',
  type,
  on,
  left,
  right,
});
const plan = (query: object) => ({
  version: 1,
  sources: { a: { parquet: A }, b: { parquet: B }, c: { parquet: C } },
  query,
});
const col = (column: string) => ({ column });
const lt = (column: string, value: number) => ({ column, cmp: '<', value });
const gt = (column: string, value: number) => ({ column, cmp: '>', value });

// Each branch has a term on each side; the b terms accept nulls, so pushing them into a null-extended b changes rows.
const SIMPLE = {
  or: [
    { and: [{ column: 'b_y', isNull: true }, gt('a_x', 5)] },
    { and: [lt('b_y', 6), { or: [lt('a_x', 3), { column: 'a_x', isNull: true }] }] },
    { and: [{ column: 'b_t', in: ['h1', 'h2'] }, { column: 'a_s', cmp: '=', value: 'g1' }, gt('b_y', 10)] },
  ],
};
const SIMPLE_SQL = `(b_y IS NULL AND a_x > 5) OR (b_y < 6 AND (a_x < 3 OR a_x IS NULL)) OR (b_t IN ('h1', 'h2') AND a_s = 'g1' AND b_y > 10)`;
// The same shape with arithmetic: the expression form.
const EXPR = {
  or: [
    { and: [{ left: col('b_y'), cmp: '<', right: { fn: '+', args: [{ value: 2 }, { value: 3 }] } }, gt('a_x', 5)] },
    { and: [{ left: { fn: '+', args: [col('a_x'), col('a_x')] }, cmp: '<', right: { value: 7 } }, gt('b_y', 8)] },
  ],
};
const EXPR_SQL = `(b_y < 2 + 3 AND a_x > 5) OR (a_x + a_x < 7 AND b_y > 8)`;

const KW: Record<string, string> = { inner: 'INNER', left: 'LEFT', right: 'RIGHT', full: 'FULL OUTER' };
const FROM = (type: string) => `read_parquet('${A}') ${KW[type]} JOIN read_parquet('${B}') ON a_k = b_k`;
const OUTER = ['inner', 'left', 'right', 'full'];

describe('an OR over a join: derived filters below it, the answer unchanged', () => {
  for (const [name, where, text] of [
    ['simple terms', SIMPLE, SIMPLE_SQL],
    ['expressions', EXPR, EXPR_SQL],
  ] as const) {
    for (const type of OUTER) {
      it(`${type} join, ${name}`, async () => {
        const q = { op: 'filter', where, input: join(type, scan('a'), scan('b'), [['a_k', 'b_k']]) };
        await expectSame(plan(q), `SELECT * FROM ${FROM(type)} WHERE ${text}`);
      });
    }
  }

  it('semi and anti joins: the filter moves below them whole', async () => {
    for (const [type, not] of [
      ['semi', ''],
      ['anti', 'NOT'],
    ]) {
      const where = { or: [{ and: [gt('a_x', 5), lt('a_k', 400)] }, { column: 'a_s', cmp: '=', value: 'g2' }] };
      const q = { op: 'filter', where, input: join(type, scan('a'), scan('b'), [['a_k', 'b_k']]) };
      const sql = `SELECT * FROM read_parquet('${A}') WHERE ${not} EXISTS (SELECT 1 FROM read_parquet('${B}') WHERE b_k = a_k)
        AND ((a_x > 5 AND a_k < 400) OR a_s = 'g2')`;
      await expectSame(plan(q), sql);
    }
  });

  it('a side with its own filter of another form, and a filter over one side only', async () => {
    const left = { op: 'filter', where: { column: 'a_s', in: ['g0', 'g1', 'g3'] }, input: scan('a') };
    const inner = { op: 'filter', where: EXPR, input: join('inner', left, scan('b'), [['a_k', 'b_k']]) };
    await expectSame(plan(inner), `SELECT * FROM ${FROM('inner')} WHERE a_s IN ('g0', 'g1', 'g3') AND (${EXPR_SQL})`);
    const oneSide = { op: 'filter', where: SIMPLE.or[0], input: join('right', left, scan('b'), [['a_k', 'b_k']]) };
    const oneSql = `SELECT * FROM (SELECT * FROM read_parquet('${A}') WHERE a_s IN ('g0', 'g1', 'g3'))
      RIGHT JOIN read_parquet('${B}') ON a_k = b_k WHERE b_y IS NULL AND a_x > 5`;
    await expectSame(plan(oneSide), oneSql);
  });

  it('nested joins: a derived filter over a join below is derived again', async () => {
    const where = {
      or: [
        { and: [lt('c_z', 3), gt('a_x', 4), lt('b_y', 9)] },
        { and: [gt('c_z', 6), { column: 'b_y', isNull: true }] },
      ],
    };
    for (const type of ['inner', 'left']) {
      const ab = join(type, scan('a'), scan('b'), [['a_k', 'b_k']]);
      const q = { op: 'filter', where, input: join('inner', ab, scan('c'), [['a_k', 'c_k']]) };
      const sql = `SELECT * FROM ${FROM(type)} JOIN read_parquet('${C}') ON a_k = c_k
        WHERE (c_z < 3 AND a_x > 4 AND b_y < 9) OR (c_z > 6 AND b_y IS NULL)`;
      await expectSame(plan(q), sql, { workers: 2, broadcastBytes: 0 });
    }
  });
});

describe('--explain shows the derived filters', () => {
  it('per side the join type allows', async () => {
    const text = async (type: string) => {
      const q = { op: 'filter', where: SIMPLE, input: join(type, scan('a'), scan('b'), [['a_k', 'b_k']]) };
      return explainPlan(await loadPlan(plan(q) as never, { baseDir: dir }));
    };
    const inner = await text('inner');
    expect(inner).toContain('filter-1.left[(a_x > 5) or ((a_x < 3) or (a_x is null)) or (a_s = "g1")]');
    expect(inner).toContain('filter-1.right[');
    const left = await text('left');
    expect(left).toContain('filter-1.left[');
    expect(left).not.toContain('filter-1.right');
    const right = await text('right');
    expect(right).toContain('filter-1.right[');
    expect(right).not.toContain('filter-1.left');
    // a side whose filter has the derived conjunct already (as the SQL front end derives it) does not get it twice
    const where = { or: [{ and: [gt('a_x', 5), lt('b_y', 3)] }, { and: [lt('a_x', 2), gt('b_y', 7)] }] };
    const own = { op: 'filter', where: { or: [gt('a_x', 5), lt('a_x', 2)] }, input: scan('a') };
    const q = { op: 'filter', where, input: join('inner', own, scan('b'), [['a_k', 'b_k']]) };
    const once = explainPlan(await loadPlan(plan(q) as never, { baseDir: dir }));
    expect(once).toContain('filter-2[(a_x > 5) or (a_x < 2)]\n');
    expect(once).not.toContain('filter-1.left');
    expect(once).toContain('filter-1.right[(b_y < 3) or (b_y > 7)]');
    const full = await text('full');
    expect(full).not.toContain('filter-1.left');
    expect(full).not.toContain('filter-1.right');
  });
});
