// Cardinality estimates of bound subtrees for the join order (plan/join-order.ts): a scan's rows from its
// footers, a filter's selectivity measured on a sample of row groups (conjuncts of one column read as masks, each
// evaluated once per value of the chunk's dictionary, the rows' outcomes looked up by index: io/parquet-mask.ts;
// the others over the columns decoded), and a column's distinct values from the footers' min/max and row counts.
// Each estimate says where it came from: footer, sampled or guessed. Samples are kept per process while the
// file is unchanged.
import fs from 'node:fs';
import type { Batch, Column, Field } from '../kernels/column.js';
import { isInteger } from '../kernels/column.js';
import { evalPredicate } from '../expr/filter.js';
import { type MaskSpec, readMasks } from '../io/parquet-mask.js';
import { readRowGroups } from '../io/parquet.js';
import { footerStats } from '../io/parquet-stats.js';
import type { BoundNode, BoundPredicate, FileSplit } from './bound.js';
import { predCols, remapPred } from './prune.js';

export type EstSource = 'footer' | 'sampled' | 'guessed';

export interface Estimate {
  rows: number;
  /** where the figure came from: the footers' counts, a measured sample, or a fixed guess (one or more) */
  sources: Set<EstSource>;
}

/** Row groups sampled per filtered scan, spread over its files, and rows read of each. */
const SAMPLE_GROUPS = 3;
const SAMPLE_ROWS = 1 << 14;

/** Types the direct reader's masks evaluate per dictionary value (physical/scan/masks.ts MASKABLE). */
const MASKABLE = new Set(['utf8', 'date32', 'int32', 'int64', 'decimal', 'float32', 'float64', 'timestamp']);

/** Fixed guesses where nothing was measured (as SQL's planner guessed before). */
const GUESS = { eq: 0.1, range: 1 / 3, isNull: 0.05, other: 0.5 };

/** The conjuncts of a predicate: of its AND, and of an AND of its expression form. */
export function conjuncts(p: BoundPredicate): BoundPredicate[] {
  if (p.kind === 'and') return p.preds.flatMap(conjuncts);
  if (p.kind === 'expr' && p.expr.k === 'fn' && p.expr.fn === 'and')
    return p.expr.args.flatMap((expr) => conjuncts({ kind: 'expr', expr }));
  return [p];
}

/**
 * A predicate's guessed share of rows kept; `rowsOf`: the rows of the input a column comes from, where known (an
 * equality keeps at least one of a small input's rows: q07's nation pairs).
 */
export function guessSelectivity(p: BoundPredicate, rowsOf?: (col: number) => number): number {
  const eq = (col: number) => Math.max(GUESS.eq, 1 / Math.max(1, rowsOf?.(col) ?? Infinity));
  const exprEq = (e: Extract<BoundPredicate, { kind: 'expr' }>['expr']): number | null => {
    if (e.k !== 'fn' || e.fn !== '=' || e.args.length !== 2) return null;
    const c = e.args.find((a) => a.k === 'col');
    return c && c.k === 'col' ? eq(c.col) : GUESS.eq;
  };
  switch (p.kind) {
    case 'cmp':
      return p.op === '=' ? eq(p.col) : p.op === '!=' ? 1 - GUESS.eq : GUESS.range;
    case 'in':
      return Math.min(1, p.values.length * eq(p.col));
    case 'isNull':
      return p.isNull ? GUESS.isNull : 1 - GUESS.isNull;
    case 'and':
      return p.preds.reduce((s, q) => s * guessSelectivity(q, rowsOf), 1);
    case 'or':
      return 1 - p.preds.reduce((s, q) => s * (1 - guessSelectivity(q, rowsOf)), 1);
    case 'not':
      return 1 - guessSelectivity(p.pred, rowsOf);
    default: {
      const e = p.expr;
      if (e.k === 'fn' && (e.fn === 'and' || e.fn === 'or' || e.fn === 'not')) {
        const parts = e.args.map((expr) => guessSelectivity({ kind: 'expr', expr }, rowsOf));
        if (e.fn === 'not') return 1 - parts[0];
        return e.fn === 'and' ? parts.reduce((a, b) => a * b, 1) : 1 - parts.reduce((a, b) => a * (1 - b), 1);
      }
      return exprEq(e) ?? GUESS.other;
    }
  }
}

const bigintSafe = (_: string, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v);

/** Measured samples: by file (size, mtime), row group and predicate; what share of the sampled rows it kept. */
const samples = new Map<string, { kept: number; rows: number }>();

/**
 * A scan's footers and, through the filters, projections and computed columns above it, the predicates over the
 * scan's columns (`sampled`) and those over computed columns (`guessed`).
 */
