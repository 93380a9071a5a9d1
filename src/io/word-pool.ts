// The direct reader's column words (io/parquet-direct.ts), reused by the
// thread's next scans: a map task's decimal columns of a 500,000-row row group
// are 4 MB each, and allocating them fresh for every task (zeroed pages, then
// the collections their external memory drives) cost about a tenth of TPC-H
// q06's CPU. A scan leases arrays for its batches and gives them back when
// the task releases its scanned columns (physical/kernels.ts: after the sink, which
// copies whatever it keeps, as for views into parquet-wasm's memory).

/** Bytes of free arrays a thread keeps at most. */
const POOL_BYTES = 64 * 1024 * 1024;

const free = new Map<number, Int32Array[]>();
let pooled = 0;

/** Arrays taken for one scan's batches, returned together. Their contents are not zeroed: every word is written. */
export class WordLease {
  private held: Int32Array[] = [];

  take(n: number): Int32Array {
    const a = free.get(n)?.pop();
    if (a) pooled -= a.byteLength;
    const out = a ?? new Int32Array(n);
    this.held.push(out);
    return out;
  }

  /** Gives the arrays back: nothing may read the batches made of them any more. */
  release(): void {
    for (const a of this.held) {
      if (pooled + a.byteLength > POOL_BYTES) continue;
      let list = free.get(a.length);
      if (!list) free.set(a.length, (list = []));
      list.push(a);
      pooled += a.byteLength;
    }
    this.held = [];
  }
}

/** Bytes held free by this thread's pool (tests). */
export const pooledBytes = () => pooled;
