// Sibling aggregates over one table computed by one scan: aggregates of the same source grouped by the same columns,
// each over its own filters (TPC-H q21: per order, the suppliers' range over all line items and over the late ones),
// become one aggregate whose functions take their own sibling's filter as a FILTER (CASE WHEN filter THEN argument),
// with a count of each filtered sibling's rows; each sibling's place reads that one aggregate, keeping the groups its
// filter had rows in and its own columns. The one aggregate occurs in each place: plan/share.ts finds it repeated
// and it is computed once (physical/repeats.ts). Runs on the bound plan, before plan/share.ts and column pruning.
// Merged only where it is exact: each sibling a filter chain over a scan (a filter evaluated on rows another filter
// would have dropped must raise no error: only comparisons of columns and literals, and/or/not of them), functions
// with partial states (not holistic, not distinct), literals other than decimals (compared as read).
import type { Field } from '../kernels/column.js';
import type { BoundExpr } from '../expr/types.js';
import type { BoundAggregate, BoundNode, BoundPredicate, Literal } from './bound.js';
import { mapChildren } from './eager-push.js';
import { fingerprint } from './fingerprint.js';
import { remapPred } from './prune.js';

type Scan = Extract<BoundNode, { kind: 'scan' }>;
type Aggregate = Extract<BoundNode, { kind: 'aggregate' }>;

const MERGED = new Set(['sum', 'count', 'min', 'max', 'avg']);
const CMP = new Set(['=', '!=', '<', '<=', '>', '>=']);

/** A sibling: its aggregate, scan, and its filters' conjunction over the scan's columns (null: none). */
interface Sibling {
  agg: Aggregate;
  scan: Scan;
  pred: BoundPredicate | null;
}

function sibling(agg: Aggregate): Sibling | null {
  if (agg.lead || !agg.aggs.every((a) => MERGED.has(a.fn))) return null;
  const preds: BoundPredicate[] = [];
  let n = agg.input;
  while (n.kind === 'filter') {
    preds.push(n.pred);
    n = n.input;
  }
  if (n.kind !== 'scan') return null;
  return { agg, scan: n, pred: preds.length === 0 ? null : preds.length === 1 ? preds[0] : { kind: 'and', preds } };
}

/** A predicate as a bool expression whose evaluation can raise no error, or null. */
function predExpr(p: BoundPredicate, schema: Field[]): BoundExpr | null {
  const bool = { id: 'bool' } as const;
  switch (p.kind) {
    case 'expr':
      return safeExpr(p.expr) ? p.expr : null;
    case 'and':
    case 'or': {
      const args = p.preds.map((q) => predExpr(q, schema));
      return args.every((a) => a !== null)
        ? { k: 'fn', fn: p.kind, args: args as BoundExpr[], type: bool, what: p.kind }
        : null;
    }
    case 'not': {
      const a = predExpr(p.pred, schema);
      return a && { k: 'fn', fn: 'not', args: [a], type: bool, what: 'not' };
    }
    case 'cmp': {
      const f = schema[p.col];
      const v = p.value;
      const lit = literal(v, f.type);
      if (lit === null) return null;
      const col: BoundExpr = { k: 'col', col: p.col, type: f.type, name: f.name };
      return { k: 'fn', fn: p.op, args: [col, lit], type: bool, what: p.op };
    }
    case 'isNull': {
      const f = schema[p.col];
      const e: BoundExpr = {
        k: 'fn',
        fn: 'is_null',
        args: [{ k: 'col', col: p.col, type: f.type, name: f.name }],
        type: bool,
        what: 'is_null',
      };
      return p.isNull ? e : { k: 'fn', fn: 'not', args: [e], type: bool, what: 'not' };
    }
    case 'in':
      return null;
  }
}

/** A literal of a comparison in the expression form of its column's type (not decimals: null). */
function literal(v: Literal, t: Field['type']): BoundExpr | null {
  if (v === null || t.id === 'decimal') return null;
  if (typeof v === 'string' && t.id === 'utf8') return { k: 'lit', value: v, type: t };
  if (typeof v === 'bigint' && (t.id === 'int64' || t.id === 'timestamp')) return { k: 'lit', value: v, type: t };
  if (typeof v === 'number' && ['int8', 'int16', 'int32', 'date32', 'float64'].includes(t.id))
    return { k: 'lit', value: v, type: t };
  return null;
}

const big = (_: string, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v);

function safeExpr(e: BoundExpr): boolean {
  if (e.k === 'col' || e.k === 'lit') return true;
  if (e.k !== 'fn') return false;
  if (e.fn === 'and' || e.fn === 'or' || e.fn === 'not') return e.args.every(safeExpr);
  return CMP.has(e.fn) && e.args.every((a) => a.k === 'col' || a.k === 'lit');
}

