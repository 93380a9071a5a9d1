// Repeated subplans that differ only in the columns their scans read (TPC-H q17 reads lineitem semi-joined to the
// same parts twice, once with l_extendedprice and once without) made identical, before column pruning, so that
// they are computed once (physical/repeats.ts). Each such subtree is widened: its scans read every column that any
// scan of their source reads in the plan, in one order, its column indices moved to match; a subtree whose widened
// form repeats is replaced, in each of its places, by a projection of the widened form onto the columns it had.
// Pruning then keeps, in every copy, the union of the columns the copies' readers use (plan/prune.ts).
import type { Field } from '../kernels/column.js';
import { remapExpr } from '../expr/columns.js';
import type { BoundNode } from './bound.js';
import { children, fingerprint, shareable } from './fingerprint.js';
import { remapPred } from './prune.js';

type Scan = Extract<BoundNode, { kind: 'scan' }>;

/** A node widened: the node, and where each of its old output columns is in the new output. */
interface Wide {
  node: BoundNode;
  map: number[];
}

/** Every column any scan of each source reads, in the order of their first appearance (pre-order). */
function sourceColumns(root: BoundNode): Map<string, Scan> {
  const out = new Map<string, Scan>();
  const walk = (n: BoundNode) => {
    if (n.kind === 'scan') {
      const s = out.get(n.source);
      const add = s ? n.schema.filter((f) => !s.schema.some((g) => g.name === f.name)) : n.schema;
      const schema: Field[] = [...(s?.schema ?? []), ...add];
      const unreadable = { ...s?.unreadable, ...n.unreadable };
      out.set(n.source, { ...n, schema, ...(Object.keys(unreadable).length ? { unreadable } : {}) });
    }
    for (const c of children(n)) walk(c);
  };
  walk(root);
  return out;
}

/** The subtree with every scan reading all of `cols`' columns of its source; memoized per node in `memo`. */
function widen(n: BoundNode, cols: Map<string, Scan>, memo: Map<BoundNode, Wide>): Wide {
  let w = memo.get(n);
  if (!w) {
    w = widenNode(n, cols, memo);
    memo.set(n, w);
  }
  return w;
}

function widenNode(n: BoundNode, cols: Map<string, Scan>, memo: Map<BoundNode, Wide>): Wide {
  const sub = (c: BoundNode) => widen(c, cols, memo);
  switch (n.kind) {
    case 'scan': {
      const all = cols.get(n.source)!;
      const { schema, unreadable } = all;
      const map = n.schema.map((f) => schema.findIndex((g) => g.name === f.name));
      return { node: { ...n, schema, ...(unreadable ? { unreadable } : {}) }, map };
    }
    case 'filter': {
      const c = sub(n.input);
      return { node: { ...n, input: c.node, schema: c.node.schema, pred: remapPred(n.pred, c.map) }, map: c.map };
    }
    case 'project': {
      const c = sub(n.input);
      return { node: { ...n, input: c.node, indices: n.indices.map((i) => c.map[i]) }, map: identity(n) };
    }
    case 'compute': {
      const c = sub(n.input),
        w = c.node.schema.length;
      const extra = n.schema.slice(n.input.schema.length);
      return {
        node: {
          ...n,
          input: c.node,
          exprs: n.exprs.map((e) => remapExpr(e, c.map)),
          schema: [...c.node.schema, ...extra],
        },
        map: [...c.map, ...extra.map((_, k) => w + k)],
      };
    }
    case 'join': {
      const l = sub(n.left),
        r = sub(n.right),
        w = l.node.schema.length;
      const outer = n.type !== 'semi' && n.type !== 'anti';
      const node: BoundNode = {
        ...n,
        left: l.node,
        right: r.node,
        leftKeys: n.leftKeys.map((k) => l.map[k]),
        rightKeys: n.rightKeys.map((k) => r.map[k]),
        schema: outer ? [...l.node.schema, ...r.node.schema] : l.node.schema,
      };
      return { node, map: outer ? [...l.map, ...r.map.map((i) => w + i)] : l.map };
    }
    case 'aggregate': {
      const c = sub(n.input);
      const node: BoundNode = {
        ...n,
        input: c.node,
        groupBy: n.groupBy.map((g) => c.map[g]),
        aggs: n.aggs.map((a) => ({ ...a, col: a.col < 0 ? -1 : c.map[a.col] })),
      };
      return { node, map: identity(n) };
    }
    case 'sort': {
      const c = sub(n.input);
      const by = n.by.map((k) => ({ ...k, col: c.map[k.col] }));
      return { node: { ...n, input: c.node, schema: c.node.schema, by }, map: c.map };
    }
    case 'limit': {
      const c = sub(n.input);
      return { node: { ...n, input: c.node, schema: c.node.schema }, map: c.map };
    }
    case 'window': {
      const c = sub(n.input);
      const at = (x: number) => (x < 0 ? -1 : c.map[x]);
      const w = c.node.schema.length,
        nIn = n.input.schema.length;
      const node: BoundNode = {
        ...n,
        input: c.node,
        schema: [...c.node.schema, ...n.schema.slice(nIn)],
        partitionBy: n.partitionBy.map(at),
        orderBy: n.orderBy.map((k) => ({ ...k, col: at(k.col) })),
        fns: n.fns.map((f) => ({ ...f, col: at(f.col), def: at(f.def) })),
      };
      return { node, map: [...c.map, ...n.fns.map((_, k) => w + k)] };
    }
    // set operations: their inputs widened, their own columns as they were
    case 'union': {
      const inputs = n.inputs.map((x) => {
        const c = sub(x);
        return { id: `${x.id}.narrow`, kind: 'project' as const, input: c.node, indices: c.map, schema: x.schema };
      });
      return { node: { ...n, inputs }, map: identity(n) };
    }
    case 'values':
      return { node: n, map: identity(n) };
    case 'expand': {
      const c = sub(n.input);
      const copies = n.copies.map((k) => ({ ...k, cols: k.cols.map((i) => (i < 0 ? -1 : c.map[i])) }));
      return { node: { ...n, input: c.node, copies }, map: identity(n) };
    }
    case 'repeat': {
      const c = sub(n.input);
      return { node: { ...n, input: c.node, schema: c.node.schema, col: c.map[n.col] }, map: c.map };
    }
  }
}

