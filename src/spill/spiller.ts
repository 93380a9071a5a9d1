// The coordinator's side of the memory budget: shuffle output admitted while
// it fits `memoryLimit`, written to the query's spill folder when it does not,
// released when the stage that reads it is done. The budget is one per process,
// as DuckDB's memory_limit is one per database: queries running at once in a
// library process share it (their worker threads are shared too).
import type { Batch } from '../kernels/column.js';
import { blockBytes, freeBlocks, isSpilled, writeBlocks } from './block.js';
import { letGo } from './collect.js';
import { SpillFolder } from './folder.js';

/**
 * The process's data budget: what every running query holds, against the largest data budget among them. Three
 * queries each given 1 GB hold 1 GB of data between them, not 3 GB (each alone may still use all of it).
 */
class ProcessMemory {
  held = 0;
  private readonly limits = new Map<Spiller, number>();
  join(s: Spiller, limit: number): void {
    this.limits.set(s, limit);
  }
  leave(s: Spiller): void {
    this.limits.delete(s);
  }
  get limit(): number {
    let m = 0;
    for (const l of this.limits.values()) m = Math.max(m, l);
    return m;
  }
  get queries(): number {
    return this.limits.size;
  }
}
const PROCESS = new ProcessMemory();

/**
 * A major collection of the main thread once data of a quarter of the process's budget was let go of
 * (spill/collect.ts): what the coordinator drops is freed while the queries run, not left in RSS beside what they
 * hold.
 */
const COLLECT_SHARE = 1 / 4;
const dropped = (bytes: number) => letGo(bytes, PROCESS.limit * COLLECT_SHARE);

/** Data held by the queries running in this process, and how many there are (for tests and scripts). */
export const processMemory = (): { held: number; limit: number; queries: number } => ({
  held: PROCESS.held,
  limit: PROCESS.limit,
  queries: PROCESS.queries,
});

export class Spiller {
  /** bytes of shuffle data this query holds in memory now */
  private held = 0;
  /** blocks held whose buffers the query alone owns (a worker's output): freed at once when done (see freeBlocks) */
  private readonly owned = new WeakSet<Batch>();
  spilledBytes = 0;
  readonly folder: SpillFolder;

  /** `limit`: this query's data budget (the process's is the largest of the running queries'). */
  constructor(
    readonly limit: number,
    spillDir: string,
  ) {
    this.folder = new SpillFolder(spillDir);
    PROCESS.join(this, limit);
  }

  /** Bytes the query may still hold: its own budget's rest, within what the process's budget has left. */
  private room(): number {
    return Math.min(this.limit - this.held, PROCESS.limit - PROCESS.held);
  }

  /**
   * One map task's shuffle blocks: kept when they fit the budget, else all
   * written to one spill file (they share one buffer: keeping some would free
   * nothing). Returns the blocks to hold and the bytes spilled. `owned`: nothing else views the blocks' buffers (a
   * worker's output): once written, or once `done`, their memory is freed at once (see freeBlocks).
   */
  admit(blocks: (Batch | null)[], owned = false): { blocks: (Batch | null)[]; spilled: number } {
    let bytes = 0;
    for (const b of blocks) if (b) bytes += blockBytes(b);
    if (bytes === 0 || bytes <= this.room()) {
      this.reserve(bytes);
      if (owned) for (const b of blocks) if (b) this.owned.add(b);
      return { blocks, spilled: 0 };
    }
    const r = this.folder.writeFile((fd, file) => writeBlocks(fd, file, 0, blocks));
    this.spilledBytes += r.bytes;
    if (owned) freeBlocks(blocks);
    dropped(bytes);
    return { blocks: r.blocks, spilled: r.bytes };
  }

  /** Bytes the budget has left for data now. */
  free(): number {
    return Math.max(0, this.room());
  }

  /** Count data held outside shuffle blocks (a broadcast table, a measured join side) until release(). */
  reserve(bytes: number): void {
    this.held += bytes;
    PROCESS.held += bytes;
  }

  /** Blocks admitted in memory (`heldBytes` of them) are no longer needed: their bytes return to the budget. */
  release(bytes: number): void {
    this.held -= bytes;
    PROCESS.held -= bytes;
    dropped(bytes);
  }

  /** A stage is done with its whole shuffle: the blocks' memory back to the budget, their spill files unlinked. */
  done(blocks: (Batch | null)[][]): void {
    this.release(heldBytes(blocks));
    this.discard(blocks);
    freeBlocks(this.ownedOf(blocks));
  }

  private *ownedOf(blocks: (Batch | null)[][]): Iterable<Batch> {
    for (const bs of blocks) for (const b of bs) if (b && this.owned.has(b)) yield b;
  }

  /**
   * The spill files of these blocks are read by nobody any more (a stage is done with its whole shuffle): unlinked in
   * the background.
   */
  discard(blocks: Iterable<(Batch | null)[]>): void {
    const files = new Set<string>();
    for (const bs of blocks) for (const b of bs) if (b && isSpilled(b)) files.add(b.spill.file);
    if (files.size > 0) this.folder.discard(files);
  }

  /** Remove the spill folder, its files unlinked in parallel (the exit and signal handlers remove it synchronously). */
  close(): Promise<void> {
    // whatever the query still counts (a run that failed mid-stage) goes back to the process
    PROCESS.held -= this.held;
    dropped(this.held);
    this.held = 0;
    PROCESS.leave(this);
    return this.folder.removeAsync();
  }
}

/**
 * Bytes of the blocks held in memory (not spilled); count them before the blocks are sent away (a transfer empties
 * them).
 */
export function heldBytes(blocks: Iterable<(Batch | null)[]>): number {
  let n = 0;
  for (const bs of blocks) for (const b of bs) if (b && !isSpilled(b)) n += blockBytes(b);
  return n;
}
