/**
 * Deterministic randomness for nodes, the router and scenarios. One seed gives each
 * named stream (a node id, `router`, `scenario`) its own independent sequence, so adding
 * a draw in one place does not shift the others.
 */
export function seededRandom(seed: number, stream: string): () => number {
  let h = 1779033703 ^ stream.length;
  for (let i = 0; i < stream.length; i++) {
    h = Math.imul(h ^ stream.charCodeAt(i), 3432918353);
    h = (h << 13) | (h >>> 19);
  }
  let a = (seed >>> 0) ^ h;
  let b = Math.imul(seed >>> 0, 2654435761) ^ 0x9e3779b9;
  let c = h ^ 0x85ebca6b;
  let d = (seed >>> 0) + 0x27d4eb2f;
  // sfc32: small, fast, and passes statistical test suites; warm up to mix the seed in.
  const next = (): number => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    const t = (a + b + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 12; i++) next();
  return next;
}
