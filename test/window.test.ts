// The window operator against DuckDB: every function, ROWS and RANGE frames (offsets over int, date and decimal
// keys), ties, nulls first and last, empty and single-row partitions, frames over partition edges, several windows
// stacked, on the pool, on the calling thread and under a 64 KB budget that spills.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { cli, expectSame, ourRun, tmpDir, writeParquet, writePlan } from './helpers.js';

const dir = tmpDir('sj-window-');
const T = path.join(dir, 't.parquet');

beforeAll(async () => {
  // g: a hot partition, a single-row one ('single'), nulls; o: ties and nulls; x, f, d, s, dt: values with nulls
  await writeParquet(
    T,
    `SELECT i::BIGINT AS id,
      CASE WHEN i % 50 = 0 THEN NULL WHEN i = 7 THEN 'single' WHEN i % 3 = 0 THEN 'hot' ELSE 'g' || (i % 7) END AS g,
      CASE WHEN i % 17 = 0 THEN NULL ELSE (i * 13) % 20 END::INTEGER AS o,
      CASE WHEN i % 11 = 0 THEN NULL ELSE (i * 37) % 101 - 50 END::INTEGER AS x,
      CASE WHEN i % 13 = 0 THEN NULL ELSE ((i * 7) % 23) * 0.75 END::DOUBLE AS f,
      CASE WHEN i % 19 = 0 THEN NULL ELSE ((i * 7919) % 20001 - 10000) / 100 END::DECIMAL(12,2) AS d,
      CASE WHEN i % 9 = 0 THEN NULL ELSE 'v' || ((i * 7) % 31) END AS s,
      DATE '2024-01-01' + ((i * 3) % 40)::INTEGER AS dt
    FROM range(0, 3000) t(i)`,
    500,
  );
});

type Bound = string | { preceding: number } | { following: number };
type Fn = {
  fn: string;
  column?: string;
  as: string;
  n?: number;
  offset?: number;
  default?: string | number;
  frame?: { unit: 'rows' | 'range'; start: Bound; end: Bound };
};
type Key = { column: string; desc?: boolean; nulls?: 'first' | 'last' };

const boundSql = (b: Bound, interval: boolean) => {
  if (typeof b === 'string') return b.toUpperCase();
  const [n, dir] = 'preceding' in b ? [b.preceding, 'PRECEDING'] : [b.following, 'FOLLOWING'];
  return `${interval ? `INTERVAL ${n} DAY` : n} ${dir}`;
};

/** DuckDB's text of a function over the window. */
function fnSql(f: Fn, over: string, interval = false): string {
  const lit = (v: string | number) => (typeof v === 'string' ? `'${v}'` : String(v));
  const args =
    f.fn === 'ntile'
      ? `${f.n}`
      : f.fn === 'nth_value'
        ? `${f.column}, ${f.n}`
        : f.fn === 'lag' || f.fn === 'lead'
          ? [f.column, f.offset ?? (f.default !== undefined ? 1 : undefined), f.default]
              .filter((a) => a !== undefined)
              .map((a, i) => (i === 2 ? lit(a!) : a))
              .join(', ')
          : (f.column ?? (f.fn === 'count' ? '*' : ''));
  const frame = f.frame
    ? ` ${f.frame.unit.toUpperCase()} BETWEEN ${boundSql(f.frame.start, interval)} AND ${boundSql(f.frame.end, interval)}`
    : '';
  return `${f.fn}(${args}) OVER (${over}${frame}) AS ${f.as}`;
}

const orderSql = (ks: Key[]) =>
  ks.map((k) => `${k.column} ${k.desc ? 'DESC' : 'ASC'} NULLS ${k.nulls === 'first' ? 'FIRST' : 'LAST'}`).join(', ');

interface Win {
  partitionBy: string[];
  orderBy?: Key[];
  functions: Fn[];
}

const overSql = (w: Win) =>
  [
    w.partitionBy.length ? `PARTITION BY ${w.partitionBy.join(', ')}` : '',
    w.orderBy?.length ? `ORDER BY ${orderSql(w.orderBy)}` : '',
  ]
    .filter(Boolean)
    .join(' ');

