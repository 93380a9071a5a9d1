// Column pruning of the emitted plan: each scan lists only the columns some
// operator above it reads, and projections drop what nobody reads, so that
// the plan reads as a hand-written one does ("only needed columns scanned").
import type { Predicate, QueryNode } from '../plan/spec.js';

/** Column names any expression or predicate object reads. */
function reads(x: unknown, out: Set<string>): void {
  if (!x || typeof x !== 'object') return;
  if (Array.isArray(x)) {
    for (const v of x) reads(v, out);
    return;
  }
  const o = x as Record<string, unknown>;
  if (typeof o.column === 'string') out.add(o.column);
  for (const [k, v] of Object.entries(o)) if (k !== 'column') reads(v, out);
}

/** A predicate or expression with its column names mapped. */
function renamed(x: unknown, map: Map<string, string>): unknown {
  if (!x || typeof x !== 'object') return x;
  if (Array.isArray(x)) return x.map((v) => renamed(v, map));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(x))
    out[k] = k === 'column' && typeof v === 'string' ? (map.get(v) ?? v) : renamed(v, map);
  return out;
}

/** The output column names of a node. */
function outputOf(n: QueryNode): string[] {
  switch (n.op) {
    case 'scan':
      return n.columns ?? [];
    case 'project':
      return n.columns.map((c) => (typeof c === 'string' ? c : c.name));
    case 'aggregate':
      return [...(n.groupBy ?? [...new Set(n.groupingSets?.flat())]), ...n.aggregates.map((a) => a.as)];
    case 'join':
      return n.type === 'semi' || n.type === 'anti' ? outputOf(n.left) : [...outputOf(n.left), ...outputOf(n.right)];
    case 'window':
      return [...outputOf(n.input), ...n.functions.map((f) => f.as)];
    case 'union':
      return outputOf(n.inputs[0]);
    case 'intersect':
    case 'except':
      return outputOf(n.left);
    case 'values':
      return n.columns;
    default:
      return outputOf(n.input);
  }
}

/** The node with only the columns `need` (and what it reads itself) kept below it. */
export function prune(n: QueryNode, need: Set<string>): QueryNode {
  switch (n.op) {
    case 'scan': {
      const cols = (n.columns ?? []).filter((c) => need.has(c));
      return { ...n, columns: cols.length ? cols : (n.columns ?? []).slice(0, 1) };
    }
    case 'filter': {
      const input = n.input;
      if (input.op === 'project' && input.columns.every((c) => typeof c === 'string' || 'column' in c)) {
        // below a renaming projection (a table's second scan): the filter goes next to its scan
        const back = new Map(input.columns.map((c) => (typeof c === 'string' ? [c, c] : [c.name, c.column])));
        const where = renamed(n.where, back) as Predicate;
        return prune({ ...input, input: { op: 'filter', input: input.input, where } }, need);
      }
      const below = new Set(need);
      reads(n.where as Predicate, below);
      return { ...n, input: prune(n.input, below) };
    }
    case 'project': {
      let cols = n.columns.filter((c) => need.has(typeof c === 'string' ? c : c.name));
      if (cols.length === 0) cols = n.columns.slice(0, 1);
      const below = new Set<string>();
      for (const c of cols) {
        if (typeof c === 'string') below.add(c);
        else if ('column' in c) below.add(c.column);
        else reads(c.expr, below);
      }
      const input = prune(n.input, below);
      // a projection that only passes its input's columns through, in order, is left out
      const inCols = outputOf(input);
      const same = cols.length === inCols.length && cols.every((c, i) => c === inCols[i]);
      if (same) return input;
      return { ...n, columns: cols, input };
    }
    case 'join': {
      const l = new Set(outputOf(n.left)),
        r = new Set(outputOf(n.right));
      const ln = new Set([...need].filter((c) => l.has(c))),
        rn = new Set([...need].filter((c) => r.has(c)));
      for (const [a, b] of n.on) {
        ln.add(a);
        rn.add(b);
      }
      return { ...n, left: prune(n.left, ln), right: prune(n.right, rn) };
    }
    case 'aggregate': {
      const below = new Set([...(n.groupBy ?? []), ...(n.groupingSets?.flat() ?? [])]);
      for (const a of n.aggregates) reads(a, below);
      return { ...n, input: prune(n.input, below) };
    }
    case 'sort': {
      const below = new Set(need);
      for (const b of n.by) below.add(b.column);
      return { ...n, input: prune(n.input, below) };
    }
    case 'limit':
      return { ...n, input: prune(n.input, need) };
    case 'window': {
      const below = new Set(need);
      for (const c of n.partitionBy) below.add(c);
      for (const b of n.orderBy ?? []) below.add(b.column);
      for (const f of n.functions) reads(f, below);
      return { ...n, input: prune(n.input, below) };
    }
    // set operations read every column of their inputs (by position)
    case 'union':
      return { ...n, inputs: n.inputs.map((c) => prune(c, new Set(outputOf(c)))) };
    case 'intersect':
    case 'except':
      return {
        ...n,
        left: prune(n.left, new Set(outputOf(n.left))),
        right: prune(n.right, new Set(outputOf(n.right))),
      };
    case 'values':
      return n;
  }
}
