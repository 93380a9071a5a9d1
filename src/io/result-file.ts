// Writing a result batch by batch as the final stage produces it: Parquet
// (one row group at a time through our encoder, or row groups the final tasks
// encoded), Arrow IPC, CSV and JSON lines. A regular file (or a missing one,
// or one a symlink points to) is written to a temporary file beside it and
// renamed over it when complete, so that a failed or interrupted query leaves
// nothing behind; a FIFO or a device is written in place (never replaced by a
// file); "-" streams to standard output as rows arrive. The binary encoders
// (io/result-binary.ts, Arrow JS and the Parquet writer) are loaded only for a
// binary format: open() is async for that.
import fs from 'node:fs';
import path from 'node:path';
import { ExecutionError, OutputClosedError, PlanError } from '../errors.js';
import { makeFolders } from './folders.js';
import { registerCleanup } from './cleanup.js';
import { type Batch, type Field, viewBatch } from '../kernels/column.js';
import type { OutputFormat } from '../plan/formats.js';
import type { Encoder, Out } from './encoder.js';
import type { EncodedRowGroup } from './parquet-encode.js';
import { csvHeader, csvLines, jsonlLines } from './output.js';

/** Rows per piece handed to an encoder: bounds the memory one conversion takes. */
const PIECE_ROWS = 1 << 17;

/** An output format: how a file of it is named and written, and what Spark writes for it. */
export interface OutputFormatDef {
  /** file extensions (lower case, with the dot) that choose it when no format is given */
  extensions: string[];
  /** whether it streams to standard output ("-"): a text format written as rows come */
  stdout: boolean;
  /** Spark's data source for a URI output.path (INSERT OVERWRITE DIRECTORY ... USING), or null: Spark cannot */
  spark: { using: string; options?: string } | null;
  /** the encoder of a result of `fields`, writing with `out` */
  encoder(fields: Field[], out: Out): Encoder | Promise<Encoder>;
}

const binary = async (format: 'parquet' | 'arrow', fields: Field[], out: Out) =>
  (await import('./result-binary.js')).binaryEncoder(format, fields, out);

/**
 * The output formats (the plan's `output.format`, --format). `Record<OutputFormat, ...>`: a format added to
 * OUTPUT_FORMATS (plan/spec.ts) is a compile error here until it has its entry; the plan's checks (plan/load.ts), the
 * command line and the Spark lowering read this table.
 */
export const FORMATS: Record<OutputFormat, OutputFormatDef> = {
  parquet: {
    extensions: ['.parquet', '.pq'],
    stdout: false,
    spark: { using: 'parquet' },
    encoder: (fields, out) => binary('parquet', fields, out),
  },
  csv: {
    extensions: ['.csv'],
    stdout: true,
    spark: { using: 'csv', options: "'header' 'true'" },
    encoder: (fields, out) => textEncoder(out, csvLines, csvHeader(fields)),
  },
  jsonl: {
    extensions: ['.jsonl', '.ndjson'],
    stdout: true,
    spark: { using: 'json' },
    encoder: (fields, out) => textEncoder(out, (b) => jsonlLines(fields, b)),
  },
  // one JSON array of the rows as objects, cells as jsonl's; Spark writes JSON lines only
  json: {
    extensions: ['.json'],
    stdout: true,
    spark: null,
    encoder(fields, out) {
      let rows = 0;
      out('[');
      return {
        write(b) {
          const lines = jsonlLines(fields, b); // one object a line: JSON text holds no raw newline
          if (lines === '') return;
          out((rows > 0 ? ',\n' : '\n') + lines.slice(0, -1).replaceAll('\n', ',\n'));
          rows += b.length;
        },
        finish: () => out(rows > 0 ? '\n]\n' : ']\n'),
        cancel: () => undefined,
      };
    },
  },
  arrow: {
    extensions: ['.arrow', '.feather', '.ipc'],
    stdout: false,
    spark: null,
    encoder: (fields, out) => binary('arrow', fields, out),
  },
};

export class ResultFile {
  rows = 0;
  /** writes run one after another; the first failure fails every later one */
  private chain: Promise<void> = Promise.resolve();
  private failure: unknown = null;

