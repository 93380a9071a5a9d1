// The range test's loop over signed 64-bit lanes (expr/select.ts rangeConst):
// decimals such as TPC-H q06's l_discount and l_quantity, compared as float64
// where their values lie within ±2^53, in a function of its own (held inline
// with the bigint path beside it, the loop cost several times more a row),
// and its 32-bit sibling; both without a branch on a row's outcome.

const TWO32 = 4294967296;

/** Where inRange64 stopped: the selection's length, or the position of the first value beyond ±2^53. */
export const stop = { at: 0 };

/**
 * The selected rows idx[0, n) with lo <= x <= hi (outside when `neg`), nulls never, into `out` (which may be
 * `idx` itself: a row is written at or before where it was read); returns how many, up to `stop.at`.
 */
export function inRange64(
  w: Int32Array,
  valid: Uint8Array | null,
  lo: number,
  hi: number,
  neg: boolean,
  idx: Int32Array,
  n: number,
  out: Int32Array,
): number {
  let m = 0,
    k = 0;
  const flip = neg ? 1 : 0;
  for (; k < n; k++) {
    const i = idx[k],
      h = w[2 * i + 1];
    if (h >= 0x200000 || h < -0x200000) break;
    const x = h * TWO32 + (w[2 * i] >>> 0);
    // without a branch on the outcome (a filter keeping about half the rows mispredicted every other row:
    // 4-5x slower measured alone); `out` has room for every row
    const keep = (+(x >= lo) & +(x <= hi)) ^ flip;
    out[m] = i;
    m += valid === null ? keep : keep & valid[i];
  }
  stop.at = k;
  return m;
}

/** inRange64's test over 8-, 16- or 32-bit values (and dates), read as numbers. */
export function inRange32(
  v: Int32Array,
  valid: Uint8Array | null,
  lo: number,
  hi: number,
  neg: boolean,
  idx: Int32Array,
  n: number,
  out: Int32Array,
): number {
  let m = 0;
  const flip = neg ? 1 : 0;
  for (let k = 0; k < n; k++) {
    const i = idx[k],
      x = v[i];
    const keep = (+(x >= lo) & +(x <= hi)) ^ flip;
    out[m] = i;
    m += valid === null ? keep : keep & valid[i];
  }
  return m;
}
