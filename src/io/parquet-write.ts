// Whole Parquet files through parquet-wasm (generated data sets; results are
// written by io/parquet-encode.ts): engine batches to Arrow, then to Parquet.
// Apart from io/parquet.ts, so that reading does not load Arrow JS.
import * as arrow from 'apache-arrow';
import type * as PW from 'parquet-wasm';
import { encodeFailure, parquetWasm } from './wasm.js';
import type { Batch, Field } from '../kernels/column.js';
import { tableToArrow } from './arrow.js';

/**
 * Snappy, row groups of at most `rowGroupSize` rows, no dictionary encoding:
 * what every file the engine writes uses. With dictionaries on, the writer
 * builds one per page of numbers (ids, amounts) only to give it up: writing
 * 1.5M rows of two int64, a double and a short string took 20.0-26.4 s
 * against 5.3-7.3 s without (one process each, paired, on a loaded 2-core
 * machine), and the file was 37% larger.
 */
function parquetWriterProperties(rowGroupSize = 1 << 17): PW.WriterProperties {
  const pw = parquetWasm();
  return new pw.WriterPropertiesBuilder()
    .setCompression(pw.Compression.SNAPPY)
    .setDictionaryEnabled(false)
    .setMaxRowGroupSize(rowGroupSize)
    .build();
}

/** A whole Parquet file in one buffer (small files: datasets, an empty result). */
export function writeParquetBytes(fields: Field[], batches: Batch[], rowGroupSize = 1 << 17): Uint8Array {
  const table = tableToArrow(fields, batches);
  const pw = parquetWasm();
  try {
    const t = pw.Table.fromIPCStream(arrow.tableToIPC(table, 'stream'));
    return pw.writeParquet(t, parquetWriterProperties(rowGroupSize));
  } catch (e) {
    throw encodeFailure(e);
  }
}
