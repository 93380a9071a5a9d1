// Join order by cost, for plans and SQL alike (SQL compiles to a plan first): each tree of inner joins, with the
// filters and projections between them, is taken apart into its inputs (whatever is not an inner join, or a join
// the plan marks `"reorder": false`), the join keys between them and the filters' conjuncts; the order of least
// estimated cost is found over every bushy tree of connected joins (dynamic programming over the inputs' subsets,
// a cross product only where no connected join is left), each conjunct applied as soon as its inputs are joined,
// and the columns projected back to the tree's own, in its order and with its names. Outer, semi and anti joins
// are never crossed: they are inputs. Estimates: plan/estimate.ts (footers, sampled filters, distinct keys).
// Runs on the bound plan, before the derived filters and column pruning.
import { type BoundNode, type BoundPredicate, type KeyNorm, joinSchema } from './bound.js';
import type { Field } from '../kernels/column.js';
import { type EstSource, Estimator, conjuncts, guessSelectivity } from './estimate.js';
import { predCols, remapPred } from './prune.js';

/** At most this many inputs are ordered by cost (3^n splits); a larger tree keeps its order. */
const MAX_INPUTS = 12;
/** The written order is kept unless the chosen one is estimated at most this share of its cost. */
const KEEP_MARGIN = 0.9;
/** The engine's shared build (physical/join/decide.ts): the build side's bytes, rows, and the other side's ratio. */
const SHARED_BYTES = 256 * 1024 * 1024,
  SHARED_ROWS = 4 * 1024 * 1024,
  SHARED_RATIO = 16;

export interface JoinOrderOptions {
  /** a join side up to this many bytes is broadcast (Settings.broadcastBytes) */
  broadcastBytes: number;
  /** 'written': keep every order as the plan wrote it */
  mode?: 'cost' | 'written';
}

/** What --explain says of one tree of inner joins: its inputs, the order as written and as chosen, the estimates. */
export interface JoinOrderNote {
  root: string;
  changed: boolean;
  lines: string[];
}

interface Edge {
  a: number;
  b: number;
  na: KeyNorm;
  nb: KeyNorm;
}
interface Conj {
  pred: BoundPredicate;
  rels: number;
}
type Tree = { rel: number } | { l: Tree; r: Tree; id?: string };

/** One tree of inner joins taken apart: its inputs, their columns numbered one after another, keys and conjuncts. */
interface Region {
  rels: BoundNode[];
  offsets: number[];
  /** of each global column, its input */
  relOf: number[];
  edges: Edge[];
  conjs: Conj[];
  joinIds: string[];
  written: Tree;
}

const isRegion = (n: BoundNode): boolean =>
  (n.kind === 'join' && n.type === 'inner' && !n.fixed) ||
  ((n.kind === 'filter' || n.kind === 'project') && isRegion(n.input));

/** The plan with each tree of inner joins in its order of least estimated cost, and what was decided. */
export async function orderJoins(
  root: BoundNode,
  opts: JoinOrderOptions,
  est: Estimator = new Estimator(),
): Promise<{ root: BoundNode; notes: JoinOrderNote[] }> {
  const notes: JoinOrderNote[] = [];
  if (opts.mode === 'written') return { root, notes };
  const out = await rewrite(root, opts, est, notes);
  return { root: out, notes };
}

async function rewrite(
  n: BoundNode,
  opts: JoinOrderOptions,
  est: Estimator,
  notes: JoinOrderNote[],
): Promise<BoundNode> {
  const rec = (c: BoundNode) => rewrite(c, opts, est, notes);
  if (isRegion(n) && countInputs(n) >= 3) return reorder(n, opts, est, notes);
  switch (n.kind) {
    case 'scan':
    case 'values':
      return n;
    case 'join':
    case 'repeat':
    case 'expand':
      break;
    case 'union':
      return { ...n, inputs: await Promise.all(n.inputs.map(rec)) };
  }
  if (n.kind === 'join') {
    const [left, right] = await Promise.all([rec(n.left), rec(n.right)]);
    return left === n.left && right === n.right ? n : { ...n, left, right };
  }
  const input = await rec(n.input);
  return input === n.input ? n : ({ ...n, input } as BoundNode);
}

