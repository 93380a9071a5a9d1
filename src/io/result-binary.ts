// The binary result encoders (loaded by io/result-file.ts only for these
// formats: Arrow JS and the Parquet writer cost start-up time): Arrow IPC
// through apache-arrow's file writer, Parquet through parquet-wasm's streaming writer.
import * as arrow from 'apache-arrow';
import type * as pw from 'parquet-wasm';
import { ExecutionError } from '../errors.js';
import type { Batch, Field } from '../kernels/column.js';
import { arrowSchema, batchToArrow } from './arrow.js';
import { parquetWriterProperties, writeParquetBytes } from './parquet-write.js';
import type { Encoder, Out } from './result-file.js';
import { encodeFailure, parquetWasm } from './wasm.js';

export function binaryEncoder(format: 'parquet' | 'arrow', fields: Field[], out: Out): Encoder {
  return format === 'parquet' ? new ParquetEncoder(fields, out) : new ArrowEncoder(fields, out);
}

/** Arrow IPC file: apache-arrow's file writer, its byte queue replaced by a direct write. */
class ArrowEncoder implements Encoder {
  private writer = new arrow.RecordBatchFileWriter();
  constructor(private readonly fields: Field[], out: Out) {
    const sink = new (class extends arrow.AsyncByteQueue {
      override write(v: any) { const u = v instanceof Uint8Array ? v : new Uint8Array(v.buffer, v.byteOffset, v.byteLength); if (u.byteLength) out(u); }
    })();
    this.writer.reset(sink, arrowSchema(fields));
  }
  write(b: Batch) { this.writer.write(batchToArrow(this.fields, b)); }
  finish() { this.writer.finish(); }
  cancel() { /* nothing held beyond the batch being written */ }
}

/**
 * Parquet through parquet-wasm's streaming writer: batches go in one at a time
 * (the writer pulls the next only when it has taken the last), row groups
 * come out as they fill, and each is written to the file at once.
 */
class ParquetEncoder implements Encoder {
  private ctl!: ReadableStreamDefaultController<pw.RecordBatch>;
  private onPull: (() => void) | null = null;
  private drained: Promise<void> | null = null;
  private failure: unknown = null;

  constructor(private readonly fields: Field[], private readonly out: Out) {}

  private start(first: pw.RecordBatch) {
    const input = new ReadableStream<pw.RecordBatch>({
      start: (c) => { this.ctl = c; },
      pull: () => { const f = this.onPull; this.onPull = null; f?.(); },
    });
    this.ctl.enqueue(first);
    // the writer reads the first batch (for its schema) before it returns the byte stream
    this.drained = parquetWasm().transformParquetStream(input, parquetWriterProperties()).then(async (bytes) => {
      const reader = (bytes as ReadableStream<Uint8Array>).getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        this.out(value);
      }
    }).catch((e) => {
      this.failure = e instanceof ExecutionError ? e : encodeFailure(e);
      const f = this.onPull; this.onPull = null; f?.();
    });
  }

  /** Resolves once the writer has taken every queued batch (or failed). */
  private room(): Promise<void> {
    if (this.failure) throw this.failure;
    if ((this.ctl.desiredSize ?? 1) > 0) return Promise.resolve();
    return new Promise((resolve) => { this.onPull = resolve; });
  }

  async write(b: Batch) {
    if (b.length === 0) return;
    const t = parquetWasm().Table.fromIPCStream(arrow.tableToIPC(new arrow.Table([batchToArrow(this.fields, b)]), 'stream'));
    const batches = t.recordBatches();
    t.free();
    for (const rb of batches) {
      if (!this.drained) this.start(rb);
      else { await this.room(); this.ctl.enqueue(rb); }
    }
    await this.room();
    if (this.failure) throw this.failure;
  }

  async finish() {
    if (!this.drained) {
      // no rows: the streaming writer needs a first batch for its schema
      this.out(writeParquetBytes(this.fields, []));
      return;
    }
    this.ctl.close();
    await this.drained;
    if (this.failure) throw this.failure;
  }

  cancel() {
    if (this.drained) try { this.ctl.error(new Error('query failed')); } catch { /* closed */ }
  }
}
