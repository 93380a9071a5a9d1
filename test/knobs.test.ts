// Every knob shows its effect in the statistics: a valid `execution` block,
// the skew, combiner and eager flags, size strings, docs/statistics.md's
// `--explain --analyze` command, and what `--explain --analyze` prints.
// The command line runs in-process (main with captured streams): the same code as bin/skewjoin.js.
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../dist/cli/main.js';
import { tmpDir, writeParquet, writePlan } from './helpers.js';

const dir = tmpDir('sj-knobs-');

beforeAll(async () => {
  // key 3 hot on the left (40%), spread over 12 row groups; the right repeats every key 3 times
  await writeParquet(
    path.join(dir, 'l.parquet'),
    `SELECT i::BIGINT AS id, (CASE WHEN i % 5 < 2 THEN 3 ELSE 1 + (i * 7919) % 300 END)::BIGINT AS k, (i % 7)::BIGINT AS v FROM range(0, 24000) t(i)`,
    2048,
  );
  await writeParquet(
    path.join(dir, 'r.parquet'),
    `SELECT (1 + i % 300)::BIGINT AS k, 'g' || (i % 4) AS g FROM range(0, 900) t(i)`,
    2048,
  );
});

const join = {
  op: 'join',
  type: 'inner',
  on: [['k', 'k']],
  left: { op: 'scan', source: 'l' },
  right: { op: 'scan', source: 'r' },
};
// Splits need a target task size below these partitions' (the flags have no advisory size).
const small = { skew: { advisoryPartitionBytes: 2048 } };
const PLANS = {
  join: {
    version: 1,
    sources: { l: { parquet: 'l.parquet' }, r: { parquet: 'r.parquet' } },
    query: join,
    execution: small,
  },
  aggJoin: {
    version: 1,
    sources: { l: { parquet: 'l.parquet' }, r: { parquet: 'r.parquet' } },
    execution: small,
    query: {
      op: 'aggregate',
      groupBy: ['g'],
      aggregates: [
        { fn: 'count', as: 'n' },
        { fn: 'sum', column: 'v', as: 's' },
      ],
      input: join,
    },
  },
  agg: {
    version: 1,
    sources: { l: { parquet: 'l.parquet' } },
    query: {
      op: 'aggregate',
      groupBy: ['k'],
      aggregates: [{ fn: 'count', as: 'n' }],
      input: { op: 'scan', source: 'l' },
    },
  },
};

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer, _enc: string, cb: () => void) {
    this.text += chunk.toString();
    cb();
  }
}

/** Run the command line in-process; its exit code, output and the statistics it wrote. */
async function run(plan: object, ...flags: string[]) {
  // the knobs of the shuffle path on the worker pool: no broadcast, not on the calling thread
  const p = { ...plan, execution: { broadcastBytes: 0, inThreadBytes: 0, ...(plan as any).execution } };
  const file = writePlan(dir, p, `plan-${Math.random().toString(36).slice(2)}.json`);
  const stats = `${file}.stats.json`;
  const out = new Capture(),
    err = new Capture();
  const code = await main(['node', 'skewjoin', file, '--quiet', '--stats', stats, ...flags], out, err);
  expect(code, err.text).toBe(0);
  return { out: out.text, stats: JSON.parse(fs.readFileSync(stats, 'utf8')) };
}
const BASE = ['--workers', '2', '--partitions', '8', '--skew-threshold', '1', '--skew-factor', '2'];
/** The join with BASE flags, run once for the tests that contrast with it. */
let baseRun: ReturnType<typeof run> | null = null;
const base = () => (baseRun ??= run(PLANS.join, ...BASE));
const shuffle = (s: any, id: string) => s.shuffles.find((x: any) => x.id === id);
const methods = (s: any) => s.joins[0].splits.map((x: any) => x.method);