  /**
   * A result file for `format`; Arrow JS is loaded only for parquet and arrow. `file` "-" is `stdout`
   * (standard output by default): CSV or JSON lines written as they come.
   */
  static async open(
    file: string,
    format: OutputFormat,
    fields: Field[],
    stdout: NodeJS.WritableStream = process.stdout,
  ): Promise<ResultFile> {
    const target = file === '-' ? new StreamTarget(stdout) : await fileTarget(file);
    const out: Out = (b) => target.write(typeof b === 'string' ? Buffer.from(b) : b);
    try {
      return new ResultFile(file, target, await FORMATS[format].encoder(fields, out));
    } catch (e) {
      target.abort();
      throw e;
    }
  }

  private constructor(
    /** the path as given ("-": standard output) */
    readonly file: string,
    private readonly target: Target,
    private readonly enc: Encoder,
  ) {}

  /** A write failed (the reader of a pipe went away, the disk is full): later rows are not wanted. */
  get failed(): boolean {
    return this.failure !== null;
  }

  /** Queue batches for writing, in order; resolves when they are written. */
  write(batches: Batch[]): Promise<void> {
    return this.queue(async () => {
      for (const b of batches) {
        for (let at = 0; at < b.length; at += PIECE_ROWS) {
          // a view, not a copy: every encoder converts the piece before the next one
          const piece = b.length <= PIECE_ROWS ? b : viewBatch(b, at, Math.min(b.length, at + PIECE_ROWS));
          await this.enc.write(piece);
          this.rows += piece.length;
          await this.target.ready();
        }
      }
    });
  }

  /** Queue row groups encoded elsewhere (a Parquet file's), in order after the batches queued before. */
  writeEncoded(groups: EncodedRowGroup[]): Promise<void> {
    return this.queue(() => {
      for (const g of groups) {
        this.enc.writeEncoded!(g);
        this.rows += g.rows;
      }
    });
  }

  private queue(f: () => Promise<void> | void): Promise<void> {
    this.chain = this.chain.then(f).catch((e) => {
      this.failure ??= e;
      throw this.failure;
    });
    return this.chain;
  }

  /** Finish the file and move it into place. */
  async finish(): Promise<void> {
    await this.chain;
    await this.enc.finish();
    await this.target.finish();
  }

  /** The query failed: no file, temporary or final (a FIFO or device keeps what it was sent). */
  abort(): void {
    this.enc.cancel();
    this.chain.catch(() => undefined);
    this.target.abort();
  }
}

/** Where a result's bytes go. */
interface Target {
  write(b: Uint8Array): void;
  /** resolves when the target takes more (a stream's buffer drained) */
  ready(): Promise<void> | void;
  finish(): Promise<void> | void;
  abort(): void;
}

/**
 * The target of a path: symlinks followed (the link itself is never replaced); a regular or missing
 * file is replaced atomically, anything else (a FIFO, a device) is opened and written in place.
 */
async function fileTarget(file: string): Promise<Target> {
  let p = path.resolve(file);
  for (let hops = 0; ; hops++) {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(p);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return new ReplaceTarget(p, file);
      throw openFailure(file, e as NodeJS.ErrnoException);
    }
    if (st.isSymbolicLink()) {
      if (hops >= 40) throw openFailure(file, Object.assign(new Error('ELOOP'), { code: 'ELOOP' }));
      p = path.resolve(path.dirname(p), fs.readlinkSync(p));
    } else if (st.isFile()) return new ReplaceTarget(p, file);
    else if (st.isDirectory()) throw openFailure(file, Object.assign(new Error('EISDIR'), { code: 'EISDIR' }));
    else return new InPlaceTarget(await openForWriting(p, file), file);
  }
}

/** fs.open without blocking this thread: a FIFO's open waits for its reader. */
function openForWriting(p: string, file: string): Promise<number> {
  return new Promise((resolve, reject) => fs.open(p, 'w', (e, fd) => (e ? reject(openFailure(file, e)) : resolve(fd))));
}

/** A temporary file beside `p`, renamed over it when complete; removed on failure, exit or a signal. */
class ReplaceTarget implements Target {
  private readonly tmp: string;
  private readonly fd: number;
  private readonly removeTmp: () => void;

