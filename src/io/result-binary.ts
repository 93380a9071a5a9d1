// The binary result encoders (loaded by io/result-file.ts only for these
// formats: Arrow JS and the Parquet encoder cost start-up time): Arrow IPC
// through apache-arrow's file writer, Parquet through our own encoder.
import * as arrow from 'apache-arrow';
import type { Batch, Field } from '../kernels/column.js';
import { arrowSchema, batchToArrow } from './arrow.js';
import { type EncodedRowGroup, ParquetFileWriter } from './parquet-encode.js';
import type { Encoder, Out } from './encoder.js';

export function binaryEncoder(format: 'parquet' | 'arrow', fields: Field[], out: Out): Encoder {
  return format === 'parquet' ? new ParquetEncoder(fields, out) : new ArrowEncoder(fields, out);
}

/** Arrow IPC file: apache-arrow's file writer, its byte queue replaced by a direct write. */
class ArrowEncoder implements Encoder {
  private writer = new arrow.RecordBatchFileWriter();
  constructor(
    private readonly fields: Field[],
    out: Out,
  ) {
    const sink = new (class extends arrow.AsyncByteQueue {
      override write(v: any) {
        const u = v instanceof Uint8Array ? v : new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
        if (u.byteLength) out(u);
      }
    })();
    this.writer.reset(sink, arrowSchema(fields));
  }
  write(b: Batch) {
    this.writer.write(batchToArrow(this.fields, b));
  }
  finish() {
    this.writer.finish();
  }
  cancel() {
    /* nothing held beyond the batch being written */
  }
}

/**
 * Parquet through our own encoder (io/parquet-encode.ts): each batch's pages
 * are encoded and compressed as it comes, a row group written once full. The
 * Arrow schema goes in the footer as parquet-rs writes it (ARROW:schema), so
 * that Arrow readers get back the exact types (time zones, large strings,
 * timestamps in seconds).
 */
class ParquetEncoder implements Encoder {
  private readonly writer: ParquetFileWriter;
  constructor(fields: Field[], out: Out) {
    this.writer = new ParquetFileWriter(fields, out, { kv: [['ARROW:schema', arrowSchemaBase64(fields)]] });
  }
  write(b: Batch) {
    this.writer.write(b);
  }
  writeEncoded(g: EncodedRowGroup) {
    this.writer.appendEncoded(g);
  }
  finish() {
    this.writer.finish();
  }
  cancel() {
    /* nothing held beyond the row group being built */
  }
}

/** The Arrow schema as an IPC message, base64: the stream of an empty table without its end marker. */
function arrowSchemaBase64(fields: Field[]): string {
  const stream = arrow.tableToIPC(new arrow.Table(arrowSchema(fields)), 'stream');
  return Buffer.from(stream.subarray(0, stream.length - 8)).toString('base64');
}
