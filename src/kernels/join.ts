// The hash join kernel: build a chained table over one side, probe with the
// other, return matching row indices (-1 for the missing side of an outer
// join). Gathering the output columns is a separate step.
import type { JoinType } from '../plan/spec.js';
import { type Keys, KeyTable, keysEqual } from './keys.js';

const EMPTY = new Int32Array(0);

export interface JoinIndices { left: Int32Array; right: Int32Array; n: number }

class PairBuffer {
  a: Int32Array;
  b: Int32Array;
  n = 0;
  constructor(cap: number) { this.a = new Int32Array(Math.max(cap, 1024)); this.b = new Int32Array(this.a.length); }
  push(x: number, y: number) {
    if (this.n === this.a.length) {
      const a = new Int32Array(this.n * 2); a.set(this.a); this.a = a;
      const b = new Int32Array(this.n * 2); b.set(this.b); this.b = b;
    }
    this.a[this.n] = x;
    this.b[this.n++] = y;
  }
}

/**
 * Join rows of `left` and `right` by key. Null keys never match: outer sides
 * still emit such rows, anti keeps them. For semi and anti the right indices
 * are all -1 and only left columns are output.
 */
export function hashJoin(type: JoinType, left: Keys, right: Keys): JoinIndices {
  // Build on the right side, except for an inner join with a smaller left side.
  const swap = type === 'inner' && left.n < right.n;
  const probe = swap ? right : left;
  const build = swap ? left : right;
  const table = new KeyTable(build, true);
  const { heads, next, mask } = table;
  const out = new PairBuffer(probe.n);
  const probeOuter = type === 'left' || type === 'full';
  const buildOuter = type === 'right' || type === 'full';
  const buildMatched = buildOuter ? new Uint8Array(build.n) : null;
  const ph = probe.hash, bh = build.hash, pNull = probe.anyNull;

  // One 64-bit key column: compare its words inline.
  const single = probe.parts.length === 1 && probe.parts[0].kind === 'w' && build.parts[0].kind === 'w';
  const pw = single ? (probe.parts[0] as { w: Int32Array }).w : EMPTY;
  const bw = single ? (build.parts[0] as { w: Int32Array }).w : EMPTY;
  for (let i = 0; i < probe.n; i++) {
    let matched = false;
    if (pNull === null || pNull[i] === 0) {
      const h = ph[i];
      const lo = single ? pw[2 * i] : 0, hi = single ? pw[2 * i + 1] : 0;
      for (let j = heads[h & mask]; j >= 0; j = next[j]) {
        if (bh[j] !== h) continue;
        if (single ? bw[2 * j] !== lo || bw[2 * j + 1] !== hi : !keysEqual(probe, i, build, j)) continue;
        matched = true;
        if (type === 'semi' || type === 'anti') break;
        out.push(i, j);
        if (buildMatched) buildMatched[j] = 1;
      }
    }
    if (type === 'semi') { if (matched) out.push(i, -1); }
    else if (type === 'anti') { if (!matched) out.push(i, -1); }
    else if (!matched && probeOuter) out.push(i, -1);
  }
  if (buildMatched) {
    for (let j = 0; j < build.n; j++) if (!buildMatched[j]) out.push(-1, j);
  }
  return swap ? { left: out.b, right: out.a, n: out.n } : { left: out.a, right: out.b, n: out.n };
}