describe('execution block', () => {
  it('workers, partitions, combiners, eager aggregation and every skew setting, sizes as strings', async () => {
    const execution = {
      workers: 1,
      partitions: 5,
      combiners: false,
      eagerAggregation: false,
      skew: { enabled: true, factor: 2, thresholdBytes: '1KB', advisoryPartitionBytes: '2KB', strategy: 'partition' },
    };
    const { stats } = await run({ ...PLANS.aggJoin, execution });
    const left = shuffle(stats, 'join-1.left');
    expect(left.partitions).toBe(5);
    expect(left.thresholdBytes).toBe(Math.max(1024, 2 * left.medianBytes)); // factor 2 and "1KB"
    expect(left.skewedPartitions.length).toBeGreaterThan(0);
    expect(methods(stats)).toContain('map-range');
    expect(new Set(methods(stats))).toEqual(new Set(['map-range'])); // strategy "partition"
    expect(stats.joins[0].targetBytes).toBeGreaterThanOrEqual(2048); // advisoryPartitionBytes "2KB"
    expect(stats.eager).toEqual([]);
    expect(shuffle(stats, 'aggregate-1.input').combine).toBeUndefined();
    expect(new Set(stats.tasks.filter((t: any) => t.thread !== 0).map((t: any) => t.thread)).size).toBe(1); // one worker thread
    expect(new Set((await base()).stats.tasks.filter((t: any) => t.thread !== 0).map((t: any) => t.thread)).size).toBe(
      2,
    ); // --workers 2
  });
  it('enabled: false is a plain hash shuffle', async () => {
    const { stats } = await run(
      { ...PLANS.join, execution: { skew: { enabled: false, thresholdBytes: 1, factor: 2 } } },
      '--partitions',
      '8',
    );
    expect(stats.joins[0].splits).toEqual([]);
    expect(stats.tasks.filter((t: any) => t.split).length).toBe(0);
  });
});

describe('flags', () => {
  it('--no-skew: nothing skewed, nothing split, where the same run without it splits', async () => {
    expect(methods((await base()).stats).length).toBeGreaterThan(0);
    const off = await run(PLANS.join, ...BASE, '--no-skew');
    expect(off.stats.joins[0].splits).toEqual([]);
    for (const s of off.stats.shuffles) expect(s.skewedPartitions).toEqual([]);
    expect(off.stats.tasks.filter((t: any) => t.kind === 'split' || t.split).length).toBe(0);
  });
  it('--skew-factor sets the test applied: factor x median', async () => {
    const low = shuffle((await base()).stats, 'join-1.left');
    expect(low.thresholdBytes).toBe(2 * low.medianBytes);
    const high = (await run(PLANS.join, ...BASE.slice(0, -1), '1000')).stats;
    const left = shuffle(high, 'join-1.left');
    expect(left.thresholdBytes).toBe(1000 * left.medianBytes);
    expect(left.skewedPartitions).toEqual([]);
    expect(high.joins[0].splits).toEqual([]);
  });
  it('--skew-threshold takes a size string', async () => {
    const { stats } = await run(
      PLANS.join,
      '--workers',
      '2',
      '--partitions',
      '8',
      '--skew-factor',
      '2',
      '--skew-threshold',
      '64KB',
    );
    const left = shuffle(stats, 'join-1.left');
    expect(left.thresholdBytes).toBe(Math.max(65536, 2 * left.medianBytes));
    expect(left.thresholdBytes).toBeGreaterThanOrEqual(65536);
    expect(left.skewedPartitions).toEqual(
      left.partitionBytes.flatMap((b: number, p: number) => (b > left.thresholdBytes ? [p] : [])),
    );
  });
  it.each([
    ['partition', 'map-range'],
    ['key', 'hot-key'],
  ])('--skew-strategy %s splits by %s only', async (strategy, method) => {
    const { stats } = await run(PLANS.join, ...BASE, '--skew-strategy', strategy);
    expect(methods(stats)).toContain(method);
    expect(methods(stats).filter((m: string) => m !== method && m !== 'none')).toEqual([]); // (none: a partition with nothing to cut)
  });
  it('--no-eager: no eager aggregation, where the same run without it applies it (and --explain --analyze says so)', async () => {
    const on = await run(PLANS.aggJoin, ...BASE, '--explain', '--analyze');
    expect(on.stats.eager).toEqual(['aggregate-1']);
    expect(on.out).toContain('eager aggregation applied: aggregate-1\n');
    const off = await run(PLANS.aggJoin, ...BASE, '--explain', '--analyze', '--no-eager');
    expect(off.stats.eager).toEqual([]);
    expect(off.out).not.toContain('eager aggregation applied');
  });
  it('--no-reorder: the join order as written, where the same run without it orders a tree of three inputs by cost', async () => {
    // (l ⋈ r) ⋈ l again: three inputs, a tree the join order by cost looks at (plan/join-order.ts)
    const three = {
      version: 1,
      sources: { l: { parquet: 'l.parquet' }, r: { parquet: 'r.parquet' }, l2: { parquet: 'l.parquet' } },
      query: {
        op: 'aggregate',
        groupBy: ['g'],
        aggregates: [{ fn: 'count', as: 'n' }],
        input: {
          op: 'join',
          type: 'inner',
          on: [['id', 'id']],
          left: join,
          right: { op: 'scan', source: 'l2', columns: ['id'] },
        },
      },
    };
    const on = await run(three, '--workers', '2', '--explain', '--analyze');
    expect(on.stats.joinOrders).toHaveLength(1);
    expect(on.out).toMatch(/^join order of join-\d+: 3 inputs/m);
    const off = await run(three, '--workers', '2', '--explain', '--analyze', '--no-reorder');
    expect(off.stats.joinOrders).toBeUndefined();
    expect(off.out).not.toContain('join order of');
  });
  it('--no-combiners: raw rows through the aggregation shuffle', async () => {
    const on = shuffle((await run(PLANS.agg, '--workers', '2')).stats, 'aggregate-1.input');
    expect(on.combine.rowsBefore).toBe(24000);
    expect(on.partitionRows.reduce((a: number, b: number) => a + b, 0)).toBeLessThan(24000);
    const off = shuffle((await run(PLANS.agg, '--workers', '2', '--no-combiners')).stats, 'aggregate-1.input');
    expect(off.combine).toBeUndefined();
    expect(off.partitionRows.reduce((a: number, b: number) => a + b, 0)).toBe(24000);
  });
});