function countInputs(n: BoundNode): number {
  if (n.kind === 'join' && n.type === 'inner' && !n.fixed) return countInputs(n.left) + countInputs(n.right);
  if ((n.kind === 'filter' || n.kind === 'project') && isRegion(n.input)) return countInputs(n.input);
  return 1;
}

/** Take the tree apart: its inputs (each reordered inside), keys and conjuncts over global column numbers. */
async function takeApart(
  n: BoundNode,
  reg: Region,
  opts: JoinOrderOptions,
  est: Estimator,
  notes: JoinOrderNote[],
): Promise<{ map: number[]; tree: Tree }> {
  if (!isRegion(n)) {
    const rel = reg.rels.length;
    const node = await rewrite(n, opts, est, notes);
    const off = reg.relOf.length;
    reg.rels.push(node);
    reg.offsets.push(off);
    for (let j = 0; j < node.schema.length; j++) reg.relOf.push(rel);
    return { map: node.schema.map((_, j) => off + j), tree: { rel } };
  }
  if (n.kind === 'join') {
    const l = await takeApart(n.left, reg, opts, est, notes);
    const r = await takeApart(n.right, reg, opts, est, notes);
    n.leftKeys.forEach((lk, k) =>
      reg.edges.push({ a: l.map[lk], b: r.map[n.rightKeys[k]], na: n.leftNorms[k], nb: n.rightNorms[k] }),
    );
    reg.joinIds.push(n.id);
    return { map: [...l.map, ...r.map], tree: { l: l.tree, r: r.tree, id: n.id } };
  }
  const inner = await takeApart((n as Extract<BoundNode, { kind: 'filter' | 'project' }>).input, reg, opts, est, notes);
  if (n.kind === 'project') return { map: n.indices.map((k) => inner.map[k]), tree: inner.tree };
  if (n.kind !== 'filter') throw new Error(`internal: ${n.kind} in a join tree`);
  for (const c of conjuncts(n.pred)) reg.conjs.push({ pred: remapPred(c, inner.map), rels: 0 });
  return inner;
}

const bit = (i: number) => 1 << i;
const bits = (s: number) => {
  const out: number[] = [];
  for (let i = 0; s; i++, s >>>= 1) if (s & 1) out.push(i);
  return out;
};

/** Whether a build side of `rows` rows and `bytes` bytes is expected broadcast against `probe` rows. */
export function broadcasts(rows: number, bytes: number, probe: number, broadcastBytes: number): boolean {
  if (broadcastBytes <= 0) return false;
  return bytes <= broadcastBytes || (bytes <= SHARED_BYTES && rows <= SHARED_ROWS && probe >= SHARED_RATIO * rows);
}

/** Bytes a row of a schema takes, roughly (strings 20). */
export const widthOf = (fs: Field[]) =>
  fs.reduce(
    (s, f) => s + (f.type.id === 'utf8' ? 20 : f.type.id === 'decimal' && (f.type.precision ?? 0) > 18 ? 16 : 8),
    0,
  );

