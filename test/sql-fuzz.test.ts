// The SQL fuzzer: seeded random SELECTs of the supported subset (test/sqlfuzz/gen.ts) over small tables with a hot
// key, nulls, NaN, empty strings, decimals and dates (test/sqlfuzz/tables.ts), each run under the plan fuzzer's
// random execution settings (test/fuzz/settings.ts: pool or calling thread, spills, skew splits, broadcasts off,
// crashed tasks) and compared with DuckDB running the same text: column types, then rows. Some queries carry a
// type mistake on purpose: those must be plan errors (exit 2), never answers. A mismatch prints the query shrunk
// (test/sqlfuzz/shrink.ts). SKEWJOIN_FUZZ=N runs N queries (default 300), SKEWJOIN_FUZZ_SEED another seed,
// SKEWJOIN_FUZZ_ONLY=i,j only those. See docs/testing.md.
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PlanError, runSql } from '../dist/index.js';
import { arrowTyped, duckTable, expectTypedEqual, sql, tmpDir, type Typed } from './helpers.js';
import { type PathCounts, countPaths } from './fuzz/paths.js';
import { Rand } from './fuzz/random.js';
import { onlyCases, randomSettings } from './fuzz/settings.js';
import { KNOWN_GAPS, type Query, SqlGen, render } from './sqlfuzz/gen.js';
import { shrink } from './sqlfuzz/shrink.js';
import { type Table, writeTables } from './sqlfuzz/tables.js';

const N = Number(process.env.SKEWJOIN_FUZZ || 300);
const SEED = Number(process.env.SKEWJOIN_FUZZ_SEED || 20261202);
const dir = tmpDir('sj-sqlfuzz-');
let tables: Table[] = [];
let sources: Record<string, string> = {};

beforeAll(async () => {
  // as in test/fuzz.test.ts: DuckDB 1.5's join filter pushdown drops rows under ORDER BY ... LIMIT ... OFFSET
  await sql(`SET disabled_optimizers = 'join_filter_pushdown'`);
  tables = await writeTables(dir, SEED);
  sources = Object.fromEntries(tables.map((t) => [t.name, t.file]));
});

interface Case {
  i: number;
  q: Query;
  /** a type mistake drawn on purpose: a plan error expected */
  mistake: boolean;
  opts: ReturnType<typeof randomSettings>['opts'];
  faults: string;
}

/** Query i of this seed and its settings: drawn from `SEED * 1000 + i` alone. */
function fuzzCase(i: number): Case {
  const r = new Rand(SEED * 1000 + i);
  const gen = new SqlGen(r);
  let q = gen.query();
  const mistake = r.chance(0.06);
  if (mistake) q = gen.mistake(q);
  const { opts, faults } = randomSettings(r, path.join(dir, 'spill'));
  return { i, q, mistake, opts, faults };
}

/** DuckDB types an integer literal INTEGER where the engine's is int64 (docs/sql.md); a decimal's precision may differ. */
function allowLiteralTypes(ours: Typed, theirs: Typed): Typed {
  const scale = (t: string) => /^DECIMAL\(\d+,(\d+)\)$/.exec(t)?.[1];
  const types = theirs.types.map((t, i) => {
    const o = ours.types[i] ?? '';
    if (t === 'INTEGER' && o === 'BIGINT') return o;
    return scale(t) !== undefined && scale(t) === scale(o) ? o : t;
  });
  return { ...theirs, types };
}

async function ours(c: Case, text: string): Promise<{ t: Typed; stats: any } | Error> {
  if (c.faults) process.env.SKEWJOIN_FAULTS = c.faults;
  try {
    const r = await runSql(text, { sources, baseDir: dir, writeOutput: false, ...c.opts });
    return { t: arrowTyped(r.toArrow()), stats: r.stats };
  } catch (e) {
    return e as Error;
  } finally {
    delete process.env.SKEWJOIN_FAULTS;
  }
}

/** What is wrong with query `q` under case c's settings ('' when nothing); `shrinking`: only where DuckDB answers. */
async function check(c: Case, q: Query, paths?: PathCounts, shrinking = false): Promise<string> {
  const text = render(q);
  const a = await ours(c, text);
  if (c.mistake) {
    if (a instanceof PlanError && a.exitCode === 2) return '';
    return a instanceof Error ? `a type mistake gave ${a.name}: ${a.message}` : 'a type mistake gave an answer';
  }
  const b = await duckTable(text).catch((e) => e as Error);
  // both refuse it: a type mistake the generator made by chance (ours must be a plan error)
  if (b instanceof Error && a instanceof PlanError && a.exitCode === 2) return '';
  if (b instanceof Error)
    return shrinking ? '' : `DuckDB: ${b.message}; skewjoin: ${a instanceof Error ? a.message : 'rows'}`;
  if (a instanceof Error) return `skewjoin: ${a.name}: ${a.message}`;
  if (paths) {
    countPaths(a.stats, paths);
    if (b.rows.length > 0) paths['queries with rows'] = (paths['queries with rows'] ?? 0) + 1;
    if (process.env.SKEWJOIN_FUZZ_SHOW) console.log(`${c.i}: ${b.rows.length} rows: ${text}`);
  }
  try {
    expectTypedEqual(a.t, allowLiteralTypes(a.t, b), q.order !== null);
    return '';
  } catch (e) {
    const m = (e as Error).message;
    return /column types/.test(m)
      ? `column types: ours ${JSON.stringify(a.t.types)}, DuckDB's ${JSON.stringify(b.types)}`
      : m;
  }
}

