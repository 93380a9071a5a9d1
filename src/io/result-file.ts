// Writing a result file batch by batch as the final stage produces it:
// Parquet (one row group at a time through parquet-wasm's streaming writer,
// whose WebAssembly memory tops out at 4 GB), Arrow IPC, CSV and JSON lines.
// Always into a temporary file beside the target, renamed when complete, so
// that a failed or interrupted query leaves nothing behind.
import fs from 'node:fs';
import path from 'node:path';
import * as arrow from 'apache-arrow';
import type * as pw from 'parquet-wasm';
import { ExecutionError } from '../errors.js';
import { registerCleanup } from '../exec/cleanup.js';
import { type Batch, type Field, sliceBatch } from '../kernels/column.js';
import type { OutputFormat } from '../plan/spec.js';
import { arrowSchema, batchToArrow } from './arrow.js';
import { csvHeader, csvLines, jsonlLines } from './output.js';
import { parquetWriterProperties, writeParquetBytes } from './parquet.js';
import { trackTemp, untrackTemp } from './temp.js';
import { encodeFailure, parquetWasm } from './wasm.js';

/** Rows per piece handed to an encoder: bounds the memory one conversion takes. */
const PIECE_ROWS = 1 << 17;

/** A format's encoder: gets the batches in order, writes bytes with `out`. */
interface Encoder {
  write(b: Batch): Promise<void> | void;
  finish(): Promise<void> | void;
  /** stop early (the query failed): release what the encoder holds */
  cancel(): void;
}

type Out = (bytes: Uint8Array | string) => void;

export class ResultFile {
  readonly tmp: string;
  rows = 0;
  private fd: number;
  private enc: Encoder;
  /** writes run one after another; the first failure fails every later one */
  private chain: Promise<void> = Promise.resolve();
  /** removes the temporary file (also on exit or a signal while the query runs) */
  private readonly removeTmp: () => void;

  constructor(readonly file: string, format: OutputFormat, fields: Field[]) {
    this.tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${Date.now()}.tmp`);
    const tmp = this.tmp;
    try {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      trackTemp(tmp); // the CLI's signal handler removes it (io/temp.ts)
      this.fd = fs.openSync(tmp, 'w');
    } catch (e) {
      untrackTemp(tmp);
      throw new ExecutionError(`cannot write ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    this.removeTmp = registerCleanup(() => { fs.rmSync(tmp, { force: true }); untrackTemp(tmp); });
    const out: Out = (b) => writeAll(this.fd, typeof b === 'string' ? Buffer.from(b) : b, file);
    this.enc = format === 'parquet' ? new ParquetEncoder(fields, out)
      : format === 'arrow' ? new ArrowEncoder(fields, out)
      : format === 'csv' ? textEncoder(out, csvLines, csvHeader(fields)) : textEncoder(out, (b) => jsonlLines(fields, b));
  }

  /** Queue batches for writing, in order; resolves when they are written. */
  write(batches: Batch[]): Promise<void> {
    this.chain = this.chain.then(async () => {
      for (const b of batches) {
        for (let at = 0; at < b.length; at += PIECE_ROWS) {
          const piece = b.length <= PIECE_ROWS ? b : sliceBatch(b, at, at + PIECE_ROWS);
          await this.enc.write(piece);
          this.rows += piece.length;
        }
      }
    });
    return this.chain;
  }

  /** Finish the file and move it into place. */
  async finish(): Promise<void> {
    await this.chain;
    await this.enc.finish();
    fs.closeSync(this.fd);
    try {
      fs.renameSync(this.tmp, this.file);
    } catch (e) {
      throw new ExecutionError(`cannot write ${this.file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
    this.removeTmp(); // nothing left to remove: the file has its final name
  }

  /** The query failed: no file, temporary or final. */
  abort(): void {
    this.enc.cancel();
    this.chain.catch(() => undefined);
    try { fs.closeSync(this.fd); } catch { /* already closed */ }
    this.removeTmp();
  }
}

function writeAll(fd: number, b: Uint8Array, file: string) {
  try {
    for (let at = 0; at < b.byteLength;) at += fs.writeSync(fd, b, at, b.byteLength - at);
  } catch (e) {
    throw new ExecutionError(`cannot write ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

function textEncoder(out: Out, lines: (b: Batch) => string, header = ''): Encoder {
  if (header) out(header);
  return { write: (b) => out(lines(b)), finish: () => undefined, cancel: () => undefined };
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
