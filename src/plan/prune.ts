// Column pruning: every operator keeps only the columns its consumers use, so
// scans decode fewer columns and joins gather fewer. Runs on the bound plan;
// the root keeps its exact output schema. The copies of a repeated subtree (plan/share.ts) keep the union of what
// their readers use, so that they stay identical and are computed once.
import { InputError } from '../errors.js';
import type { BoundNode, BoundPredicate } from './bound.js';
import { exprCols, remapExpr } from '../expr/columns.js';

interface Pruned {
  node: BoundNode /** old output column → new index (-1: dropped) */;
  map: number[];
}

export function predCols(p: BoundPredicate, into: Set<number>): Set<number> {
  if (p.kind === 'expr') return exprCols(p.expr, into);
  if ('preds' in p) p.preds.forEach((q) => predCols(q, into));
  else if ('pred' in p) predCols(p.pred, into);
  else into.add(p.col);
  return into;
}

export function remapPred(p: BoundPredicate, m: number[]): BoundPredicate {
  if (p.kind === 'expr') return { kind: 'expr', expr: remapExpr(p.expr, m) };
  if ('preds' in p) return { ...p, preds: p.preds.map((q) => remapPred(q, m)) };
  if ('pred' in p) return { ...p, pred: remapPred(p.pred, m) };
  return { ...p, col: m[p.col] };
}

const identity = (n: number) => Array.from({ length: n }, (_, i) => i);

/** The copies of repeated subtrees being pruned: each one's group, and what the group's readers need. */
interface Copies {
  keyOf: Map<BoundNode, string>;
  need: Map<string, Set<number>>;
  /** the second pass: every copy takes its group's union */
  union: boolean;
}
// set for the length of one pruneColumns call (synchronous)
let copies: Copies | null = null;

function prune(node: BoundNode, need0: Set<number>): Pruned {
  let need = need0;
  const k = copies?.keyOf.get(node);
  if (k !== undefined) {
    const all = copies!.need.get(k) ?? new Set<number>();
    if (copies!.union) need = new Set(all);
    else copies!.need.set(k, new Set([...all, ...need]));
  }
  switch (node.kind) {
    case 'scan':
      return pruneScan(node, need);
    case 'filter':
      return pruneFilter(node, need);
    case 'project':
      return pruneProject(node, need);
    case 'compute':
      return pruneCompute(node, need);
    case 'join':
      return pruneJoin(node, need);
    case 'aggregate':
      return pruneAggregate(node);
    case 'sort':
      return pruneSort(node, need);
    case 'limit':
      return pruneLimit(node, need);
    case 'window':
      return pruneWindow(node, need);
    case 'union':
      return pruneUnion(node, need);
    case 'values': {
      const keep = kept(need, node.schema.length);
      const rows = node.rows.map((r) => keep.map((c) => r[c]));
      return { node: { ...node, rows, schema: keep.map((c) => node.schema[c]) }, map: mapOf(keep, node.schema.length) };
    }
    case 'expand': {
      // its whole output kept (an aggregate reads it); its input gives what the copies read
      const child = prune(node.input, new Set(node.copies.flatMap((c) => c.cols.filter((i) => i >= 0))));
      const copies = node.copies.map((c) => ({ ...c, cols: c.cols.map((i) => (i < 0 ? -1 : child.map[i])) }));
      return { node: { ...node, input: child.node, copies }, map: identity(node.schema.length) };
    }
    case 'repeat': {
      const child = prune(node.input, new Set([...need, node.col]));
      return {
        node: { ...node, input: child.node, schema: child.node.schema, col: child.map[node.col] },
        map: child.map,
      };
    }
  }
}

/** The needed columns in order (one at least: rows still need a column to be counted). */
function kept(need: Set<number>, width: number): number[] {
  const keep = [...need].sort((a, b) => a - b);
  if (keep.length === 0 && width > 0) keep.push(0);
  return keep;
}

function mapOf(keep: number[], width: number): number[] {
  const map = new Array<number>(width).fill(-1);
  keep.forEach((c, i) => {
    map[c] = i;
  });
  return map;
}

/** A union of all rows: each input keeps the needed columns, in the union's order. */
function pruneUnion(node: Extract<BoundNode, { kind: 'union' }>, need: Set<number>): Pruned {
  const keep = kept(need, node.schema.length);
  const inputs = node.inputs.map((n): BoundNode => {
    const child = prune(n, new Set(keep));
    const indices = keep.map((c) => child.map[c]);
    if (indices.every((i, k) => i === k) && child.node.schema.length === keep.length) return child.node;
    return {
      id: `${n.id}.pruned`,
      kind: 'project',
      input: child.node,
      indices,
      schema: indices.map((i) => child.node.schema[i]),
    };
  });
  return { node: { ...node, inputs, schema: keep.map((c) => node.schema[c]) }, map: mapOf(keep, node.schema.length) };
}

