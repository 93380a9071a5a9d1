// Parquet through parquet-wasm: file footers for planning, row-group ranges
// decoded into engine batches for map tasks (the writer is io/parquet-write.ts).
import fs from 'node:fs';
import { isMainThread } from 'node:worker_threads';
import type * as PW from 'parquet-wasm';
import { InputError } from '../errors.js';
import type { Batch, DataType, Field } from '../kernels/column.js';
import { batchesInPlace, schemaFields } from './ffi.js';
import { preferDirect, readDirect } from './parquet-direct.js';
import { inspectFooter } from './parquet-inspect.js';
import { WordLease } from './word-pool.js';
import { decodeFailure, guarded, isWasmTrap, parquetWasm, wasmGeneration } from './wasm.js';

/** A column of a file: its engine type, or the name of a type the engine cannot read. */
// Arrow JS (0.2-0.6 s to load) only where a file needs it: columns the in-place
// reader does not take (dictionary, bool, ...) and types the C schema reader does not name.
let arrowIo: Promise<[typeof import('apache-arrow'), typeof import('./arrow.js')]> | null = null;
const loadArrow = () => (arrowIo ??= Promise.all([import('apache-arrow'), import('./arrow.js')]));

/** The columns of a file's schema (`get` is called again when Arrow JS must read it). */
async function columnsOf(get: () => PW.Schema): Promise<FileColumn[]> {
  const plain = schemaFields(get());
  if (plain) return plain;
  const [arrow, conv] = await loadArrow();
  return arrow
    .tableFromIPC(get().intoIPCStream())
    .schema.fields.map((fl) => ({ name: fl.name, type: conv.fromArrowType(fl.type) }));
}

/** Engine batches of a decoded table through Arrow IPC. */
async function viaIpc(t: PW.Table, fields: Field[]): Promise<Batch[]> {
  const [arrow, conv] = await loadArrow();
  return conv.batchesFromArrow(arrow.tableFromIPC(t.intoIPCStream()), fields);
}

export interface FileColumn {
  name: string;
  type: DataType | string;
}

export interface FileInfo {
  path: string;
  columns: FileColumn[];
  rowGroupRows: number[];
  rowGroupBytes: number[];
  /**
   * Read with the whole-file reader: the file carries a page index that the
   * streaming reader rejects (parquetjs-lite writes ColumnIndex without the
   * required null_pages). Row groups are then unknown and the file is one split.
   */
  wholeFile?: boolean;
}

const isPageIndexError = (e: unknown) =>
  /null_pages|ColumnIndex|OffsetIndex|page index/i.test(String((e as Error)?.message ?? e));

