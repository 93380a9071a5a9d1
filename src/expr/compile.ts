// Compiling a bound expression once into a tree of batch kernels: each node
// becomes a function from a batch to a column, built when a task starts, so
// evaluation is a loop over typed arrays per node and per batch, never a
// walk over the plan's JSON per row.
import type { Batch, Column, DataType } from '../kernels/column.js';
import { arith, unary } from './arith.js';
import { castColumn } from './cast.js';
import { compare, inList, logic } from './compare.js';
import { dateAdd, dateDiff, datePart } from './dates.js';
import { exprCols } from './columns.js';
import { foldConstants } from './fold.js';
import { fusedArith } from './fused.js';
import { lengthOf, like, likeConstant, stringFn, stringTest } from './text.js';
import type { BoundExpr } from './types.js';
import { boolColumn, choose, constColumn, scalarAt, tri } from './vector.js';

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

function compileCase(e: Extract<BoundExpr, { k: 'case' }>): Kernel {
  const whens = e.whens.map(compileNode),
    thens = e.thens.map(compileNode),
    els = e.else && compileNode(e.else);
  return (b) => {
    const n = b.length,
      which = new Int32Array(n).fill(-1),
      open = new Uint8Array(n).fill(1);
    whens.forEach((w, k) => {
      const t = tri(w(b));
      for (let i = 0; i < n; i++)
        if (open[i] && t[i] === 1) {
          which[i] = k;
          open[i] = 0;
        }
    });
    if (els) for (let i = 0; i < n; i++) if (open[i]) which[i] = thens.length;
    const cols = thens.map((t) => t(b));
    if (els) cols.push(els(b));
    return choose(e.type, cols, which);
  };
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
      return coalesceKernel(args, type);
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

/** The first non-null argument of each row. */
const coalesceKernel =
  (args: Kernel[], type: DataType): Kernel =>
  (b) => {
    const cols = args.map((a) => a(b)),
      n = b.length,
      which = new Int32Array(n).fill(-1);
    for (let k = cols.length - 1; k >= 0; k--) {
      const v = cols[k].valid;
      for (let i = 0; i < n; i++) if (v === null || v[i]) which[i] = k;
    }
    return choose(type, cols, which);
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
