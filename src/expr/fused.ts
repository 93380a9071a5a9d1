// Exact arithmetic fused into one loop: a tree of + - * over exact columns
// (integers, decimals) and literals, such as TPC-H's
// `l_extendedprice * (1 - l_discount) * (1 + l_tax)`, becomes one generated
// function that reads each column's words once and computes every row in
// float64, where scaled integers below 2^53 are exact. A batch in which some
// value or intermediate result leaves that range (or the result type's
// digits) is computed again by the general kernels, which work in bigint
// where needed and raise the overflow error.
import { type Batch, type Column, type DataType, allocValues, isInteger, lanes } from '../kernels/column.js';
import { type BoundExpr, scaleOf } from './types.js';
import { andValid } from './vector.js';

const SAFE = 9007199254740991;
const OPS = new Set(['+', '-', '*']);

type Leaf = { col: number; type: DataType };
type Run = (cols: Column[], n: number, out: Int32Array, valid: Uint8Array | null, limit: number) => boolean;

/**
 * A kernel for `e` when it is exact + - * over columns and literals (falling back to `general` per batch), else null.
 * `narrow`: a 128-bit decimal result is written in 64-bit lanes, typed decimal(18, s), where the batch's values
 * fit (they always do where the fused loop succeeds: within ±2^53); the fallback's columns keep the type of `e`.
 */
export function fusedArith(
  e: BoundExpr,
  general: () => (b: Batch) => Column,
  narrow = false,
): ((b: Batch) => Column) | null {
  if (e.k !== 'fn' || !OPS.has(e.fn) || !exact(e.type)) return null;
  const leaves: Leaf[] = [];
  const lines: string[] = [];
  let temps = 0;
  /** JS expression for a node's value at its own scale, or null when the tree does not fuse. */
  const emit = (x: BoundExpr): string | null => {
    if (x.k === 'lit') {
      if (!exact(x.type) || (typeof x.value !== 'bigint' && typeof x.value !== 'number')) return null;
      const v = Number(x.value);
      return Number.isSafeInteger(v) ? `(${v})` : null;
    }
    if (x.k === 'col') {
      if (!exact(x.type)) return null;
      let k = leaves.findIndex((l) => l.col === x.col);
      if (k < 0) {
        k = leaves.length;
        leaves.push({ col: x.col, type: x.type });
      }
      return `x${k}`;
    }
    if (x.k !== 'fn' || !OPS.has(x.fn) || !exact(x.type)) return null;
    const [a, b] = x.args,
      ea = emit(a),
      eb = emit(b);
    if (ea === null || eb === null) return null;
    const so = scaleOf(x.type);
    // + and -: both operands at the result's scale; *: the scales add up
    const fa = x.fn === '*' ? 1 : 10 ** (so - scaleOf(a.type)),
      fb = x.fn === '*' ? 1 : 10 ** (so - scaleOf(b.type));
    if (!Number.isSafeInteger(fa) || !Number.isSafeInteger(fb)) return null;
    const t = `t${temps++}`;
    lines.push(`const ${t} = ${fa === 1 ? ea : `${ea} * ${fa}`} ${x.fn} ${fb === 1 ? eb : `${eb} * ${fb}`};`);
    return t;
  };
  const top = emit(e);
  if (top === null || leaves.length === 0) return null;
  const reads = leaves.map((l, k) => read(l.type, k));
  const checks = Array.from({ length: temps }, (_, k) => `t${k} <= ${SAFE} && t${k} >= -${SAFE}`);
  const narrowed = narrow && lanes(e.type) === 2 && scaleOf(e.type) <= 18,
    wide = lanes(e.type) === 2 && !narrowed;
  const type: DataType = narrowed ? { id: 'decimal', precision: 18, scale: e.type.scale } : e.type;
  const src = `
    ${leaves.map((l, k) => `const v${k} = ${view(l.type, k)};`).join('\n')}
    for (let i = 0; i < n; i++) {
      if (valid !== null && valid[i] === 0) continue;
      ${reads.join('\n')}
      ${lines.join('\n')}
      if (!(${checks.join(' && ')} && ${top} <= limit && ${top} >= -limit)) return false;
      const hi = Math.floor(${top} / 4294967296), p = ${wide ? 4 : 2} * i;
      out[p] = (${top} - hi * 4294967296) | 0; out[p + 1] = hi;
      ${wide ? 'out[p + 2] = out[p + 3] = hi < 0 ? -1 : 0;' : ''}
    }
    return true;`;
  const run = compiled(src);
  // a decimal result beyond its digits is the general kernels' overflow error
  const limit = e.type.id === 'decimal' && e.type.precision! < 16 ? 10 ** e.type.precision! - 1 : SAFE;
  let fallback: ((b: Batch) => Column) | null = null;
  return (b) => {
    const cols = leaves.map((l) => b.columns[l.col]);
    const n = b.length,
      values = allocValues(type, n),
      valid = andValid(cols, n);
    if (run(cols, n, new Int32Array(values.buffer, values.byteOffset, values.length * 2), valid, limit))
      return { type, length: n, values, valid };
    return (fallback ??= general())(b);
  };
}

/**
 * One function per source text, shared by every task of the thread: a function made anew for each
 * task starts cold (no type feedback, no optimized code) and spent its first batches in the interpreter.
 */
const RUNS = new Map<string, Run>();
function compiled(src: string): Run {
  let run = RUNS.get(src);
  if (!run) RUNS.set(src, (run = new Function('cols', 'n', 'out', 'valid', 'limit', src) as Run));
  return run;
}

const exact = (t: DataType) => isInteger(t) || t.id === 'decimal';

/** The typed array a leaf is read through: 32-bit words for 64- and 128-bit values, the values themselves otherwise. */
function view(t: DataType, k: number): string {
  const words = t.id === 'int64' || t.id === 'uint64' || t.id === 'decimal';
  return words
    ? `new Int32Array(cols[${k}].values.buffer, cols[${k}].values.byteOffset, ` +
        `${t.id === 'decimal' && lanes(t) === 2 ? 4 : 2} * n)`
    : `cols[${k}].values`;
}

/** Row i of leaf k as a float64, NaN beyond 2^53 (which fails the checks, so the batch falls back). */
function read(t: DataType, k: number): string {
  if (!(t.id === 'int64' || t.id === 'uint64' || t.id === 'decimal')) return `const x${k} = v${k}[i];`;
  if (t.id === 'uint64')
    return (
      `const h${k} = v${k}[2 * i + 1] >>> 0, x${k} = h${k} < 0x200000 ? h${k} * 4294967296 + (v${k}[2 * ` +
      `i] >>> 0) : NaN;`
    );
  const w = lanes(t) === 2 ? 4 : 2;
  const upper = w === 4 ? ` && v${k}[4 * i + 2] === h${k} >> 31 && v${k}[4 * i + 3] === h${k} >> 31` : '';
  return (
    `const h${k} = v${k}[${w} * i + 1], x${k} = h${k} < 0x200000 && h${k} >= -0x200000${upper} ? h${k} * ` +
    `4294967296 + (v${k}[${w} * i] >>> 0) : NaN;`
  );
}
