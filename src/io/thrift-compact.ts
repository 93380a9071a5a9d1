// A writer of Thrift's compact protocol, as much of it as Parquet's page
// headers and footer need: structs, lists of structs, strings, binaries,
// integers, booleans. The caller writes fields in ascending id order.

/** Compact-protocol type codes. */
export const T = { TRUE: 1, FALSE: 2, BYTE: 3, I16: 4, I32: 5, I64: 6, BINARY: 8, LIST: 9, STRUCT: 12 } as const;

const utf8 = new TextEncoder();

export class ThriftWriter {
  private buf = new Uint8Array(256);
  private len = 0;
  /** the last field id written in each open struct (the innermost last) */
  private last: number[] = [0];

  /** Start over (the buffer is kept). */
  reset(): this {
    this.len = 0;
    this.last = [0];
    return this;
  }

  /** The bytes written so far (a view: valid until the next write). */
  bytes(): Uint8Array {
    return this.buf.subarray(0, this.len);
  }

  private room(n: number) {
    if (this.len + n <= this.buf.length) return;
    const b = new Uint8Array(Math.max(this.buf.length * 2, this.len + n));
    b.set(this.buf.subarray(0, this.len));
    this.buf = b;
  }

  private byte(x: number) {
    this.room(1);
    this.buf[this.len++] = x;
  }

  /** An unsigned varint of a non-negative integer up to 2^53 (file offsets and sizes). */
  private varint(x: number) {
    this.room(10);
    while (x >= 0x80) {
      this.buf[this.len++] = (x % 0x80) | 0x80;
      x = Math.floor(x / 0x80);
    }
    this.buf[this.len++] = x;
  }

  /** Zigzag: 0, -1, 1, -2 ... to 0, 1, 2, 3 ... (safe up to 2^52 in magnitude). */
  private zigzag(x: number) {
    this.varint(x >= 0 ? 2 * x : -2 * x - 1);
  }

  private header(id: number, type: number) {
    const delta = id - this.last[this.last.length - 1];
    if (delta > 0 && delta <= 15) this.byte((delta << 4) | type);
    else {
      this.byte(type);
      this.zigzag(id);
    }
    this.last[this.last.length - 1] = id;
  }

  i32(id: number, x: number): this {
    this.header(id, T.I32);
    this.zigzag(x);
    return this;
  }
  i64(id: number, x: number): this {
    this.header(id, T.I64);
    this.zigzag(x);
    return this;
  }
  i8(id: number, x: number): this {
    this.header(id, T.BYTE);
    this.byte(x & 0xff);
    return this;
  }
  bool(id: number, x: boolean): this {
    this.header(id, x ? T.TRUE : T.FALSE);
    return this;
  }

  /** Bytes with their length in front (a binary field's value, a list's string element). */
  private raw(b: Uint8Array) {
    this.varint(b.length);
    this.room(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
  }

  binary(id: number, b: Uint8Array): this {
    this.header(id, T.BINARY);
    this.raw(b);
    return this;
  }

  string(id: number, s: string): this {
    return this.binary(id, utf8.encode(s));
  }

  /** Open a struct field (or, with id 0, a struct element of a list); close it with end(). */
  begin(id = 0): this {
    if (id > 0) this.header(id, T.STRUCT);
    this.last.push(0);
    return this;
  }

  end(): this {
    this.byte(0);
    this.last.pop();
    return this;
  }

  /** A list field's header: `n` elements of `type` follow (structs: begin()/end() each). */
  list(id: number, type: number, n: number): this {
    this.header(id, T.LIST);
    if (n < 15) this.byte((n << 4) | type);
    else {
      this.byte(0xf0 | type);
      this.varint(n);
    }
    return this;
  }

  /** Elements of a list of i32 or strings (after list()). */
  i32Element(x: number): this {
    this.zigzag(x);
    return this;
  }
  stringElement(s: string): this {
    this.raw(utf8.encode(s));
    return this;
  }
}
