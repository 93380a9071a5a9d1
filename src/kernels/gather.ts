// Rows picked by index (gathers): fixed-width columns a word size at a time, strings by offsets, validity; an
// index of -1 gives a null. Used wherever rows are chosen: filters, joins' matched pairs, sorts, splits.
import { type Batch, type Column, type DataType, allocValues, rowWidth } from './data-type.js';

// Fixed-width gathers by element size, each over one array type so that the
// loops stay monomorphic: 8-byte values move as two 32-bit words, which keeps
// float and int64 bit patterns intact.
function gather1(dst: Uint8Array, at: number, src: Uint8Array, idx: Int32Array, n: number) {
  for (let i = 0; i < n; i++) {
    const j = idx[i];
    dst[at + i] = j < 0 ? 0 : src[j];
  }
}
function gather2(dst: Uint16Array, at: number, src: Uint16Array, idx: Int32Array, n: number) {
  for (let i = 0; i < n; i++) {
    const j = idx[i];
    dst[at + i] = j < 0 ? 0 : src[j];
  }
}
function gather4(dst: Int32Array, at: number, src: Int32Array, idx: Int32Array, n: number) {
  for (let i = 0; i < n; i++) {
    const j = idx[i];
    dst[at + i] = j < 0 ? 0 : src[j];
  }
}
function gather8(dst: Int32Array, at: number, src: Int32Array, idx: Int32Array, n: number) {
  for (let i = 0; i < n; i++) {
    const j = idx[i],
      d = 2 * (at + i);
    if (j < 0) {
      dst[d] = 0;
      dst[d + 1] = 0;
    } else {
      dst[d] = src[2 * j];
      dst[d + 1] = src[2 * j + 1];
    }
  }
}

function gather16(dst: Int32Array, at: number, src: Int32Array, idx: Int32Array, n: number) {
  for (let i = 0; i < n; i++) {
    const j = idx[i],
      d = 4 * (at + i);
    if (j < 0) {
      dst[d] = 0;
      dst[d + 1] = 0;
      dst[d + 2] = 0;
      dst[d + 3] = 0;
    } else {
      const s = 4 * j;
      dst[d] = src[s];
      dst[d + 1] = src[s + 1];
      dst[d + 2] = src[s + 2];
      dst[d + 3] = src[s + 3];
    }
  }
}

/**
 * n values of the given width (all of them by default) as 8-, 16- or 32-bit words (8-byte values as two words each).
 */
export function wordView(a: ArrayBufferView, width: number, n = a.byteLength / width): any {
  if (width === 1) return new Uint8Array(a.buffer, a.byteOffset, n);
  if (width === 2) return new Uint16Array(a.buffer, a.byteOffset, n);
  return new Int32Array(a.buffer, a.byteOffset, (n * width) / 4);
}

/**
 * Rows of several columns of one type picked by index lists, concatenated:
 * rows idxs[0] of cols[0], then idxs[1] of cols[1], ... An index of -1 gives
 * a null (the missing side of an outer join).
 */
