// Parquet's RLE/bit-packed hybrid (definition levels, dictionary indices),
// decoded a page at a time into 32-bit integers.
import { NotDirect } from './parquet-footer.js';

export class CorruptPage extends Error {}

/**
 * Decode `count` values of `bitWidth` bits from buf[pos, end) into out[0,
 * count); returns the position after the runs read.
 */
// a bit-packed run copied to 32-bit words (a memcpy), so that a value takes one or two word reads
let words = new Int32Array(1 << 14);
// its bytes: a view kept, not made a run (JCC-H's l_returnflag: a bit-packed run every 73 values)
let wordBytes = new Uint8Array(words.buffer);

function unpack(
  buf: Uint8Array,
  pos: number,
  bytes: number,
  bitWidth: number,
  out: Int32Array,
  at: number,
  take: number,
) {
  // bytes past the run in the last word are never read into a value: a value's bits all lie within the run
  const nw = (bytes + 3) >> 2;
  if (words.length < nw) {
    words = new Int32Array(nw * 2);
    wordBytes = new Uint8Array(words.buffer);
  }
  const w = words;
  if (bytes <= 64) for (let k = 0; k < bytes; k++) wordBytes[k] = buf[pos + k];
  else wordBytes.set(buf.subarray(pos, pos + bytes));
  const mask = (1 << bitWidth) - 1;
  for (let k = 0, bit = 0; k < take; k++, bit += bitWidth) {
    const q = bit >>> 5,
      off = bit & 31;
    let v = w[q] >>> off;
    if (off + bitWidth > 32) v |= w[q + 1] << (32 - off);
    out[at + k] = v & mask;
  }
}

export function rleHybrid(
  buf: Uint8Array,
  pos: number,
  end: number,
  bitWidth: number,
  out: Int32Array,
  count: number,
): number {
  if (bitWidth > 24) throw new NotDirect(`bit width ${bitWidth}`);
  if (bitWidth === 0) {
    out.fill(0, 0, count);
    return pos;
  }
  const valueBytes = (bitWidth + 7) >> 3;
  let i = 0;
  while (i < count) {
    if (pos >= end) throw new CorruptPage('RLE data ends early');
    let b = buf[pos++],
      header = b & 0x7f;
    // a header of one byte (runs under 64 values, groups under 64) read without the loop
    for (let shift = 7; b >= 0x80 && shift < 35; shift += 7) {
      if (pos >= end) throw new CorruptPage('RLE header ends early');
      b = buf[pos++];
      header += (b & 0x7f) * 2 ** shift;
    }
    if (header & 1) {
      // bit-packed groups of 8 values, least significant bit first
      const groups = (header - 1) / 2,
        bytes = groups * bitWidth;
      if (pos + bytes > end) throw new CorruptPage('bit-packed run ends early');
      const take = Math.min(groups * 8, count - i);
      unpack(buf, pos, bytes, bitWidth, out, i, take);
      i += take;
      pos += bytes;
    } else {
      const run = header / 2;
      if (pos + valueBytes > end) throw new CorruptPage('RLE run ends early');
      let v = 0;
      for (let k = 0; k < valueBytes; k++) v |= buf[pos + k] << (8 * k);
      pos += valueBytes;
      const take = Math.min(run, count - i);
      // short runs (a flag's, a small dictionary's) by a loop: fill's call costs more than their stores
      if (take <= 32) for (let k = i; k < i + take; k++) out[k] = v;
      else out.fill(v, i, i + take);
      i += take;
    }
  }
  return pos;
}

/**
 * Definition levels of a flat optional column (bit width 1) for n rows: the
 * count of values present; when some are null, 0/1 per row into valid[at, at + n)
 * (the caller allocates `valid` lazily through `validFor`).
 */
export function defLevels(
  buf: Uint8Array,
  pos: number,
  end: number,
  n: number,
  scratch: Int32Array,
  validFor: () => Uint8Array,
  at: number,
): number {
  // one run of "present" over the page, the common case, needs no array
  if (pos + 2 <= end && (buf[pos] & 0x81) === 0 && buf[pos] >> 1 >= n && buf[pos + 1] === 1) return n;
  if (pos + 4 <= end && (buf[pos] & 0x80) !== 0) {
    let header = 0,
      shift = 0,
      p = pos,
      b: number;
    do {
      b = buf[p++];
      header += (b & 0x7f) * 2 ** shift;
      shift += 7;
    } while (b >= 0x80 && p < end && shift < 35);
    if (b < 0x80 && header % 2 === 0 && header / 2 >= n && p < end && buf[p] === 1) return n;
  }
  rleHybrid(buf, pos, end, 1, scratch, n);
  let present = 0;
  for (let k = 0; k < n; k++) present += scratch[k];
  if (present === n) return n;
  const valid = validFor();
  for (let k = 0; k < n; k++) valid[at + k] = scratch[k];
  return present;
}
