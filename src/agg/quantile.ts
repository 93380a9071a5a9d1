// Holistic aggregates: median, quantile_cont and quantile_disc. They have no
// mergeable partial state (agg/functions.ts `state: null`): every row of a
// group meets in one batch (aggregateBatch), and each group's values are
// sorted there. The positions are DuckDB's: quantile_cont interpolates at
// (n - 1) * q between the two values around it (decimals: the lower value
// plus the difference times the fraction, truncated to the type's scale);
// quantile_disc takes the value at max(1, n - floor(n - q * n)) - 1.
import { type Column, type DataType, decimalAt, gather, isFloat, isInteger } from '../kernels/column.js';
import { decimalColumn } from '../kernels/decimal.js';
import { valueComparator } from '../kernels/sort.js';
import type { Groups } from './groups.js';

const TWO32 = 4294967296;

/** Each group's non-null rows, group after group: rows[start[k] .. start[k + 1]) are group k's, in row order. */
function rowsByGroup(c: Column, g: Groups): { rows: Int32Array; start: Int32Array } {
  const n = c.length,
    valid = c.valid,
    gid = g.gid,
    G = g.nGroups;
  const start = new Int32Array(G + 1);
  for (let i = 0; i < n; i++) if (valid === null || valid[i]) start[gid[i] + 1]++;
  for (let k = 0; k < G; k++) start[k + 1] += start[k];
  const at = start.slice(0, G),
    rows = new Int32Array(start[G]);
  for (let i = 0; i < n; i++) if (valid === null || valid[i]) rows[at[gid[i]]++] = i;
  return { rows, start };
}

/** A numeric column's values at `rows` as float64 (64-bit integers rounded to the nearest double once). */
function floatsAt(c: Column, rows: Int32Array): Float64Array {
  const out = new Float64Array(rows.length),
    v = c.values;
  if (v instanceof BigInt64Array || v instanceof BigUint64Array) {
    const w = new Int32Array(v.buffer, v.byteOffset, 2 * c.length),
      unsigned = v instanceof BigUint64Array;
    for (let k = 0; k < rows.length; k++) {
      const i = rows[k];
      out[k] = (unsigned ? w[2 * i + 1] >>> 0 : w[2 * i + 1]) * TWO32 + (w[2 * i] >>> 0);
    }
  } else {
    const x = v as Exclude<typeof v, BigInt64Array | BigUint64Array>;
    for (let k = 0; k < rows.length; k++) out[k] = x[rows[k]];
  }
  return out;
}

/** The discrete position (0-based) of quantile q among n sorted values (DuckDB's). */
const discreteAt = (n: number, q: number) => Math.max(1, n - Math.floor(n - q * n)) - 1;

/**
 * quantile_cont(q) of each group's non-null values: float64 for integers and floats, the input's type for decimals;
 * null for a group without a value.
 */
export function quantileCont(c: Column, g: Groups, q: number): Column {
  const { rows, start } = rowsByGroup(c, g);
  const G = g.nGroups;
  const valid = new Uint8Array(G);
  if (c.type.id === 'decimal') {
    sortGroups(c, rows, start);
    const vals: (bigint | null)[] = new Array(G).fill(null);
    for (let k = 0; k < G; k++) {
      const s = start[k],
        n = start[k + 1] - s;
      if (n === 0) continue;
      const rn = (n - 1) * q,
        lo = Math.floor(rn),
        hi = Math.ceil(rn);
      const a = decimalAt(c, rows[s + lo]);
      if (lo === hi) vals[k] = a;
      else {
        const d = decimalAt(c, rows[s + hi]) - a;
        vals[k] = a + BigInt(Math.trunc(Number(d) * (rn - lo)));
      }
    }
    return decimalColumn(vals, c.type, 'quantile');
  }
  const v = floatsAt(c, rows);
  const out = new Float64Array(G);
  for (let k = 0; k < G; k++) {
    const s = start[k],
      e = start[k + 1],
      n = e - s;
    if (n === 0) continue;
    valid[k] = 1;
    const x = v.subarray(s, e).sort(); // numeric order, NaN last (DuckDB's: NaN above every number)
    const rn = (n - 1) * q,
      lo = Math.floor(rn),
      hi = Math.ceil(rn);
    out[k] = lo === hi ? x[lo] : x[lo] + (x[hi] - x[lo]) * (rn - lo);
  }
  return { type: { id: 'float64' }, length: G, values: out, valid: valid.every((x) => x === 1) ? null : valid };
}

/** quantile_disc(q) of each group's non-null values, of the input's type; null for a group without a value. */
export function quantileDisc(c: Column, g: Groups, q: number): Column {
  const { rows, start } = rowsByGroup(c, g);
  sortGroups(c, rows, start);
  const G = g.nGroups;
  const pick = new Int32Array(G).fill(-1);
  for (let k = 0; k < G; k++) {
    const n = start[k + 1] - start[k];
    if (n > 0) pick[k] = rows[start[k] + discreteAt(n, q)];
  }
  return gather(c, pick, G);
}

/** Each group's rows sorted by value (the order of min and max: NaN above every number). */
function sortGroups(c: Column, rows: Int32Array, start: Int32Array): void {
  const cmp = valueComparator(c);
  for (let k = 0; k + 1 < start.length; k++) {
    if (start[k + 1] - start[k] > 1) rows.subarray(start[k], start[k + 1]).sort(cmp);
  }
}

/** The result type of quantile_cont over `t`, or null where it does not apply (not a number). */
export function contType(t: DataType): DataType | null {
  if (t.id === 'decimal') return t;
  if (isInteger(t) || isFloat(t)) return { id: 'float64' };
  return null;
}
