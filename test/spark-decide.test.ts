// skew.strategy auto on Spark: salt or AQE alone (src/spark/decide.ts), on the bench's measured workloads
// (docs/spark.md, the simulated-executor table), and the cores read from a server's settings. No server needed.
import { describe, expect, it } from 'vitest';
import { type SaltCase, clusterCores, saltOrAqe } from '../dist/spark/decide.js';

const M = 1_000_000;
/** The bench's full outer hot key: a third of the fact rows on key 0, a dim of one row per key (10 keys a fact row). */
const fullOuter = (rows: number, cores: number, more: Partial<SaltCase> = {}): SaltCase => ({
  strategy: 'auto',
  cores,
  coresFrom: 'test',
  splitRows: rows,
  copiedRows: rows / 10,
  hotRows: rows / 3,
  copiedPerHot: 1,
  exactCheck: true,
  groupByKey: false,
  ...more,
});

describe('salting or AQE alone (saltOrAqe)', () => {
  it('the heavy copied side salts from 5 cores on, never on fewer (measured: 1.8x faster from 8, worse on 2)', () => {
    const heavy = (cores: number) => saltOrAqe(fullOuter(2 * M, cores, { copiedPerHot: 2000 }));
    for (const c of [1, 2, 4]) {
      expect(heavy(c).salt).toBe(false);
      expect(heavy(c).reason).toMatch(new RegExp(`^AQE alone: ${c} cores \\(test\\), below the 5`));
    }
    for (const c of [5, 8, 16, 64]) {
      expect(heavy(c).salt).toBe(true);
      expect(heavy(c).reason).toMatch(/^salted: est\. .* rows per core salted against 1\.3G with AQE alone/);
    }
  });

  it('the 2M-row full outer join and the one-file hot key stay with AQE alone on 64 executors (measured 1.2-1.3x better)', () => {
    const d = saltOrAqe(fullOuter(2 * M, 64));
    expect(d.salt).toBe(false);
    expect(d.reason).toMatch(/^AQE alone: est\. 1\.3M rows per core against .* salted \(hot key ~667K of 2\.0M rows/);
    const oneFile = saltOrAqe(fullOuter(2 * M, 64, { hotRows: 0.2 * M, exactCheck: false }));
    expect(oneFile.salt).toBe(false);
  });

  it('the 30M-row full outer join salts from about 8 cores (its straggler bounds the stage from ~5)', () => {
    expect(saltOrAqe(fullOuter(30 * M, 5)).salt).toBe(false);
    expect(saltOrAqe(fullOuter(30 * M, 8)).salt).toBe(true);
    expect(saltOrAqe(fullOuter(30 * M, 64)).salt).toBe(true);
  });

  it('a GROUP BY on the key after the join counts the output shuffled again: the balance tips to AQE alone', () => {
    expect(saltOrAqe(fullOuter(30 * M, 7)).salt).toBe(true);
    const g = saltOrAqe(fullOuter(30 * M, 7, { groupByKey: true }));
    expect(g.salt).toBe(false);
    expect(g.reason).toContain('the join grouped by its key after it');
    expect(g.saltCost).toBeGreaterThan(saltOrAqe(fullOuter(30 * M, 7)).saltCost);
    expect(saltOrAqe(fullOuter(30 * M, 16, { groupByKey: true })).salt).toBe(true);
  });

  it('skew.strategy key salts whatever the estimate, saying so', () => {
    const d = saltOrAqe(fullOuter(4000, 2, { strategy: 'key' }));
    expect(d.salt).toBe(true);
    expect(d.reason).toMatch(/^skew\.strategy "key" salts the hot keys \(hot key ~1333 of 4000 rows x 1 copied rows/);
  });
});

describe("the cluster's cores from its settings (clusterCores)", () => {
  const conf = (o: Record<string, string>) => new Map(Object.entries(o));
  it('reads the given cores, the default parallelism, the master, the executors, dynamic allocation', () => {
    expect(clusterCores(conf({ 'spark.master': 'local[2]' }), 12)).toEqual({ cores: 12, from: 'the given cores' });
    expect(clusterCores(conf({ 'spark.master': 'local[2]', 'spark.default.parallelism': '40' }))).toEqual({
      cores: 40,
      from: 'spark.default.parallelism=40',
    });
    expect(clusterCores(conf({ 'spark.master': 'local[3]' }))?.cores).toBe(3);
    expect(clusterCores(conf({ 'spark.master': 'local' }))?.cores).toBe(1);
    expect(clusterCores(conf({ 'spark.master': 'local-cluster[2, 3, 1024]' }))?.cores).toBe(6);
    expect(
      clusterCores(conf({ 'spark.master': 'yarn', 'spark.executor.instances': '10', 'spark.executor.cores': '4' })),
    ).toEqual({ cores: 40, from: 'spark.executor.instances=10 x 4 cores' });
    expect(
      clusterCores(
        conf({
          'spark.master': 'k8s://x',
          'spark.dynamicAllocation.enabled': 'true',
          'spark.dynamicAllocation.maxExecutors': '6',
        }),
      )?.cores,
    ).toBe(6);
    expect(clusterCores(conf({ 'spark.master': 'spark://h:7077', 'spark.cores.max': '24' }))?.cores).toBe(24);
    // local[*] and a standalone cluster without a limit: unknown here
    expect(clusterCores(conf({ 'spark.master': 'local[*]' }))).toBeNull();
    expect(clusterCores(conf({ 'spark.master': 'spark://h:7077', 'spark.executor.instances': '' }))).toBeNull();
  });
});
