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