async function reorder(
  root: BoundNode,
  opts: JoinOrderOptions,
  est: Estimator,
  notes: JoinOrderNote[],
): Promise<BoundNode> {
  const reg: Region = { rels: [], offsets: [], relOf: [], edges: [], conjs: [], joinIds: [], written: { rel: 0 } };
  const top = await takeApart(root, reg, opts, est, notes);
  reg.written = top.tree;
  const n = reg.rels.length;
  const writtenRoot = rebuildWritten(root, reg);
  if (n > MAX_INPUTS) return writtenRoot;
  for (const c of reg.conjs) c.rels = [...predCols(c.pred, new Set())].reduce((s, g) => s | bit(reg.relOf[g]), 0);
  // each input with the conjuncts over it alone (estimated as filtered: sampled where they read its scan)
  const local = (i: number, g: number) => g - reg.offsets[i];
  const leaves = reg.rels.map((node, i) => {
    const mine = reg.conjs.filter((c) => c.rels === bit(i) || (c.rels === 0 && i === 0));
    if (mine.length === 0) return node;
    const map = Array.from({ length: reg.relOf.length }, (_, g) => (reg.relOf[g] === i ? local(i, g) : -1));
    const pred = and(mine.map((c) => remapPred(c.pred, map)));
    return { id: `${node.id}.where`, kind: 'filter', schema: node.schema, input: node, pred } as BoundNode;
  });
  const ests = await Promise.all(leaves.map((l) => est.rows(l)));
  const widths = leaves.map((l) => widthOf(l.schema));
  // pairs of inputs joined by keys, each with its estimated selectivity
  const pairSel = new Map<number, { sel: number; sources: Set<EstSource> }>();
  for (const [key, es] of groupBy(reg.edges, (e) => pairKey(reg.relOf[e.a], reg.relOf[e.b]))) {
    const [i, j] = [reg.relOf[es[0].a], reg.relOf[es[0].b]];
    const sources = new Set<EstSource>();
    const li = leaves[i],
      lj = leaves[j];
    const rows = est.joinRows(
      li,
      es.map((e) => local(i, e.a)),
      ests[i].rows,
      lj,
      es.map((e) => local(j, e.b)),
      ests[j].rows,
      sources,
    );
    pairSel.set(key, { sel: rows / (ests[i].rows * ests[j].rows), sources });
  }
  const multi = reg.conjs.filter((c) => bits(c.rels).length >= 2);
  const full = (1 << n) - 1;
  const rowsOf = new Float64Array(full + 1);
  const widthOfSet = new Float64Array(full + 1);
  const sourcesOf: Set<EstSource>[] = [];
  for (let s = 1; s <= full; s++) {
    let r = 1,
      w = 0;
    const src = new Set<EstSource>();
    for (const i of bits(s)) {
      r *= ests[i].rows;
      w += widths[i];
      for (const x of ests[i].sources) src.add(x);
    }
    for (const [key, p] of pairSel) {
      const [i, j] = unpair(key);
      if (s & bit(i) && s & bit(j)) {
        r *= p.sel;
        for (const x of p.sources) src.add(x);
      }
    }
    for (const c of multi)
      if ((c.rels & s) === c.rels) {
        r *= guessSelectivity(c.pred, (g) => ests[reg.relOf[g]].rows);
        src.add('guessed');
      }
    rowsOf[s] = Math.max(1, r);
    widthOfSet[s] = w;
    sourcesOf[s] = src;
  }
  const connected = (a: number, b: number) => {
    for (const key of pairSel.keys()) {
      const [i, j] = unpair(key);
      if ((a & bit(i) && b & bit(j)) || (a & bit(j) && b & bit(i))) return true;
    }
    return false;
  };
  const joinCost = (a: number, b: number) => {
    const [p, q] = rowsOf[a] * widthOfSet[a] >= rowsOf[b] * widthOfSet[b] ? [a, b] : [b, a];
    const probe = rowsOf[p],
      build = rowsOf[q],
      bb = build * widthOfSet[q];
    const broadcast = broadcasts(build, bb, probe, opts.broadcastBytes);
    return rowsOf[a | b] + probe + 1.5 * build + (broadcast ? 0 : 2 * (probe + build));
  };
  // dynamic programming over subsets: the cheapest tree of each, connected joins first
  const cost = new Float64Array(full + 1).fill(Infinity);
  const split = new Int32Array(full + 1);
  for (let i = 0; i < n; i++) cost[bit(i)] = 0;
  const order = Array.from({ length: full }, (_, k) => k + 1).sort((x, y) => bits(x).length - bits(y).length);
  for (const s of order) {
    if (bits(s).length < 2) continue;
    const low = s & -s;
    for (const crossOk of [false, true]) {
      for (let a = (s - 1) & s; a > 0; a = (a - 1) & s) {
        if (!(a & low)) continue;
        const b = s ^ a;
        if (!crossOk && !connected(a, b)) continue;
        const c = cost[a] + cost[b] + joinCost(a, b);
        if (c < cost[s]) {
          cost[s] = c;
          split[s] = a;
        }
      }
      if (cost[s] < Infinity) break;
    }
  }
  const treeCost = (t: Tree): { set: number; cost: number } => {
    if ('rel' in t) return { set: bit(t.rel), cost: 0 };
    const l = treeCost(t.l),
      r = treeCost(t.r);
    return { set: l.set | r.set, cost: l.cost + r.cost + joinCost(l.set, r.set) };
  };
  const writtenCost = treeCost(reg.written).cost;
  const chosenTree = (s: number): Tree => {
    if (bits(s).length === 1) return { rel: bits(s)[0] };
    const a = split[s],
      b = s ^ a;
    // the larger side on the left (probed), the smaller built
    const [l, r] = rowsOf[a] * widthOfSet[a] >= rowsOf[b] * widthOfSet[b] ? [a, b] : [b, a];
    return { l: chosenTree(l), r: chosenTree(r) };
  };
  const chosen = chosenTree(full);
  const changed = cost[full] <= KEEP_MARGIN * writtenCost && shape(chosen) !== shape(reg.written);
  const names = reg.rels.map((r, i) => `${letter(i)} ${describeInput(r)}`);
  const lines = [
    `join order of ${rootJoinId(reg)}: ${n} inputs, estimated cost ${fmt(cost[full])} ` +
      `(as written ${fmt(writtenCost)})${changed ? ': reordered' : ': kept as written'}`,
    ...names.map((x, i) => `   ${x}: ${fmt(ests[i].rows)} rows (${[...ests[i].sources].sort().join(', ')})`),
  ];
  const result = changed ? rebuild(root, reg, leaves, chosen) : writtenRoot;
  const joinLines: string[] = [];
  const describe = (t: Tree, ids: string[]): number => {
    if ('rel' in t) return bit(t.rel);
    const l = describe(t.l, ids),
      r = describe(t.r, ids);
    const s = l | r;
    joinLines.push(
      `   ${ids.shift() ?? 'join'}: ${setText(l)} ⋈ ${setText(r)}: ${fmt(rowsOf[s])} rows ` +
        `(${[...sourcesOf[s]].sort().join(', ')})`,
    );
    return s;
  };
  if (changed) {
    lines.push(`   order before: ${shape(reg.written)}`, `   order chosen: ${shape(chosen)}`);
    describe(chosen, [...reg.joinIds].sort(byNumber));
  } else {
    lines.push(`   order: ${shape(reg.written)}`);
    describe(reg.written, idsInTree(reg.written));
  }
  notes.push({ root: root.id, changed, lines: [...lines, ...joinLines] });
  return result;
}

