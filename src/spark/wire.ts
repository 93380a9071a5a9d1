// The protobuf wire format, just what the Spark Connect client needs: messages
// written from (field number, value) lists and read into field-number maps.
// Field numbers are facts of Spark's protocol; they stand beside each use (client.ts).

/** A message to encode: its fields in order; a nested message is itself a Fields list; undefined fields are skipped. */
type FieldValue = string | number | boolean | Uint8Array | Fields | undefined;
export type Fields = [number, FieldValue][];

function varint(out: number[], v: number): void {
  // field numbers, lengths and enum values only: below 2^31
  while (v > 0x7f) {
    out.push((v & 0x7f) | 0x80);
    v >>>= 7;
  }
  out.push(v);
}

/** Encode a message: strings as UTF-8, numbers and booleans as varints, nested lists as messages. */
export function encode(fields: Fields): Uint8Array {
  const parts: Uint8Array[] = [];
  let size = 0;
  const push = (b: Uint8Array) => {
    parts.push(b);
    size += b.length;
  };
  for (const [no, v] of fields) {
    if (v === undefined) continue;
    const head: number[] = [];
    if (typeof v === 'number' || typeof v === 'boolean') {
      varint(head, (no << 3) | 0);
      varint(head, Number(v));
      push(Uint8Array.from(head));
      continue;
    }
    const body = typeof v === 'string' ? new TextEncoder().encode(v) : v instanceof Uint8Array ? v : encode(v);
    varint(head, (no << 3) | 2);
    varint(head, body.length);
    push(Uint8Array.from(head));
    push(body);
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A decoded message: each field number's values in order (varints as bigint, length-delimited as bytes). */
export type Decoded = Map<number, (bigint | Uint8Array)[]>;

/** Decode one message; fixed 32/64-bit fields are skipped (the client reads none). */
export function decode(buf: Uint8Array): Decoded {
  const m: Decoded = new Map();
  let i = 0;
  const readVarint = (): bigint => {
    let r = 0n,
      shift = 0n;
    for (;;) {
      if (i >= buf.length) throw new Error('truncated protobuf message');
      const b = buf[i++];
      r |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return r;
      shift += 7n;
    }
  };
  while (i < buf.length) {
    const key = Number(readVarint());
    const no = key >>> 3,
      wt = key & 7;
    let v: bigint | Uint8Array;
    if (wt === 0) v = readVarint();
    else if (wt === 2) {
      const n = Number(readVarint());
      v = buf.subarray(i, i + n);
      i += n;
    } else if (wt === 1) {
      i += 8;
      continue;
    } else if (wt === 5) {
      i += 4;
      continue;
    } else throw new Error(`unsupported protobuf wire type ${wt}`);
    const list = m.get(no);
    if (list) list.push(v);
    else m.set(no, [v]);
  }
  return m;
}

const text = new TextDecoder();
export const str = (m: Decoded, no: number): string => {
  const v = m.get(no)?.[0];
  return v instanceof Uint8Array ? text.decode(v) : '';
};
export const strs = (m: Decoded, no: number): string[] =>
  (m.get(no) ?? []).map((v) => (v instanceof Uint8Array ? text.decode(v) : ''));
export const num = (m: Decoded, no: number): number => {
  const v = m.get(no)?.[0];
  return typeof v === 'bigint' ? Number(v) : 0;
};
export const bytes = (m: Decoded, no: number): Uint8Array | undefined => {
  const v = m.get(no)?.[0];
  return v instanceof Uint8Array ? v : undefined;
};
export const msg = (m: Decoded, no: number): Decoded | undefined => {
  const b = bytes(m, no);
  return b ? decode(b) : undefined;
};
export const msgs = (m: Decoded, no: number): Decoded[] =>
  (m.get(no) ?? []).filter((v): v is Uint8Array => v instanceof Uint8Array).map(decode);
