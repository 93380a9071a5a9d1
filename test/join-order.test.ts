// Join order by cost (src/plan/join-order.ts, src/plan/estimate.ts) against DuckDB: trees of three to five inner
// joins written in a costly order are reordered and give the same rows, with filters between the joins, duplicate
// column names (the written tree's _right names kept), cross-join pieces; a join marked "reorder": false stays as
// written; an outer join is never crossed; the estimates: a dictionary conjunct's selectivity measured on a sample
// within a stated error, a conjunct of two columns decoded; --explain shows both orders and the estimates' sources.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { explainPlan, loadPlan } from '../dist/index.js';
import { Estimator } from '../dist/plan/estimate.js';
import { duckRows, expectSame, tmpDir, writeParquet } from './helpers.js';

const dir = tmpDir('sj-joinorder-');
const F = path.join(dir, 'f.parquet'),
  A = path.join(dir, 'a.parquet'),
  B = path.join(dir, 'b.parquet'),
  C = path.join(dir, 'c.parquet'),
  D = path.join(dir, 'd.parquet'),
  S = path.join(dir, 's.parquet');

beforeAll(async () => {
  // a fact table and three dimensions, each dimension with columns "id" and "name" (duplicate names in a join)
  await writeParquet(
    F,
    `SELECT i::BIGINT AS id, (hash(i) % 1000)::BIGINT AS f_a, (hash(i * 7) % 200)::BIGINT AS f_b,
       (hash(i * 13) % 50)::BIGINT AS f_c, (i % 97)::INTEGER AS f_amt, 'x' || (i % 10) AS name
     FROM range(0, 20000) t(i)`,
    4000,
  );
  await writeParquet(
    A,
    `SELECT i::BIGINT AS id, (i % 20)::INTEGER AS a_grp, 'a' || i AS name FROM range(0, 1000) t(i)`,
    250,
  );
  await writeParquet(
    B,
    `SELECT i::BIGINT AS id, 'k' || (i % 5) AS b_kind, 'b' || i AS name FROM range(0, 200) t(i)`,
    50,
  );
  await writeParquet(
    C,
    `SELECT i::BIGINT AS id, (i % 2)::INTEGER AS c_flag, 'c' || i AS name FROM range(0, 50) t(i)`,
    25,
  );
  await writeParquet(D, `SELECT i::INTEGER AS d_x FROM range(0, 6) t(i)`, 6);
  // 200,000 rows in 4 row groups: s = 'rare' on 3% of rows (by a hash), else one of 50 values
  await writeParquet(
    S,
    `SELECT CASE WHEN hash(i) % 100 < 3 THEN 'rare' ELSE 'v' || (hash(i * 3) % 50) END AS s,
       (hash(i * 5) % 100)::INTEGER AS p, (hash(i * 11) % 100)::INTEGER AS q
     FROM range(0, 200000) t(i)`,
    50000,
  );
});

const scan = (source: string, columns?: string[]) => ({ op: 'scan', source, ...(columns ? { columns } : {}) });
const filter = (input: object, where: object) => ({ op: 'filter', input, where });
const join = (left: object, right: object, on: [string, string][], type = 'inner', more: object = {}) => ({
  op: 'join',
  type,
  left,
  right,
  on,
  ...more,
});
const plan = (query: object) => ({
  version: 1,
  sources: { f: { parquet: F }, a: { parquet: A }, b: { parquet: B }, c: { parquet: C }, d: { parquet: D } },
  query,
});
const R = (p: string) => `read_parquet('${p}')`;

const B1 = filter(scan('b'), { column: 'b_kind', cmp: '=', value: 'k1' });
const C1 = filter(scan('c'), { column: 'c_flag', cmp: '=', value: 1 });
/** f joined to all of a first (nothing kept), then to the filtered b and c: the costly order. */
const BAD = join(
  join(join(scan('f', ['id', 'f_a', 'f_b', 'f_c', 'f_amt']), scan('a'), [['f_a', 'id']]), B1, [['f_b', 'id']]),
  C1,
  [['f_c', 'id']],
);
// DuckDB's columns in the written tree's order: f's, a's, b's, c's
const BAD_SQL = `SELECT f.id, f.f_a, f.f_b, f.f_c, f.f_amt, a.id, a.a_grp, a.name, b.id, b.b_kind, b.name, c.id, c.c_flag, c.name
  FROM ${R(F)} f JOIN ${R(A)} a ON f.f_a = a.id JOIN ${R(B)} b ON f.f_b = b.id JOIN ${R(C)} c ON f.f_c = c.id
  WHERE b.b_kind = 'k1' AND c.c_flag = 1`;

