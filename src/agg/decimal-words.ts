// Exact decimal sums per group fed through row indices (the fused join
// aggregate's matches): each value's 32-bit words summed in float64, as
// kernels/decimal.ts decimalSums does over a whole column, but with a carry
// only where a word grows near 2^53, so any number of rows stays exact.
import type { Column } from '../kernels/column.js';
import { lanes } from '../kernels/column.js';

const TWO32 = 4294967296;
/** A word's sum carried once beyond this: a chunk adds below 2^16 x 2^32 more, staying below 2^53. */
const CARRY_AT = 2 ** 52;

export class DecimalWords {
  // sum = a3 * 2^96 + a2 * 2^64 + a1 * 2^32 + a0, every word an integer in float64
  private readonly a0: Float64Array;
  private readonly a1: Float64Array;
  private readonly a2: Float64Array;
  private readonly a3: Float64Array;

  constructor(nGroups: number) {
    this.a0 = new Float64Array(nGroups);
    this.a1 = new Float64Array(nGroups);
    this.a2 = new Float64Array(nGroups);
    this.a3 = new Float64Array(nGroups);
  }

  /**
   * Add the values of `c` at rows idx[k] (< 0: missing, skipped) to groups
   * gids[k], counting them in `cnt`; n at most 2^16 per call.
   */
  add(c: Column, gids: Int32Array, idx: Int32Array, n: number, cnt: Float64Array): void {
    const { a0, a1, a2, a3 } = this,
      valid = c.valid;
    if (lanes(c.type) === 1) {
      const w = new Int32Array(c.values.buffer, c.values.byteOffset, 2 * c.length);
      for (let k = 0; k < n; k++) {
        const j = idx[k];
        if (j < 0 || (valid !== null && valid[j] === 0)) continue;
        const g = gids[k];
        a0[g] += w[2 * j] >>> 0;
        a1[g] += w[2 * j + 1];
        cnt[g]++;
      }
    } else {
      const w = new Int32Array(c.values.buffer, c.values.byteOffset, 4 * c.length);
      for (let k = 0; k < n; k++) {
        const j = idx[k];
        if (j < 0 || (valid !== null && valid[j] === 0)) continue;
        const g = gids[k],
          p = 4 * j,
          h = w[p + 1],
          sign = h >> 31;
        a0[g] += w[p] >>> 0;
        // a value that fits in 64 bits: its upper words only repeat the sign
        if (w[p + 2] === sign && w[p + 3] === sign) a1[g] += h;
        else {
          a1[g] += h >>> 0;
          a2[g] += w[p + 2] >>> 0;
          a3[g] += w[p + 3];
        }
        cnt[g]++;
      }
    }
    for (let k = 0; k < n; k++) {
      const g = gids[k];
      if (a0[g] >= CARRY_AT || Math.abs(a1[g]) >= CARRY_AT || Math.abs(a2[g]) >= CARRY_AT) this.carry(g);
    }
  }

  private carry(g: number) {
    const { a0, a1, a2, a3 } = this;
    let c = Math.floor(a0[g] / TWO32);
    a0[g] -= c * TWO32;
    a1[g] += c;
    c = Math.floor(a1[g] / TWO32);
    a1[g] -= c * TWO32;
    a2[g] += c;
    c = Math.floor(a2[g] / TWO32);
    a2[g] -= c * TWO32;
    a3[g] += c;
  }

  /** The exact sum of group g, as a scaled integer. */
  sum(g: number): bigint {
    return (BigInt(this.a3[g]) << 96n) + (BigInt(this.a2[g]) << 64n) + (BigInt(this.a1[g]) << 32n) + BigInt(this.a0[g]);
  }
}
