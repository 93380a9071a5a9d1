// Options of `skewjoin gen` (and `gen --tpch`) and their defaults, apart from the generator so
// that the command line can show them without loading Arrow JS and the writer.

export interface GenOptions {
  out: string;
  rows: number;
  keys: number;
  s: number;
  seed: number;
  rowGroupSize: number;
  /** fact table files */
  files: number;
  /** rows of the second skewed table (0: none) */
  m2mRows: number;
  /** fraction of fact rows whose key is null */
  nullKeys: number;
  /** sort the fact table by key (a hot key's rows then sit in one row group) */
  sorted: boolean;
}

export const GEN_DEFAULTS: GenOptions = {
  out: 'data',
  rows: 1_000_000,
  keys: 100_000,
  s: 1,
  seed: 42,
  rowGroupSize: 131072,
  files: 1,
  m2mRows: 0,
  nullKeys: 0,
  sorted: false,
};

export interface TpchOptions {
  out: string;
  scale: number;
  seed: number;
  rowGroupSize: number;
  /** JCC-H's skew (dbgen -k): hot customers, parts with their suppliers, and order dates (bench/tpch.ts HOT_SHARES) */
  skew?: boolean;
}
export const TPCH_DEFAULTS: TpchOptions = { out: 'tpch', scale: 1, seed: 5, rowGroupSize: 500_000, skew: false };