export function gatherMany(
  type: DataType,
  cols: Column[],
  idxs: Int32Array[],
  counts?: number[],
  noMissing = false,
): Column {
  // No loop over rows here, only over the columns (a few): every row loop is a
  // function of its own (see groupIdsOfRows in agg/joinagg.ts). This function
  // sees every column type and shape; when it held the loops, each new one
  // deoptimized it and the whole of it was compiled again, loops and all
  // (TPC-H q10: about 30 compilations of it, over 200 ms of CPU a run).
  const ns: number[] = [];
  let n = 0;
  for (let k = 0; k < idxs.length; k++) {
    const m = counts?.[k] ?? idxs[k].length;
    ns.push(m);
    n += m;
  }
  let needValid = false;
  if (noMissing) needValid = cols.some((c) => c.valid !== null);
  else
    for (let k = 0; k < cols.length && !needValid; k++)
      needValid = cols[k].valid !== null || anyMissing(idxs[k], ns[k]);
  let valid: Uint8Array | null = null;
  if (needValid) {
    valid = new Uint8Array(n);
    let at = 0;
    for (let k = 0; k < cols.length; k++) {
      const src = cols[k].valid;
      if (src) gather1(valid, at, src, idxs[k], ns[k]);
      else presentRows(valid, at, idxs[k], ns[k]);
      at += ns[k];
    }
  }
  if (type.id === 'utf8') {
    const offsets = new Int32Array(n + 1);
    let total = 0,
      at = 0;
    for (let k = 0; k < cols.length; k++) {
      total = stringOffsets(offsets, at, cols[k].offsets!, idxs[k], ns[k], total);
      at += ns[k];
    }
    const out = new Uint8Array(total);
    at = 0;
    for (let k = 0; k < cols.length; k++) {
      gatherStrings(out, offsets, at, cols[k].offsets!, cols[k].values as Uint8Array, idxs[k], ns[k]);
      at += ns[k];
    }
    return { type, length: n, values: out, offsets, valid };
  }
  const values = allocValues(type, n);
  const width = rowWidth(type);
  const dst = wordView(values, width);
  let at = 0;
  for (let k = 0; k < cols.length; k++) {
    const src = wordView(cols[k].values, width);
    if (width === 1) gather1(dst, at, src, idxs[k], ns[k]);
    else if (width === 2) gather2(dst, at, src, idxs[k], ns[k]);
    else if (width === 4) gather4(dst, at, src, idxs[k], ns[k]);
    else if (width === 8) gather8(dst, at, src, idxs[k], ns[k]);
    else gather16(dst, at, src, idxs[k], ns[k]);
    at += ns[k];
  }
  return { type, length: n, values, valid };
}

/** Whether any of the first n indices is -1 (a missing row). */
function anyMissing(idx: Int32Array, n: number): boolean {
  let missing = false;
  for (let i = 0; i < n && !missing; i++) missing = idx[i] < 0;
  return missing;
}

/** Validity of rows picked from a column without nulls: 0 where the index is -1. */
function presentRows(valid: Uint8Array, at: number, idx: Int32Array, n: number): void {
  for (let i = 0; i < n; i++) valid[at + i] = idx[i] < 0 ? 0 : 1;
}

/** End offsets of the picked strings, from `total` on; returns the new total. */
function stringOffsets(
  offsets: Int32Array,
  at: number,
  o: Int32Array,
  idx: Int32Array,
  n: number,
  total: number,
): number {
  let t = total;
  for (let i = 0; i < n; i++) {
    const j = idx[i];
    if (j >= 0) t += o[j + 1] - o[j];
    offsets[at + i + 1] = t;
  }
  return t;
}

/** The picked strings' bytes to their offsets (stringOffsets). */
function gatherStrings(
  out: Uint8Array,
  offsets: Int32Array,
  at: number,
  o: Int32Array,
  bytes: Uint8Array,
  idx: Int32Array,
  n: number,
): void {
  for (let i = 0; i < n; i++) {
    const j = idx[i];
    if (j < 0) continue;
    const s = o[j],
      e = o[j + 1];
    let p = offsets[at + i];
    if (e - s < 32) for (let x = s; x < e; x++) out[p++] = bytes[x];
    else out.set(bytes.subarray(s, e), p);
  }
}

/** Rows picked by index; an index of -1 gives a null. */
export function gather(c: Column, idx: Int32Array, n = idx.length): Column {
  return gatherMany(c.type, [c], [idx], [n]);
}

/** Rows picked by a selection (indices, none -1): the scan for missing rows is skipped. */
export function gatherSelected(c: Column, idx: Int32Array, n: number): Column {
  return gatherMany(c.type, [c], [idx], [n], true);
}

export function gatherBatch(b: Batch, idx: Int32Array, n = idx.length): Batch {
  return { length: n, columns: b.columns.map((c) => gather(c, idx, n)) };
}