/**
 * The plan with each set of sibling aggregates (same source, same group columns by name, two or more) computed as
 * one aggregate read in each sibling's place (see the top of this file).
 */
export function mergeSiblings(root: BoundNode): BoundNode {
  const found: Sibling[] = [];
  const walk = (n: BoundNode) => {
    if (n.kind === 'aggregate') {
      const s = sibling(n);
      if (s) found.push(s);
    }
    mapChildren(n, (c) => {
      walk(c);
      return c;
    });
  };
  walk(root);
  const sets = new Map<string, Sibling[]>();
  for (const s of found) {
    const key = JSON.stringify([
      s.scan.source,
      fingerprint({ ...s.scan, schema: [] }),
      s.agg.groupBy.map((g) => s.scan.schema[g].name),
    ]);
    sets.set(key, [...(sets.get(key) ?? []), s]);
  }
  const placed = new Map<BoundNode, BoundNode>();
  const ones = new Set<BoundNode>();
  for (const set of sets.values()) {
    if (set.length < 2) continue;
    // the same subtree twice is plan/share.ts's already
    if (new Set(set.map((s) => fingerprint({ ...s.agg, id: '' }))).size < 2) continue;
    const merged = merge(set);
    if (!merged) continue;
    for (const [from, to] of merged.places) placed.set(from, to);
    ones.add(merged.one);
  }
  if (placed.size === 0) return root;
  const replace = (m: Map<BoundNode, BoundNode>) => {
    const r = (n: BoundNode): BoundNode => m.get(n) ?? mapChildren(n, r);
    return fuseSemis(r(root), ones);
  };
  // kept only where the places' semi joins became one (read once): a merged aggregate read in two places is held
  // for the second reader, and measured dearer than the two scans it saves (q21 unfused: 1.08x wall, 1.12x CPU of
  // the base build's; q18: 1.08x CPU, peak RSS 497 against 317 MB)
  const fused = replace(placed);
  const reads = new Map<BoundNode, number>();
  const count = (n: BoundNode) => {
    if (ones.has(n)) reads.set(n, (reads.get(n) ?? 0) + 1);
    mapChildren(n, (c) => {
      count(c);
      return c;
    });
  };
  count(fused);
  const keep = new Map([...placed].filter(([, to]) => reads.get(oneOf(to)) === 1));
  if (keep.size === placed.size) return fused;
  return keep.size === 0 ? root : replace(keep);
}

/** The merged aggregate a place reads (below its row-count filter). */
function oneOf(place: BoundNode): BoundNode {
  let n = place;
  while (n.kind === 'project' || n.kind === 'filter') n = n.input;
  return n;
}

/** A right side over a merged aggregate through filters and projections: its filters and columns on the aggregate's. */
function downTo(n: BoundNode, ones: Set<BoundNode>): { one: BoundNode; preds: BoundPredicate[]; map: number[] } | null {
  if (ones.has(n)) return { one: n, preds: [], map: n.schema.map((_, i) => i) };
  if (n.kind === 'filter') {
    const r = downTo(n.input, ones);
    return r && { ...r, preds: [...r.preds, remapPred(n.pred, r.map)] };
  }
  if (n.kind === 'project') {
    const r = downTo(n.input, ones);
    return r && { ...r, map: n.indices.map((i) => r.map[i]) };
  }
  return null;
}

/**
 * Two semi joins in a row, on the same columns of their left side, against places of one merged aggregate by its
 * group columns (q21: orders with more than one supplier, and with one late supplier at most), as one semi join
 * against the aggregate's groups that both places keep: a row finds a match in both iff its key is a group both
 * places' filters keep. One build, one probe, and the aggregate read once (not held for a second reader).
 */
function fuseSemis(root: BoundNode, ones: Set<BoundNode>): BoundNode {
  const fuse = (n0: BoundNode): BoundNode => {
    const n = mapChildren(n0, fuse);
    if (n.kind !== 'join' || n.type !== 'semi' || n.left.kind !== 'join' || n.left.type !== 'semi') return n;
    const inner = n.left;
    const same = (a: number[], b: number[]) => a.length === b.length && a.every((x, i) => x === b[i]);
    if (!same(n.leftKeys, inner.leftKeys)) return n;
    const a = downTo(inner.right, ones),
      b = downTo(n.right, ones);
    if (!a || !b || a.one !== b.one || a.one.kind !== 'aggregate') return n;
    const g = a.one.groupBy.length;
    const ka = inner.rightKeys.map((k) => a.map[k]),
      kb = n.rightKeys.map((k) => b.map[k]);
    if (!same(ka, kb) || ka.some((k) => k < 0 || k >= g)) return n;
    const both: BoundNode = {
      id: `${inner.right.id}.both`,
      kind: 'filter',
      input: a.one,
      schema: a.one.schema,
      pred: { kind: 'and', preds: [...a.preds, ...b.preds] },
    };
    const right: BoundNode = {
      id: `${inner.right.id}.fused`,
      kind: 'project',
      input: both,
      indices: a.map,
      schema: inner.right.schema,
    };
    return { ...inner, right, id: inner.id };
  };
  return fuse(root);
}

