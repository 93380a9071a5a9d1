// A reader of Thrift's compact protocol, as much as Parquet's footer and page
// headers need: each struct becomes an object keyed by field id (lists as
// arrays, binaries as views); fields a reader does not know are kept, unused.
// Malformed input throws a ThriftError (the caller names the file).

class ThriftError extends Error {}

/** A decoded struct: field id to value. */
export type TStruct = { [id: number]: TValue };
export type TValue = number | boolean | Uint8Array | TStruct | TValue[];

export class ThriftReader {
  pos: number;
  constructor(
    private readonly buf: Uint8Array,
    pos = 0,
    private readonly end = buf.length,
  ) {
    this.pos = pos;
  }

  private byte(): number {
    if (this.pos >= this.end) throw new ThriftError('truncated Thrift data');
    return this.buf[this.pos++];
  }

  /** An unsigned varint (as a float64 integer: offsets and sizes stay exact below 2^53). */
  private varint(): number {
    let x = 0,
      mul = 1;
    for (let i = 0; i < 10; i++) {
      const b = this.byte();
      x += (b & 0x7f) * mul;
      if (b < 0x80) return x;
      mul *= 128;
    }
    throw new ThriftError('bad varint');
  }

  private zigzag(): number {
    const u = this.varint();
    return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
  }

  private value(type: number): TValue {
    switch (type) {
      case 1:
        return true;
      case 2:
        return false;
      case 3: {
        const b = this.byte();
        return b > 127 ? b - 256 : b;
      }
      case 4:
      case 5:
      case 6:
        return this.zigzag();
      case 7: {
        if (this.pos + 8 > this.end) throw new ThriftError('truncated Thrift data');
        const v = new DataView(this.buf.buffer, this.buf.byteOffset + this.pos, 8).getFloat64(0, true);
        this.pos += 8;
        return v;
      }
      case 8: {
        const n = this.varint();
        if (this.pos + n > this.end) throw new ThriftError('truncated Thrift binary');
        const v = this.buf.subarray(this.pos, this.pos + n);
        this.pos += n;
        return v;
      }
      case 9:
      case 10: {
        const h = this.byte();
        let n = h >> 4;
        if (n === 15) n = this.varint();
        const et = h & 15;
        if (n > this.end - this.pos) throw new ThriftError('bad Thrift list size');
        const out: TValue[] = new Array(n);
        // booleans in a list are a byte each
        for (let i = 0; i < n; i++) out[i] = et === 1 || et === 2 ? this.byte() === 1 : this.value(et);
        return out;
      }
      case 11: {
        const n = this.varint();
        if (n === 0) return [];
        const kv = this.byte();
        const out: TValue[] = [];
        for (let i = 0; i < n; i++) out.push([this.value(kv >> 4), this.value(kv & 15)]);
        return out;
      }
      case 12:
        return this.struct();
      default:
        throw new ThriftError(`bad Thrift type ${type}`);
    }
  }

  /** One struct from the current position. */
  struct(): TStruct {
    const out: TStruct = {};
    let id = 0;
    for (;;) {
      const h = this.byte();
      if (h === 0) return out;
      const delta = h >> 4;
      id = delta === 0 ? this.zigzag() : id + delta;
      out[id] = this.value(h & 15);
    }
  }
}
