// Parquet written straight from engine batches, with no Arrow or WebAssembly
// in between: flat OPTIONAL columns, PLAIN values in v1 data pages (strings
// through a dictionary while it stays small, see StringDict), definition
// levels in the RLE/bit-packed hybrid, snappy, the footer at the end. The
// schema (physical, converted and logical types) is the one parquet-rs wrote
// for the same Arrow types, so readers see the same types.
// The format's constants and column plans are in parquet-format.ts, the string
// dictionary in parquet-dict.ts, the pages in parquet-pages.ts; here the row
// groups and the file with its footer.
import type { Batch, Field } from '../kernels/column.js';
import { StringDict } from './parquet-dict.js';
import {
  type ColumnPlan,
  columnPlan,
  DICTIONARY_PAGE,
  le32,
  MAGIC,
  PLAIN,
  PLAIN_DICTIONARY,
  RLE,
  SNAPPY,
} from './parquet-format.js';
import { type ColumnChunk, encodePage, pageEnd, pushPage } from './parquet-pages.js';
import { T, ThriftWriter } from './thrift-compact.js';

export { decimalBytes } from './parquet-format.js';

/** Rows per row group, unless asked otherwise (as the parquet-wasm writer was set). */
const ROW_GROUP_ROWS = 1 << 17;

/** A column chunk's totals: `bytes` of it in the row group's data, after the chunks before it. */
type ChunkMeta = Omit<ColumnChunk, 'parts' | 'dict' | 'dictOpen' | 'dictPages'>;

/**
 * A row group encoded: its column chunks one after another in `data` (built
 * in a task, appended to the file by the coordinator, see ParquetFileWriter.appendEncoded).
 */
export interface EncodedRowGroup {
  rows: number;
  data: Uint8Array;
  columns: ChunkMeta[];
}

/** Row groups built from rows added a batch at a time (every column's pages, compressed). */
export class RowGroupBuilder {
  readonly plans: ColumnPlan[];
  rows = 0;
  private chunks: ColumnChunk[];
  private readonly header = new ThriftWriter();

  constructor(fields: Field[]) {
    this.plans = fields.map(columnPlan);
    this.chunks = this.fresh();
  }

  private fresh(): ColumnChunk[] {
    return this.plans.map((p) => ({
      parts: [],
      bytes: 0,
      uncompressed: 0,
      nulls: 0,
      values: 0,
      dict: p.layout === 'string' ? new StringDict() : null,
      dictOpen: p.layout === 'string',
      dictPages: false,
      dictionary: 0,
    }));
  }

  /** Rows [s, e) of a batch: each column's pages. */
  add(b: Batch, s: number, e: number) {
    if (e <= s) return;
    for (let k = 0; k < this.plans.length; k++) {
      const plan = this.plans[k],
        c = b.columns[k];
      for (let at = s; at < e; ) {
        const end = pageEnd(plan, c, at, e);
        encodePage(plan, c, at, end, this.chunks[k], this.header);
        at = end;
      }
    }
    this.rows += e - s;
  }

  /** The row group built so far, its chunks in one buffer (the builder starts a new one). */
  take(): EncodedRowGroup {
    for (const c of this.chunks) if (c.dictPages) this.dictionaryPage(c);
    const data = new Uint8Array(this.chunks.reduce((a, c) => a + c.bytes, 0));
    let at = 0;
    const columns = this.chunks.map(({ parts, dict, dictOpen, dictPages, ...meta }) => {
      for (const p of parts) {
        data.set(p, at);
        at += p.length;
      }
      return meta;
    });
    const g = { rows: this.rows, data, columns };
    this.chunks = this.fresh();
    this.rows = 0;
    return g;
  }

  /** The chunk's dictionary page, put before its data pages. */
  private dictionaryPage(c: ColumnChunk) {
    const pages = c.parts,
      before = c.bytes;
    c.parts = [];
    const values = c.dict!;
    pushPage(c, this.header, values.plain(), DICTIONARY_PAGE, (h) =>
      h.begin(7).i32(1, values.n).i32(2, PLAIN_DICTIONARY).end(),
    );
    c.dictionary = c.bytes - before;
    c.parts.push(...pages);
  }
}

/** A batch's rows into the builder, each row group of `size` rows handed to `full` as it fills. */
function addRows(b: RowGroupBuilder, x: Batch, size: number, full: (g: EncodedRowGroup) => void) {
  for (let at = 0; at < x.length; ) {
    const end = Math.min(x.length, at + size - b.rows);
    b.add(x, at, end);
    at = end;
    if (b.rows >= size) full(b.take());
  }
}