const identity = (n: BoundNode) => n.schema.map((_, i) => i);

/** Whether a node is the projection of a repeated subtree's copy onto the columns of the place it took. */
export const isSharedProjection = (n: BoundNode): boolean => n.kind === 'project' && n.id.endsWith('.shared');

/** The plan with its repeated subtrees made identical, and each copy's widened root with the key of its group. */
export interface Shared {
  root: BoundNode;
  /** the widened root of each copy (the input of the projection put in its place): its group's key */
  copies: Map<BoundNode, string>;
}

/**
 * Replace each outermost subtree whose widened form repeats (a join or an aggregate, with the row operators above
 * it: see plan/fingerprint.ts shareable) by a projection of its widened form onto its own columns.
 */
export function shareRepeats(root: BoundNode): Shared {
  const cols = sourceColumns(root),
    memo = new Map<BoundNode, Wide>();
  const keys = new Map<BoundNode, string>(),
    counts = new Map<string, number>();
  const count = (n: BoundNode) => {
    if (shareable(n)) {
      const k = fingerprint(widen(n, cols, memo).node);
      keys.set(n, k);
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    for (const c of children(n)) count(c);
  };
  count(root);
  // the outermost repeats only (what lies inside one is computed with it), in groups of two or more
  const readers = new Map<string, BoundNode[]>();
  const mark = (n: BoundNode) => {
    const k = keys.get(n);
    if (k !== undefined && counts.get(k)! > 1) readers.set(k, [...(readers.get(k) ?? []), n]);
    else for (const c of children(n)) mark(c);
  };
  mark(root);
  const copies = new Map<BoundNode, string>(),
    placed = new Map<BoundNode, BoundNode>();
  for (const [k, ns] of readers) {
    if (ns.length < 2) continue;
    for (const n of ns) {
      const w = memo.get(n)!;
      copies.set(w.node, k);
      placed.set(n, { id: `${n.id}.shared`, kind: 'project', input: w.node, indices: w.map, schema: n.schema });
    }
  }
  return { root: placed.size ? replace(root, placed) : root, copies };
}

/** The tree with the nodes of `placed` replaced (the nodes above them copied, the rest kept). */
function replace(n: BoundNode, placed: Map<BoundNode, BoundNode>): BoundNode {
  const p = placed.get(n);
  if (p) return p;
  switch (n.kind) {
    case 'scan':
    case 'values':
      return n;
    case 'union': {
      const inputs = n.inputs.map((x) => replace(x, placed));
      return inputs.every((x, i) => x === n.inputs[i]) ? n : { ...n, inputs };
    }
    case 'join': {
      const left = replace(n.left, placed),
        right = replace(n.right, placed);
      return left === n.left && right === n.right ? n : { ...n, left, right };
    }
    default: {
      const input = replace(n.input, placed);
      return input === n.input ? n : ({ ...n, input } as BoundNode);
    }
  }
}
