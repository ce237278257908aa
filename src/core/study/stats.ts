import { seededRandom } from '../../runtime/random';
/**
 * The statistics a report needs, nothing more: binomial intervals and simple summaries.
 * Proportions use the Wilson score interval, which (unlike the normal approximation)
 * stays inside [0, 1] and behaves at 0/n and n/n — the usual case for small studies.
 */

/** z for a two-sided 95% interval. */
export const Z95 = 1.959963984540054;

export type Interval = [low: number, high: number];

/** Wilson score interval for x successes in n trials; [0, 1] when there are none. */
export function wilson(x: number, n: number, z = Z95): Interval {
  if (n <= 0) return [0, 1];
  const p = x / n;
  const z2 = z * z;
  const denom = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denom;
  return [clamp01(centre - half), clamp01(centre + half)];
}

/**
 * Newcombe's hybrid score interval (his method 10, 1998) for the difference of two
 * independent proportions x1/n1 − x2/n2, built from the two Wilson intervals.
 */
export function newcombe(x1: number, n1: number, x2: number, n2: number, z = Z95): Interval {
  const p1 = n1 > 0 ? x1 / n1 : 0;
  const p2 = n2 > 0 ? x2 / n2 : 0;
  const [l1, u1] = wilson(x1, n1, z);
  const [l2, u2] = wilson(x2, n2, z);
  const d = p1 - p2;
  return [d - Math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2), d + Math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)];
}

export function mean(xs: readonly number[]): number | null {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null;
}

export function median(xs: readonly number[]): number | null {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function sum(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}

function clamp01(x: number): number {
  return Math.min(1, Math.max(0, x));
}

/**
 * Exact McNemar test for paired binary outcomes: `b` pairs where only the first
 * condition succeeded, `c` where only the second did. Two-sided p from the binomial
 * distribution of min(b, c) under p = 1/2 (the mid-p is not used); 1 when no pair
 * is discordant.
 */
export function mcnemarExact(b: number, c: number): number {
  const n = b + c;
  if (n === 0) return 1;
  const k = Math.min(b, c);
  // Sum C(n, i) / 2^n for i <= k in log space, so large n does not overflow.
  let logTerm = -n * Math.LN2;
  let tail = Math.exp(logTerm);
  for (let i = 1; i <= k; i++) {
    logTerm += Math.log((n - i + 1) / i);
    tail += Math.exp(logTerm);
  }
  return Math.min(1, 2 * tail);
}

/** Ranks with ties given their average rank (1-based). */
function ranks(xs: readonly number[]): number[] {
  const order = xs.map((x, i) => ({ x, i })).sort((a, b) => a.x - b.x);
  const out = new Array<number>(xs.length);
  for (let k = 0; k < order.length; ) {
    let end = k;
    while (end + 1 < order.length && order[end + 1]!.x === order[k]!.x) end++;
    for (let j = k; j <= end; j++) out[order[j]!.i] = (k + end) / 2 + 1;
    k = end + 1;
  }
  return out;
}

/** Pearson's correlation; null when either side has no spread. */
function pearson(xs: readonly number[], ys: readonly number[]): number | null {
  const mx = mean(xs)!;
  const my = mean(ys)!;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < xs.length; i++) {
    sxy += (xs[i]! - mx) * (ys[i]! - my);
    sxx += (xs[i]! - mx) ** 2;
    syy += (ys[i]! - my) ** 2;
  }
  return sxx === 0 || syy === 0 ? null : sxy / Math.sqrt(sxx * syy);
}

export interface RankCorrelation {
  rho: number;
  n: number;
  /** Fisher-z interval with the Bonett–Wright standard error; null below four points, where it is undefined. */
  ci: Interval | null;
}

/** Spearman's rank correlation of paired values; null with fewer than three pairs or no spread. */
export function spearman(xs: readonly number[], ys: readonly number[], z = Z95): RankCorrelation | null {
  const n = xs.length;
  if (n < 3 || ys.length !== n) return null;
  const rho = pearson(ranks(xs), ranks(ys));
  if (rho === null) return null;
  if (n < 4 || Math.abs(rho) === 1) return { rho, n, ci: n < 4 ? null : [rho, rho] };
  const se = Math.sqrt((1 + (rho * rho) / 2) / (n - 3));
  const zr = Math.atanh(rho);
  return { rho, n, ci: [Math.tanh(zr - z * se), Math.tanh(zr + z * se)] };
}

/**
 * The mean of `values` with a percentile bootstrap 95% interval: `resamples` draws
 * with replacement from a generator seeded with `seed`, so a seed gives the same
 * numbers everywhere. Null for no values.
 */
export function bootstrapMean(values: readonly number[], seed: number, resamples = 2000): { mean: number; ci: Interval } | null {
  if (values.length === 0) return null;
  const random = seededRandom(seed, 'bootstrap');
  const means = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) {
    let total = 0;
    for (let i = 0; i < values.length; i++) total += values[Math.floor(random() * values.length)]!;
    means[r] = total / values.length;
  }
  means.sort();
  const at = (q: number) => means[Math.min(resamples - 1, Math.max(0, Math.round(q * (resamples - 1))))]!;
  return { mean: mean(values)!, ci: [at(0.025), at(0.975)] };
}
