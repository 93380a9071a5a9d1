// Which hot window partitions to split on Spark, which computes one window partition in one task (AQE has no rule
// for windows): the partition keys are sampled as a join side is (sample.ts: row ranges read here for local files,
// else a query on Spark over a fraction of the rows), with the first ORDER BY column's values, and a key is hot by
// the same rule (hot.ts). Each hot key's rows are cut into pieces at values of that column (quantiles of the key's
// sampled rows); window.ts rewrites the window in two passes. Exact for row_number, rank, dense_rank and
// count/sum/avg/min/max over a frame from UNBOUNDED PRECEDING to the CURRENT ROW (ROWS or RANGE): a window with any
// other function keeps the plain lowering.
import { WINDOW_FNS } from '../plan/window-fns.js';
import type { BoundNode } from '../plan/bound.js';
import { children } from '../plan/fingerprint.js';
import type { LoadedPlan } from '../plan/load.js';
import { valueAt } from '../kernels/column.js';
import { hotKeys } from './hot.js';
import { col, sparkType, str } from './lower-expr.js';
import type { WindowNode, WindowSplit } from './window.js';
import {
  DECODED_PER_PARQUET_BYTE,
  countHere,
  fileLevel,
  keyOf,
  type Query,
  type Sample,
  SAMPLE_ROWS,
  SPARK_PARTITIONS,
  sampleRanges,
  scanBytes,
  scanOf,
  scanRows,
  sized,
  TOP_KEYS,
} from './sample.js';
import type { Lowering } from './lower.js';

/** How one window's partition keys were sampled (stats.spark.windowSampling). */
export interface WindowSamplingStat {
  window: string;
  method: 'local' | 'spark' | 'skipped';
  reason?: string;
  rowsRead: number;
  sideRows: number;
  sampleRows: number;
  fraction: number;
  ms: number;
  hotKeys: number;
}

/** Whether the two-pass rewrite is exact for every function of the window (and it has keys and an order). */
function splittable(n: WindowNode): boolean {
  if (n.partitionBy.length === 0 || n.orderBy.length === 0) return false;
  return n.fns.every(
    (f) =>
      WINDOW_FNS[f.fn].split === 'rows' ||
      (WINDOW_FNS[f.fn].kind === 'aggregate' && !f.distinct && f.frame.start === null && f.frame.end === 0),
  );
}

function windowsOf(root: BoundNode): WindowNode[] {
  const out: WindowNode[] = [];
  const walk = (n: BoundNode) => {
    if (n.kind === 'window') out.push(n);
    for (const c of children(n)) walk(c);
  };
  walk(root);
  return out;
}

/** Sampled (partition key, first ORDER BY value) pairs with their rows, each key's pairs in the window's order. */
interface Pairs {
  keys: { text: string[]; sql: string[]; rows: number; values: { text: string; sql: string; rows: number }[] }[];
  total: number;
  fraction: number;
  rowsRead: number;
  sideRows: number;
}

/** Our values of one column in order (numbers, bigints, strings; decimals come as text: by their number). */
const compare = (a: unknown, b: unknown) => (a! < b! ? -1 : a! > b! ? 1 : 0);

