// Typed arrays a window task reuses for what does not leave it: the packed keys, the partition of each row, the row
// order, the sorted numbers, the shape's cuts and bounds. A fresh array costs a page fault every 4 KB it is first
// written (on this VM about 5 us a page: 10 ms for a 5.6 MB Float64Array of 700,000 rows, more than the loop that
// fills it); kept, its pages stay mapped. One set a thread: a task's produce() runs to its end synchronously, so no
// two tasks hold a slot at once; within a task each slot has one owner (the names below). Past MAX_BYTES an array
// is made fresh and not kept, so that a thread holds at most a few slots of that size.
const MAX_BYTES = 16 * 1024 * 1024;

export type Slot =
  | 'codes'
  | 'part'
  /** each partition's end, then start, in the packed sort's counting (window/packed.ts) */
  | 'partAt'
  | 'order'
  | 'sorted'
  | 'partCut'
  | 'peerCut'
  | 'partStart'
  | 'partEnd'
  | 'peerStart'
  | 'peerEnd'
  /** a segment's LSD radix sort (window/packed.ts radixSegment): its keys and rows, and their copies a pass */
  | 'radixKey'
  | 'radixIdx'
  | 'radixKeyT'
  | 'radixIdxT'
  /** lag/lead's rows to gather (window/functions.ts offsetRow) */
  | 'offsetRows'
  /** a task's input column c concatenated (window/source.ts), and its validity */
  | `in${number}`
  | `valid${number}`;

const kept = new Map<Slot, ArrayBuffer>();

function buffer(slot: Slot, bytes: number): ArrayBuffer | null {
  if (bytes > MAX_BYTES) return null;
  let b = kept.get(slot);
  if (b === undefined || b.byteLength < bytes) {
    b = new ArrayBuffer(Math.max(bytes, 64 * 1024));
    kept.set(slot, b);
  }
  return b;
}

/** n float64s of the slot, contents left from before (the caller writes each). */
export function scratchF64(slot: Slot, n: number): Float64Array {
  const b = buffer(slot, 8 * n);
  return b === null ? new Float64Array(n) : new Float64Array(b, 0, n);
}

/** n int32s of the slot, contents left from before (the caller writes each). */
export function scratchI32(slot: Slot, n: number): Int32Array {
  const b = buffer(slot, 4 * n);
  return b === null ? new Int32Array(n) : new Int32Array(b, 0, n);
}

/** `bytes` bytes of the slot, contents left from before; null past MAX_BYTES. */
export function scratchBytes(slot: Slot, bytes: number): ArrayBuffer | null {
  return buffer(slot, bytes);
}

/** n bytes of the slot, zeroed. */
export function scratchZeroU8(slot: Slot, n: number): Uint8Array {
  const b = buffer(slot, n);
  return b === null ? new Uint8Array(n) : new Uint8Array(b, 0, n).fill(0);
}