/** A scan reads the needed columns only (one at least: row counts need it); an unreadable one is an error now. */
function pruneScan(node: Extract<BoundNode, { kind: 'scan' }>, need: Set<number>): Pruned {
  const keep = [...need].sort((a, b) => a - b);
  if (keep.length === 0 && node.schema.length > 0) keep.push(0); // row counts still need one column
  const map = new Array<number>(node.schema.length).fill(-1);
  keep.forEach((c, i) => {
    map[c] = i;
  });
  for (const c of keep) {
    const bad = node.unreadable?.[node.schema[c].name];
    if (bad)
      throw new InputError(
        `${bad.file}: column "${node.schema[c].name}" has type ${bad.type}, which skewjoin cannot read`,
        bad.file,
        node.schema[c].name,
      );
  }
  return { node: { ...node, schema: keep.map((c) => node.schema[c]) }, map };
}

/** A filter: its input keeps what it and the consumers read. */
function pruneFilter(node: Extract<BoundNode, { kind: 'filter' }>, need: Set<number>): Pruned {
  const child = prune(node.input, predCols(node.pred, new Set(need)));
  const filter: BoundNode = {
    ...node,
    input: child.node,
    schema: child.node.schema,
    pred: remapPred(node.pred, child.map),
  };
  // Columns only the predicate reads go right after it: a join side is measured, built or shuffled without them.
  const keep = [...need].sort((a, b) => a - b);
  if (keep.length === 0 || keep.length === child.node.schema.length) return { node: filter, map: child.map };
  const map = new Array<number>(child.map.length).fill(-1);
  keep.forEach((c, i) => {
    map[c] = i;
  });
  const indices = keep.map((c) => child.map[c]);
  return {
    node: {
      id: `${node.id}.pruned`,
      kind: 'project',
      input: filter,
      indices,
      schema: indices.map((i) => child.node.schema[i]),
    },
    map,
  };
}

/** A projection keeps the needed indices. */
function pruneProject(node: Extract<BoundNode, { kind: 'project' }>, need: Set<number>): Pruned {
  const keep = [...need].sort((a, b) => a - b);
  const child = prune(node.input, new Set(keep.map((i) => node.indices[i])));
  const map = new Array<number>(node.schema.length).fill(-1);
  keep.forEach((c, i) => {
    map[c] = i;
  });
  return {
    node: {
      ...node,
      input: child.node,
      indices: keep.map((i) => child.map[node.indices[i]]),
      schema: keep.map((i) => node.schema[i]),
    },
    map,
  };
}

/** Computed columns nobody reads are dropped. */
function pruneCompute(node: Extract<BoundNode, { kind: 'compute' }>, need: Set<number>): Pruned {
  // Keep the computed columns someone reads; the input gives what they and the consumers read.
  const nIn = node.input.schema.length;
  const needIn = new Set([...need].filter((c) => c < nIn));
  const kept = node.exprs.map((_, k) => k).filter((k) => need.has(nIn + k));
  for (const k of kept) exprCols(node.exprs[k], needIn);
  const child = prune(node.input, needIn);
  const width = child.node.schema.length;
  const map = [...child.map, ...node.exprs.map((_, k) => (kept.includes(k) ? width + kept.indexOf(k) : -1))];
  if (kept.length === 0) return { node: child.node, map };
  const exprs = kept.map((k) => remapExpr(node.exprs[k], child.map));
  return {
    node: {
      ...node,
      input: child.node,
      exprs,
      schema: [...child.node.schema, ...kept.map((k) => node.schema[nIn + k])],
    },
    map,
  };
}

/** A join: each side keeps its keys and the needed columns of its half of the output. */
function pruneJoin(node: Extract<BoundNode, { kind: 'join' }>, need: Set<number>): Pruned {
  const nl = node.left.schema.length;
  const needL = new Set(node.leftKeys),
    needR = new Set(node.rightKeys);
  for (const c of need) c < nl ? needL.add(c) : needR.add(c - nl);
  const l = prune(node.left, needL),
    r = prune(node.right, needR);
  const outer = node.type !== 'semi' && node.type !== 'anti';
  const map = [...l.map, ...(outer ? r.map.map((x) => (x < 0 ? -1 : x + l.node.schema.length)) : [])];
  const schema = new Array(map.length);
  map.forEach((to, from) => {
    if (to >= 0) schema[to] = node.schema[from];
  });
  // Columns kept only as keys of a side still appear in the output; name them as bound.
  const names = [...l.node.schema, ...(outer ? r.node.schema : [])].map((f, i) => schema[i] ?? f);
  return {
    node: {
      ...node,
      left: l.node,
      right: r.node,
      schema: names,
      leftKeys: node.leftKeys.map((k) => l.map[k]),
      rightKeys: node.rightKeys.map((k) => r.map[k]),
    },
    map,
  };
}

