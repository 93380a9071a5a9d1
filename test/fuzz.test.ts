// The fuzzer: seeded random plans (test/fuzz/plan.ts) over small skewed
// tables, each run under random execution settings and compared with DuckDB
// running the SQL generated from the same tree. SKEWJOIN_FUZZ=N runs N plans
// (default 240), SKEWJOIN_FUZZ_SEED changes the seed; a failure names the
// plan's index and prints its plan, settings and SQL.
import { beforeAll, describe, expect, it } from 'vitest';
import { duckRows, ourRows, sorted, tmpDir, type Row } from './helpers.js';
import { PlanGen } from './fuzz/plan.js';
import { Rand } from './fuzz/random.js';
import { randomSettings } from './fuzz/settings.js';
import { type Table, writeTables } from './fuzz/tables.js';

const N = Number(process.env.SKEWJOIN_FUZZ || 240);
const SEED = Number(process.env.SKEWJOIN_FUZZ_SEED || 20261130);
const dir = tmpDir('sj-fuzz-');
let tables: Table[] = [];

beforeAll(async () => {
  tables = await writeTables(dir, SEED, [{ rows: 300, rowGroup: 64 }, { rows: 120, rowGroup: 40 }, { rows: 40, rowGroup: 16 }, { rows: 0, rowGroup: 16 }]);
});

/** Plan i of this seed, with its settings. */
function fuzzCase(i: number) {
  const r = new Rand(SEED * 1000 + i);
  const g = new PlanGen(r, tables).query();
  const plan = { version: 1, sources: Object.fromEntries(tables.map((t) => [t.name, { parquet: t.file }])), query: g.node };
  return { i, g, plan, opts: randomSettings(r) };
}

describe('fuzz: random plans against DuckDB', () => {
  it(`${N} plans (seed ${SEED}) give DuckDB's answer`, async () => {
    const cases = Array.from({ length: N }, (_, i) => fuzzCase(i));
    // One pool per worker count: a new pool costs a warm-up.
    cases.sort((a, b) => a.opts.workers - b.opts.workers || a.i - b.i);
    const failures: string[] = [];
    const t0 = performance.now();
    for (const c of cases) {
      let ours: Row[] | string;
      try {
        ours = await ourRows(c.plan, c.opts, dir);
      } catch (e) {
        ours = `error: ${(e as Error).message}`;
      }
      const theirs = await duckRows(c.g.sql).catch((e) => `error: ${(e as Error).message}`);
      const same = typeof ours === 'string' || typeof theirs === 'string'
        ? ours === theirs
        : JSON.stringify(c.g.ordered ? ours : sorted(ours)) === JSON.stringify(c.g.ordered ? theirs : sorted(theirs));
      if (!same) {
        failures.push(`plan ${c.i} (SKEWJOIN_FUZZ_SEED=${SEED}): ${JSON.stringify(c.plan.query)}\nsettings: ${JSON.stringify(c.opts)}\nsql: ${c.g.sql}\n`
          + `skewjoin: ${JSON.stringify(ours).slice(0, 600)}\nduckdb:   ${JSON.stringify(theirs).slice(0, 600)}`);
      }
    }
    console.log(`fuzz: ${N} plans in ${((performance.now() - t0) / 1000).toFixed(1)} s, ${failures.length} mismatches`);
    expect(failures.slice(0, 5).join('\n\n')).toBe('');
  }, 600_000);
});