function readWholeFile(path: string): Uint8Array {
  try {
    return fs.readFileSync(path);
  } catch (e) {
    throw new InputError(`${path}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, path);
  }
}

async function inspectWholeFile(path: string): Promise<FileInfo> {
  const bytes = readWholeFile(path);
  try {
    const columns = await columnsOf(() => parquetWasm().readSchema(bytes));
    return { path, columns, rowGroupRows: [0], rowGroupBytes: [bytes.length], wholeFile: true };
  } catch (e) {
    throw notReadable(path, e);
  }
}

/** A file whose footer cannot be read; a trap in the decoder is classified by decodeFailure. */
function notReadable(path: string, e: unknown): Error {
  if (isWasmTrap(e)) return decodeFailure(e, path, 'the footer');
  if (e instanceof InputError) return e;
  const other = notParquet(path);
  if (other) return new InputError(other, path);
  return new InputError(
    `${path}: not a readable Parquet file (${String((e as Error)?.message ?? e).replace(/^Error: /, '')})`,
    path,
  );
}

/** Why a file is not Parquet at all (it neither starts nor ends with the magic "PAR1"), or null. */
function notParquet(path: string): string | null {
  let head = Buffer.alloc(0);
  let tail = '';
  try {
    const fd = fs.openSync(path, 'r');
    try {
      const size = fs.fstatSync(fd).size;
      head = Buffer.alloc(Math.min(size, 32));
      fs.readSync(fd, head, 0, head.length, 0);
      const t = Buffer.alloc(Math.min(size, 4));
      fs.readSync(fd, t, 0, t.length, size - t.length);
      tail = t.toString('latin1');
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return null;
  }
  if (head.subarray(0, 4).toString('latin1') === 'PAR1' || tail === 'PAR1') return null;
  if (head.length === 0) return `${path}: not a Parquet file (it is empty)`;
  const text = head.every((c) => c === 9 || c === 10 || c === 13 || (c >= 32 && c < 127));
  return (
    `${path}: not a Parquet file (a Parquet file begins and ends with "PAR1"; this one begins with ` +
    `${text ? JSON.stringify(head.toString('latin1')) + ', text: CSV?' : 'other bytes'})`
  );
}

async function open(path: string): Promise<PW.ParquetFile> {
  let blob: Blob;
  try {
    blob = await fs.openAsBlob(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT' || code === 'ERR_INVALID_ARG_VALUE'
        ? 'file not found'
        : `cannot open (${code ?? (e as Error).message})`;
    throw new InputError(`${path}: ${why}`, path);
  }
  try {
    return await guarded(() => parquetWasm().ParquetFile.fromFile(blob));
  } catch (e) {
    throw notReadable(path, e);
  }
}

/** A file's columns and row groups: from its footer read here when its types are plain, else through parquet-wasm. */
export async function inspectParquet(path: string): Promise<FileInfo> {
  const plain = inspectFooter(path);
  return plain ? { path, ...plain } : inspectWithWasm(path);
}

/** inspectParquet through parquet-wasm alone (what io/parquet-inspect.ts must agree with). */
export async function inspectWithWasm(path: string): Promise<FileInfo> {
  const generation = wasmGeneration();
  let f: PW.ParquetFile;
  try {
    f = await open(path);
  } catch (e) {
    if (isPageIndexError(e)) return inspectWholeFile(path);
    throw e;
  }
  try {
    const columns = await columnsOf(() => f.schema());
    const md = f.metadata();
    const rowGroupRows: number[] = [];
    const rowGroupBytes: number[] = [];
    for (let i = 0; i < md.numRowGroups(); i++) {
      const rg = md.rowGroup(i);
      rowGroupRows.push(rg.numRows());
      rowGroupBytes.push(rg.totalByteSize());
    }
    return { path, columns, rowGroupRows, rowGroupBytes };
  } catch (e) {
    throw notReadable(path, e);
  } finally {
    freeFile(f, generation);
  }
}

/**
 * Rows of the row groups read: skip `offset`, then read at most `limit` (a map split below the row group, a sample).
 */
export interface RowRange {
  offset?: number;
  limit?: number;
}

/** parquet-wasm's reader options for a row range (the offset counts rows of the selected row groups). */
const rangeOptions = (r: RowRange) => ({
  ...(r.offset ? { offset: r.offset } : {}),
  ...(r.limit ? { limit: r.limit } : {}),
});

/** Decode some row groups of one file (all when `rowGroups` is empty), only the given columns. */
export async function readRowGroups(
  path: string,
  rowGroups: number[],
  fields: Field[],
  wholeFile = false,
  range: RowRange = {},
): Promise<Batch[]> {
  if (!wholeFile && fields.length > 0 && preferDirect(path, fields, rowGroups, range).every(Boolean)) {
    const direct = tryDirect(path, rowGroups, fields, range);
    if (direct) return direct;
  }
  if (wholeFile) {
    const bytes = readWholeFile(path);
    try {
      const t = parquetWasm().readParquet(bytes, {
        batchSize: 1 << 17,
        ...(rowGroups.length ? { rowGroups } : {}),
        ...rangeOptions(range),
      });
      return await viaIpc(t, fields);
    } catch (e) {
      throw decodeFailure(
        e,
        path,
        rowGroupsText(rowGroups),
        fields.map((x) => x.name),
      );
    }
  }
  await loadArrow();
  return readTable(path, rowGroups, fields, range, (t) => viaIpc(t, fields));
}

/**
 * Decode row groups of a file through the open-file cache and convert the table; a failure is an InputError naming the
 * file.
 */
async function readTable<T>(
  path: string,
  rowGroups: number[],
  fields: Field[],
  range: RowRange,
  convert: (t: PW.Table) => T | Promise<T>,
): Promise<T> {
  const f = await openCached(path);
  const columns = fields.map((x) => x.name);
  try {
    return await convert(
      await guarded(() => f.read({ columns, rowGroups, batchSize: 1 << 17, ...rangeOptions(range) })),
    );
  } catch (e) {
    dropCached(path);
    const failure = decodeFailure(e, path, rowGroupsText(rowGroups), columns);
    // several row groups read at once (a run on the calling thread, plan/map-splits.ts mergeScans): name the corrupt
    // one. Here a trap replaced the module instance (io/wasm.ts), so each row group can be decoded again on its own.
    if (
      isWasmTrap(e) &&
      failure instanceof InputError &&
      isMainThread &&
      rowGroups.length > 1 &&
      !range.offset &&
      !range.limit
    ) {
      throw (await corruptRowGroup(path, rowGroups, columns)) ?? failure;
    }
    throw failure;
  }
}

/** The first of `rowGroups` that fails to decode alone, as its error (null: each decodes alone). */
async function corruptRowGroup(path: string, rowGroups: number[], columns: string[]): Promise<Error | null> {
  for (const g of rowGroups) {
    try {
      const f = await openCached(path);
      (await guarded(() => f.read({ columns, rowGroups: [g], batchSize: 1 << 17 }))).free();
    } catch (e) {
      dropCached(path);
      return decodeFailure(e, path, rowGroupsText([g]), columns);
    }
  }
  return null;
}

const rowGroupsText = (rg: number[]) =>
  rg.length === 0 ? 'the file' : `row group${rg.length > 1 ? 's' : ''} ${rg.join(', ')}`;

/**
 * The batches from the direct reader (io/parquet-direct.ts), or null: a file,
 * column or encoding it does not take, or data it finds corrupt, which
 * parquet-wasm then reads or reports (one place for the errors' wording).
 */
function tryDirect(
  path: string,
  rowGroups: number[],
  fields: Field[],
  range: RowRange,
  lengths?: number[],
  lease?: WordLease,
): Batch[] | null {
  try {
    return readDirect(path, rowGroups, fields, range, lengths, lease);
  } catch {
    lease?.release();
    return null;
  }
}

/** Columns of files that cannot be read in place (dictionary, bool, ...): read through IPC. */
const notInPlace = new Set<string>();

/**
 * Like readRowGroups, but plain columns may be views into the Parquet
 * module's memory (see io/ffi.ts): use them before any other Parquet call,
 * then call release().
 */
export async function readRowGroupsInPlace(
  path: string,
  rowGroups: number[],
  fields: Field[],
  wholeFile = false,
  range: RowRange = {},
): Promise<InPlace> {
  const prefer = wholeFile ? fields.map(() => false) : preferDirect(path, fields, rowGroups, range);
  // the direct reader's words are leased from the thread's pool, given back at release (io/word-pool.ts)
  const lease = new WordLease();
  if (fields.length > 0 && prefer.every(Boolean)) {
    const direct = tryDirect(path, rowGroups, fields, range, undefined, lease);
    if (direct) return { batches: direct, release: () => lease.release(), viewsIntoModule: false, direct: true };
  } else if (prefer.some(Boolean) && rowGroups.length > 0) {
    // the other columns through parquet-wasm, the preferred ones cut to its batches (which may span row groups)
    const rest = await readWasmInPlace(
      path,
      rowGroups,
      fields.filter((_, i) => !prefer[i]),
      wholeFile,
      range,
    );
    const direct = tryDirect(
      path,
      rowGroups,
      fields.filter((_, i) => prefer[i]),
      range,
      rest.batches.map((b) => b.length),
      lease,
    );
    if (direct)
      return {
        ...rest,
        batches: rest.batches.map((b, k) => interleave(b, direct[k], prefer)),
        release: () => {
          rest.release();
          lease.release();
        },
      };
    rest.release();
  }
  return readWasmInPlace(path, rowGroups, fields, wholeFile, range);
}

type InPlace = { batches: Batch[]; release(): void; viewsIntoModule: boolean; direct?: boolean };

/**
 * One batch of `fields` from the columns of two batches: `which[i]` takes field i from `b`, else from `a` (each in
 * order).
 */
function interleave(a: Batch, b: Batch, which: boolean[]): Batch {
  let i = 0,
    j = 0;
  return { length: a.length, columns: which.map((w) => (w ? b.columns[j++] : a.columns[i++])) };
}

async function readWasmInPlace(
  path: string,
  rowGroups: number[],
  fields: Field[],
  wholeFile: boolean,
  range: RowRange,
): Promise<InPlace> {
  const none = () => {};
  const key = `${path}\0${fields.map((x) => x.name).join('\0')}`;
  if (wholeFile || notInPlace.has(key))
    return {
      batches: await readRowGroups(path, rowGroups, fields, wholeFile, range),
      release: none,
      viewsIntoModule: false,
    };
  const stream = await readTable(path, rowGroups, fields, range, (t) => t.intoFFI());
  let batches: Batch[] | null = null;
  try {
    batches = batchesInPlace(stream, fields);
  } catch {
    /* an export we do not understand: the IPC path reads it */
  }
  if (batches === null) {
    stream.free();
    notInPlace.add(key);
    return {
      batches: await readRowGroups(path, rowGroups, fields, wholeFile, range),
      release: none,
      viewsIntoModule: false,
    };
  }
  return { batches, release: () => stream.free(), viewsIntoModule: true };
}

// Open files kept per thread: a map task reads one row group, and parsing the
// footer again for each one cost as much as a tenth of the decode. An entry is
// valid while the file's size and mtime are unchanged.
const OPEN_FILES = 16;
const openFiles = new Map<string, { file: PW.ParquetFile; size: number; mtimeMs: number; generation: number }>();

/** Free a file of the module instance `generation`; one of a retired instance is only dropped. */
function freeFile(f: PW.ParquetFile, generation: number) {
  if (generation !== wasmGeneration()) return;
  try {
    f.free();
  } catch {
    /* after a failed read the module may refuse; the error being reported matters more */
  }
}

function dropCached(path: string) {
  const e = openFiles.get(path);
  if (!e) return;
  openFiles.delete(path);
  freeFile(e.file, e.generation);
}

async function openCached(path: string): Promise<PW.ParquetFile> {
  let st: fs.Stats | undefined;
  try {
    st = fs.statSync(path);
  } catch {
    /* open() reports it */
  }
  const hit = openFiles.get(path);
  if (hit && st && hit.size === st.size && hit.mtimeMs === st.mtimeMs && hit.generation === wasmGeneration()) {
    openFiles.delete(path);
    openFiles.set(path, hit); // most recently used last
    return hit.file;
  }
  dropCached(path);
  const file = await open(path);
  openFiles.set(path, { file, size: st?.size ?? -1, mtimeMs: st?.mtimeMs ?? -1, generation: wasmGeneration() });
  if (openFiles.size > OPEN_FILES) dropCached(openFiles.keys().next().value!);
  return file;
}