/** The pairs from the input's row ranges (sampleRanges) read here through our engine; null when not local files. */
async function localPairs(lp: LoadedPlan, n: WindowNode): Promise<Pairs | null> {
  const input = n.input;
  if (!fileLevel(input)) return null;
  const scan = scanOf(input);
  const ranges = sampleRanges(scan.splits);
  if (!ranges) return null;
  const keys = n.partitionBy;
  const o = n.orderBy[0];
  const by = [...keys, o.col];
  const batches = await countHere(lp, input, ranges, by, `${n.id}.sample`);
  if (!batches) return null;
  const types = by.map((k) => input.schema[k].type);
  const groups = new Map<string, { text: string[]; sql: string[]; rows: number; raw: [unknown, unknown, number][] }>();
  let total = 0;
  for (const b of batches) {
    const cnt = b.columns[by.length];
    for (let i = 0; i < b.length; i++) {
      const rows = Number(valueAt(cnt, i));
      total += rows;
      const vs = keys.map((_, c) => valueAt(b.columns[c], i));
      if (vs.some((v) => v === null)) continue; // null keys are never hot
      const ks = vs.map((v, c) => keyOf(v, types[c]));
      const id = JSON.stringify(ks.map((k) => k.sql));
      let g = groups.get(id);
      if (!g) groups.set(id, (g = { text: ks.map((k) => k.text), sql: ks.map((k) => k.sql), rows: 0, raw: [] }));
      g.rows += rows;
      const v = valueAt(b.columns[keys.length], i);
      if (v !== null) g.raw.push([types[keys.length].id === 'decimal' ? Number(v) : v, v, rows]);
    }
  }
  const rowsRead = ranges.reduce((a, s) => a + s.rows, 0);
  const sideRows = scan.splits.reduce((a, s) => a + s.rows, 0);
  const ot = types[keys.length];
  const top = [...groups.values()].sort((a, b) => b.rows - a.rows).slice(0, TOP_KEYS);
  return {
    total,
    fraction: rowsRead / sideRows,
    rowsRead,
    sideRows,
    keys: top.map((g) => ({
      text: g.text,
      sql: g.sql,
      rows: g.rows,
      values: g.raw
        .sort((a, b) => (o.desc ? -compare(a[0], b[0]) : compare(a[0], b[0])))
        .map(([, v, rows]) => ({ ...keyOf(v, ot), rows })),
    })),
  };
}

/** The pairs from one query on Spark over a fraction of the input (`rand(42) < f`), sorted by Spark. */
async function sparkPairs(n: WindowNode, query: Query, lowering: Lowering): Promise<Pairs> {
  const input = lowering.node(n.input);
  let rows = sized(n.input) ? scanRows(n.input) : 0;
  if (!rows) rows = Number((await query(`SELECT COUNT(*) FROM (${input}) t`))[0]?.[0] ?? 0);
  const fraction = Math.min(1, SAMPLE_ROWS / Math.max(1, rows));
  const o = n.orderBy[0];
  const ks = n.partitionBy.map((_, i) => `k${i}`);
  const where = fraction < 1 ? ` WHERE rand(42) < ${fraction}` : '';
  const sql =
    `SELECT ${ks.map((k) => `CAST(${k} AS STRING)`).join(', ')}, CAST(o AS STRING), n FROM (` +
    `SELECT ${ks.join(', ')}, o, COUNT(*) AS n FROM (SELECT ${n.partitionBy.map((k, i) => `${col(k)} AS k${i}`).join(', ')}, ` +
    `${col(o.col)} AS o FROM (${input}) t${where}) t GROUP BY ${ks.join(', ')}, o) t ` +
    `ORDER BY ${ks.join(', ')}, o ${o.desc ? 'DESC' : 'ASC'}`;
  const res = await query(sql);
  const nk = ks.length;
  const types = n.partitionBy.map((k) => n.input.schema[k].type);
  const ot = n.input.schema[o.col].type;
  const lit = (v: string, t: (typeof types)[number]) =>
    t.id === 'utf8' ? str(v) : `CAST(${str(v)} AS ${sparkType(t)})`;
  const groups = new Map<string, Pairs['keys'][number]>();
  let total = 0;
  for (const r of res) {
    const c = Number(r[nk + 1]);
    total += c;
    if (r.slice(0, nk).some((v) => v === null)) continue;
    const text = r.slice(0, nk).map(String);
    const id = JSON.stringify(text);
    let g = groups.get(id);
    if (!g) groups.set(id, (g = { text, sql: text.map((v, i) => lit(v, types[i])), rows: 0, values: [] }));
    g.rows += c;
    if (r[nk] !== null) g.values.push({ text: String(r[nk]), sql: lit(String(r[nk]), ot), rows: c });
  }
  const top = [...groups.values()].sort((a, b) => b.rows - a.rows).slice(0, TOP_KEYS);
  return { keys: top, total, fraction, rowsRead: rows, sideRows: rows };
}

/**
 * The cut values of one hot key's sampled ORDER BY values (in the window's order): where each of `pieces` equal
 * shares of its rows starts; a value is never cut through, so heavy values make fewer pieces.
 */
function cutsOf(values: Pairs['keys'][number]['values'], pieces: number): { text: string; sql: string }[] {
  const total = values.reduce((a, v) => a + v.rows, 0);
  const cuts: { text: string; sql: string }[] = [];
  let before = 0;
  for (const v of values) {
    if (before > 0 && before >= ((cuts.length + 1) * total) / pieces && cuts.length < pieces - 1)
      cuts.push({ text: v.text, sql: v.sql });
    before += v.rows;
  }
  return cuts;
}

