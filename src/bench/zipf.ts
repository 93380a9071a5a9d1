// Exact Zipf sampling and a small seeded generator: key k (1-based rank) has
// probability k^-s / H(M, s); sampled by inverse CDF over a cumulative table.

/** sfc32: a fast, seedable 32-bit generator; uniform floats in [0, 1). */
export function rng(seed: number): () => number {
  let a = 0x9e3779b9,
    b = 0x243f6a88,
    c = 0xb7e15162,
    d = seed | 0;
  const next = () => {
    a |= 0;
    b |= 0;
    c |= 0;
    d |= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 16; i++) next();
  return next;
}

/** Cumulative probabilities of ranks 1..m (last entry exactly 1). */
export function zipfCdf(m: number, s: number): Float64Array {
  const cdf = new Float64Array(m);
  let sum = 0;
  for (let k = 1; k <= m; k++) {
    sum += s === 0 ? 1 : k ** -s;
    cdf[k - 1] = sum;
  }
  for (let k = 0; k < m; k++) cdf[k] /= sum;
  cdf[m - 1] = 1;
  return cdf;
}

/** The 0-based rank whose cumulative interval holds u. */
function zipfRank(cdf: Float64Array, u: number): number {
  let lo = 0,
    hi = cdf.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cdf[mid] > u) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** n keys in 0..m-1 drawn from Zipf(s); key r is the rank r+1 (key 0 is the hottest). */
export function zipfKeys(n: number, m: number, s: number, seed: number): Int32Array {
  const cdf = zipfCdf(m, s);
  const next = rng(seed);
  const out = new Int32Array(n);
  for (let i = 0; i < n; i++) out[i] = zipfRank(cdf, next());
  return out;
}
