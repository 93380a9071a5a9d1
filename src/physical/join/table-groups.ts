// A broadcast table's rows grouped by the columns of the aggregate fused with
// its probe, from the groups each read task found in its own rows (in
// parallel, on the pool): only one row per group and task is grouped again
// here, and each row's group id remapped. The result equals grouping the
// whole table at once (same ids, same first rows).
import { groupsOf } from '../../agg/aggregate.js';
import type { Groups } from '../../agg/groups.js';
import { type Batch, gatherBatch } from '../../kernels/column.js';
import { int32s } from '../../kernels/table.js';

/**
 * `table`: the chunks' rows concatenated in order; `chunks`: each chunk's row
 * count and its groups by `cols`. Null when the chunks' groups are too many
 * for regrouping their first rows to save work (keys nearly unique).
 */
export function mergeChunkGroups(
  table: Batch,
  chunks: { rows: number; groups: Groups }[],
  cols: number[],
): Groups | null {
  let reps = 0;
  for (const c of chunks) reps += c.groups.nGroups;
  if (reps > table.length / 4) return null;
  // the first row of each chunk's groups, as table rows: chunk order, then each chunk's first appearance
  const firsts = new Int32Array(reps);
  let k = 0,
    off = 0;
  for (const c of chunks) {
    for (let g = 0; g < c.groups.nGroups; g++) firsts[k++] = off + c.groups.first[g];
    off += c.rows;
  }
  if (off !== table.length) return null;
  const global = groupsOf(gatherBatch(table, firsts), cols);
  const gid = int32s(table.length, true);
  k = 0;
  off = 0;
  for (const c of chunks) {
    const map = global.gid.subarray(k, k + c.groups.nGroups),
      local = c.groups.gid;
    for (let i = 0; i < c.rows; i++) gid[off + i] = map[local[i]];
    k += c.groups.nGroups;
    off += c.rows;
  }
  const first = int32s(global.nGroups, true);
  for (let g = 0; g < global.nGroups; g++) first[g] = firsts[global.first[g]];
  return { nGroups: global.nGroups, gid, first };
}
