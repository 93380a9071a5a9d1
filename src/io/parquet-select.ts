// Only some rows of columns decoded: a scan whose filter-only columns were read as masks (io/parquet-mask.ts)
// knows which rows its filter can keep before it reads its other columns, and reads just those rows of them. A
// dictionary page's indices are unpacked whole and looked up for the rows kept; a PLAIN page of fixed width is read
// at the rows kept; a page with nulls, or of strings written PLAIN, is decoded whole and its rows kept gathered.
// Throws NotDirect for a file or column the direct reader does not take.
import fs from 'node:fs';
import { type Column, type Field, valuesCtor } from '../kernels/column.js';
import { type Chunk, openFooter } from './parquet-footer.js';
import { type Dict, type Plan, Strings, dictValues, planOf, plainValues } from './parquet-values.js';
import { type DirectRange, chunkOf, groupsRead, indices, pages, scratchOf } from './parquet-walk.js';
import { CorruptPage } from './rle.js';

/** The rows kept of one column: words (fixed widths) or strings, and validity. */
interface Kept {
  words: Int32Array | null;
  strings: Strings | null;
  valid: Uint8Array | null;
}

/** sel[a, b) (rows of the page, from its first) of a page without nulls, by dictionary index. */
function keepByIndex(
  plan: Plan,
  dict: Dict,
  idx: Int32Array,
  sel: Int32Array,
  a: number,
  b: number,
  base: number,
  out: Kept,
  at: number,
) {
  const dn = dict.n;
  if (out.words) {
    const w = plan.words,
      d = dict.words!,
      o = out.words;
    let bad = 0;
    for (let t = a; t < b; t++) {
      const j = idx[sel[t] - base];
      bad |= dn - 1 - j;
      for (let q = 0; q < w; q++) o[(at + t - a) * w + q] = d[j * w + q];
    }
    if (bad < 0) throw new CorruptPage('dictionary index out of range');
    return;
  }
  const s = out.strings!,
    starts = dict.starts!,
    lens = dict.lens!;
  for (let t = a; t < b; t++) {
    const j = idx[sel[t] - base];
    if (j >= dn) throw new CorruptPage('dictionary index out of range');
    s.room(lens[j]);
    s.bytes.set(dict.data.subarray(starts[j], starts[j] + lens[j]), s.len);
    s.len += lens[j];
    s.offsets[at + t - a + 1] = s.len;
  }
}

/** sel[a, b) of a PLAIN page of fixed width without nulls, values copied from where they lie. */
function keepPlain(
  plan: Plan,
  data: Uint8Array,
  p: number,
  n: number,
  sel: Int32Array,
  a: number,
  b: number,
  base: number,
  out: Kept,
  at: number,
) {
  const L = plan.physBytes,
    w = plan.words;
  if (p + n * L > data.length) throw new CorruptPage('values end early');
  const bytes = new Uint8Array(out.words!.buffer, out.words!.byteOffset);
  for (let t = a; t < b; t++) {
    const from = p + (sel[t] - base) * L,
      to = (at + t - a) * w * 4;
    for (let k = 0; k < L; k++) bytes[to + k] = data[from + k];
  }
}

/** sel[a, b) of any page: decoded whole (nulls spread), then the rows kept gathered. */
function keepDecoded(
  plan: Plan,
  page: Kept,
  sel: Int32Array,
  a: number,
  b: number,
  base: number,
  out: Kept,
  at: number,
) {
  if (page.valid) {
    out.valid ??= new Uint8Array(out.words ? out.words.length / plan.words : out.strings!.offsets.length - 1).fill(1);
    for (let t = a; t < b; t++) out.valid[at + t - a] = page.valid[sel[t] - base];
  }
  if (page.words) {
    const w = plan.words;
    for (let t = a; t < b; t++)
      for (let q = 0; q < w; q++) out.words![(at + t - a) * w + q] = page.words[(sel[t] - base) * w + q];
    return;
  }
  const src = page.strings!,
    s = out.strings!;
  for (let t = a; t < b; t++) {
    const r = sel[t] - base,
      lo = src.offsets[r],
      len = src.offsets[r + 1] - lo;
    s.room(len);
    s.bytes.set(src.bytes.subarray(lo, lo + len), s.len);
    s.len += len;
    s.offsets[at + t - a + 1] = s.len;
  }
}

