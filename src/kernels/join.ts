// The hash join kernel: build a chained table over one side, probe with the
// other, return matching row indices (-1 for the missing side of an outer
// join). Gathering the output columns is a separate step.
//
// `JoinProbe` is the streaming form: built once, probed block by block, with
// the matches handed out in bounded chunks through a reused buffer, so a
// reduce task never concatenates or materializes its probe side.
import type { JoinType } from '../plan/spec.js';
import { type Keys, keysEqual } from './keys.js';
import { findRowsBits } from './key-bits.js';
import { KeyTable, PROBE_ROUND, compactKeys, findDirect, findRows } from './table.js';

export interface JoinIndices {
  left: Int32Array;
  right: Int32Array;
  n: number;
}

/** Called with (probe rows, build rows, count); the arrays are reused after the call returns. */
export type EmitPairs = (probe: Int32Array, build: Int32Array, n: number) => void;

/** Pairs handed out per call of an EmitPairs. */
export const PAIR_CHUNK = 1 << 16;

// The chunk buffers, shared by every JoinProbe of the thread: probing is
// synchronous and an EmitPairs does not keep them.
const PA = new Int32Array(PAIR_CHUNK),
  PB = new Int32Array(PAIR_CHUNK);
/** The first build row of each probe row of a round (compact tables). */
const FIRST = new Int32Array(PROBE_ROUND);

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
  constructor(
    readonly type: JoinType,
    readonly build: Keys,
    table?: KeyTable,
  ) {
    this.table = table ?? new KeyTable(build, true);
    this.matched = type === 'right' || type === 'full' ? new Uint8Array(build.n) : null;
  }

  probe(probe: Keys, emit: EmitPairs): void {
    // The probing loops return their last, partial chunk instead of emitting
    // it after the loop: see groupIdsOfRows in agg/joinagg.ts for why.
    const m =
      (this.table.slots !== null || this.table.direct !== null) && compactKeys(probe)
        ? this.probeCompact(probe, emit)
        : this.probeHashed(probe, emit);
    if (m > 0) emit(this.pa, this.pb, m);
  }

  /**
   * The general table: rows found by hash, keys compared part by part; returns the pairs of the last chunk, not
   * emitted.
   */
  private probeHashed(probe: Keys, emit: EmitPairs): number {
    const { type, build, matched: buildMatched, pa, pb } = this;
    const { heads, next, mask } = this.table;
    const probeOuter = type === 'left' || type === 'full';
    const semi = type === 'semi',
      anti = type === 'anti';
    const ph = probe.hash,
      bh = build.hash,
      pNull = probe.anyNull;
    let m = 0;
    for (let i = 0; i < probe.n; i++) {
      let matched = false;
      if (pNull === null || pNull[i] === 0) {
        const h = ph[i];
        for (let j = heads[h & mask]; j >= 0; j = next[j]) {
          if (bh[j] !== h || !keysEqual(probe, i, build, j)) continue;
          matched = true;
          if (semi || anti) break;
          if (m === PAIR_CHUNK) {
            emit(pa, pb, m);
            m = 0;
          }
          pa[m] = i;
          pb[m++] = j;
          if (buildMatched !== null) buildMatched[j] = 1;
        }
      }
      if (semi ? matched : anti ? !matched : !matched && probeOuter) {
        if (m === PAIR_CHUNK) {
          emit(pa, pb, m);
          m = 0;
        }
        pa[m] = i;
        pb[m++] = -1;
      }
    }
    return m;
  }

  /**
   * A compact or direct table (one 64-bit key column): rows found a round at
   * a time, then their pairs written by roundPairs, which stops where the
   * chunk is full (handed out here) and resumes; returns the pairs of the
   * last chunk, not emitted. The pair loop is a function of its own, so that
   * a new `emit` or a path not yet taken (an outer row, a chain) recompiles
   * it alone, not this function with the table lookups inlined (TPC-H: 10-15
   * compilations of probeCompact a query, about 4 ms each).
   */
  private probeCompact(probe: Keys, emit: EmitPairs): number {
    const { type, matched: buildMatched, pa, pb } = this;
    const { slots, next, mask, direct, base, unique, bits } = this.table;
    const mode = type === 'semi' ? SEMI : type === 'anti' ? ANTI : type === 'left' || type === 'full' ? OUTER : INNER;
    const st = RESUME;
    let m = 0;
    for (let r0 = 0; r0 < probe.n; r0 += PROBE_ROUND) {
      const r1 = Math.min(probe.n, r0 + PROBE_ROUND);
      if (direct !== null) findDirect(direct, base, probe, r0, r1, FIRST);
      else if (bits !== null) findRowsBits(slots!, mask, probe, r0, r1, FIRST, bits);
      else findRows(slots!, mask, probe, r0, r1, FIRST);
      st[0] = r0;
      st[1] = FRESH;
      m = roundPairs(FIRST, r0, r1, next, unique, mode, buildMatched, pa, pb, m, st);
      while (st[0] < r1) {
        emit(pa, pb, m);
        m = roundPairs(FIRST, r0, r1, next, unique, mode, buildMatched, pa, pb, 0, st);
      }
    }
    return m;
  }

  /** Right and full joins: the build rows that no probe row matched, paired with -1. */
  finish(emit: EmitPairs): void {
    const bm = this.matched;
    if (bm === null) return;
    const { pa, pb } = this;
    let m = 0;
    for (let j = 0; j < bm.length; j++) {
      if (bm[j]) continue;
      if (m === PAIR_CHUNK) {
        emit(pa, pb, m);
        m = 0;
      }
      pa[m] = -1;
      pb[m++] = j;
    }
    if (m > 0) emit(pa, pb, m);
  }
}

