// Run statistics (shared/PLAN-SPEC.md, "Statistics"): one entry per hash
// shuffle with the map-side partition sizes and the skew test applied, and
// one entry per task that ran.

export interface HotKey { key: string[]; rows: number; partition: number }

export interface ShuffleStats {
  id: string;
  partitions: number;
  partitionRows: number[];
  partitionBytes: number[];
  medianBytes: number;
  thresholdBytes: number;
  skewedPartitions: number[];
  hotKeys: HotKey[];
}

export interface TaskStats {
  stage: string;
  kind: 'map' | 'reduce' | 'split';
  partition: number;
  rows: number;
  outputRows: number;
  ms: number;
  /** the operator a map task read from */
  source?: string;
}

export interface Stats {
  wallMs: number;
  shuffles: ShuffleStats[];
  tasks: TaskStats[];
  outputRows?: number;
}

export function medianOf(xs: readonly number[]): number {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