/** An aggregate keeps its whole output; its input, the grouping and aggregated columns. */
function pruneAggregate(node: Extract<BoundNode, { kind: 'aggregate' }>): Pruned {
  const needIn = new Set(node.groupBy);
  for (const a of node.aggs) if (a.col >= 0) needIn.add(a.col);
  const child = prune(node.input, needIn);
  return {
    node: {
      ...node,
      input: child.node,
      groupBy: node.groupBy.map((g) => child.map[g]),
      aggs: node.aggs.map((a) => ({ ...a, col: a.col < 0 ? -1 : child.map[a.col] })),
    },
    map: identity(node.schema.length),
  };
}

/** A sort: its input keeps the needed columns and the sort keys. */
function pruneSort(node: Extract<BoundNode, { kind: 'sort' }>, need: Set<number>): Pruned {
  const child = prune(node.input, new Set([...need, ...node.by.map((k) => k.col)]));
  return {
    node: {
      ...node,
      input: child.node,
      schema: child.node.schema,
      by: node.by.map((k) => ({ ...k, col: child.map[k.col] })),
    },
    map: child.map,
  };
}

/** A limit passes the needed columns through. */
function pruneLimit(node: Extract<BoundNode, { kind: 'limit' }>, need: Set<number>): Pruned {
  const child = prune(node.input, need);
  return { node: { ...node, input: child.node, schema: child.node.schema }, map: child.map };
}

/**
 * A window keeps its functions and emits the input columns read above it (`keep`); its input keeps those, its
 * keys and what the functions read.
 */
function pruneWindow(node: Extract<BoundNode, { kind: 'window' }>, need: Set<number>): Pruned {
  const nIn = node.input.schema.length;
  const emitted = node.keep ?? identity(nIn);
  // the window's output columns read above it, as input columns
  const readIn = new Set([...need].filter((c) => c < emitted.length).map((c) => emitted[c]));
  const needIn = new Set(readIn);
  for (const c of node.partitionBy) needIn.add(c);
  for (const k of node.orderBy) needIn.add(k.col);
  for (const f of node.fns) {
    if (f.col >= 0) needIn.add(f.col);
    if (f.def >= 0) needIn.add(f.def);
  }
  const child = prune(node.input, needIn);
  const at = (c: number) => (c < 0 ? -1 : child.map[c]);
  const keep = [...readIn].map(at).sort((a, b) => a - b);
  const all = keep.length === child.node.schema.length;
  const fnsOut = node.schema.slice(emitted.length);
  const map = new Array<number>(node.schema.length).fill(-1);
  emitted.forEach((c, i) => {
    if (readIn.has(c)) map[i] = keep.indexOf(child.map[c]);
  });
  node.fns.forEach((_, k) => {
    map[emitted.length + k] = keep.length + k;
  });
  const { keep: _was, ...rest } = node;
  return {
    node: {
      ...rest,
      input: child.node,
      schema: [...keep.map((c) => child.node.schema[c]), ...fnsOut],
      partitionBy: node.partitionBy.map(at),
      orderBy: node.orderBy.map((k) => ({ ...k, col: at(k.col) })),
      fns: node.fns.map((f) => ({ ...f, col: at(f.col), def: at(f.def) })),
      ...(all ? {} : { keep }),
    },
    map,
  };
}

/**
 * The plan with unused columns dropped. `shared`: the copies of repeated subtrees (plan/share.ts), each pruned to
 * what all the readers of its group need (a first pass gathers it).
 */
export function pruneColumns(root: BoundNode, shared?: Map<BoundNode, string>): BoundNode {
  const n = root.schema.length;
  const all = () => new Set(identity(n));
  let pruned: Pruned;
  if (shared?.size) {
    copies = { keyOf: shared, need: new Map(), union: false };
    try {
      prune(root, all());
      copies.union = true;
      pruned = prune(root, all());
    } finally {
      copies = null;
    }
  } else pruned = prune(root, all());
  const { node, map } = pruned;
  if (map.every((to, from) => to === from) && node.schema.length === n) return node;
  return { id: `${root.id}.output`, kind: 'project', schema: root.schema, input: node, indices: map };
}