/** The rows sel[a, b) (rows of the chunk, ascending) of one column chunk into out from row `at`. */
function selectChunk(
  plan: Plan,
  chunk: Chunk,
  bytes: Uint8Array,
  rows: number,
  sel: Int32Array,
  a: number,
  b: number,
  out: Kept,
  at: number,
) {
  for (const page of pages(plan, chunk, bytes, rows)) {
    const { row, rows: n } = page;
    // a page without a row kept is not decompressed
    let e = a;
    while (e < b && sel[e] < row + n) e++;
    if (e === a) continue;
    let valid: Uint8Array | null = null;
    const o = page.open(() => (valid ??= new Uint8Array(n).fill(1)), 0);
    if (o.nonNull === n && o.enc !== 0)
      keepByIndex(plan, page.dict!, indices(o, n, scratchOf(n)), sel, a, e, row, out, at);
    else if (o.nonNull === n && plan.kind === 'copy') keepPlain(plan, o.data, o.p, n, sel, a, e, row, out, at);
    else
      keepDecoded(plan, wholePage(plan, page.dict, o.data, o.p, n, o.nonNull, o.enc, valid), sel, a, e, row, out, at);
    at += e - a;
    a = e;
    if (a === b) return;
  }
}

/** A page decoded whole, as the direct reader decodes it. */
function wholePage(
  plan: Plan,
  dict: Dict | null,
  data: Uint8Array,
  p: number,
  n: number,
  nonNull: number,
  enc: number,
  valid: Uint8Array | null,
): Kept {
  const words = plan.kind === 'utf8' ? null : new Int32Array(n * plan.words),
    strings = plan.kind === 'utf8' ? new Strings(new Int32Array(n + 1), data.length) : null;
  if (enc === 0) plainValues(plan, data, p, n, nonNull, 0, words, strings, valid);
  else
    dictValues(
      plan,
      dict!,
      indices({ enc, data, p, nonNull }, nonNull, new Int32Array(nonNull)),
      n,
      nonNull,
      0,
      words,
      strings,
      valid,
    );
  return { words, strings, valid };
}

/**
 * The rows `sel` (ascending, counted from the first row read: `range` skips and limits rows of the groups as the
 * direct reader does) of `fields`, one column each.
 */
export function readSelected(
  path: string,
  rowGroups: number[],
  fields: Field[],
  sel: Int32Array,
  range: DirectRange = {},
): Column[] {
  const { fd, footer } = openFooter(path);
  try {
    const plans = fields.map((f) => planOf(footer.leaves, f));
    const m = sel.length;
    const outs: Kept[] = plans.map((p) => ({
      words: p.kind === 'utf8' ? null : new Int32Array(m * p.words),
      strings: p.kind === 'utf8' ? new Strings(new Int32Array(m + 1), 64) : null,
      valid: null,
    }));
    let a = 0;
    const local = new Int32Array(m);
    for (const { rg, lo, hi, first } of groupsRead(footer, rowGroups, range)) {
      let b = a;
      while (b < m && sel[b] < first + hi - lo) {
        local[b] = sel[b] - first + lo;
        b++;
      }
      if (b > a)
        for (let i = 0; i < plans.length; i++) {
          const { chunk, bytes } = chunkOf(fd, rg, plans[i]);
          selectChunk(plans[i], chunk, bytes, rg.rows, local, a, b, outs[i], a);
        }
      a = b;
    }
    if (a !== m) throw new CorruptPage('rows selected beyond the rows read');
    return plans.map((p, i) => column(p, outs[i], m));
  } finally {
    fs.closeSync(fd);
  }
}

function column(plan: Plan, k: Kept, m: number): Column {
  const type = plan.field.type;
  if (k.strings)
    return {
      type,
      length: m,
      values: k.strings.bytes.subarray(0, k.strings.len),
      offsets: k.strings.offsets,
      valid: k.valid,
    };
  const ctor = valuesCtor(type);
  return {
    type,
    length: m,
    values: new ctor(k.words!.buffer, 0, (k.words!.byteLength / ctor.BYTES_PER_ELEMENT) | 0),
    valid: k.valid,
  };
}