/** The tree as the plan wrote it, its inputs reordered inside (their own trees). */
function rebuildWritten(root: BoundNode, reg: Region): BoundNode {
  let k = 0;
  const walk = (n: BoundNode): BoundNode => {
    if (!isRegion(n)) return reg.rels[k++];
    if (n.kind === 'join') {
      const left = walk(n.left),
        right = walk(n.right);
      return left === n.left && right === n.right ? n : { ...n, left, right };
    }
    const f = n as Extract<BoundNode, { kind: 'filter' | 'project' }>;
    const input = walk(f.input);
    return input === f.input ? n : ({ ...f, input } as BoundNode);
  };
  return walk(root);
}

/** The chosen tree as bound joins, each conjunct as a filter right where its inputs are joined, projected back. */
function rebuild(root: BoundNode, reg: Region, leaves: BoundNode[], tree: Tree): BoundNode {
  const ids = [...reg.joinIds].sort(byNumber);
  const pending = reg.conjs.filter((c) => bits(c.rels).length >= 2);
  let filters = 0;
  const build = (t: Tree): { node: BoundNode; cols: number[]; set: number } => {
    if ('rel' in t) {
      const off = reg.offsets[t.rel];
      return { node: leaves[t.rel], cols: leaves[t.rel].schema.map((_, j) => off + j), set: bit(t.rel) };
    }
    const l = build(t.l),
      r = build(t.r);
    const posL = new Map(l.cols.map((g, i) => [g, i])),
      posR = new Map(r.cols.map((g, i) => [g, i]));
    const leftKeys: number[] = [],
      rightKeys: number[] = [],
      leftNorms: KeyNorm[] = [],
      rightNorms: KeyNorm[] = [];
    for (const e of reg.edges) {
      if (posL.has(e.a) && posR.has(e.b)) {
        leftKeys.push(posL.get(e.a)!);
        rightKeys.push(posR.get(e.b)!);
        leftNorms.push(e.na);
        rightNorms.push(e.nb);
      } else if (posL.has(e.b) && posR.has(e.a)) {
        leftKeys.push(posL.get(e.b)!);
        rightKeys.push(posR.get(e.a)!);
        leftNorms.push(e.nb);
        rightNorms.push(e.na);
      }
    }
    const schema = joinSchema(l.node.schema, r.node.schema);
    const set = l.set | r.set;
    const cols = [...l.cols, ...r.cols];
    let node: BoundNode = {
      id: ids.shift() ?? `${root.id}.join`,
      kind: 'join',
      type: 'inner',
      schema,
      left: l.node,
      right: r.node,
      leftKeys,
      rightKeys,
      leftNorms,
      rightNorms,
    };
    const ready = pending.filter((c) => (c.rels & set) === c.rels);
    if (ready.length) {
      for (const c of ready) pending.splice(pending.indexOf(c), 1);
      const map: number[] = [];
      cols.forEach((g, i) => {
        map[g] = i;
      });
      const pred = and(ready.map((c) => remapPred(c.pred, map)));
      node = { id: `${root.id}.where${++filters}`, kind: 'filter', schema, input: node, pred };
    }
    return { node, cols, set };
  };
  const built = build(tree);
  const pos = new Map(built.cols.map((g, i) => [g, i]));
  // the tree's own columns, in its order, with its names
  const top = (n: BoundNode): number[] => {
    if (!isRegion(n)) throw new Error('internal: join tree root');
    return topMap(n, reg);
  };
  const indices = top(root).map((g) => pos.get(g)!);
  return { id: `${root.id}.order`, kind: 'project', schema: root.schema, input: built.node, indices };
}