function chainToScan(node: BoundNode): {
  scan: Extract<BoundNode, { kind: 'scan' }>;
  map: number[];
  preds: BoundPredicate[];
  guessed: BoundPredicate[];
} | null {
  switch (node.kind) {
    case 'scan':
      return { scan: node, map: node.schema.map((_, i) => i), preds: [], guessed: [] };
    case 'filter': {
      const r = chainToScan(node.input);
      if (!r) return null;
      for (const c of conjuncts(node.pred)) {
        const cols = [...predCols(c, new Set())];
        if (cols.every((k) => r.map[k] >= 0)) r.preds.push(remapPred(c, r.map));
        else r.guessed.push(c);
      }
      return r;
    }
    case 'project': {
      const r = chainToScan(node.input);
      return r && { ...r, map: node.indices.map((k) => r.map[k]) };
    }
    case 'compute': {
      const r = chainToScan(node.input);
      return r && { ...r, map: [...r.map, ...node.exprs.map(() => -1)] };
    }
    default:
      return null;
  }
}

/** Up to `n` of the splits, spread evenly (first, middle, last). */
function spread<T>(xs: T[], n: number): T[] {
  if (xs.length <= n) return xs;
  return Array.from({ length: n }, (_, i) => xs[Math.round((i * (xs.length - 1)) / (n - 1))]);
}

/** The outcome of a predicate over one column placed at every position of a batch: 1 where it holds, else 0. */
function truthOf(pred: BoundPredicate, width: number): (c: Column) => Uint8Array {
  return (c) => {
    const r = evalPredicate({ length: c.length, columns: Array.from({ length: width }, () => c) }, pred);
    for (let i = 0; i < r.length; i++) r[i] = r[i] === 1 ? 1 : 0;
    return r;
  };
}

/**
 * Rows kept by the conjuncts `preds` (over the scan's columns) of a split's first `SAMPLE_ROWS` rows, and the rows
 * read: conjuncts of one maskable column as masks, the rest over their columns decoded; null when unreadable.
 */
async function sampleSplit(
  fields: Field[],
  split: FileSplit,
  preds: BoundPredicate[],
): Promise<{ kept: number; rows: number } | null> {
  if (split.csv || split.wholeFile || split.rowGroups.length === 0) return null;
  const g = split.rowGroups[0];
  let st: fs.Stats;
  try {
    st = fs.statSync(split.path);
  } catch {
    return null;
  }
  const key = `${split.path}\0${st.size}\0${st.mtimeMs}\0${g}\0${JSON.stringify(
    preds.map((p) => [p, [...predCols(p, new Set())].map((k) => fields[k])]),
    bigintSafe,
  )}`;
  const hit = samples.get(key);
  if (hit) return hit;
  const limit = Math.min(SAMPLE_ROWS, split.rows);
  if (limit <= 0) return null;
  const single = preds.map((p) => {
    const cols = [...predCols(p, new Set())];
    return cols.length === 1 && MASKABLE.has(fields[cols[0]].type.id) ? cols[0] : -1;
  });
  const keep = new Uint8Array(limit).fill(1);
  const and = (m: Uint8Array) => {
    for (let i = 0; i < limit; i++) keep[i] &= m[i] === 1 ? 1 : 0;
  };
  let rest = preds.filter((_, i) => single[i] < 0);
  const masked = preds.filter((_, i) => single[i] >= 0);
  if (masked.length) {
    try {
      const specs: MaskSpec[] = masked.map((p) => ({
        field: fields[single[preds.indexOf(p)]],
        truth: truthOf(p, fields.length),
      }));
      const got = readMasks(split.path, [g], specs, { limit });
      for (const m of got) if (m.length === limit) and(m);
    } catch {
      rest = preds; // a file or column the direct reader does not take: decoded as the scan would
    }
  }
  if (rest.length) {
    const cols = [...new Set(rest.flatMap((p) => [...predCols(p, new Set())]))];
    let batches: Batch[];
    try {
      batches = await readRowGroups(
        split.path,
        [g],
        cols.map((k) => fields[k]),
        false,
        { limit },
      );
    } catch {
      return null;
    }
    let at = 0;
    for (const b of batches) {
      const columns: Column[] = Array.from({ length: fields.length }, () => b.columns[0]);
      cols.forEach((k, i) => {
        columns[k] = b.columns[i];
      });
      const view: Batch = { length: b.length, columns };
      for (const p of rest) {
        const r = evalPredicate(view, p);
        for (let i = 0; i < b.length && at + i < limit; i++) keep[at + i] &= r[i] === 1 ? 1 : 0;
      }
      at += b.length;
    }
  }
  let kept = 0;
  for (let i = 0; i < limit; i++) kept += keep[i];
  const out = { kept, rows: limit };
  samples.set(key, out);
  if (samples.size > 4096) samples.delete(samples.keys().next().value!);
  return out;
}