/** Run the cases; each mismatch with its query shrunk. */
async function runCases(cases: Case[], paths: PathCounts): Promise<string[]> {
  const failures: string[] = [];
  for (const c of cases) {
    const bad = await check(c, c.q, paths);
    if (!bad) continue;
    // a smaller query counts when DuckDB answers it and the engine does not give the same (or a type mistake answers)
    const small = await shrink(c.q, async (q) => (await check(c, q, undefined, true)) !== '');
    const why = await check(c, small);
    failures.push(
      `query ${c.i} (SKEWJOIN_FUZZ_SEED=${SEED} SKEWJOIN_FUZZ_ONLY=${c.i}): ${render(c.q)}\n` +
        `settings: ${JSON.stringify(c.opts)}${c.faults ? ` SKEWJOIN_FAULTS=${c.faults}` : ''}\n` +
        `reduced: ${render(small)}\n${(why || bad).slice(0, 1500)}`,
    );
  }
  return failures;
}

/** The floor of each feature's count in the default run: about half of what seed 20261202 drew (in brackets). */
const FEATURE_FLOORS: Record<string, number> = {
  'inner join': 45, // [90]
  'inner join two keys': 15, // [31]
  'left join': 35, // [75]
  'right join': 20, // [43]
  'full join': 20, // [43]
  'cross join': 22, // [47]
  'comma join': 15, // [32]
  'inner on filter': 14, // [29]
  'outer on filter': 15, // [31]
  in: 10, // [23]
  'not in': 4, // [8]
  exists: 7, // [15]
  'not exists': 5, // [11]
  'scalar subquery': 30, // [61]
  'scalar subquery in select': 8, // [16]
  correlated: 30, // [60]
  cte: 14, // [28]
  'subquery in from': 18, // [36]
  case: 24, // [48]
  cast: 24, // [49]
  'group by': 55, // [114]
  having: 20, // [41]
  distinct: 18, // [38]
  'count distinct': 11, // [23]
  'order by': 60, // [128]
  limit: 44, // [88]
  'type mistake': 8, // [17]
  'guarded cast': 8,
  concat: 8,
};

describe('fuzz: random SQL against DuckDB', () => {
  it('NaN sorts above every number, passes `x > 5`, and min/max read it as DuckDB does (found by this fuzzer)', async () => {
    const q = `SELECT x, count(*) AS n, min(x) AS lo, max(x) AS hi FROM f GROUP BY x ORDER BY x DESC NULLS LAST, n`;
    const r = await runSql(q, { sources, workers: 2, inThreadBytes: 0 });
    expectTypedEqual(arrowTyped(r.toArrow()), await duckTable(q), true);
    // a float column against a literal in a filter: NaN rows are above 5 (they were dropped)
    for (const w of ['x > 5', 'x >= -1.5', 'x < 2', 'x <> 1', 'NOT (x > 1)']) {
      const f = `SELECT k, x FROM f WHERE ${w}`;
      const rf = await runSql(f, { sources, workers: 2, inThreadBytes: 0 });
      expectTypedEqual(arrowTyped(rf.toArrow()), await duckTable(f));
    }
    const m = `SELECT s, min(x) AS lo, max(x) AS hi FROM f GROUP BY s`;
    const r2 = await runSql(m, { sources, workers: 2, inThreadBytes: 0 });
    expectTypedEqual(arrowTyped(r2.toArrow()), await duckTable(m));
  });

  it(`${N} queries (seed ${SEED}) give DuckDB's answer, or a plan error for a type mistake`, async () => {
    const only = onlyCases();
    const cases = Array.from({ length: N }, (_, i) => fuzzCase(i)).filter(
      (c) => only.length === 0 || only.includes(c.i),
    );
    // one pool per worker count: a new pool costs a warm-up
    cases.sort((a, b) => a.opts.workers - b.opts.workers || a.i - b.i);
    const t0 = performance.now();
    const paths: PathCounts = {};
    const failures = await runCases(cases, paths);
    const features: Record<string, number> = {};
    for (const c of cases) for (const t of new Set(c.q.tags)) features[t] = (features[t] ?? 0) + 1;
    console.log(
      `sql fuzz: ${cases.length} queries in ${((performance.now() - t0) / 1000).toFixed(1)} s, ${failures.length} mismatches\n` +
        `drawn: ${JSON.stringify(features)}\npaths: ${JSON.stringify(paths)}\nleft out until fixed: ${KNOWN_GAPS.join('; ') || 'nothing'}`,
    );
    expect(failures.slice(0, 5).join('\n\n')).toBe('');
    if (only.length > 0) return;
    const scale = Math.min(1, N / 300);
    const low = Object.entries(FEATURE_FLOORS)
      .filter(([k, f]) => (features[k] ?? 0) < Math.floor(f * scale))
      .map(([k, f]) => `${k}: ${features[k] ?? 0} < ${Math.floor(f * scale)}`);
    expect(low).toEqual([]);
    expect(paths['queries with rows'] ?? 0).toBeGreaterThan(N / 3); // the generator makes queries that return something
    // the forced paths of the plan fuzzer's settings are reached by SQL plans too; and range joins (a comparison
    // between two tables' columns with no equality: 19 in seed 20261202's 300 queries, 23 in seed 7's)
    for (const p of [
      'plans spilling',
      'split tasks',
      'plans in the calling thread',
      'shuffle inner',
      'cross join',
      'range inner',
    ])
      expect(paths[p] ?? 0, p).toBeGreaterThan(0);
  }, 1_800_000);
});