/** The global columns of the tree's root, in its order (the inputs numbered as takeApart numbered them). */
function topMap(root: BoundNode, reg: Region): number[] {
  let k = 0;
  const walk = (n: BoundNode): number[] => {
    if (!isRegion(n)) {
      const i = k++;
      return n.schema.map((_, j) => reg.offsets[i] + j);
    }
    if (n.kind === 'join') return [...walk(n.left), ...walk(n.right)];
    const f = n as Extract<BoundNode, { kind: 'filter' | 'project' }>;
    const m = walk(f.input);
    return f.kind === 'project' ? f.indices.map((x) => m[x]) : m;
  };
  return walk(root);
}

const and = (ps: BoundPredicate[]): BoundPredicate => (ps.length === 1 ? ps[0] : { kind: 'and', preds: ps });
const pairKey = (i: number, j: number) => (i < j ? i * 64 + j : j * 64 + i);
const unpair = (k: number): [number, number] => [Math.floor(k / 64), k % 64];
const letter = (i: number) => (i < 26 ? String.fromCharCode(65 + i) : `R${i}`);
const setText = (s: number) => bits(s).map(letter).join('');
const shape = (t: Tree): string => ('rel' in t ? letter(t.rel) : `(${shape(t.l)} ⋈ ${shape(t.r)})`);
const byNumber = (a: string, b: string) => Number(/\d+$/.exec(a)?.[0] ?? 0) - Number(/\d+$/.exec(b)?.[0] ?? 0);
const rootJoinId = (reg: Region) => [...reg.joinIds].sort(byNumber)[0];
const idsInTree = (t: Tree): string[] => {
  const out: string[] = [];
  const walk = (x: Tree) => {
    if ('rel' in x) return;
    walk(x.l);
    walk(x.r);
    if (x.id) out.push(x.id);
  };
  walk(t);
  return out;
};

function groupBy<T>(xs: T[], key: (x: T) => number): Map<number, T[]> {
  const m = new Map<number, T[]>();
  for (const x of xs) m.set(key(x), [...(m.get(key(x)) ?? []), x]);
  return m;
}

/** An input named by the table it reads (its first scan) and its top operator. */
function describeInput(n: BoundNode): string {
  const scan = firstScan(n);
  return scan ? `${scan}${n.kind === 'scan' ? '' : ` (${n.id})`}` : n.id;
}

function firstScan(n: BoundNode): string | null {
  if (n.kind === 'scan') return n.source;
  if (n.kind === 'values') return null;
  if (n.kind === 'union') return firstScan(n.inputs[0]);
  if (n.kind === 'join') return firstScan(n.left);
  return firstScan(n.input);
}

function fmt(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (x >= 1e9) return `${(x / 1e9).toFixed(1)}G`;
  if (x >= 1e6) return `${(x / 1e6).toFixed(1)}M`;
  if (x >= 1e3) return `${(x / 1e3).toFixed(1)}K`;
  return String(Math.round(x));
}
