// Random execution settings for the fuzzer: workers, partitions, skew handling
// with thresholds low enough to split on tiny data, combiners and eager
// aggregation on or off. (Memory budgets join here once spilling exists.)
import type { RunOptions } from '../../dist/index.js';
import type { Rand } from './random.js';

export function randomSettings(r: Rand): RunOptions & { workers: number } {
  const low = r.chance(0.6); // thresholds that make tiny partitions skewed
  return {
    workers: r.int(1, 3),
    ...(r.chance(0.7) ? { partitions: r.int(1, 8) } : {}),
    combiners: r.chance(0.6),
    eagerAggregation: r.chance(0.6),
    skew: {
      enabled: r.chance(0.85),
      strategy: r.pick(['auto', 'partition', 'key'] as const),
      ...(low ? { factor: r.pick([1, 1.5, 2]), thresholdBytes: r.pick([1, 64, 512]), advisoryPartitionBytes: r.pick([64, 256, 2048]) } : {}),
    },
  };
}