/** Spark's hash() of an INT (Murmur3, x86 32-bit, seed 42): the hash partitioning of a row whose other keys are null. */
function sparkHashInt(i: number): number {
  const rotl = (x: number, r: number) => (x << r) | (x >>> (32 - r));
  let k = Math.imul(i, 0xcc9e2d51);
  k = Math.imul(rotl(k, 15), 0x1b873593);
  let h = rotl(42 ^ k, 13);
  h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  h ^= 4;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/**
 * Tags for pieces, ascending from 1, each landing in a shuffle partition no earlier tag took (pmod of its hash by
 * the partitions), until every partition has one; then again. Pieces that shared a partition would share a task.
 */
class PieceTags {
  private next = 1;
  private used = new Set<number>();
  constructor(private readonly partitions: number) {}
  take(n: number): number[] {
    const out: number[] = [];
    while (out.length < n) {
      if (this.used.size >= this.partitions) this.used.clear();
      const t = this.next++;
      const p = ((sparkHashInt(t) % this.partitions) + this.partitions) % this.partitions;
      if (this.used.has(p)) continue;
      this.used.add(p);
      out.push(t);
    }
    return out;
  }
}

/**
 * The splits of the plan's hot window partitions, and how each window was sampled. `query`: a query on Spark, for
 * inputs not sampled here; null (`skewjoin lower`, no server) leaves those windows unsplit.
 */
export async function planWindowSplits(
  lp: LoadedPlan,
  query: Query | null,
  lowering: Lowering,
  partitions = lp.settings.partitions ?? SPARK_PARTITIONS,
): Promise<{ splits: Map<string, WindowSplit>; sampling: WindowSamplingStat[] }> {
  const splits = new Map<string, WindowSplit>();
  const sampling: WindowSamplingStat[] = [];
  const { enabled, strategy } = lp.settings.skew;
  if (!enabled || strategy === 'partition') return { splits, sampling };
  for (const n of windowsOf(lp.root)) {
    if (!splittable(n)) continue;
    const skip = (reason: string) =>
      sampling.push({
        window: n.id,
        method: 'skipped',
        reason,
        rowsRead: 0,
        sideRows: 0,
        sampleRows: 0,
        fraction: 0,
        ms: 0,
        hotKeys: 0,
      });
    if (sized(n.input) && scanBytes(n.input) * DECODED_PER_PARQUET_BYTE <= lp.settings.skew.thresholdBytes) {
      skip('too small to reach skew.thresholdBytes');
      continue;
    }
    const t0 = performance.now();
    const local = await localPairs(lp, n);
    if (!local && !query) {
      skip('its input is sampled on Spark, when the plan runs');
      continue;
    }
    const got = local ?? (await sparkPairs(n, query!, lowering));
    const sample: Sample = {
      total: got.total,
      fraction: got.fraction,
      keys: got.keys.map((k) => ({ key: k.text, sql: k.sql, rows: k.rows, oneFile: false })),
    };
    const hot = hotKeys(sample, n.input, lp, 'always', partitions);
    const tags = new PieceTags(partitions);
    const split: WindowSplit = { keys: [], cuts: [], tags: [] };
    for (const h of hot) {
      const k = got.keys.find((g) => JSON.stringify(g.sql) === JSON.stringify(h.sql))!;
      const pieces = Math.max(2, Math.min(64, Math.ceil((k.rows / got.total) * partitions)));
      const cuts = cutsOf(k.values, pieces);
      if (cuts.length === 0) continue; // one ORDER BY value: nothing to cut
      split.keys.push(h);
      split.cuts.push(cuts);
      split.tags.push(tags.take(cuts.length + 1));
    }
    sampling.push({
      window: n.id,
      method: local ? 'local' : 'spark',
      rowsRead: got.rowsRead,
      sideRows: got.sideRows,
      sampleRows: got.total,
      fraction: got.fraction,
      ms: performance.now() - t0,
      hotKeys: split.keys.length,
    });
    if (split.keys.length) splits.set(n.id, split);
  }
  return { splits, sampling };
}
