// Writing a result file batch by batch as the final stage produces it:
// Parquet (one row group at a time through our encoder, or row groups the
// final tasks encoded), Arrow IPC, CSV and JSON lines.
// Always into a temporary file beside the target, renamed when complete, so
// that a failed or interrupted query leaves nothing behind. The binary
// encoders (io/result-binary.ts, Arrow JS and the Parquet writer) are loaded
// only for a binary format: open() is async for that.
import fs from 'node:fs';
import path from 'node:path';
import { ExecutionError, PlanError } from '../errors.js';
import { registerCleanup } from './cleanup.js';
import { type Batch, type Field, viewBatch } from '../kernels/column.js';
import type { OutputFormat } from '../plan/spec.js';
import type { EncodedRowGroup } from './parquet-encode.js';
import { csvHeader, csvLines, jsonlLines } from './output.js';

/** Rows per piece handed to an encoder: bounds the memory one conversion takes. */
const PIECE_ROWS = 1 << 17;

/** A format's encoder: gets the batches in order, writes bytes with `out`. */
export interface Encoder {
  write(b: Batch): Promise<void> | void;
  /** Parquet only: row groups encoded by the tasks (physical/exchange/encode-output.ts), after the rows before them */
  writeEncoded?(g: EncodedRowGroup): void;
  finish(): Promise<void> | void;
  /** stop early (the query failed): release what the encoder holds */
  cancel(): void;
}

export type Out = (bytes: Uint8Array | string) => void;

export class ResultFile {
  readonly tmp: string;
  rows = 0;
  private fd: number;
  private enc: Encoder;
  /** writes run one after another; the first failure fails every later one */
  private chain: Promise<void> = Promise.resolve();
  /** removes the temporary file (also on exit or a signal while the query runs) */
  private readonly removeTmp: () => void;

  /** A result file for `format`; Arrow JS is loaded only for parquet and arrow. */
  static async open(file: string, format: OutputFormat, fields: Field[]): Promise<ResultFile> {
    const binary = format === 'parquet' || format === 'arrow' ? await import('./result-binary.js') : null;
    return new ResultFile(file, (out) =>
      binary
        ? binary.binaryEncoder(format as 'parquet' | 'arrow', fields, out)
        : format === 'csv'
          ? textEncoder(out, csvLines, csvHeader(fields))
          : textEncoder(out, (b) => jsonlLines(fields, b)),
    );
  }

  private constructor(
    readonly file: string,
    encoder: (out: Out) => Encoder,
  ) {
    this.tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.${Date.now()}.tmp`);
    const tmp = this.tmp;
    try {
      fs.mkdirSync(path.dirname(file), { recursive: true });
      this.fd = fs.openSync(tmp, 'w');
    } catch (e) {
      throw openFailure(file, e as NodeJS.ErrnoException);
    }
    // removed on exit and by the CLI's signal handler
    this.removeTmp = registerCleanup(() => fs.rmSync(tmp, { force: true }));
    const out: Out = (b) => writeAll(this.fd, typeof b === 'string' ? Buffer.from(b) : b, file);
    this.enc = encoder(out);
  }

  /** Queue batches for writing, in order; resolves when they are written. */
  write(batches: Batch[]): Promise<void> {
    this.chain = this.chain.then(async () => {
      for (const b of batches) {
        for (let at = 0; at < b.length; at += PIECE_ROWS) {
          // a view, not a copy: every encoder converts the piece before the next one
          const piece = b.length <= PIECE_ROWS ? b : viewBatch(b, at, Math.min(b.length, at + PIECE_ROWS));
          await this.enc.write(piece);
          this.rows += piece.length;
        }
      }
    });
    return this.chain;
  }

  /** Queue row groups encoded elsewhere (a Parquet file's), in order after the batches queued before. */
  writeEncoded(groups: EncodedRowGroup[]): Promise<void> {
    this.chain = this.chain.then(() => {
      for (const g of groups) {
        this.enc.writeEncoded!(g);
        this.rows += g.rows;
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
      throw new ExecutionError(
        `cannot write ${this.file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      );
    }
    this.removeTmp(); // nothing left to remove: the file has its final name
  }

  /** The query failed: no file, temporary or final. */
  abort(): void {
    this.enc.cancel();
    this.chain.catch(() => undefined);
    try {
      fs.closeSync(this.fd);
    } catch {
      /* already closed */
    }
    this.removeTmp();
  }
}

/** Why the output file cannot be created, in words, naming the folder: the user's to fix (exit 2), before any work. */
export function openFailure(file: string, e: NodeJS.ErrnoException): Error {
  const dir = path.dirname(file);
  const why: Record<string, string> = {
    EACCES: `permission denied: cannot create files in ${dir}`,
    EPERM: `permission denied: cannot create files in ${dir}`,
    EROFS: `${dir} is on a read-only file system`,
    ENOTDIR: `a file stands where a folder of ${dir} should be`,
    EISDIR: `${file} is a folder`,
    ENOSPC: `no space left on the device of ${dir}`,
  };
  const text = e.code && why[e.code];
  if (text) return new PlanError('output.path', `${text} (writing ${file})`);
  return new ExecutionError(`cannot write ${file}: ${e.code ?? e.message}`);
}

function writeAll(fd: number, b: Uint8Array, file: string) {
  try {
    for (let at = 0; at < b.byteLength; ) at += fs.writeSync(fd, b, at, b.byteLength - at);
  } catch (e) {
    throw new ExecutionError(`cannot write ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
}

function textEncoder(out: Out, lines: (b: Batch) => string, header = ''): Encoder {
  if (header) out(header);
  return { write: (b) => out(lines(b)), finish: () => undefined, cancel: () => undefined };
}
