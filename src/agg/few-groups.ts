// Group ids for one integer column of few distinct values (a dimension's
// region or a flag, as the 32- or 64-bit codes of agg/aggregate.ts
// shortCodes) in one pass, with no hash column and no hash table: each row is
// compared with the previous row's group, then with the few groups found.
// Its ids and first rows are groupRows' (first appearance, nulls one group),
// so either may serve. A broadcast side's read tasks group their rows this way
// while their code is still cold (physical/join/table-groups.ts).
import type { Column } from '../kernels/column.js';
import { int32s } from '../kernels/table.js';
import { type Groups, fillUnselected } from './groups.js';

/** Above this many groups the search per row would cost more than hashing: give up. */
export const FEW_GROUPS = 16;

/**
 * The groups of `c`'s rows, or null: not a 32- or 64-bit integer column, or more than FEW_GROUPS groups.
 * `shared`: gid in shared memory; `gid`: the array to write the ids to (on null, partly written: the
 * caller that falls back to groupRows hands it the same array, so that one is allocated, not two).
 */
export function fewGroups(
  c: Column,
  shared = false,
  gid?: Int32Array,
  rows: Int32Array | null = null,
  m = c.length,
): Groups | null {
  const w = c.type.id === 'int32' ? 1 : c.type.id === 'int64' ? 2 : 0;
  if (w === 0) return null;
  const n = c.length,
    valid = c.valid;
  const v = c.values as Int32Array | BigInt64Array;
  const words = v instanceof Int32Array ? v : new Int32Array(v.buffer, v.byteOffset, 2 * n);
  const lo = new Int32Array(FEW_GROUPS),
    hi = new Int32Array(FEW_GROUPS),
    first = new Int32Array(FEW_GROUPS);
  gid ??= int32s(n, shared);
  // a selection (`rows`, the first m): the other rows' ids are set after, to one past the last group
  if (rows !== null) gid.fill(-1);
  let nGroups = 0,
    nullGroup = -1,
    last = -1;
  for (let k = 0; k < m; k++) {
    const i = rows !== null ? rows[k] : k;
    if (valid !== null && valid[i] === 0) {
      if (nullGroup < 0) {
        if (nGroups === FEW_GROUPS) return null;
        nullGroup = nGroups++;
        first[nullGroup] = i;
      }
      gid[i] = nullGroup;
      continue;
    }
    const a = words[w * i],
      b = w === 2 ? words[2 * i + 1] : 0;
    let g = last;
    if (g < 0 || lo[g] !== a || hi[g] !== b) {
      g = -1;
      for (let k = 0; k < nGroups; k++) {
        if (k !== nullGroup && lo[k] === a && hi[k] === b) {
          g = k;
          break;
        }
      }
      if (g < 0) {
        if (nGroups === FEW_GROUPS) return null;
        g = nGroups++;
        lo[g] = a;
        hi[g] = b;
        first[g] = i;
      }
      last = g;
    }
    gid[i] = g;
  }
  if (rows !== null) fillUnselected(gid, nGroups);
  return { gid, nGroups, first: first.slice(0, nGroups) };
}
