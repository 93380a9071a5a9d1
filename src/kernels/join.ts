// The hash join kernel: build a chained table over one side, probe with the
// other, return matching row indices (-1 for the missing side of an outer
// join). Gathering the output columns is a separate step.
//
// `JoinProbe` is the streaming form: built once, probed block by block, with
// the matches handed out in bounded chunks through a reused buffer, so a
// reduce task never concatenates or materializes its probe side.
import type { JoinType } from '../plan/spec.js';
import { type Keys, KeyTable, keysEqual } from './keys.js';

const EMPTY = new Int32Array(0);

export interface JoinIndices { left: Int32Array; right: Int32Array; n: number }

/** Called with (probe rows, build rows, count); the arrays are reused after the call returns. */
export type EmitPairs = (probe: Int32Array, build: Int32Array, n: number) => void;

/** Pairs handed out per call of an EmitPairs. */
export const PAIR_CHUNK = 1 << 16;

// The chunk buffers, shared by every JoinProbe of the thread: probing is
// synchronous and an EmitPairs does not keep them.
const PA = new Int32Array(PAIR_CHUNK), PB = new Int32Array(PAIR_CHUNK);

/**
 * A build side and its table, probed by any number of blocks. Probe rows play
 * the left side of `type`, build rows the right: for right and full joins the
 * build rows no probe row matched come out of `finish`.
 */
export class JoinProbe {
  readonly table: KeyTable;
  private readonly matched: Uint8Array | null;
  private readonly pa = PA;
  private readonly pb = PB;

  /** `table`: a table built before over `build` (a broadcast side, built once for every task) */
  constructor(readonly type: JoinType, readonly build: Keys, table?: KeyTable) {
    this.table = table ?? new KeyTable(build, true);
    this.matched = type === 'right' || type === 'full' ? new Uint8Array(build.n) : null;
  }

  probe(probe: Keys, emit: EmitPairs): void {
    const { type, build, matched: buildMatched, pa, pb } = this;
    const { heads, next, mask } = this.table;
    const probeOuter = type === 'left' || type === 'full';
    const semi = type === 'semi', anti = type === 'anti';
    const ph = probe.hash, bh = build.hash, pNull = probe.anyNull;
    // One 64-bit key column: compare its words inline.
    const single = probe.parts.length === 1 && probe.parts[0].kind === 'w' && build.parts[0].kind === 'w';
    const pw = single ? (probe.parts[0] as { w: Int32Array }).w : EMPTY;
    const bw = single ? (build.parts[0] as { w: Int32Array }).w : EMPTY;
    if (single && type === 'inner' && pNull === null) {
      probeInnerWords(this.table, ph, pw, bh, bw, probe.n, pa, pb, emit);
      return;
    }
    let m = 0;
    for (let i = 0; i < probe.n; i++) {
      let matched = false;
      if (pNull === null || pNull[i] === 0) {
        const h = ph[i];
        const lo = single ? pw[2 * i] : 0, hi = single ? pw[2 * i + 1] : 0;
        for (let j = heads[h & mask]; j >= 0; j = next[j]) {
          if (bh[j] !== h) continue;
          if (single ? bw[2 * j] !== lo || bw[2 * j + 1] !== hi : !keysEqual(probe, i, build, j)) continue;
          matched = true;
          if (semi || anti) break;
          if (m === PAIR_CHUNK) { emit(pa, pb, m); m = 0; }
          pa[m] = i; pb[m++] = j;
          if (buildMatched !== null) buildMatched[j] = 1;
        }
      }
      if (semi ? matched : anti ? !matched : !matched && probeOuter) {
        if (m === PAIR_CHUNK) { emit(pa, pb, m); m = 0; }
        pa[m] = i; pb[m++] = -1;
      }
    }
    if (m > 0) emit(pa, pb, m);
  }

  /** Right and full joins: the build rows that no probe row matched, paired with -1. */
  finish(emit: EmitPairs): void {
    const bm = this.matched;
    if (bm === null) return;
    const { pa, pb } = this;
    let m = 0;
    for (let j = 0; j < bm.length; j++) {
      if (bm[j]) continue;
      if (m === PAIR_CHUNK) { emit(pa, pb, m); m = 0; }
      pa[m] = -1; pb[m++] = j;
    }
    if (m > 0) emit(pa, pb, m);
  }
}

/** The inner join of one 64-bit key column without null keys: the hot loop alone. */
function probeInnerWords(
  t: KeyTable, ph: Int32Array, pw: Int32Array, bh: Int32Array, bw: Int32Array, n: number,
  pa: Int32Array, pb: Int32Array, emit: EmitPairs,
): void {
  const { heads, next, mask } = t;
  let m = 0;
  for (let i = 0; i < n; i++) {
    const h = ph[i], lo = pw[2 * i], hi = pw[2 * i + 1];
    for (let j = heads[h & mask]; j >= 0; j = next[j]) {
      if (bh[j] !== h || bw[2 * j] !== lo || bw[2 * j + 1] !== hi) continue;
      if (m === PAIR_CHUNK) { emit(pa, pb, m); m = 0; }
      pa[m] = i; pb[m++] = j;
    }
  }
  if (m > 0) emit(pa, pb, m);
}

/** Which side a join builds its table on: the right, except for an inner join with a smaller left side. */
export const buildsLeft = (type: JoinType, leftRows: number, rightRows: number) => type === 'inner' && leftRows < rightRows;

/**
 * Join rows of `left` and `right` by key. Null keys never match: outer sides
 * still emit such rows, anti keeps them. For semi and anti the right indices
 * are all -1 and only left columns are output.
 */
export function hashJoin(type: JoinType, left: Keys, right: Keys): JoinIndices {
  const swap = buildsLeft(type, left.n, right.n);
  const j = new JoinProbe(type, swap ? left : right);
  let a = new Int32Array(Math.max(swap ? right.n : left.n, 1024)), b = new Int32Array(a.length), n = 0;
  const push: EmitPairs = (p, q, m) => {
    if (n + m > a.length) {
      const cap = Math.max(2 * a.length, n + m);
      const a2 = new Int32Array(cap); a2.set(a.subarray(0, n)); a = a2;
      const b2 = new Int32Array(cap); b2.set(b.subarray(0, n)); b = b2;
    }
    a.set(p.subarray(0, m), n);
    b.set(q.subarray(0, m), n);
    n += m;
  };
  j.probe(swap ? right : left, push);
  j.finish(push);
  return swap ? { left: b, right: a, n } : { left: a, right: b, n };
}
