// The binary writers (output files and generated data sets): engine batches
// to Arrow, to an Arrow IPC file or through parquet-wasm to Parquet. Apart
// from io/parquet.ts, so that reading does not load Arrow JS.
import * as arrow from 'apache-arrow';
import { encodeFailure, parquetWasm } from './wasm.js';
import type { Batch, Field } from '../kernels/column.js';
import { tableToArrow } from './arrow.js';

export function arrowFileBytes(fields: Field[], batches: Batch[]): Uint8Array {
  return arrow.tableToIPC(tableToArrow(fields, batches), 'file');
}

export function writeParquetBytes(fields: Field[], batches: Batch[], rowGroupSize = 1 << 17): Uint8Array {
  const table = tableToArrow(fields, batches);
  const pw = parquetWasm();
  try {
    const t = pw.Table.fromIPCStream(arrow.tableToIPC(table, 'stream'));
    const props = new pw.WriterPropertiesBuilder()
      .setCompression(pw.Compression.SNAPPY)
      .setMaxRowGroupSize(rowGroupSize)
      .build();
    return pw.writeParquet(t, props);
  } catch (e) {
    throw encodeFailure(e);
  }
}
