// A seeded random source for the fuzzer: the same seed, the same plans.
import { rng } from '../../dist/bench/zipf.js';

export class Rand {
  private readonly next: () => number;
  constructor(readonly seed: number) {
    this.next = rng(seed);
  }
  float(): number {
    return this.next();
  }
  /** an integer in [lo, hi] */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)];
  }
  /** a random subset of at least `min` elements, in random order */
  some<T>(xs: readonly T[], min = 1, max = xs.length): T[] {
    const n = this.int(Math.min(min, xs.length), Math.min(max, xs.length));
    return this.shuffle(xs).slice(0, n);
  }
  shuffle<T>(xs: readonly T[]): T[] {
    const a = [...xs];
    for (let i = a.length - 1; i > 0; i--) {
      const j = this.int(0, i);
      [a[i], a[j]] = [a[j], a[i]];
    }
    return a;
  }
}
