// Group ids for one or two string columns of one-byte values (flags such as
// TPC-H's l_returnflag and l_linestatus) in one pass: each row's values are a
// code below 258 (0: the empty string, 1 + the byte, 257: null), a pair of
// codes an index into a direct table of group ids. No codes are packed first,
// no hash is computed. Ids and first rows are groupRows' (first appearance,
// nulls a value of their own), so either may serve; null as soon as a value
// is longer than one byte.
import type { Column } from '../kernels/column.js';
import { int32s } from '../kernels/table.js';
import { type Groups, fillUnselected } from './groups.js';

/** Codes a column's row can take: the empty string, the 256 bytes, null. */
const CODES = 258;
const NULL_CODE = 257;

/** The table of group ids by code pair (-1: none yet), reset after each use (only the entries set). */
const table = new Int32Array(CODES * CODES).fill(-1);
/** Scratch of the thread: each group's first row, and the code it holds (to reset the table). */
const firstRows = new Int32Array(CODES * CODES),
  used = new Int32Array(CODES * CODES);

/** Whether `c` is a string column this grouping may take (its values' lengths are checked while grouping). */
const flags = (c: Column) => c.type.id === 'utf8' && c.offsets !== undefined;

/**
 * The groups of the rows of one or two string columns whose values are at
 * most one byte long, or null (another column type, more columns, a longer
 * value: `gid` is then partly written, as fewGroups leaves it). `rows`: group
 * only the first m of these; the others get the id nGroups.
 */
export function codeGroups(
  cols: Column[],
  shared = false,
  gid?: Int32Array,
  rows: Int32Array | null = null,
  m = cols[0]?.length ?? 0,
): Groups | null {
  if (cols.length < 1 || cols.length > 2 || !cols.every(flags)) return null;
  const a = cols[0],
    b = cols.length === 2 ? cols[1] : null;
  const n = a.length;
  // a first value longer than a byte (most string columns): nothing allocated
  const r0 = rows !== null ? rows[0] : 0;
  if (m > 0 && cols.some((c) => codeOf(c.offsets!, c.values as Uint8Array, c.valid, r0) < 0)) return null;
  gid ??= int32s(n, shared);
  if (rows !== null) gid.fill(-1);
  const first = firstRows;
  const nGroups = b
    ? pairs(
        a.offsets!,
        a.values as Uint8Array,
        a.valid,
        b.offsets!,
        b.values as Uint8Array,
        b.valid,
        rows,
        m,
        gid,
        first,
        used,
      )
    : singles(a.offsets!, a.values as Uint8Array, a.valid, rows, m, gid, first, used);
  reset(nGroups < 0 ? -nGroups - 1 : nGroups);
  if (nGroups < 0) return null;
  if (rows !== null) fillUnselected(gid, nGroups);
  return { gid, nGroups, first: first.slice(0, nGroups) };
}

/** Clears the table entries of the `count` codes used. */
function reset(count: number): void {
  for (let k = 0; k < count; k++) table[used[k]] = -1;
}

/** A row's code: 0 for the empty string, 1 + its byte, NULL_CODE for null, -1 when longer than a byte. */
function codeOf(o: Int32Array, v: Uint8Array, valid: Uint8Array | null, i: number): number {
  if (valid !== null && valid[i] === 0) return NULL_CODE;
  const s = o[i],
    len = o[i + 1] - s;
  return len === 1 ? v[s] + 1 : len === 0 ? 0 : -1;
}

// The two loops below return the number of groups, or -(groups so far) - 1 on a value longer than a byte
// (every table entry they set is in `used`, to be reset).

function pairs(
  oa: Int32Array,
  va: Uint8Array,
  wa: Uint8Array | null,
  ob: Int32Array,
  vb: Uint8Array,
  wb: Uint8Array | null,
  rows: Int32Array | null,
  m: number,
  gid: Int32Array,
  first: Int32Array,
  used: Int32Array,
): number {
  let nGroups = 0;
  for (let k = 0; k < m; k++) {
    const i = rows !== null ? rows[k] : k;
    const x = codeOf(oa, va, wa, i),
      y = codeOf(ob, vb, wb, i);
    if (x < 0 || y < 0) return -nGroups - 1;
    const c = x * CODES + y;
    let g = table[c];
    if (g < 0) {
      g = table[c] = nGroups;
      first[nGroups] = i;
      used[nGroups++] = c;
    }
    gid[i] = g;
  }
  return nGroups;
}

function singles(
  o: Int32Array,
  v: Uint8Array,
  valid: Uint8Array | null,
  rows: Int32Array | null,
  m: number,
  gid: Int32Array,
  first: Int32Array,
  used: Int32Array,
): number {
  let nGroups = 0;
  for (let k = 0; k < m; k++) {
    const i = rows !== null ? rows[k] : k;
    const c = codeOf(o, v, valid, i);
    if (c < 0) return -nGroups - 1;
    let g = table[c];
    if (g < 0) {
      g = table[c] = nGroups;
      first[nGroups] = i;
      used[nGroups++] = c;
    }
    gid[i] = g;
  }
  return nGroups;
}
