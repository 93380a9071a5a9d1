// Heavy hitters in bounded memory: a Space-Saving summary of m counters.
//
// Kept as Misra-Gries counters in a small open-addressing table (typed
// arrays, amortized O(1) per row) plus the total decrement d; the two are
// equivalent: Space-Saving's count of a key is its Misra-Gries count + d, with
// error d <= n / (m + 1). So every reported count is >= the true count and at
// most n/(m+1) above it, and every key with more than n/(m+1) rows is kept.

interface SketchEntry {
  /** the key's identity: its 32-bit hash */
  hash: number;
  /** Space-Saving count: never below the true count */
  count: number;
  /** the most the count may exceed the truth */
  error: number;
  /** where a row with this key was seen: [batch, row] of the map task's input */
  batch: number;
  row: number;
}

export interface Sketch {
  capacity: number;
  /** rows summarized */
  n: number;
  /** total decrement: a key absent from the summary has at most this many rows */
  d: number;
  entries: SketchEntry[];
}

/**
 * Largest count first; one function for the module (a comparator written in place is a new closure each call, compiled
 * again after each full GC).
 */
const byCountDesc = (a: { count: number }, b: { count: number }) => b.count - a.count;

export class SpaceSaving {
  // Dense entries 0..size-1, and an open-addressing index (slot → entry, -1 empty).
  private readonly keys: Int32Array;
  private readonly counts: Float64Array;
  private readonly batchOf: Int32Array;
  private readonly rowOf: Int32Array;
  private readonly slots: Int32Array;
  private readonly mask: number;
  private size = 0;
  n = 0;
  d = 0;

  constructor(readonly capacity: number) {
    let cap = 8;
    while (cap < capacity * 2) cap *= 2;
    this.mask = cap - 1;
    this.slots = new Int32Array(cap).fill(-1);
    this.keys = new Int32Array(capacity);
    this.counts = new Float64Array(capacity);
    this.batchOf = new Int32Array(capacity);
    this.rowOf = new Int32Array(capacity);
  }

  /** Count one row whose key hashes to `hash` (seen at [batch, row]). */
  add(hash: number, batch: number, row: number): void {
    this.n++;
    const { slots, keys, mask } = this;
    let s = hash & mask;
    for (let e = slots[s]; e >= 0; e = slots[s]) {
      if (keys[e] === hash) {
        this.counts[e]++;
        return;
      }
      s = (s + 1) & mask;
    }
    if (this.size === this.capacity) {
      this.decrementAll();
      return;
    }
    const e = this.size++;
    slots[s] = e;
    keys[e] = hash;
    this.counts[e] = 1;
    this.batchOf[e] = batch;
    this.rowOf[e] = row;
  }

  /** Count every `stride`-th row of a batch whose key is not null (the hot loop of add, inlined). */
  addAll(hash: Int32Array, skip: Uint8Array | null, batch: number, stride = 1): void {
    const seen = this.countAll(hash, skip, batch, stride); // first: add() counts into this.n too
    this.n += seen;
  }

  /** addAll's loop, alone in its function (see groupIdsOfRows in agg/joinagg.ts): returns the rows counted in place. */
  private countAll(hash: Int32Array, skip: Uint8Array | null, batch: number, stride: number): number {
    const { slots, keys, counts, mask } = this;
    let seen = 0;
    for (let i = 0; i < hash.length; i += stride) {
      if (skip !== null && skip[i]) continue;
      const h = hash[i];
      let s = h & mask;
      let e = slots[s];
      while (e >= 0 && keys[e] !== h) {
        s = (s + 1) & mask;
        e = slots[s];
      }
      if (e >= 0) {
        counts[e]++;
        seen++;
      } else this.add(h, batch, i);
    }
    return seen;
  }

  /** Misra-Gries step: the new key and every counter lose one; empty counters go. */
  private decrementAll(): void {
    this.d++;
    const { keys, counts, batchOf, rowOf, slots, mask } = this;
    let live = 0;
    for (let e = 0; e < this.size; e++) {
      const c = counts[e] - 1;
      if (c <= 0) continue;
      keys[live] = keys[e];
      counts[live] = c;
      batchOf[live] = batchOf[e];
      rowOf[live] = rowOf[e];
      live++;
    }
    this.size = live;
    slots.fill(-1);
    for (let e = 0; e < live; e++) {
      let s = keys[e] & mask;
      while (slots[s] >= 0) s = (s + 1) & mask;
      slots[s] = e;
    }
  }

  summary(): Sketch {
    const entries: SketchEntry[] = [];
    for (let e = 0; e < this.size; e++) {
      entries.push({
        hash: this.keys[e],
        count: this.counts[e] + this.d,
        error: this.d,
        batch: this.batchOf[e],
        row: this.rowOf[e],
      });
    }
    entries.sort(byCountDesc);
    return { capacity: this.capacity, n: this.n, d: this.d, entries };
  }
}

/**
 * A summary that lives as long as the thread: while one object of the class
 * lives, so do its maps. When every summary of a run had died, a full GC
 * freed them, and the next run's summaries (new maps) deoptimized the
 * compiled addAll and decrementAll ("wrong map", seen with --trace-deopt).
 */
// biome-ignore lint/correctness/noUnusedVariables: it exists to keep the class's maps alive
const KEEP_MAPS = new SpaceSaving(1);

/**
 * Merge summaries: a key missing from one summary may have up to that
 * summary's d rows there, so d is added to both its count and its error.
 * Keeps the `capacity` largest; each entry keeps the fields of its first sighting.
 */
export function mergeSketches<E extends { hash: number; count: number; error: number }>(
  parts: { d: number; entries: E[] }[],
  capacity: number,
): E[] {
  const byHash = new Map<number, { e: E; count: number; error: number; seen: number }>();
  let dTotal = 0;
  for (const part of parts) {
    dTotal += part.d;
    for (const e of part.entries) {
      const m = byHash.get(e.hash);
      if (m) {
        m.count += e.count;
        m.error += e.error;
        m.seen += part.d;
      } else byHash.set(e.hash, { e, count: e.count, error: e.error, seen: part.d });
    }
  }
  const out = [...byHash.values()].map((m) => {
    const missing = dTotal - m.seen; // the d of the summaries that did not list the key
    return { ...m.e, count: m.count + missing, error: m.error + missing };
  });
  out.sort(byCountDesc);
  return out.slice(0, capacity);
}
