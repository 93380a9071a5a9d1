// The worker side of a partitioned shared build (join/partitioned.ts): one task hashes a range of the built side's
// rows into the table's shared hashes and sorts the range's rows by part, or builds one part of the table
// (kernels/table-part.ts). Each writes only its own range of the shared arrays, so a retried task starts over and
// writes the same.
import { type Batch, viewBatch } from '../../kernels/column.js';
import { type Keys, buildKeys } from '../../kernels/keys.js';
import { type PartRows, buildPart, sortRange } from '../../kernels/table-part.js';
import type { TableArrays } from '../../kernels/table.js';
import type { KeyNorm } from '../../plan/bound.js';
import type { SourceKernel } from '../task.js';

/**
 * hash: rows [from, to) of `columns` (the built side's key columns, shared), range `range` of `rows`, hashed into
 * `hash` at the same rows and sorted by part (kernels/table-part.ts sortRange);
 * part: part `part` of `parts` of `table` built from its rows, its uniqueness into `unique[part]` (1: no key
 * repeated) and the rows it deferred handed back as one int32 column.
 */
export type TableBuildSource =
  | {
      kind: 'tableBuild';
      step: 'hash';
      columns: Batch;
      norms: KeyNorm[];
      from: number;
      to: number;
      range: number;
      hash: Int32Array;
      mask: number;
      parts: number;
      rows: PartRows;
    }
  | {
      kind: 'tableBuild';
      step: 'part';
      keys: Keys;
      table: TableArrays;
      part: number;
      parts: number;
      rows: PartRows;
      unique: Int32Array;
    };

export const tableBuildKernel: SourceKernel<TableBuildSource> = {
  // every array is shared and stays where it is: nothing to spill or read back
  inputs: () => [],
  withInputs: (src) => src,
  produce(src) {
    if (src.step === 'hash') {
      const { columns, norms, from, to, hash } = src;
      const cols = norms.map((_, i) => i);
      buildKeys(viewBatch(columns, from, to), cols, norms, hash.subarray(from, to));
      sortRange(hash, from, to, src.range, src.mask, src.parts, src.rows);
      return { batches: [], rows: to - from, inputBytes: 4 * (to - from) };
    }
    const b = buildPart(src.table, src.keys, src.part, src.parts, src.rows);
    src.unique[src.part] = b.unique ? 1 : 0;
    const n = b.deferred.length;
    const deferred: Batch = {
      length: n,
      columns: [{ type: { id: 'int32' }, length: n, values: b.deferred, valid: null }],
    };
    return { batches: [deferred], rows: b.rows, inputBytes: 12 * b.rows };
  },
};