const plan = (w: Win, input: object = { op: 'scan', source: 't' }) => ({
  version: 1,
  sources: { t: { parquet: T } },
  query: { op: 'window', input, ...w },
});

async function check(w: Win, opts: object = {}, where = '', interval = false) {
  const cols = w.functions.map((f) => fnSql(f, overSql(w), interval)).join(', ');
  const input = where ? { op: 'filter', input: { op: 'scan', source: 't' }, where: JSON.parse(where) } : undefined;
  const cond = where ? ` WHERE ${JSON.parse(where).column} ${JSON.parse(where).cmp} ${JSON.parse(where).value}` : '';
  return expectSame(plan(w, input), `SELECT *, ${cols} FROM read_parquet('${T}')${cond}`, opts);
}

const UNIQUE: Key[] = [
  { column: 'o', desc: true, nulls: 'first' },
  { column: 'id', desc: true },
];

describe('window functions', () => {
  it('ranks over ties, nulls last, with the default frame (range to the current row, peers included)', async () => {
    await check({
      partitionBy: ['g'],
      orderBy: [{ column: 'o' }],
      functions: [
        { fn: 'rank', as: 'r' },
        { fn: 'dense_rank', as: 'dr' },
        { fn: 'percent_rank', as: 'pr' },
        { fn: 'cume_dist', as: 'cd' },
        { fn: 'count', as: 'c' },
        { fn: 'count', column: 'x', as: 'cx' },
        { fn: 'sum', column: 'x', as: 'sx' },
        { fn: 'sum', column: 'd', as: 'sd' },
        { fn: 'sum', column: 'f', as: 'sf' },
        { fn: 'avg', column: 'd', as: 'ad' },
        { fn: 'min', column: 's', as: 'mins' },
        { fn: 'max', column: 'dt', as: 'maxdt' },
      ],
    });
  });

  it('row_number, ntile, lag/lead with offsets and defaults, first/last/nth_value; desc, nulls first', async () => {
    await check({
      partitionBy: ['g'],
      orderBy: UNIQUE,
      functions: [
        { fn: 'row_number', as: 'rn' },
        { fn: 'ntile', n: 4, as: 'nt4' },
        { fn: 'ntile', n: 100, as: 'nt100' },
        { fn: 'lag', column: 'x', as: 'lagx' },
        { fn: 'lag', column: 'x', offset: 2, default: 0, as: 'lag2' },
        { fn: 'lead', column: 's', offset: 1, default: 'none', as: 'leads' },
        { fn: 'lead', column: 'd', offset: 3, as: 'lead3' },
        { fn: 'first_value', column: 'x', as: 'fv' },
        { fn: 'last_value', column: 'x', as: 'lv' },
        { fn: 'nth_value', column: 's', n: 2, as: 'nv' },
      ],
    });
  });

  const ROWS: [Bound, Bound][] = [
    ['unbounded preceding', 'current row'],
    [{ preceding: 2 }, { following: 1 }],
    ['current row', 'unbounded following'],
    [{ following: 1 }, { following: 3 }],
    [{ preceding: 3 }, { preceding: 1 }],
    ['unbounded preceding', 'unbounded following'],
    [{ preceding: 0 }, { following: 0 }],
  ];
  for (const [start, end] of ROWS) {
    it(`rows between ${JSON.stringify(start)} and ${JSON.stringify(end)}`, async () => {
      const frame = { unit: 'rows' as const, start, end };
      await check({
        partitionBy: ['g'],
        orderBy: [{ column: 'o', nulls: 'first' }, { column: 'id' }],
        functions: [
          { fn: 'count', frame, as: 'c' },
          { fn: 'count', column: 'x', frame, as: 'cx' },
          { fn: 'sum', column: 'x', frame, as: 'sx' },
          { fn: 'sum', column: 'f', frame, as: 'sf' },
          { fn: 'sum', column: 'd', frame, as: 'sd' },
          { fn: 'avg', column: 'x', frame, as: 'ax' },
          { fn: 'min', column: 'x', frame, as: 'minx' },
          { fn: 'max', column: 's', frame, as: 'maxs' },
          { fn: 'first_value', column: 'x', frame, as: 'fv' },
          { fn: 'last_value', column: 'x', frame, as: 'lv' },
          { fn: 'nth_value', column: 'x', n: 2, frame, as: 'nv' },
        ],
      });
    });
  }

  const RANGES: [Bound, Bound][] = [
    ['current row', 'unbounded following'],
    [{ preceding: 2 }, { following: 1 }],
    [{ preceding: 3 }, 'current row'],
    [{ following: 1 }, { following: 5 }],
    ['unbounded preceding', { preceding: 2 }],
  ];
  for (const [start, end] of RANGES) {
    for (const key of [{ column: 'o' }, { column: 'o', desc: true, nulls: 'first' as const }]) {
      it(`range between ${JSON.stringify(start)} and ${JSON.stringify(end)} over ${JSON.stringify(key)}`, async () => {
        const frame = { unit: 'range' as const, start, end };
        await check({
          partitionBy: ['g'],
          orderBy: [key],
          functions: [
            { fn: 'count', frame, as: 'c' },
            { fn: 'sum', column: 'x', frame, as: 'sx' },
            { fn: 'avg', column: 'f', frame, as: 'af' },
            { fn: 'min', column: 'x', frame, as: 'minx' },
            { fn: 'max', column: 'd', frame, as: 'maxd' },
          ],
        });
      });
    }
  }

  it('range offsets over a date key (days) and a decimal key', async () => {
    const frame = { unit: 'range' as const, start: { preceding: 3 }, end: 'current row' };
    await check(
      {
        partitionBy: ['g'],
        orderBy: [{ column: 'dt' }],
        functions: [
          { fn: 'count', frame, as: 'c' },
          { fn: 'sum', column: 'x', frame, as: 'sx' },
        ],
      },
      {},
      '',
      true,
    );
    await check({
      partitionBy: ['g'],
      orderBy: [{ column: 'd', nulls: 'first' }],
      functions: [{ fn: 'count', frame: { unit: 'range', start: { preceding: 5 }, end: { following: 5 } }, as: 'c' }],
    });
  });

  it('no partition keys (one partition), no order (the whole partition is the frame)', async () => {
    await check({
      partitionBy: [],
      orderBy: [{ column: 'o' }],
      functions: [
        { fn: 'rank', as: 'r' },
        { fn: 'sum', column: 'x', as: 'sx' },
      ],
    });
    await check({
      partitionBy: ['g'],
      functions: [
        { fn: 'sum', column: 'x', as: 'sx' },
        { fn: 'count', as: 'c' },
        { fn: 'max', column: 's', as: 'ms' },
        { fn: 'rank', as: 'r' },
        { fn: 'cume_dist', as: 'cd' },
      ],
    });
  });

  it('an empty input, and a filter leaving single-row partitions', async () => {
    const w: Win = { partitionBy: ['g'], orderBy: [{ column: 'o' }], functions: [{ fn: 'rank', as: 'r' }] };
    await check(w, {}, JSON.stringify({ column: 'id', cmp: '<', value: 0 }));
    await check(
      { ...w, functions: [...w.functions, { fn: 'lag', column: 'x', as: 'l' }, { fn: 'percent_rank', as: 'p' }] },
      {},
      JSON.stringify({ column: 'id', cmp: '<', value: 12 }),
    );
  });

  it('a window over a window, and an expression argument', async () => {
    const inner = {
      op: 'window',
      input: { op: 'scan', source: 't' },
      partitionBy: ['g'],
      orderBy: [{ column: 'o' }, { column: 'id' }],
      functions: [{ fn: 'row_number', as: 'rn' }],
    };
    const p = {
      version: 1,
      sources: { t: { parquet: T } },
      query: {
        op: 'window',
        input: inner,
        partitionBy: ['rn'],
        orderBy: [{ column: 'id' }],
        functions: [{ fn: 'sum', expr: { fn: '*', args: [{ column: 'x' }, { value: 2 }] }, as: 's2' }],
      },
    };
    await expectSame(
      p,
      `SELECT *, sum(x * 2) OVER (PARTITION BY rn ORDER BY id) AS s2 FROM
        (SELECT *, row_number() OVER (PARTITION BY g ORDER BY o, id) AS rn FROM read_parquet('${T}'))`,
    );
  });

  const SPILL = { memoryLimit: 64 * 1024, spillDir: path.join(dir, 'spill'), workers: 2, partitions: 4 };
  const W: Win = {
    partitionBy: ['g'],
    orderBy: [{ column: 'o' }, { column: 'id' }],
    functions: [
      { fn: 'row_number', as: 'rn' },
      { fn: 'sum', column: 'x', frame: { unit: 'rows', start: { preceding: 5 }, end: 'current row' }, as: 'sx5' },
      { fn: 'lead', column: 'f', as: 'lf' },
    ],
  };
  it('spills under a 64 KB budget with the same answers', async () => {
    await check(W, SPILL);
    const r = await ourRun(plan(W), SPILL);
    expect(r.stats.spilledBytes).toBeGreaterThan(0);
    expect(r.stats.tasks.filter((t) => t.stage === 'window-1' && t.kind === 'reduce').length).toBeGreaterThan(0);
  });

  it('on the calling thread', async () => {
    await check(W, { inThreadBytes: 1e9 });
    const r = await ourRun(plan(W), { inThreadBytes: 1e9 });
    expect(r.stats.inThread).toBe(true);
  });

  it('plan errors name the field', async () => {
    const bad = async (fns: object[], orderBy: Key[] = [{ column: 'o' }]) =>
      ourRun({
        version: 1,
        sources: { t: { parquet: T } },
        query: { op: 'window', input: { op: 'scan', source: 't' }, partitionBy: ['g'], orderBy, functions: fns },
      }).then(
        () => 'ran',
        (e: Error) => e.message,
      );
    expect(await bad([{ fn: 'ntile', as: 'n' }])).toMatch(/functions\[0\]\.n: ntile needs "n"/);
    expect(await bad([{ fn: 'sum', column: 's', as: 'n' }])).toMatch(/functions\[0\]\.column: sum needs a numeric/);
    expect(await bad([{ fn: 'rank', column: 'nope', as: 'n' }])).toMatch(/column "nope" not found/);
    const frame = { unit: 'range', start: { preceding: 1 }, end: 'current row' };
    expect(await bad([{ fn: 'count', frame, as: 'n' }], [{ column: 's' }])).toMatch(/numeric or date orderBy key/);
    expect(
      await bad([{ fn: 'count', frame: { unit: 'rows', start: 'unbounded following', end: 'current row' }, as: 'n' }]),
    ).toMatch(/frame\.start: a frame cannot start at "unbounded following"/);
  });
});

