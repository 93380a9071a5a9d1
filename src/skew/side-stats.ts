// What the skew decisions read of a join's sides (the map-side shuffle statistics and the hot keys the sketches
// found), and a hot key's split as decided: the leaf skew/decide.ts and skew/hot-grid.ts both import.

export interface HotKeyStat {
  /** 32-bit key hash: the partition is derived from it */
  hash: number;
  /** normalized key identity, equal on both sides for equal keys */
  match: string;
  /** the key as strings, one per key column */
  display: string[];
  /** estimated rows (Space-Saving count: never below the truth) */
  rows: number;
  partition: number;
}

export interface SideStats {
  partitionRows: number[];
  partitionBytes: number[];
  /** mapBytes[t][p]: bytes map task t wrote to partition p */
  mapBytes: number[][];
  /** mapRows[t][p]: its rows (absent: estimated from the bytes at the partition's mean row size) */
  mapRows?: number[][];
  hotKeys: HotKeyStat[];
}

export interface HotKeySplit {
  hash: number;
  match: string;
  display: string[];
  leftRows: number;
  rightRows: number;
  leftPieces: number;
  rightPieces: number;
}