  /** `p`: the resolved path to replace; `file`: as the user gave it (in messages) */
  constructor(
    private readonly p: string,
    private readonly file: string,
  ) {
    const tmp = (this.tmp = path.join(path.dirname(p), `.${path.basename(p)}.${process.pid}.${Date.now()}.tmp`));
    try {
      makeFolders(path.dirname(p));
      this.fd = fs.openSync(tmp, 'w');
    } catch (e) {
      throw openFailure(file, e as NodeJS.ErrnoException);
    }
    // removed on exit and by the CLI's signal handler
    this.removeTmp = registerCleanup(() => fs.rmSync(tmp, { force: true }));
  }
  write(b: Uint8Array) {
    writeAll(this.fd, b, this.file);
  }
  ready() {}
  finish() {
    fs.closeSync(this.fd);
    try {
      fs.renameSync(this.tmp, this.p);
    } catch (e) {
      throw new ExecutionError(
        `cannot write ${this.file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      );
    }
    this.removeTmp(); // nothing left to remove: the file has its final name
  }
  abort() {
    closeQuietly(this.fd);
    this.removeTmp();
  }
}

/** A FIFO or a device, written where it is. */
class InPlaceTarget implements Target {
  private closed = false;
  constructor(
    private readonly fd: number,
    private readonly file: string,
  ) {}
  write(b: Uint8Array) {
    writeAll(this.fd, b, this.file);
  }
  ready() {}
  finish() {
    this.abort();
  }
  abort() {
    if (!this.closed) closeQuietly(this.fd);
    this.closed = true;
  }
}

/** Standard output (or another stream): bytes written as they come, the stream's buffer drained between pieces. */
class StreamTarget implements Target {
  private error: Error | null = null;
  private readonly onError = (e: NodeJS.ErrnoException) => {
    this.error ??= writeFailure('standard output', e);
  };
  constructor(private readonly stream: NodeJS.WritableStream & { writableNeedDrain?: boolean }) {
    stream.on('error', this.onError);
  }
  write(b: Uint8Array) {
    if (this.error) throw this.error;
    this.stream.write(b);
  }
  async ready() {
    if (this.stream.writableNeedDrain && !this.error) {
      await new Promise<void>((resolve) => {
        const done = () => {
          this.stream.off('drain', done);
          this.stream.off('error', done);
          resolve();
        };
        this.stream.on('drain', done);
        this.stream.on('error', done);
      });
    }
    if (this.error) throw this.error;
  }
  async finish() {
    await this.ready();
    this.stream.off('error', this.onError);
  }
  abort() {
    this.stream.off('error', this.onError);
  }
}

function closeQuietly(fd: number) {
  try {
    fs.closeSync(fd);
  } catch {
    /* already closed */
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
    ENOENT: `folder ${dir} cannot be created`,
    ELOOP: `${file} is a loop of symbolic links`,
    ENXIO: `${file} is a FIFO or device that cannot be opened for writing (no reader, or a socket)`,
  };
  const text = e.code && why[e.code];
  if (text) return new PlanError('output.path', `${text} (writing ${file})`);
  return new ExecutionError(`cannot write ${file}: ${e.code ?? e.message}`);
}

function writeAll(fd: number, b: Uint8Array, file: string) {
  try {
    for (let at = 0; at < b.byteLength; ) at += fs.writeSync(fd, b, at, b.byteLength - at);
  } catch (e) {
    throw writeFailure(file, e as NodeJS.ErrnoException);
  }
}

/** A write that failed: a reader gone away (EPIPE) is OutputClosedError, which the command line takes quietly. */
function writeFailure(file: string, e: NodeJS.ErrnoException): Error {
  if (e.code === 'EPIPE' || e.code === 'ERR_STREAM_DESTROYED')
    return new OutputClosedError(`${file}: the reader closed the pipe`);
  return new ExecutionError(`cannot write ${file}: ${e.code ?? e.message}`);
}

function textEncoder(out: Out, lines: (b: Batch) => string, header = ''): Encoder {
  if (header) out(header);
  return { write: (b) => out(lines(b)), finish: () => undefined, cancel: () => undefined };
}
