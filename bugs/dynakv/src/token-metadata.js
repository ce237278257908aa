// token-metadata.js — after Cassandra's TokenMetadata and SimpleStrategy: the
// token ring (each endpoint owns a few tokens) and the natural replicas of a key.

/** A 32-bit FNV-1a hash: the partitioner's token of a string. */
export function token(s) {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** The tokens an endpoint takes when it bootstraps (fixed per endpoint, like initial_token). */
export function initialTokens(endpoint, numTokens) {
  const tokens = [];
  for (let i = 0; i < numTokens; i++) tokens.push(token(`${endpoint}#${i}`));
  return tokens;
}

export class TokenMetadata {
  constructor() {
    /** @type {Map<number, string>} token → endpoint */
    this.tokenToEndpoint = new Map();
    this.sorted = [];
  }

  updateNormalTokens(tokens, endpoint) {
    this.removeEndpoint(endpoint);
    for (const t of tokens) this.tokenToEndpoint.set(t, endpoint);
    this.sort();
  }

  removeEndpoint(endpoint) {
    for (const [t, ep] of [...this.tokenToEndpoint]) if (ep === endpoint) this.tokenToEndpoint.delete(t);
    this.sort();
  }

  isMember(endpoint) {
    for (const ep of this.tokenToEndpoint.values()) if (ep === endpoint) return true;
    return false;
  }

  getTokens(endpoint) {
    return this.sorted.filter((t) => this.tokenToEndpoint.get(t) === endpoint);
  }

  endpoints() {
    return [...new Set(this.tokenToEndpoint.values())].sort();
  }

  sort() {
    this.sorted = [...this.tokenToEndpoint.keys()].sort((a, b) => a - b);
  }

  /** SimpleStrategy: walk the ring clockwise from the key's token, taking rf distinct endpoints. */
  naturalEndpoints(key, rf) {
    const out = [];
    if (this.sorted.length === 0) return out;
    const t = token(key);
    let i = this.sorted.findIndex((x) => x >= t);
    if (i < 0) i = 0;
    for (let n = 0; n < this.sorted.length && out.length < rf; n++) {
      const ep = this.tokenToEndpoint.get(this.sorted[(i + n) % this.sorted.length]);
      if (!out.includes(ep)) out.push(ep);
    }
    return out;
  }
}
