// A broadcast probe fused with its aggregate, where the table is direct (a
// dimension's dense ids) and its keys unique: each probing row's group is
// looked up by its key in one array, narrowed to bytes when the groups allow,
// and its values aggregated in order. No row index, no pair, no second
// random read (the table's row, then that row's group id) per probing row.
import type { JoinAggregator } from '../../agg/joinagg.js';
import type { Batch } from '../../kernels/column.js';
import { PAIR_CHUNK } from '../../kernels/join.js';
import type { Keys } from '../../kernels/keys.js';
import { compactKeys, keyValue } from '../../kernels/table.js';
import type { BroadcastTable, ProbeOp } from './probe-op.js';

/** The group of every key of a direct table's span; `nGroups` where no row has the key. */
export type KeyGroups = Uint8Array | Uint16Array | Int32Array;

/**
 * The narrowest array holding the group of each key of a direct table:
 * bytes up to 255 groups, 16-bit words up to 65535 (one value is kept for
 * "no row"). `gid`: the group of each table row; null when every row is in
 * group 0 (no group columns).
 */
export function keyGroups(direct: Int32Array, gid: Int32Array | null, nGroups: number): KeyGroups {
  const n = direct.length;
  const out = nGroups <= 0xff ? new Uint8Array(n) : nGroups <= 0xffff ? new Uint16Array(n) : new Int32Array(n);
  for (let d = 0; d < n; d++) {
    const r = direct[d];
    out[d] = r < 0 ? nGroups : gid === null ? 0 : gid[r];
  }
  return out;
}

/**
 * The group of probing rows from..to, written to `out`: their key's group,
 * or `miss` for a null key, a key outside the span or one no row has.
 */
export function lookupGroups(
  kg: KeyGroups,
  none: number,
  base: number,
  probe: Keys,
  from: number,
  to: number,
  miss: number,
  out: Int32Array,
): void {
  const pw = (probe.parts[0] as { w: Int32Array }).w,
    pNull = probe.anyNull,
    size = kg.length;
  if (base >= -0x80000000 && base + size <= 0x80000000) {
    lookupInt32(kg, none, base, pw, pNull, from, to, miss, out);
    return;
  }
  for (let i = from; i < to; i++) {
    let g = miss;
    if (pNull === null || pNull[i] === 0) {
      const d = keyValue(pw, i) - base;
      if (d >= 0 && d < size) {
        const x = kg[d];
        if (x !== none) g = x;
      }
    }
    out[i - from] = g;
  }
}

/**
 * lookupGroups for a span within the 32-bit integers (a dimension's ids, the
 * common case): a key is its low word where its high word is that word's
 * sign, and no key outside 32 bits can be in the span; no float arithmetic
 * per row (about a third faster).
 */
function lookupInt32(
  kg: KeyGroups,
  none: number,
  base: number,
  pw: Int32Array,
  pNull: Uint8Array | null,
  from: number,
  to: number,
  miss: number,
  out: Int32Array,
): void {
  const size = kg.length,
    b = base | 0;
  for (let i = from; i < to; i++) {
    let g = miss;
    const lo = pw[2 * i];
    if ((pNull === null || pNull[i] === 0) && pw[2 * i + 1] === lo >> 31) {
      const d = lo - b;
      if (d >= 0 && d < size) {
        const x = kg[d];
        if (x !== none) g = x;
      }
    }
    out[i - from] = g;
  }
}

// Key groups per thread (every map task of a run probes the same table with the same groups).
const cache = new Map<string, KeyGroups>();
const GIDS = new Int32Array(PAIR_CHUNK);

/** Adds one probing batch (its keys given) into the aggregator; returns the chunks of rows handed over. */
export type KeyedAdd = (b: Batch, keys: Keys) => number;

/**
 * The keyed form of a probe into `agg` (grouped by the table's columns
 * `cols`), or null where it does not serve: a table that is not direct or
 * has a key twice, a join other than inner or left (seen from the probing
 * rows), an aggregate reading the table's rows (see JoinAggregator.rowsOnly).
 * A batch whose keys are not one 64-bit column gives 0: probe it by pairs.
 */
export function keyedProbe(
  t: BroadcastTable,
  type: ProbeOp['type'],
  agg: JoinAggregator,
  cols: number[],
): KeyedAdd | null {
  if (t.direct === null || !t.unique || (type !== 'inner' && type !== 'left') || !agg.rowsOnly()) return null;
  const { gid, nGroups } = agg.groups,
    direct = t.direct,
    base = t.base;
  const key = `${t.id}|${cols.join(',')}`;
  let kg = cache.get(key);
  if (!kg) {
    kg = keyGroups(direct, cols.length === 0 ? null : gid, nGroups);
    if (cache.size >= 4) cache.delete(cache.keys().next().value!);
    cache.set(key, kg);
  }
  const table = kg;
  // a left join keeps a row that joined nothing: in the group of the missing table row (group 0 when there is but one)
  const miss = type === 'left' ? (cols.length === 0 ? 0 : nGroups) : nGroups + 1;
  return (b, keys) => {
    if (!compactKeys(keys)) return 0;
    let chunks = 0;
    for (let from = 0; from < b.length; from += PAIR_CHUNK, chunks++) {
      const to = Math.min(b.length, from + PAIR_CHUNK);
      lookupGroups(table, nGroups, base, keys, from, to, miss, GIDS);
      agg.addRows(b, from, GIDS, to - from);
    }
    return chunks;
  };
}