describe('a hot window partition split by ranges of its keys', () => {
  const SKEW = { workers: 2, partitions: 8, skew: { factor: 1.5, thresholdBytes: 1, advisoryPartitionBytes: 4096 } };
  const splitsOf = (r: Awaited<ReturnType<typeof ourRun>>) =>
    (r.stats.windows ?? []).flatMap((w) => w.splits.filter((s) => s.method === 'ranges'));

  it('row_number, rank, dense_rank and running count/sum/min/max/first_value: the same answers, split', async () => {
    const run = { unit: 'rows' as const, start: 'unbounded preceding', end: 'current row' };
    const w: Win = {
      partitionBy: ['g'],
      orderBy: [{ column: 'o', nulls: 'first' }],
      functions: [
        { fn: 'rank', as: 'r' },
        { fn: 'dense_rank', as: 'dr' },
        { fn: 'count', as: 'c' },
        { fn: 'count', column: 'x', as: 'cx' },
        { fn: 'sum', column: 'x', as: 'sx' },
        { fn: 'sum', column: 'd', as: 'sd' },
        { fn: 'sum', column: 'f', as: 'sf' },
        { fn: 'min', column: 's', as: 'mins' },
        { fn: 'max', column: 'dt', as: 'maxdt' },
      ],
    };
    await check(w, SKEW);
    const r = await ourRun(plan(w), SKEW);
    expect(splitsOf(r).length).toBeGreaterThan(0);
    expect(r.stats.tasks.some((t) => t.stage === 'window-1' && t.split?.endsWith('carried'))).toBe(true);
    // unique order: row_number, rows frames, first_value; desc order; one partition only
    const u: Win = {
      partitionBy: ['g'],
      orderBy: UNIQUE,
      functions: [
        { fn: 'row_number', as: 'rn' },
        { fn: 'sum', column: 'x', frame: run, as: 'sx' },
        { fn: 'max', column: 'x', frame: run, as: 'mx' },
        { fn: 'first_value', column: 's', frame: run, as: 'fs' },
      ],
    };
    await check(u, SKEW);
    await check(
      { ...u, partitionBy: [] },
      { ...SKEW, partitions: 1, skew: { factor: 0.5, thresholdBytes: 1, advisoryPartitionBytes: 4096 } },
    );
  });

  it('avg over cumulative frames: its running sum and count carried (int, decimal, float; ROWS and RANGE)', async () => {
    const run = { unit: 'rows' as const, start: 'unbounded preceding', end: 'current row' };
    const w: Win = {
      partitionBy: ['g'],
      orderBy: [{ column: 'o', nulls: 'first' }],
      functions: [
        { fn: 'avg', column: 'x', as: 'ax' },
        { fn: 'avg', column: 'd', as: 'ad' },
        { fn: 'avg', column: 'f', as: 'af' },
        { fn: 'rank', as: 'r' },
      ],
    };
    await check(w, SKEW);
    const r = await ourRun(plan(w), SKEW);
    expect(splitsOf(r).length).toBeGreaterThan(0);
    const u: Win = {
      partitionBy: ['g'],
      orderBy: UNIQUE,
      functions: [
        { fn: 'avg', column: 'x', frame: run, as: 'ax' },
        { fn: 'avg', column: 'd', frame: run, as: 'ad' },
      ],
    };
    await check(u, SKEW);
    const one = { ...SKEW, partitions: 1, skew: { factor: 0.5, thresholdBytes: 1, advisoryPartitionBytes: 1024 } };
    await check({ ...u, partitionBy: [] }, one);
    expect(splitsOf(await ourRun(plan({ ...u, partitionBy: [] }), one))[0]?.pieces).toBeGreaterThan(4);
  });

  it("ntile, percent_rank and cume_dist: the partition's total rows counted over the pieces", async () => {
    const w: Win = {
      partitionBy: ['g'],
      orderBy: [{ column: 'o', nulls: 'first' }],
      functions: [
        { fn: 'percent_rank', as: 'pr' },
        { fn: 'cume_dist', as: 'cd' },
        { fn: 'rank', as: 'r' },
      ],
    };
    await check(w, SKEW);
    const r = await ourRun(plan(w), SKEW);
    expect(splitsOf(r).length).toBeGreaterThan(0);
    // ntile needs a unique order; every bucket count, even ones larger than a piece
    const u: Win = {
      partitionBy: ['g'],
      orderBy: UNIQUE,
      functions: [
        { fn: 'ntile', n: 3, as: 'n3' },
        { fn: 'ntile', n: 7, as: 'n7' },
        { fn: 'ntile', n: 400, as: 'n400' },
        { fn: 'percent_rank', as: 'pr' },
        { fn: 'cume_dist', as: 'cd' },
      ],
    };
    await check(u, SKEW);
    const one = { ...SKEW, partitions: 1, skew: { factor: 0.5, thresholdBytes: 1, advisoryPartitionBytes: 1024 } };
    await check({ ...u, partitionBy: [] }, one);
    expect(splitsOf(await ourRun(plan({ ...u, partitionBy: [] }), one))[0]?.pieces).toBeGreaterThan(4);
  });

  it('lag/lead and sliding ROWS frames: each piece reads the n rows before and after it from its neighbours', async () => {
    const rows = (start: Bound, end: Bound) => ({ unit: 'rows' as const, start, end });
    const u: Win = {
      partitionBy: ['g'],
      orderBy: UNIQUE,
      functions: [
        { fn: 'lag', column: 'x', as: 'l1' },
        { fn: 'lag', column: 'x', offset: 3, default: 0, as: 'l3' },
        { fn: 'lead', column: 's', offset: 2, as: 'ld2' },
        { fn: 'sum', column: 'x', frame: rows({ preceding: 2 }, { following: 1 }), as: 'sx' },
        { fn: 'avg', column: 'd', frame: rows({ preceding: 3 }, 'current row'), as: 'ad' },
        { fn: 'min', column: 'x', frame: rows('current row', { following: 3 }), as: 'mx' },
        { fn: 'count', column: 'x', frame: rows({ following: 1 }, { following: 2 }), as: 'cx' },
        { fn: 'last_value', column: 'x', frame: rows({ preceding: 2 }, { preceding: 1 }), as: 'lv' },
        { fn: 'nth_value', column: 'x', n: 2, frame: rows({ preceding: 1 }, { following: 1 }), as: 'nv' },
        { fn: 'row_number', as: 'rn' },
      ],
    };
    await check(u, SKEW);
    const r = await ourRun(plan(u), SKEW);
    expect(splitsOf(r).length).toBeGreaterThan(0);
    // pieces smaller than the reach: the rows come from several pieces before and after
    const one = { ...SKEW, partitions: 1, skew: { factor: 0.5, thresholdBytes: 1, advisoryPartitionBytes: 64 } };
    const far: Win = {
      partitionBy: [],
      orderBy: UNIQUE,
      functions: [
        { fn: 'lag', column: 'x', offset: 40, as: 'l40' },
        { fn: 'lead', column: 'x', offset: 40, as: 'ld40' },
        { fn: 'sum', column: 'x', frame: rows({ preceding: 30 }, { following: 30 }), as: 'sx' },
      ],
    };
    await check(far, one);
    expect(splitsOf(await ourRun(plan(far), one))[0]?.pieces).toBe(64);
  });

  it('functions a split cannot serve keep the partition in one task, and say why', async () => {
    const w: Win = {
      partitionBy: ['g'],
      orderBy: UNIQUE,
      functions: [
        { fn: 'row_number', as: 'rn' },
        // avg over the whole partition: not carried from both sides (count, sum, min, max are; avg from the current row)
        {
          fn: 'avg',
          column: 'x',
          frame: { unit: 'rows', start: 'unbounded preceding', end: 'unbounded following' },
          as: 'lx',
        },
      ],
    };
    await check(w, SKEW);
    const r = await ourRun(plan(w), SKEW);
    expect(splitsOf(r)).toEqual([]);
    const none = (r.stats.windows ?? []).flatMap((x) => x.splits);
    expect(none.length).toBeGreaterThan(0);
    expect(none[0].reason).toMatch(/avg→lx over this frame/);
  });

  it('split under a 64 KB budget, and on the calling thread', async () => {
    const w: Win = {
      partitionBy: ['g'],
      orderBy: [{ column: 'o' }, { column: 'id' }],
      functions: [
        { fn: 'row_number', as: 'rn' },
        { fn: 'sum', column: 'x', as: 'sx' },
      ],
    };
    await check(w, { ...SKEW, memoryLimit: 64 * 1024, spillDir: path.join(dir, 'spill2') });
    await check(w, { ...SKEW, inThreadBytes: 1e9 });
    const r = await ourRun(plan(w), { ...SKEW, memoryLimit: 64 * 1024, spillDir: path.join(dir, 'spill3') });
    expect(splitsOf(r).length).toBeGreaterThan(0);
    expect(r.stats.spilledBytes).toBeGreaterThan(0);
  });
});

describe('--explain', () => {
  it('names the window, its frames, and whether a hot partition is split or why not', async () => {
    const d = tmpDir('sj-window-explain-');
    const split = plan({ partitionBy: ['g'], orderBy: [{ column: 'o' }], functions: [{ fn: 'rank', as: 'r' }] });
    const r = cli([writePlan(d, split), '--explain']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/window-1: window partition by \[g\] order by \[o\] rank→r \[range unbounded preceding/);
    expect(r.stdout).toMatch(/split by ranges of \[g, o\]/);
    const whole = plan({
      partitionBy: ['g'],
      orderBy: [{ column: 'o' }],
      functions: [{ fn: 'last_value', column: 'x', as: 'q' }],
    });
    expect(cli([writePlan(d, whole, 'whole.json'), '--explain']).stdout).toMatch(/stays one task \(last_value→q/);
  });
});