/** Distinct values of a column at its scan: the footers' integer range, at most the scan's rows. */
export interface Distinct {
  /** estimated distinct values */
  d: number;
  /** rows of the table the column comes from (unfiltered) */
  base: number;
  source: EstSource;
}

/** Estimates of one planning run: each node's rows memoized. */
export class Estimator {
  private memo = new Map<BoundNode, Promise<Estimate>>();

  /**
   * `sample` false: a scan's filters are not sampled but read against the footers' ranges (a comparison with an
   * integer or date column, values taken as spread evenly), else guessed: for a decision that does not pay a sample
   * (plan/setop-joins.ts: the first sample of a process took 9 ms of a 0.37 s query, the footers 0.4 ms).
   */
  constructor(private readonly sample = true) {}

  rows(node: BoundNode): Promise<Estimate> {
    let p = this.memo.get(node);
    if (!p) {
      p = this.compute(node);
      this.memo.set(node, p);
    }
    return p;
  }

  private async compute(node: BoundNode): Promise<Estimate> {
    const chain = node.kind === 'filter' ? chainToScan(node) : null;
    if (chain) {
      const base = scanRows(chain.scan);
      const sources = new Set<EstSource>(base.sources);
      let sel = 1;
      if (chain.preds.length && !this.sample) {
        for (const p of chain.preds) {
          const share = rangeShare(chain.scan, p);
          sel *= share ?? guessSelectivity(p);
          sources.add(share === null ? 'guessed' : 'footer');
        }
      } else if (chain.preds.length) {
        let kept = 0,
          read = 0;
        for (const s of spread(chain.scan.splits, SAMPLE_GROUPS)) {
          const r = await sampleSplit(chain.scan.schema, s, chain.preds);
          if (!r) continue;
          kept += r.kept;
          read += r.rows;
        }
        if (read > 0) {
          sel = Math.max(kept, 0.5) / read;
          sources.add('sampled');
        } else {
          sel = chain.preds.reduce((s, p) => s * guessSelectivity(p), 1);
          sources.add('guessed');
        }
      }
      if (chain.guessed.length) {
        sel *= chain.guessed.reduce((s, p) => s * guessSelectivity(p), 1);
        sources.add('guessed');
      }
      return { rows: Math.max(1, base.rows * sel), sources };
    }
    switch (node.kind) {
      case 'scan':
        return scanRows(node);
      case 'filter': {
        const e = await this.rows(node.input);
        return { rows: Math.max(1, e.rows * guessSelectivity(node.pred)), sources: new Set([...e.sources, 'guessed']) };
      }
      case 'limit': {
        const e = await this.rows(node.input);
        return { rows: Math.min(e.rows, node.count), sources: e.sources };
      }
      case 'aggregate': {
        const e = await this.rows(node.input);
        if (node.groupBy.length === 0) return { rows: 1, sources: new Set(['footer']) };
        let d = 1;
        const sources = new Set(e.sources);
        for (const g of node.groupBy) {
          const x = this.distinct(node.input, g);
          d *= x ? x.d : e.rows;
          sources.add(x ? x.source : 'guessed');
        }
        return { rows: Math.max(1, Math.min(e.rows, d)), sources };
      }
      case 'join': {
        const [l, r] = await Promise.all([this.rows(node.left), this.rows(node.right)]);
        const sources = new Set([...l.sources, ...r.sources]);
        if (node.type === 'semi' || node.type === 'anti') {
          // the share of the left side's keys among the right side's: its distinct keys, at most its rows
          let dl = 1,
            dr = 1;
          node.leftKeys.forEach((k, i) => {
            const x = this.distinct(node.left, k),
              y = this.distinct(node.right, node.rightKeys[i]);
            sources.add(x && y ? 'footer' : 'guessed');
            dl *= x ? x.d : l.rows;
            dr *= y ? y.d : r.rows;
          });
          const share = Math.min(1, Math.min(dr, r.rows) / Math.max(1, dl));
          return { rows: Math.max(1, l.rows * (node.type === 'semi' ? share : Math.max(0.1, 1 - share))), sources };
        }
        const inner = this.joinRows(node.left, node.leftKeys, l.rows, node.right, node.rightKeys, r.rows, sources);
        const rows =
          node.type === 'left'
            ? Math.max(inner, l.rows)
            : node.type === 'right'
              ? Math.max(inner, r.rows)
              : node.type === 'full'
                ? Math.max(inner, l.rows + r.rows)
                : inner;
        return { rows, sources };
      }
      case 'union': {
        const es = await Promise.all(node.inputs.map((n) => this.rows(n)));
        return { rows: es.reduce((s, e) => s + e.rows, 0), sources: new Set(es.flatMap((e) => [...e.sources])) };
      }
      case 'values':
        return { rows: node.rows.length, sources: new Set(['footer']) };
      default:
        return this.rows(node.input);
    }
  }

