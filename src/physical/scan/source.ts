// The scan kernel: a map split's row groups of one Parquet file read into batches (io/parquet.ts), in place
// (columns as views into the module's memory, released after the sink) when the task allows; a CSV chunk (io/csv.ts).
import { readRowGroups, readRowGroupsInPlace } from '../../io/parquet.js';
import { readCsvRange } from '../../io/csv.js';
import { batchesBytes, rowCount } from '../../kernels/column.js';
import type { SourceKernel, TaskSource } from '../task.js';
import { produceMasked } from './masks.js';
import { scanMetrics } from './metrics.js';

type ScanSource = Extract<TaskSource, { kind: 'scan' }>;

export const scanKernel: SourceKernel<ScanSource> = {
  inputs: () => [],
  withInputs: (src) => src,
  async produce(src, { inPlace }) {
    if (src.csv) {
      const batches = readCsvRange({ path: src.path, ...src.csv }, src.fields, src.limit);
      return { batches, rows: rowCount(batches), inputBytes: src.csv.end - src.csv.start };
    }
    if (src.masks?.length) return produceMasked(src, inPlace);
    if (inPlace) {
      const { batches, release, viewsIntoModule, direct } = await readRowGroupsInPlace(
        src.path,
        src.rowGroups,
        src.fields,
        src.wholeFile,
        src,
      );
      return {
        batches,
        rows: rowCount(batches),
        release,
        metrics: scanMetrics({ read: direct ? 'direct' : viewsIntoModule ? 'in-place' : 'ipc' }),
        inputBytes: batchesBytes(batches),
      };
    }
    const batches = await readRowGroups(src.path, src.rowGroups, src.fields, src.wholeFile, src);
    return {
      batches,
      rows: rowCount(batches),
      metrics: scanMetrics({ read: 'ipc' }),
      inputBytes: batchesBytes(batches),
    };
  },
};