/** The one aggregate of a set of siblings, and each sibling's place reading it; null where it does not apply. */
function merge(set: Sibling[]): { one: Aggregate; places: Map<BoundNode, BoundNode> } | null {
  // one scan reading every column any sibling reads
  const fields: Field[] = [];
  for (const s of set) for (const f of s.scan.schema) if (!fields.some((g) => g.name === f.name)) fields.push(f);
  const scan: Scan = { ...set[0].scan, id: `${set[0].scan.id}.siblings`, schema: fields };
  const at = (s: Sibling) => s.scan.schema.map((f) => fields.findIndex((g) => g.name === f.name));
  const exprs: BoundExpr[] = [];
  const aggs: BoundAggregate[] = [];
  const own: number[][] = [];
  const rowsCol: number[] = [];
  const w = fields.length;
  // one computed column per distinct expression (min and max of the same filtered argument read one)
  const column = (e: BoundExpr): number => {
    const k = exprs.findIndex((x) => JSON.stringify(x, big) === JSON.stringify(e, big));
    if (k >= 0) return w + k;
    exprs.push(e);
    return w + exprs.length - 1;
  };
  for (const [i, s] of set.entries()) {
    const m = at(s);
    const when = s.pred && predExpr(remapPred(s.pred, m), fields);
    if (s.pred && !when) return null;
    const mine: number[] = [];
    for (const a of s.agg.aggs) {
      let col = a.col < 0 ? -1 : m[a.col];
      let fn = a.fn;
      if (when) {
        // FILTER: the argument where the sibling's filter holds, else null (count(*): of the literal 1)
        const f = col < 0 ? null : fields[col];
        const then: BoundExpr = f
          ? { k: 'col', col, type: f.type, name: f.name }
          : { k: 'lit', value: 1n, type: { id: 'int64' } };
        col = column({ k: 'case', whens: [when], thens: [then], else: null, type: then.type });
        if (a.col < 0) fn = 'count';
      }
      mine.push(aggs.length);
      aggs.push({ ...a, fn, col, as: `$sibling${i}.${a.as}` });
    }
    own.push(mine);
    if (when && s.agg.groupBy.length > 0) {
      // the groups the sibling's filter had rows in
      const one: BoundExpr = { k: 'lit', value: 1n, type: { id: 'int64' } };
      const col = column({ k: 'case', whens: [when], thens: [one], else: null, type: one.type });
      rowsCol.push(aggs.length);
      aggs.push({ fn: 'count', col, as: `$sibling${i}.rows`, type: { id: 'int64' } });
    } else rowsCol.push(-1);
  }
  const first = set[0];
  // rows no sibling's filter keeps are no sibling's: dropped when every sibling has one
  const filtered: BoundNode = set.every((s) => s.pred)
    ? {
        id: `${scan.id}.any`,
        kind: 'filter',
        input: scan,
        schema: fields,
        pred: { kind: 'or', preds: set.map((s) => remapPred(s.pred!, at(s))) },
      }
    : scan;
  const input: BoundNode = exprs.length
    ? {
        id: `${first.agg.id}.siblings.compute`,
        kind: 'compute',
        input: filtered,
        exprs,
        schema: [...fields, ...exprs.map((e, k): Field => ({ name: `$filtered${k}`, type: e.type }))],
      }
    : filtered;
  const groupBy = first.agg.groupBy.map((g) => at(first)[g]);
  const g = groupBy.length;
  const one: Aggregate = {
    id: `${first.agg.id}.siblings`,
    kind: 'aggregate',
    input,
    groupBy,
    aggs,
    schema: [...groupBy.map((c) => fields[c]), ...aggs.map((a): Field => ({ name: a.as, type: a.type }))],
  };
  const out = new Map<BoundNode, BoundNode>();
  for (const [i, s] of set.entries()) {
    let n: BoundNode = one;
    if (rowsCol[i] >= 0) {
      n = {
        id: `${s.agg.id}.rows`,
        kind: 'filter',
        input: n,
        schema: n.schema,
        pred: { kind: 'cmp', col: g + rowsCol[i], op: '>', value: 0n },
      };
    }
    // the sibling's columns: its group columns (in its order) and its own aggregates
    const byName = s.agg.groupBy.map((c) => groupBy.indexOf(at(s)[c]));
    out.set(s.agg, {
      id: `${s.agg.id}.sibling`,
      kind: 'project',
      input: n,
      indices: [...byName, ...own[i].map((k) => g + k)],
      schema: s.agg.schema,
    });
  }
  return { one, places: out };
}