  /**
   * Rows of an inner join of two inputs (`la` and `lb` rows) on key columns: |A| |B| / d, d the larger side's
   * distinct keys, at most the smaller table's rows (a foreign key has no more distinct values than the table it
   * points to: lineitem's l_orderkey range against orders); no keys: the cross product.
   */
  joinRows(
    a: BoundNode,
    ka: number[],
    la: number,
    b: BoundNode,
    kb: number[],
    lb: number,
    sources: Set<EstSource>,
  ): number {
    if (ka.length === 0) return la * lb;
    const side = (n: BoundNode, ks: number[], rows: number) => {
      let d = 1,
        base = Infinity;
      for (const k of ks) {
        const x = this.distinct(n, k);
        sources.add(x ? x.source : 'guessed');
        d *= x ? x.d : rows;
        base = Math.min(base, x ? x.base : rows);
      }
      return { d: Math.min(d, base), base };
    };
    const x = side(a, ka, la),
      y = side(b, kb, lb);
    const d = Math.max(1, Math.min(Math.max(x.d, y.d), Math.min(x.base, y.base)));
    return Math.max(1, (la * lb) / d);
  }

  /** A column's distinct values, traced to the scan it comes from; null where it is computed or unknown. */
  distinct(node: BoundNode, col: number): Distinct | null {
    const o = origin(node, col);
    if (!o) return null;
    const base = scanRows(o.scan);
    // no range (not an integer or a date, a CSV file, a footer without min and max): as many as the rows
    const r = footerRange(o.scan, o.col);
    if (!r) return { d: base.rows, base: base.rows, source: 'guessed' };
    return { d: Math.max(1, Math.min(base.rows, r[1] - r[0] + 1)), base: base.rows, source: 'footer' };
  }
}

/** The footers' integer range of a scan's column (lo, hi); null where a file has none or is not Parquet's. */
function footerRange(scan: Extract<BoundNode, { kind: 'scan' }>, col: number): [number, number] | null {
  const f = scan.schema[col];
  if (!(isInteger(f.type) || f.type.id === 'date32') || scan.splits.some((s) => s.csv || s.wholeFile)) return null;
  let lo = Infinity,
    hi = -Infinity;
  try {
    for (const p of new Set(scan.splits.map((s) => s.path))) {
      const s = footerStats(p).stats.get(f.name);
      if (s?.min === undefined || s.max === undefined) return null;
      lo = Math.min(lo, s.min);
      hi = Math.max(hi, s.max);
    }
  } catch {
    return null;
  }
  return lo <= hi ? [lo, hi] : null;
}

/** The share of a scan's rows a comparison of a column with a value keeps, its values spread evenly over the range. */
function rangeShare(scan: Extract<BoundNode, { kind: 'scan' }>, p: BoundPredicate): number | null {
  if (p.kind !== 'cmp' || p.op === '=' || p.op === '!=') return null;
  if (typeof p.value !== 'number' && typeof p.value !== 'bigint') return null;
  const r = footerRange(scan, p.col);
  if (!r) return null;
  const [lo, hi] = r,
    v = Number(p.value),
    n = hi - lo + 1;
  const below = Math.min(n, Math.max(0, v - lo + (p.op === '<=' || p.op === '>' ? 1 : 0)));
  return Math.max(0, Math.min(1, (p.op === '<' || p.op === '<=' ? below : n - below) / n));
}

/** A scan's rows as its footers (or CSV chunks) count them; a file read whole counts none: guessed from bytes. */
function scanRows(scan: Extract<BoundNode, { kind: 'scan' }>): Estimate {
  let rows = 0,
    guessed = false;
  for (const s of scan.splits) {
    if (s.wholeFile) {
      rows += s.bytes / 16;
      guessed = true;
    } else rows += s.rows;
  }
  return { rows: Math.max(1, rows), sources: new Set([guessed ? 'guessed' : 'footer']) };
}

/** The scan a column is read from, through the operators that pass it on unchanged. */
function origin(node: BoundNode, col: number): { scan: Extract<BoundNode, { kind: 'scan' }>; col: number } | null {
  switch (node.kind) {
    case 'scan':
      return { scan: node, col };
    case 'filter':
    case 'sort':
    case 'limit':
      return origin(node.input, col);
    case 'project':
      return origin(node.input, node.indices[col]);
    case 'compute':
    case 'window':
      return col < node.input.schema.length ? origin(node.input, col) : null;
    case 'join': {
      const w = node.left.schema.length;
      return col < w ? origin(node.left, col) : origin(node.right, col - w);
    }
    case 'aggregate':
      return col < node.groupBy.length ? origin(node.input, node.groupBy[col]) : null;
    default:
      return null;
  }
}
