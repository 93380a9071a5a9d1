// What a CSV file holds before any task reads it: the header (or column0, column1, ...), each column's type (given,
// or inferred from the first records as DuckDB's read_csv does), and the file cut into chunks of whole records
// (a map task each) with the line each starts on, found by one pass that follows the quoting.
import fs from 'node:fs';
import { InputError, PlanError } from '../errors.js';
import type { DataType, Field } from '../kernels/column.js';
import { parseTypeName } from '../expr/types.js';
import { CANDIDATES, Fields, firstRecord, narrowCandidates, tokenize } from './csv.js';

/** A CSV source's options as the plan gives them (PLAN-SPEC, "Top level"). */
export interface CsvOptions {
  header?: boolean;
  delimiter?: string;
  /** column name -> plan type name; the others are inferred */
  columns?: Record<string, string>;
}

interface CsvChunk {
  start: number;
  end: number;
  /** line of the chunk's first record, from 1 */
  line: number;
  rows: number;
}

export interface CsvFile {
  path: string;
  columns: Field[];
  delimiter: string;
  chunks: CsvChunk[];
}

/** Records read to infer types (DuckDB's default sample size). */
const SAMPLE_ROWS = 20480;
/**
 * A file is cut into map tasks of about this many bytes (tests set SKEWJOIN_CSV_CHUNK_BYTES to cut small files).
 */
const chunkBytes = () => Number(process.env.SKEWJOIN_CSV_CHUNK_BYTES) || 8 << 20;
const HEAD_BYTES = 1 << 20;

function readAt(fd: number, pos: number, len: number): Buffer {
  const b = Buffer.allocUnsafe(len);
  let got = 0;
  while (got < len) {
    const k = fs.readSync(fd, b, got, len - got, pos + got);
    if (k === 0) break;
    got += k;
  }
  return b.subarray(0, got);
}

/**
 * Inspect a CSV file: names, types (`like`: the types of the source's first file, which the others must share;
 * else given by `options.columns` or inferred) and chunks. `at` names the plan's source in messages.
 */
