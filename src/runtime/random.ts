/**
 * Deterministic pseudo-randomness shared by the live host, the router and the simulated
 * runtime: the same seed and stream name always give the same sequence, on any platform.
 */

/** A generator of numbers in [0, 1). */
export type Random = () => number;

/** cyrb128: hashes a string into four 32-bit words, enough state to seed sfc32 well. */
function cyrb128(text: string): [number, number, number, number] {
  let h1 = 1779033703;
  let h2 = 3144134277;
  let h3 = 1013904242;
  let h4 = 2773480762;
  for (let i = 0; i < text.length; i++) {
    const k = text.charCodeAt(i);
    h1 = h2 ^ Math.imul(h1 ^ k, 597399067);
    h2 = h3 ^ Math.imul(h2 ^ k, 2869860233);
    h3 = h4 ^ Math.imul(h3 ^ k, 951274213);
    h4 = h1 ^ Math.imul(h4 ^ k, 2716044179);
  }
  h1 = Math.imul(h3 ^ (h1 >>> 18), 597399067);
  h2 = Math.imul(h4 ^ (h2 >>> 22), 2869860233);
  h3 = Math.imul(h1 ^ (h3 >>> 17), 951274213);
  h4 = Math.imul(h2 ^ (h4 >>> 19), 2716044179);
  h1 ^= h2 ^ h3 ^ h4;
  h2 ^= h1;
  h3 ^= h1;
  h4 ^= h1;
  return [h1 >>> 0, h2 >>> 0, h3 >>> 0, h4 >>> 0];
}

/** sfc32 (Small Fast Counter): tiny, fast, and passes PractRand. */
function sfc32(a: number, b: number, c: number, d: number): Random {
  return () => {
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
}

/**
 * A generator for one named stream of a run: `seededRandom(seed, 'node', 'n1')`.
 * Streams with different names are independent, so adding a consumer never shifts
 * another consumer's draws.
 */
export function seededRandom(seed: number, ...stream: string[]): Random {
  const next = sfc32(...cyrb128([String(seed), ...stream].join('\u0000')));
  // The first outputs of sfc32 are weakly mixed; discarding a few is the usual remedy.
  for (let i = 0; i < 12; i++) next();
  return next;
}
