// Compiling a bound expression once into a tree of batch kernels: each node
// becomes a function from a batch to a column, built when a task starts, so
// evaluation is a loop over typed arrays per node and per batch, never a
// walk over the plan's JSON per row.
import { type Batch, type Column, type DataType, gather } from '../kernels/column.js';
import { arith, unary } from './arith.js';
import { castColumn } from './cast.js';
import { compare, inList, logic } from './compare.js';
import { dateAdd, dateDiff, datePart } from './dates.js';
import { exprCols } from './columns.js';
import { foldConstants } from './fold.js';
import { fusedArith } from './fused.js';
import { lengthOf, like, likeConstant, stringFn, stringTest } from './text.js';
import type { BoundExpr } from './types.js';
import { boolColumn, choose, constColumn, pickAt, scalarAt, tri } from './vector.js';

export type Kernel = (b: Batch) => Column;

const ARITH = new Set(['+', '-', '*', '/', '%']);
const CMPS = new Set(['=', '!=', '<', '<=', '>', '>=']);

/** The kernel of an expression, its constant subexpressions computed once (expr/fold.ts). */
export function compileExpr(e: BoundExpr): Kernel {
  return compileNode(foldConstants(e, (x, b) => compileNode(x)(b)));
}

/**
 * compileExpr for a column that only the combiner's sums read: a fused 128-bit decimal product comes in
 * 64-bit lanes where its values fit (expr/fused.ts `narrow`, agg/narrow.ts).
 */
export function compileNarrow(e: BoundExpr): Kernel {
  const f = foldConstants(e, (x, b) => compileNode(x)(b));
  return (f.k === 'fn' && fusedArith(f, () => compileFn(f), true)) || compileNode(f);
}

function compileNode(e: BoundExpr): Kernel {
  switch (e.k) {
    case 'col':
      return (b) => b.columns[e.col];
    case 'lit':
      return (b) => constColumn(e.value, e.type, b.length);
    case 'cast': {
      const arg = compileNode(e.arg);
      return (b) => castColumn(arg(b), e.type, e.what);
    }
    case 'case':
      return compileCase(e);
    case 'fn':
      return fusedArith(e, () => compileFn(e)) ?? compileFn(e);
  }
}

/**
 * CASE computes each WHEN over the rows no earlier WHEN took, and each THEN (or the ELSE) over the rows that take it
 * only: a cast or a division guarded by a WHEN raises nothing for the rows it does not reach (SQL, DuckDB).
 */
function compileCase(e: Extract<BoundExpr, { k: 'case' }>): Kernel {
  const one = whenThen(e);
  if (one) return one;
  const whens = e.whens.map(onRows),
    thens = e.thens.map(onRows),
    branches = e.else ? [...thens, onRows(e.else)] : thens;
  return (b) => {
    const rows = new Rows(b.length);
    whens.forEach((w, k) => {
      if (rows.open > 0) rows.take(k, (sel) => isTrue(w(b, sel)), false);
    });
    if (e.else && rows.open > 0) rows.take(thens.length, null, false);
    const cols: Column[] = [];
    for (let k = 0; k < branches.length; k++) {
      const s = rows.taken[k];
      if (s === undefined || s.n === 0) continue;
      if (s.n === b.length) return branches[k](b, null); // every row takes this branch
      cols[k] = branches[k](b, s);
    }
    return pickAt(e.type, cols, rows.which, rows.at);
  };
}

/** coalesce: argument k computed only over the rows every earlier argument left null. */
function coalesceKernel(args: BoundExpr[], type: DataType): Kernel {
  const ks = args.map(onRows);
  return (b) => {
    const rows = new Rows(b.length),
      cols: Column[] = [];
    ks.forEach((a, k) => {
      if (rows.open > 0) rows.take(k, (sel) => validOf((cols[k] = a(b, sel))), true);
    });
    if (rows.taken[0]?.n === b.length) return cols[0];
    return pickAt(type, cols, rows.which, rows.at);
  };
}