export function inspectCsv(path: string, options: CsvOptions, at: string, like?: Field[]): CsvFile {
  const delimiter = options.delimiter ?? ',';
  if (delimiter.length !== 1 || /["\r\n]/.test(delimiter) || delimiter.charCodeAt(0) > 127) {
    throw new PlanError(
      `${at}.delimiter`,
      `must be one ASCII character other than a quote or a line break, got ${JSON.stringify(delimiter)}`,
    );
  }
  const delim = delimiter.charCodeAt(0);
  let fd: number;
  try {
    fd = fs.openSync(path, 'r');
  } catch (e) {
    throw new InputError(`${path}: cannot read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, path);
  }
  try {
    const size = fs.fstatSync(fd).size;
    if (size === 0) throw new InputError(`${path}: the file is empty (a CSV file needs at least a header line)`, path);
    let head = readAt(fd, 0, Math.min(size, HEAD_BYTES));
    // a UTF-8 byte order mark is no part of the first name
    const bom = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
    head = head.subarray(bom);
    const first = firstRecord(head, delim, path);
    const header = options.header ?? true;
    const given = options.columns;
    let names: string[];
    if (header) names = unique(first.names.map((n, i) => n || `column${i}`));
    else if (given) names = Object.keys(given);
    else names = first.names.map((_, i) => `column${i}`);
    if (!header && given && names.length !== first.names.length) {
      throw new PlanError(
        `${at}.columns`,
        `names ${names.length} columns, but ${path} has ${first.names.length} fields a line (and no header)`,
      );
    }
    const start = bom + (header ? first.next : 0);
    const line = header ? 1 + countLines(head, 0, first.next) : 1;
    let columns: Field[];
    if (like) {
      const want = like.map((c) => c.name).join(', ');
      if (names.join(', ') !== want) {
        throw new InputError(`${path}: columns are ${names.join(', ')}, other files of the source have ${want}`, path);
      }
      columns = like;
    } else {
      for (const k of Object.keys(given ?? {})) {
        if (!names.includes(k))
          throw new PlanError(
            `${at}.columns.${k}`,
            `${path} has no column "${k}"; its columns are: ${names.join(', ')}`,
          );
      }
      const types: (DataType | null)[] = names.map((n) => {
        const t = given?.[n];
        if (t === undefined) return null;
        const d = parseTypeName(t);
        if (!d)
          throw new PlanError(`${at}.columns.${n}`, `"${t}" is not a type name (int64, float64, utf8, date, ...)`);
        return d;
      });
      if (types.some((t) => t === null)) inferTypes(fd, size, start, line, delim, path, types);
      columns = names.map((name, i) => ({ name, type: types[i]! }));
    }
    return { path, columns, delimiter, chunks: chunksOf(fd, size, start, line, delim) };
  } finally {
    fs.closeSync(fd);
  }
}

/** Names made unique as DuckDB does: a repeated `x` becomes `x_1`, `x_2`, ... */
function unique(names: string[]): string[] {
  const seen = new Set<string>();
  return names.map((n) => {
    let m = n;
    for (let k = 1; seen.has(m); k++) m = `${n}_${k}`;
    seen.add(m);
    return m;
  });
}

function countLines(buf: Uint8Array, s: number, e: number): number {
  let n = 0;
  for (let j = buf.indexOf(10, s); j >= 0 && j < e; j = buf.indexOf(10, j + 1)) n++;
  return n;
}

/** Fill the null entries of `types` from the first SAMPLE_ROWS records; a column without a value is utf8. */
function inferTypes(
  fd: number,
  size: number,
  start: number,
  line: number,
  delim: number,
  path: string,
  types: (DataType | null)[],
): void {
  const masks = types.map((t) => (t ? 0 : (1 << CANDIDATES.length) - 1));
  const seen = types.map(() => false);
  const f = new Fields(types.length, 4096);
  let pos = start,
    carry: Uint8Array = new Uint8Array(0),
    rows = 0;
  while (rows < SAMPLE_ROWS && pos < size) {
    const got = readAt(fd, pos, Math.min(HEAD_BYTES, size - pos));
    pos += got.length;
    const buf = carry.length ? Buffer.concat([carry, got]) : got;
    const final = pos >= size;
    let p = 0;
    while (rows < SAMPLE_ROWS) {
      const r = tokenize(buf, p, final, delim, line, f, path);
      if (f.rows === 0) break;
      for (let c = 0; c < types.length; c++) {
        if (types[c]) continue;
        for (let k = 0; k < f.rows && !seen[c]; k++)
          if (f.starts[k * f.ncols + c] !== f.ends[k * f.ncols + c]) seen[c] = true;
        masks[c] = narrowCandidates(buf, f, c, masks[c]);
      }
      rows += f.rows;
      p = r.p;
      line = r.line;
    }
    if (final) break;
    carry = buf.subarray(p);
  }
  types.forEach((t, c) => {
    if (t) return;
    const k = seen[c] ? CANDIDATES.findIndex((_, j) => masks[c] & (1 << j)) : -1;
    types[c] = k >= 0 ? CANDIDATES[k] : { id: 'utf8' };
  });
}

/**
 * The records from `start` cut into chunks of about CSV_CHUNK_BYTES at record ends, following the quotes (a line
 * break inside quotes ends no record), with each chunk's first line and record count. A quote where RFC 4180 allows
 * none leaves the file one chunk: the task that reads it reports the line.
 */
function chunksOf(fd: number, size: number, start: number, line: number, delim: number): CsvChunk[] {
  const CSV_CHUNK_BYTES = chunkBytes();
  if (size - start <= 2 * CSV_CHUNK_BYTES) return [{ start, end: size, line, rows: estimateRows(fd, size, start) }];
  const chunks: CsvChunk[] = [];
  const firstLine = line;
  let last = 10;
  let chunkStart = start,
    chunkLine = line,
    rows = 0,
    // 0: at a field's start, 1: in an unquoted field, 2: in a quoted field, 3: after a quote in a quoted field
    state = 0;
  const BLOCK = 4 << 20;
  const block = Buffer.allocUnsafe(BLOCK);
  for (let pos = start; pos < size; ) {
    const n = fs.readSync(fd, block, 0, Math.min(BLOCK, size - pos), pos);
    if (n === 0) break;
    const buf = block.subarray(0, n);
    let i = 0;
    const recordEnd = (at: number) => {
      rows++;
      const a = pos + at + 1;
      if (a - chunkStart >= CSV_CHUNK_BYTES && size - a >= CSV_CHUNK_BYTES / 2) {
        chunks.push({ start: chunkStart, end: a, line: chunkLine, rows });
        chunkStart = a;
        chunkLine = line;
        rows = 0;
      }
    };
    while (i < n) {
      if (state <= 1) {
        let q = buf.indexOf(34, i);
        if (q < 0) q = n;
        for (let j = buf.indexOf(10, i); j >= 0 && j < q; j = buf.indexOf(10, j + 1)) {
          line++;
          recordEnd(j);
        }
        if (q > i) state = buf[q - 1] === 10 || buf[q - 1] === delim ? 0 : 1;
        i = q;
        if (i < n) {
          if (state === 0) state = 2;
          i++;
        }
      } else if (state === 2) {
        let q = buf.indexOf(34, i);
        if (q < 0) q = n;
        line += countLines(buf, i, q);
        i = q;
        if (i < n) {
          state = 3;
          i++;
        }
      } else {
        const c = buf[i];
        if (c === 34) state = 2;
        else if (c === delim) state = 0;
        else if (c === 10) {
          line++;
          state = 0;
          recordEnd(i);
        } else if (c !== 13) {
          return [{ start, end: size, line: firstLine, rows: estimateRows(fd, size, start) }];
        }
        i++;
      }
    }
    pos += n;
    last = buf[n - 1];
  }
  chunks.push({ start: chunkStart, end: size, line: chunkLine, rows: rows + (last === 10 ? 0 : 1) });
  return chunks;
}

/** Records in [start, size) estimated from the length of the first lines. */
function estimateRows(fd: number, size: number, start: number): number {
  const head = readAt(fd, start, Math.min(size - start, 64 << 10));
  const lines = countLines(head, 0, head.length);
  if (head.length === size - start) return lines + (head.length > 0 && head[head.length - 1] !== 10 ? 1 : 0);
  return Math.round(((size - start) * Math.max(1, lines)) / head.length);
}