/** Batches as row groups of `rowGroupSize` rows (the last one shorter): a task's share of a Parquet output. */
export function encodeRowGroups(fields: Field[], batches: Batch[], rowGroupSize = ROW_GROUP_ROWS): EncodedRowGroup[] {
  const b = new RowGroupBuilder(fields),
    groups: EncodedRowGroup[] = [];
  for (const x of batches) addRows(b, x, rowGroupSize, (g) => groups.push(g));
  if (b.rows > 0) groups.push(b.take());
  return groups;
}

interface WrittenGroup {
  rows: number;
  offset: number;
  columns: (ChunkMeta & { offset: number })[];
}

/**
 * A Parquet file written through `out` as rows arrive: row groups of
 * `rowGroupSize` rows whatever the batches' sizes, each written once full;
 * the footer (with `kv` metadata) on finish().
 */
export class ParquetFileWriter {
  private pos = 0;
  private readonly groups: WrittenGroup[] = [];
  private readonly builder: RowGroupBuilder;

  constructor(
    fields: Field[],
    private readonly out: (b: Uint8Array) => void,
    private readonly opts: { rowGroupSize?: number; kv?: [string, string][] } = {},
  ) {
    this.builder = new RowGroupBuilder(fields);
    this.emit(MAGIC);
  }

  private emit(b: Uint8Array) {
    this.out(b);
    this.pos += b.length;
  }
  private get groupRows() {
    return this.opts.rowGroupSize ?? ROW_GROUP_ROWS;
  }

  write(b: Batch) {
    addRows(this.builder, b, this.groupRows, (g) => this.append(g));
  }

  /** A row group encoded elsewhere, after the rows written before it (a partial row group of them is closed first). */
  appendEncoded(g: EncodedRowGroup) {
    if (this.builder.rows > 0) this.append(this.builder.take());
    this.append(g);
  }

  private append(g: EncodedRowGroup) {
    if (g.rows === 0) return;
    const written: WrittenGroup = { rows: g.rows, offset: this.pos, columns: [] };
    let at = this.pos;
    for (const c of g.columns) {
      written.columns.push({ ...c, offset: at });
      at += c.bytes;
    }
    this.emit(g.data);
    this.groups.push(written);
  }

  finish() {
    if (this.builder.rows > 0) this.append(this.builder.take());
    const footer = this.footer();
    const len = footer.length;
    const tail = new Uint8Array(len + 8);
    tail.set(footer);
    le32(tail, len, len);
    tail.set(MAGIC, len + 4);
    this.emit(tail);
  }

  /** FileMetaData (parquet.thrift) in the compact protocol. */
  private footer(): Uint8Array {
    const w = new ThriftWriter();
    const plans = this.builder.plans;
    w.i32(1, 1);
    w.list(2, T.STRUCT, plans.length + 1);
    w.begin().string(4, 'arrow_schema').i32(5, plans.length).end();
    for (const p of plans) {
      w.begin().i32(1, p.phys);
      if (p.typeLength !== undefined) w.i32(2, p.typeLength);
      w.i32(3, 1).string(4, p.name); // OPTIONAL
      if (p.converted !== undefined) w.i32(6, p.converted);
      if (p.scale !== undefined) w.i32(7, p.scale).i32(8, p.precision!);
      if (p.logical) {
        w.begin(10);
        p.logical(w);
        w.end();
      }
      w.end();
    }
    w.i64(
      3,
      this.groups.reduce((a, g) => a + g.rows, 0),
    );
    w.list(4, T.STRUCT, this.groups.length);
    for (const g of this.groups) {
      w.begin().list(1, T.STRUCT, g.columns.length);
      let bytes = 0,
        uncompressed = 0;
      g.columns.forEach((c, k) => {
        const p = plans[k];
        bytes += c.bytes;
        uncompressed += c.uncompressed;
        w.begin().i64(2, c.offset).begin(3).i32(1, p.phys);
        if (c.dictionary > 0) w.list(2, T.I32, 3).i32Element(PLAIN).i32Element(RLE).i32Element(PLAIN_DICTIONARY);
        else w.list(2, T.I32, 2).i32Element(PLAIN).i32Element(RLE);
        w.list(3, T.BINARY, 1)
          .stringElement(p.name)
          .i32(4, SNAPPY)
          .i64(5, c.values)
          .i64(6, c.uncompressed)
          .i64(7, c.bytes)
          .i64(9, c.offset + c.dictionary);
        if (c.dictionary > 0) w.i64(11, c.offset);
        w.begin(12).i64(3, c.nulls).end().end().end();
      });
      w.i64(2, uncompressed).i64(3, g.rows).i64(5, g.offset).i64(6, bytes).end();
    }
    const kv = this.opts.kv ?? [];
    if (kv.length) {
      w.list(5, T.STRUCT, kv.length);
      for (const [k, v] of kv) w.begin().string(1, k).string(2, v).end();
    }
    w.string(6, 'skewjoin');
    w.end();
    return w.bytes().slice();
  }
}
