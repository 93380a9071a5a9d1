// Size options read one way everywhere (src/plan/bytes.ts): a number of bytes or
// "64KB"/"256MB"/"1GB", in plans, flags and library options (runPlan, runSql);
// anything else refused naming the option and the value (issue 38, item 5).
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { PlanError, runSql } from '../dist/index.js';
import { cli, duckRows, tmpDir, writeParquet, writePlan } from './helpers.js';

const dir = tmpDir('sj-sizes-');
const fact = path.join(dir, 'fact.parquet');
const dim = path.join(dir, 'dim.parquet');
const sources = { fact, dim };
// skewed: key 7 on half the rows; 248 groups of (g, k)
const SPLIT = { workers: 2, partitions: 4, inThreadBytes: 0, broadcastBytes: 0 };

beforeAll(async () => {
  await writeParquet(
    fact,
    `SELECT CASE WHEN i % 2 = 0 THEN 7 ELSE i % 61 END::BIGINT AS k, (i % 8)::BIGINT AS g, i::BIGINT AS v FROM range(0, 6000) r(i)`,
    500,
  );
  await writeParquet(dim, `SELECT i::BIGINT AS k, 'd' || i AS name FROM range(0, 61) r(i)`, 20);
});

const GROUPS = `SELECT g, k, count(*) AS n, sum(v) AS s FROM fact GROUP BY g, k`;
const JOINED = `SELECT name, count(*) AS n, sum(v) AS s FROM fact JOIN dim ON fact.k = dim.k GROUP BY name`;
const duckOf = (q: string) =>
  duckRows(
    q.replace(/\bfact\b(?!\.)/, `read_parquet('${fact}') fact`).replace(/\bdim\b(?!\.)/, `read_parquet('${dim}') dim`),
  );
const splitTasks = (r: Awaited<ReturnType<typeof runSql>>) => r.stats.tasks.filter((t) => t.kind === 'split').length;
const rowsOf = (r: Awaited<ReturnType<typeof runSql>>) =>
  r
    .toRows()
    .map((x) => JSON.stringify(Object.values(x), (_, v) => (typeof v === 'bigint' ? Number(v) : v)))
    .sort();

describe('sizes as strings in library skew options (issue 38)', () => {
  it("advisoryPartitionBytes: '2KB' on a GROUP BY gives every group (split tasks read their rows)", async () => {
    const r = await runSql(GROUPS, {
      sources,
      ...SPLIT,
      skew: { factor: 1.01, thresholdBytes: 1, advisoryPartitionBytes: '2KB' },
    });
    expect(r.numRows).toBe((await duckOf(GROUPS)).length);
    expect(rowsOf(r)).toEqual((await duckOf(GROUPS)).map((x) => JSON.stringify(x.map(Number))).sort());
  });

  it("advisoryPartitionBytes: '2KB' under a join: DuckDB's answer, no internal error", async () => {
    const r = await runSql(JOINED, {
      sources,
      ...SPLIT,
      skew: { factor: 1.01, thresholdBytes: 1, advisoryPartitionBytes: '2KB' },
    });
    const ours = r
      .toRows()
      .map((x) => JSON.stringify([x.name, Number(x.n), Number(x.s)]))
      .sort();
    const theirs = (await duckOf(JOINED)).map((x) => JSON.stringify([x[0], Number(x[1]), Number(x[2])])).sort();
    expect(ours).toEqual(theirs);
  });

  it("thresholdBytes: '1B' splits as thresholdBytes: 1 does (skew handling stays on)", async () => {
    const opts = (t: number | string) => ({
      sources,
      ...SPLIT,
      skew: { factor: 1.01, thresholdBytes: t, advisoryPartitionBytes: 2048 },
    });
    const [a, b] = [await runSql(JOINED, opts(1)), await runSql(JOINED, opts('1B'))];
    expect(splitTasks(a)).toBeGreaterThan(0);
    expect(splitTasks(b)).toBe(splitTasks(a));
    expect(b.stats.joins[0].splits).toEqual(a.stats.joins[0].splits);
  });

  it('memoryLimit as text is read as bytes', async () => {
    const r = await runSql(JOINED, { sources, ...SPLIT, memoryLimit: '256KB', spillDir: tmpDir('sj-sizes-spill-') });
    expect(r.numRows).toBe(61);
  });
});

describe('a size that is not one is refused, naming the option and the value', () => {
  const refused = async (opts: object, option: string, value: RegExp) => {
    const e = await runSql(GROUPS, { sources, ...opts }).catch((x) => x);
    expect(e).toBeInstanceOf(PlanError);
    expect(e.exitCode).toBe(2);
    expect(e.message).toContain(option);
    expect(e.message).toMatch(value);
  };
  it('library options', async () => {
    await refused({ skew: { thresholdBytes: 'lots' } }, 'options.skew.thresholdBytes', /"lots"/);
    await refused(
      { skew: { advisoryPartitionBytes: '2 parsecs' } },
      'options.skew.advisoryPartitionBytes',
      /"2 parsecs"/,
    );
    await refused({ memoryLimit: -5 }, 'options.memoryLimit', /-5/);
    await refused({ broadcastBytes: '1QB' }, 'options.broadcastBytes', /"1QB"/);
    await refused({ inThreadBytes: Number.NaN }, 'options.inThreadBytes', /NaN/);
    await refused({ memoryLimit: true }, 'options.memoryLimit', /true/);
    // a budget in text without a unit under 1 MB: nobody means 10 bytes
    await refused({ memoryLimit: '10' }, 'options.memoryLimit', /"10" would be 10 bytes: write the unit/);
  });

  it('--memory-limit 10 is refused (exit 2), naming the units; 10B, 10MB and 2097152 are taken', () => {
    const plan = writePlan(tmpDir('sj-sizes-plan-'), {
      version: 1,
      sources: { fact: { parquet: fact } },
      query: {
        op: 'aggregate',
        groupBy: [],
        aggregates: [{ fn: 'count', as: 'n' }],
        input: { op: 'scan', source: 'fact' },
      },
    });
    const bad = cli([plan, '--memory-limit', '10']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--memory-limit "10" would be 10 bytes: write the unit \(B, KB, MB, GB\)/);
    expect(bad.stdout).toBe('');
    const words = cli([plan, '--skew-threshold', 'big']);
    expect(words.code).toBe(2);
    expect(words.stderr).toMatch(/--skew-threshold must be a size such as .*; got "big"/);
    for (const ok of ['10MB', '2097152', '1B']) {
      const r = cli([plan, '--memory-limit', ok, '--json']);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('"n":6000');
    }
  });

  it('a plan\'s memoryLimit "10" is refused at its JSON path', () => {
    const plan = writePlan(tmpDir('sj-sizes-plan-'), {
      version: 1,
      sources: { fact: { parquet: fact } },
      execution: { memoryLimit: '10' },
      query: { op: 'scan', source: 'fact' },
    });
    const r = cli([plan]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/execution\.memoryLimit: "10" would be 10 bytes/);
  });
});