describe('--explain --analyze', () => {
  it('prints partition sizes, the skew test, skewed partitions, hot keys, splits and slowest/median per stage, as the statistics have them', async () => {
    const { out, stats } = await run(PLANS.join, ...BASE, '--skew-strategy', 'key', '--explain', '--analyze');
    const left = shuffle(stats, 'join-1.left');
    const rows = [...left.partitionRows].sort((a: number, b: number) => a - b);
    expect(out).toMatch(/^join-1: inner hash join on k = k/m);
    expect(out).toContain(`shuffle join-1.left: 8 partitions\n   rows:  min ${rows[0]}, median `);
    expect(out).toContain(`, max ${rows[7]}\n`);
    expect(out).toMatch(/ {3}bytes: min \d+(\.\d)?[KM]?B, median .*, p95 .*, max /);
    expect(out).toContain(`skewed partitions: ${left.skewedPartitions.join(', ')}\n`);
    expect(left.skewedPartitions.length).toBeGreaterThan(0);
    const hot = left.hotKeys[0];
    expect(hot.key).toEqual(['3']);
    expect(out).toContain(`hot keys: 3 (${hot.rows} rows, partition ${hot.partition})`);
    expect(out).toMatch(
      new RegExp(`partition ${hot.partition} \\(skewed [a-z ]+\\): split by hot keys, \\d+ task\\(s\\)`),
    );
    expect(out).toMatch(/ {6}key 3: \d+ left rows x \d+ right rows → \d+ task\(s\)/);
    const reduce = stats.tasks.filter((t: any) => t.stage === 'join-1' && t.kind === 'reduce');
    const m = out.match(
      /stage join-1 reduce: (\d+) task\(s\), median ([\d.]+) ms, slowest ([\d.]+) ms \(([\d.]+|-)x median\)/,
    );
    expect(m).not.toBeNull();
    expect(Number(m![1])).toBe(reduce.length);
    expect(Number(m![3])).toBeCloseTo(Math.max(...reduce.map((t: any) => t.ms)), 1);
  });
  it("docs/statistics.md's command: skewed partitions at a 64KB threshold on the bundled sample, too small to split at the default target", async () => {
    const out = new Capture(),
      err = new Capture();
    const code = await main(
      [
        'node',
        'skewjoin',
        path.join('plans', 'quickstart.json'),
        '--explain',
        '--analyze',
        '--skew-threshold',
        '64KB',
        '--skew-factor',
        '2',
        '--partitions',
        '16',
        '--no-broadcast',
      ],
      out,
      err,
    );
    expect(code, err.text).toBe(0);
    const test = out.text.match(
      /shuffle join-1\.left: 16 partitions[\s\S]*?skew test: > ([\d.]+)KB \(median [^)]*\); skewed partitions: ([\d, ]+|none)\n/,
    );
    expect(test).not.toBeNull();
    expect(Number(test![1])).toBeGreaterThanOrEqual(64);
    expect(test![2]).not.toBe('none');
    // (docs/design/skew.md: forcing splits on small data also needs a small advisoryPartitionBytes)
    for (const p of test![2].split(', '))
      expect(out.text).toMatch(
        new RegExp(`partition ${p} \\(skewed [a-z ]+\\): not split: not larger than the target task size`),
      );
    expect(out.text).toMatch(/stage join-1 reduce: \d+ task\(s\), median [\d.]+ ms, slowest [\d.]+ ms/);
  });
});