/**
 * and / or: each argument computed only over the rows the earlier ones left undecided (for and: not false; for or:
 * not true), as SQL's short circuit does.
 */
function logicKernel(fn: string, args: BoundExpr[]): Kernel {
  const ks = args.map(onRows),
    dominant = fn === 'and' ? 0 : 1;
  return (b) => {
    const n = b.length,
      out = new Uint8Array(n).fill(1 - dominant);
    let idx = identityOf(n),
      m = n;
    for (const a of ks) {
      if (m === 0) break;
      const t = tri(a(b, m === n ? null : { idx, n: m })),
        next = new Int32Array(m);
      let r = 0;
      for (let k = 0; k < m; k++) {
        const i = idx[k];
        if (t[k] === dominant) out[i] = dominant;
        else {
          if (t[k] === 2) out[i] = 2;
          next[r++] = i;
        }
      }
      idx = next;
      m = r;
    }
    return boolColumn(out);
  };
}

interface Sel {
  idx: Int32Array;
  n: number;
}

function identityOf(n: number): Int32Array {
  const idx = new Int32Array(n);
  for (let i = 0; i < n; i++) idx[i] = i;
  return idx;
}

/** An expression's kernel over some rows of a batch (all when `sel` is null): the columns it reads gathered first. */
type RowKernel = (b: Batch, sel: Sel | null) => Column;

function onRows(e: BoundExpr): RowKernel {
  const k = compileNode(e),
    cols = [...exprCols(e, new Set())];
  return (b, sel) => {
    if (sel === null) return k(b);
    const columns = b.columns.slice();
    for (const c of cols) columns[c] = gather(b.columns[c], sel.idx, sel.n);
    return k({ length: sel.n, columns });
  };
}

/**
 * CASE WHEN p THEN x END with x a column or a literal (an aggregate's FILTER, plan/siblings.ts): x read at every row
 * raises nothing, so the result is x itself, null where p is not true: no rows picked, no values copied.
 */
function whenThen(e: Extract<BoundExpr, { k: 'case' }>): Kernel | null {
  const x = e.thens[0];
  if (e.whens.length !== 1 || e.else !== null || (x.k !== 'col' && x.k !== 'lit') || !sameType(x.type, e.type))
    return null;
  const when = compileNode(e.whens[0]),
    then = compileNode(x);
  return (b) => {
    const t = isTrue(when(b));
    const c = then(b);
    const v = c.valid;
    if (v !== null) for (let j = 0; j < t.length; j++) t[j] &= v[j];
    return { ...c, type: e.type, valid: t };
  };
}

const sameType = (a: DataType, b: DataType) => JSON.stringify(a) === JSON.stringify(b);

/** 1 where a bool column is true, 0 where false or null. */
function isTrue(c: Column): Uint8Array {
  const t = tri(c);
  for (let j = 0; j < t.length; j++) t[j] = t[j] === 1 ? 1 : 0;
  return t;
}

/** 1 where a column is not null. */
function validOf(c: Column): Uint8Array {
  return c.valid === null ? new Uint8Array(c.length).fill(1) : c.valid.slice(0, c.length);
}

/**
 * Which branch (case) or argument (coalesce) each row takes, and where its value sits in that branch's column:
 * the rows still open are a selection that each step narrows.
 */