/** The joins of a bound tree, top-down, as [left's first scan, right's first scan]. */
function joins(n: any, out: string[][] = []): string[][] {
  const first = (x: any): string => (x.kind === 'scan' ? x.source : first(x.input ?? x.left));
  if (n.kind === 'join') out.push([n.type, first(n.left), first(n.right)]);
  for (const c of [n.input, n.left, n.right].filter(Boolean)) joins(c, out);
  return out;
}

describe('join order by cost', () => {
  it('reorders a four-table chain written in a costly order, with the same rows and columns', async () => {
    const p = plan(BAD);
    const lp = await loadPlan(p);
    expect(lp.joinOrder?.length).toBe(1);
    expect(lp.joinOrder![0].changed).toBe(true);
    // the written order joins a before b; the chosen one joins the filtered b first
    const written = await loadPlan(p, { joinOrder: 'written' });
    expect(joins(written.root).at(-1)).toEqual(['inner', 'f', 'a']);
    expect(joins(lp.root).at(-1)).not.toEqual(['inner', 'f', 'a']);
    expect(lp.root.schema).toEqual(written.root.schema);
    const rows = await expectSame(p, BAD_SQL);
    expect(rows.length).toBeGreaterThan(100);
  });

  it('keeps the order a join marked "reorder": false', async () => {
    // the top join kept: the tree below it (f, a and b') is ordered apart, c' joined last as written
    const fixedTop = plan({ ...BAD, reorder: false });
    const lp = await loadPlan(fixedTop);
    expect(lp.joinOrder?.length ?? 0).toBe(1); // the tree below the kept join: f, a, b'
    expect(joins(lp.root)[0]).toEqual(['inner', expect.any(String), 'c']);
    await expectSame(fixedTop, BAD_SQL);
    // every join kept: nothing ordered, the written tree as bound
    const keep = (n: any): any =>
      n.op === 'join' ? { ...n, reorder: false, left: keep(n.left), right: keep(n.right) } : n;
    const all = plan(keep(BAD));
    const kept = await loadPlan(all);
    expect(kept.joinOrder).toBeUndefined();
    expect(joins(kept.root)).toEqual(joins((await loadPlan(plan(BAD), { joinOrder: 'written' })).root));
    // the first join kept as written: f and a stay joined to each other
    const inner = plan({ ...BAD, left: { ...BAD.left, left: { ...(BAD.left as any).left, reorder: false } } });
    const lpi = await loadPlan(inner);
    expect(joins(lpi.root)).toContainEqual(['inner', 'f', 'a']);
    await expectSame(inner, BAD_SQL);
  });

  it('five tables, a filter between the joins over a renamed column, a cross-join piece', async () => {
    // ((f ⋈ a) ⋈ b) filtered on name_right2 (b's name) and a_grp, then × d (filtered), then ⋈ c'
    const fab = join(join(scan('f'), scan('a'), [['f_a', 'id']]), scan('b'), [['f_b', 'id']]);
    const between = filter(fab, {
      and: [
        { column: 'name_right2', in: ['b1', 'b6', 'b11', 'b16', 'b21', 'b26', 'b31'] },
        { column: 'a_grp', cmp: '<', value: 15 },
      ],
    });
    const crossed = join(between, filter(scan('d'), { column: 'd_x', cmp: '<', value: 2 }), []);
    const q = join(crossed, C1, [['f_c', 'id']]);
    const p = plan(q);
    const lp = await loadPlan(p);
    expect(lp.joinOrder?.length).toBe(1);
    expect(lp.joinOrder![0].lines[0]).toMatch(/5 inputs/);
    const sql = `SELECT f.*, a.*, b.*, d.*, c.* FROM ${R(F)} f JOIN ${R(A)} a ON f.f_a = a.id JOIN ${R(B)} b ON f.f_b = b.id
      CROSS JOIN ${R(D)} d JOIN ${R(C)} c ON f.f_c = c.id
      WHERE b.name IN ('b1', 'b6', 'b11', 'b16', 'b21', 'b26', 'b31') AND a.a_grp < 15 AND d.d_x < 2 AND c.c_flag = 1`;
    const rows = await expectSame(p, sql);
    expect(rows.length).toBeGreaterThan(10);
    // a projection between the joins (dropping and renaming) and three inputs
    const projected = join(
      {
        op: 'project',
        input: join(scan('f'), C1, [['f_c', 'id']]),
        columns: ['f_b', 'f_amt', { name: 'cn', column: 'name_right' }],
      },
      B1,
      [['f_b', 'id']],
    );
    const three = join(projected, scan('a', ['id', 'a_grp']), [['f_amt', 'id']]);
    await expectSame(
      plan(three),
      `SELECT f.f_b, f.f_amt, c.name, b.*, a.id, a.a_grp FROM ${R(F)} f JOIN ${R(C)} c ON f.f_c = c.id
        JOIN ${R(B)} b ON f.f_b = b.id JOIN ${R(A)} a ON f.f_amt = a.id WHERE c.c_flag = 1 AND b.b_kind = 'k1'`,
    );
  });

  it('never moves a table across an outer join', async () => {
    // (((f ⋈ a) ⋈ c') ⟕ b') ⋈ d: b' stays the left join's right side, and the rows are DuckDB's
    const fac = join(join(scan('f', ['id', 'f_a', 'f_b', 'f_c']), scan('a', ['id', 'a_grp']), [['f_a', 'id']]), C1, [
      ['f_c', 'id'],
    ]);
    const left = join(fac, B1, [['f_b', 'id']], 'left');
    const q = join(left, filter(scan('d'), { column: 'd_x', cmp: '=', value: 3 }), [['a_grp', 'd_x']]);
    const p = plan(q);
    const lp = await loadPlan(p);
    const lj = joins(lp.root).filter((j) => j[0] === 'left');
    expect(lj).toEqual([['left', expect.any(String), 'b']]);
    const rows = await expectSame(
      p,
      `SELECT f.id, f.f_a, f.f_b, f.f_c, a.id, a.a_grp, c.*, b.*, d.d_x FROM ${R(F)} f JOIN ${R(A)} a ON f.f_a = a.id
        JOIN ${R(C)} c ON f.f_c = c.id
        LEFT JOIN (SELECT * FROM ${R(B)} WHERE b_kind = 'k1') b ON f.f_b = b.id
        JOIN (SELECT * FROM ${R(D)} WHERE d_x = 3) d ON a.a_grp = d.d_x WHERE c.c_flag = 1`,
    );
    expect(rows.length).toBeGreaterThan(10);
  });

  it('--explain shows the order before and after, the rows per join and where each estimate came from', async () => {
    const text = explainPlan(await loadPlan(plan(BAD)));
    expect(text).toMatch(/join order of join-\d+: 4 inputs, estimated cost .* \(as written .*\): reordered/);
    expect(text).toMatch(/order before: \(\(\(A ⋈ B\) ⋈ C\) ⋈ D\)/);
    expect(text).toMatch(/order chosen: /);
    expect(text).toMatch(/C b \(filter-\d+\): \d+ rows \(footer, sampled\)/);
    expect(text).toMatch(/join-\d+: .* ⋈ .*: [\d.]+K? rows \(footer, sampled\)/);
  });
});

