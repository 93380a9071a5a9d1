// Shuffle blocks the coordinator alone owns (a worker's output, its buffers transferred) are freed as soon as nobody
// reads them (spill/block.ts freeBlocks): spilled, or their stage done. The main thread's V8 does not see those
// buffers, so left to the garbage collector they stayed in RSS (docs/design/memory.md, "One budget per process").
import { describe, expect, it } from 'vitest';
import type { Batch } from '../dist/kernels/column.js';
import { freeBlocks } from '../dist/spill/block.js';
import { Spiller } from '../dist/spill/spiller.js';
import { tmpDir } from './helpers.js';

const block = (n: number, shared = false): Batch => {
  const values = new Int32Array(shared ? new SharedArrayBuffer(4 * n) : new ArrayBuffer(4 * n)).fill(7);
  return { length: n, columns: [{ type: { id: 'int32' }, length: n, values, valid: null }] };
};
const bytesOf = (b: Batch) => (b.columns[0].values as Int32Array).buffer.byteLength;

describe('freeBlocks', () => {
  it("frees a block's ArrayBuffers at once; shared memory, nulls and spilled blocks are left alone", () => {
    const own = block(1000),
      shared = block(1000, true);
    const spilled = { length: 3, columns: [], spill: { file: 'x', offset: 0, bytes: 12, columns: [] } };
    freeBlocks([own, null, shared, spilled as never]);
    expect(bytesOf(own)).toBe(0);
    expect(bytesOf(shared)).toBe(4000);
    expect((shared.columns[0].values as Int32Array)[999]).toBe(7);
  });
});

describe('the spiller frees what it owns, and only that', () => {
  it('owned blocks: freed once spilled, and once their stage is done; blocks it does not own stay readable', async () => {
    const s = new Spiller(10_000, tmpDir('sj-free-'));
    try {
      // kept within the budget: readable until done
      const kept = [block(100), null];
      const a = s.admit(kept, true);
      expect(a.spilled).toBe(0);
      expect(bytesOf(kept[0]!)).toBe(400);
      // past the budget: written to a spill file, the memory freed at once
      const big = [block(5000)];
      const b = s.admit(big, true);
      expect(b.spilled).toBeGreaterThan(0);
      expect(bytesOf(big[0])).toBe(0);
      // not owned (output that may view other data, a tee's rows): never freed
      const other = [block(100)];
      s.admit(other, false);
      const bigOther = [block(5000)];
      expect(s.admit(bigOther, false).spilled).toBeGreaterThan(0);
      expect(bytesOf(bigOther[0])).toBe(20000);
      s.done([a.blocks, other]);
      expect(bytesOf(kept[0]!)).toBe(0);
      expect(bytesOf(other[0])).toBe(400);
      expect((other[0].columns[0].values as Int32Array)[99]).toBe(7);
    } finally {
      await s.close();
    }
  });
});