class Rows {
  readonly which: Int32Array;
  readonly at: Int32Array;
  /** per branch, the rows it took */
  readonly taken: Sel[] = [];
  private idx: Int32Array;
  open: number;
  constructor(private readonly n: number) {
    this.which = new Int32Array(n).fill(-1);
    this.at = new Int32Array(n);
    this.idx = identityOf(n);
    this.open = n;
  }
  /**
   * The open rows where `test` (given their selection, null for all rows) is 1 take branch k (all of them when
   * `test` is null). A row's value sits at its place among the taken rows, or (`atOpen`, coalesce: the argument was
   * computed over every open row) among the open ones.
   */
  take(k: number, test: ((sel: Sel | null) => Uint8Array) | null, atOpen: boolean): void {
    const m = this.open,
      idx = this.idx,
      hit = test ? test(m === this.n ? null : { idx, n: m }) : null,
      taken = new Int32Array(m),
      rest = new Int32Array(m);
    let t = 0,
      r = 0;
    for (let j = 0; j < m; j++) {
      const i = idx[j];
      if (hit === null || hit[j] === 1) {
        this.which[i] = k;
        this.at[i] = atOpen ? j : t;
        taken[t++] = i;
      } else rest[r++] = i;
    }
    this.taken[k] = { idx: taken, n: t };
    this.idx = rest;
    this.open = r;
  }
}

function compileFn(e: Extract<BoundExpr, { k: 'fn' }>): Kernel {
  const args = e.args.map(compileNode);
  const { fn, type, what } = e;
  const bool =
    (f: (cols: Column[]) => Uint8Array): Kernel =>
    (b) =>
      boolColumn(f(args.map((a) => a(b))));
  if (ARITH.has(fn)) return (b) => arith(fn, args[0](b), args[1](b), type, what);
  if (CMPS.has(fn)) return bool(([x, y]) => compare(fn, x, y));
  switch (fn) {
    case 'neg':
    case 'abs':
    case 'floor':
    case 'ceil':
      return (b) => unary(fn, args[0](b), type, what);
    case 'round': {
      const d = Number((e.args[1] as { value: bigint }).value);
      return (b) => unary('round', args[0](b), type, what, d);
    }
    case 'and':
    case 'or':
      return logicKernel(fn, e.args);
    case 'not':
      return bool((cols) => logic(fn, cols.map(tri)));
    case 'is_null':
      return isNullKernel(args[0]);
    case '$in':
      return bool(([x, ...vs]) => inList(x, vs));
    case '$like': {
      if (exprCols(e.args[1], new Set()).size > 0) return bool(([s, p]) => like(s, p));
      // a pattern that reads no column (a literal, a parameter, a concat of them): computed and compiled once
      const m = likeConstant(scalarAt(args[1]({ length: 1, columns: [] }), 0) as string | null);
      return (b) => boolColumn(m(args[0](b)));
    }
    case 'coalesce':
      return coalesceKernel(e.args, type);
    case 'nullif':
      return nullifKernel(args, type);
    case 'concat':
    case 'substr':
    case 'lower':
    case 'upper':
    case 'trim':
      return (b) =>
        stringFn(
          fn,
          args.map((a) => a(b)),
        );
    case 'length':
      return (b) => lengthOf(args[0](b));
    case 'starts_with':
    case 'ends_with':
    case 'contains':
      return bool(([s, t]) => stringTest(fn, s, t));
    case 'year':
    case 'month':
    case 'day':
      return (b) => datePart(fn, args[0](b));
    case 'date_add': {
      const unit = (e.args[2] as { value: string }).value;
      return (b) => dateAdd(args[0](b), args[1](b), unit);
    }
    case 'date_diff':
      return (b) => dateDiff(args[0](b), args[1](b));
  }
  throw new Error(`internal: no kernel for "${fn}"`);
}

const isNullKernel =
  (arg: Kernel): Kernel =>
  (b) => {
    const c = arg(b),
      out = new Uint8Array(b.length);
    for (let i = 0; i < b.length; i++) out[i] = c.valid !== null && c.valid[i] === 0 ? 1 : 0;
    return { type: { id: 'bool' }, length: b.length, values: out, valid: null };
  };

/** The first argument, null where it equals the second. */
const nullifKernel =
  (args: Kernel[], type: DataType): Kernel =>
  (b) => {
    const x = args[0](b),
      eq = compare('=', x, args[1](b)),
      which = new Int32Array(b.length);
    for (let i = 0; i < b.length; i++) which[i] = eq[i] === 1 ? -1 : 0;
    return choose(type, [x], which);
  };