describe('estimates', () => {
  const sPlan = (where: object) => ({
    version: 1,
    sources: { s: { parquet: S } },
    query: filter(scan('s'), where),
  });
  const estimate = async (where: object) => {
    const lp = await loadPlan(sPlan(where), { joinOrder: 'written' });
    return new Estimator().rows(lp.root);
  };

  it("a dictionary conjunct's selectivity measured on a sample of row groups, within 10% of the true count", async () => {
    const [[truth]] = (await duckRows(`SELECT count(*)::INTEGER FROM ${R(S)} WHERE s = 'rare'`)) as number[][];
    const e = await estimate({ column: 's', cmp: '=', value: 'rare' });
    expect([...e.sources].sort()).toEqual(['footer', 'sampled']);
    // the fixed guess for an equality was 10%, more than three times the 3% here
    expect(Math.abs(e.rows - truth) / truth).toBeLessThan(0.1);
    const [[many]] = (await duckRows(
      `SELECT count(*)::INTEGER FROM ${R(S)} WHERE s IN ('v1', 'v2', 'rare')`,
    )) as number[][];
    const e2 = await estimate({ column: 's', in: ['v1', 'v2', 'rare'] });
    expect(Math.abs(e2.rows - many) / many).toBeLessThan(0.1);
  });

  it('a conjunct over two columns is evaluated over the decoded sample', async () => {
    const [[truth]] = (await duckRows(
      `SELECT count(*)::INTEGER FROM ${R(S)} WHERE p + q < 30 AND s != 'rare'`,
    )) as number[][];
    const e = await estimate({
      and: [
        { left: { fn: '+', args: [{ column: 'p' }, { column: 'q' }] }, cmp: '<', right: { value: 30 } },
        { column: 's', cmp: '!=', value: 'rare' },
      ],
    });
    expect(e.sources.has('sampled')).toBe(true);
    expect(Math.abs(e.rows - truth) / truth).toBeLessThan(0.1);
  });
});
