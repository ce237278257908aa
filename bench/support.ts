/** What the benchmarks share: a seeded generator and the headless Chromium they run the pages in. */
import { chromium, type Browser } from 'playwright-core';

/** A small deterministic PRNG (mulberry32), so every machine benchmarks the same data. */
export function prng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), s | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Headless Chromium at $DDBENCH_CHROMIUM (default /usr/bin/chromium), without the background work that would skew timings. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.DDBENCH_CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