// probeCompact's join types, as roundPairs takes them
const INNER = 0,
  OUTER = 1,
  SEMI = 2,
  ANTI = 3;
/** roundPairs' resume point: the probe row, and where in its key's chain (FRESH: the row not begun). */
const RESUME = new Int32Array(2);
const FRESH = -2;

/**
 * The pairs of probe rows st[0]..r1 of a round (first[i - r0]: the first
 * build row of row i's key, -1 none; later rows follow `next`) written from
 * pa/pb[m] on. Stops before a pair that would pass PAIR_CHUNK, with st set
 * to resume there; else st[0] = r1. Returns the pairs written.
 */
function roundPairs(
  first: Int32Array,
  r0: number,
  r1: number,
  next: Int32Array,
  unique: boolean,
  mode: number,
  buildMatched: Uint8Array | null,
  pa: Int32Array,
  pb: Int32Array,
  m0: number,
  st: Int32Array,
): number {
  let m = m0,
    i = st[0],
    j = st[1];
  for (; i < r1; i++, j = FRESH) {
    if (j === FRESH) j = first[i - r0];
    if (mode === SEMI || mode === ANTI || j < 0) {
      // one pair with -1, or none
      if (mode === SEMI ? j >= 0 : j < 0 && mode !== INNER) {
        if (m === PAIR_CHUNK) break;
        pa[m] = i;
        pb[m++] = -1;
      }
      continue;
    }
    if (unique) {
      // no chain to follow (its one load per pair would miss the cache)
      if (m === PAIR_CHUNK) break;
      pa[m] = i;
      pb[m++] = j;
      if (buildMatched !== null) buildMatched[j] = 1;
      continue;
    }
    for (; j >= 0 && m < PAIR_CHUNK; j = next[j]) {
      pa[m] = i;
      pb[m++] = j;
      if (buildMatched !== null) buildMatched[j] = 1;
    }
    if (j >= 0) break; // the chunk is full inside the chain
  }
  st[0] = i;
  st[1] = i < r1 ? j : FRESH;
  return m;
}

/** Which side a join builds its table on: the right, except for an inner join with a smaller left side. */
export const buildsLeft = (type: JoinType, leftRows: number, rightRows: number) =>
  type === 'inner' && leftRows < rightRows;

/**
 * Join rows of `left` and `right` by key. Null keys never match: outer sides
 * still emit such rows, anti keeps them. For semi and anti the right indices
 * are all -1 and only left columns are output.
 */
export function hashJoin(type: JoinType, left: Keys, right: Keys): JoinIndices {
  const swap = buildsLeft(type, left.n, right.n);
  const j = new JoinProbe(type, swap ? left : right);
  let a = new Int32Array(Math.max(swap ? right.n : left.n, 1024)),
    b = new Int32Array(a.length),
    n = 0;
  const push: EmitPairs = (p, q, m) => {
    if (n + m > a.length) {
      const cap = Math.max(2 * a.length, n + m);
      const a2 = new Int32Array(cap);
      a2.set(a.subarray(0, n));
      a = a2;
      const b2 = new Int32Array(cap);
      b2.set(b.subarray(0, n));
      b = b2;
    }
    a.set(p.subarray(0, m), n);
    b.set(q.subarray(0, m), n);
    n += m;
  };
  j.probe(swap ? right : left, push);
  j.finish(push);
  return swap ? { left: b, right: a, n } : { left: a, right: b, n };
}
