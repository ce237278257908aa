/**
 * Building blocks of the columnar event store: string interning, reordering and
 * searching typed columns, so a million events cost a few dozen bytes each instead
 * of a JavaScript object each.
 */

type TypedArray = Float64Array | Uint32Array | Int32Array | Uint16Array | Uint8Array;

/** Up to this many values, a lookup scans them instead of hashing the string. */
const SCAN_LIMIT = 16;

/** Maps strings to dense codes 0, 1, 2, ... and back. */
export class Interner {
  private readonly codes = new Map<string, number>();
  readonly values: string[] = [];
  /** values[0, mapped) are in `codes`; later ones came through `fresh` and join the map when a string is looked up. */
  private mapped = 0;
  /** Values added by `code` (a string path), which a ByteInterner has not seen. */
  private byString = 0;

  code(value: string): number {
    const values = this.values;
    // Node names are few and, parsed from JSON, usually internalized, so comparing is a pointer check.
    if (values.length <= SCAN_LIMIT) {
      for (let i = 0; i < values.length; i++) if (values[i] === value) return i;
    } else {
      this.sync();
      const code = this.codes.get(value);
      if (code !== undefined) return code;
    }
    this.byString++;
    return this.append(value);
  }

  /**
   * The code of `value`, which its ByteInterner has not met: when `ascii` (its bytes
   * are its characters, so no other bytes it met decode to it) and no string path
   * added values, it is new, and the map learns it only when needed (a million
   * message ids would otherwise cost a map insertion each).
   */
  fresh(value: string, ascii: boolean): number {
    if (!ascii || this.byString > 0) {
      const code = this.find(value);
      if (code >= 0) return code;
      return this.append(value);
    }
    this.values.push(value);
    return this.values.length - 1;
  }

  /** The code of a string already seen, or -1. */
  find(value: string): number {
    this.sync();
    return this.codes.get(value) ?? -1;
  }

  get size(): number {
    return this.values.length;
  }

  private append(value: string): number {
    this.sync();
    const code = this.values.length;
    this.codes.set(value, code);
    this.values.push(value);
    this.mapped = this.values.length;
    return code;
  }

  private sync(): void {
    const values = this.values;
    for (; this.mapped < values.length; this.mapped++) this.codes.set(values[this.mapped], this.mapped);
  }
}

/** Reorders `column` so that out[i] = column[order[i]]. */
export function permute<T extends TypedArray>(column: T, order: Uint32Array): T {
  const out = new (column.constructor as new (length: number) => T)(order.length);
  for (let i = 0; i < order.length; i++) out[i] = column[order[i]];
  return out;
}

/**
 * The stable sort order of `keys` (out[i] = the index of the i-th smallest), or
 * undefined when they are sorted already. A natural merge sort: event files are
 * nearly in time order (a few nodes' streams interleaved on arrival), so merging
 * the sorted runs takes a few passes where a comparator sort of a million indices
 * takes about a second.
 */
export function sortOrder(keys: Float64Array): Uint32Array | undefined {
  const n = keys.length;
  const starts: number[] = [0];
  for (let i = 1; i < n; i++) if (keys[i] < keys[i - 1]) starts.push(i);
  if (starts.length === 1) return undefined;
  starts.push(n);
  let src = new Uint32Array(n);
  for (let i = 0; i < n; i++) src[i] = i;
  let dst = new Uint32Array(n);
  let runs = starts;
  while (runs.length > 2) {
    const next: number[] = [0];
    for (let r = 0; r + 1 < runs.length; r += 2) {
      const lo = runs[r];
      const mid = runs[r + 1];
      const hi = r + 2 < runs.length ? runs[r + 2] : mid;
      let a = lo;
      let b = mid;
      let k = lo;
      // `<=` takes the left run on ties, which keeps the sort stable.
      while (a < mid && b < hi) dst[k++] = keys[src[a]] <= keys[src[b]] ? src[a++] : src[b++];
      while (a < mid) dst[k++] = src[a++];
      while (b < hi) dst[k++] = src[b++];
      next.push(hi);
    }
    [src, dst] = [dst, src];
    runs = next;
  }
  return src;
}

/** The first index in [lo, hi) whose value is >= x in the sorted `values` (hi if none). */
export function lowerBound(values: ArrayLike<number>, x: number, lo = 0, hi = values.length): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * An Interner's codes looked up by a string's UTF-8 bytes, so a line read as bytes
 * makes a string only for a value not seen before. The Interner stays the one
 * authority: a miss decodes the bytes and hands it the string (`fresh`), which
 * looks it up unless it cannot be there, so different bytes that decode to the same
 * string (invalid UTF-8), or a value a string path added, still share one code.
 */
export class ByteInterner {
  /** Open addressing: entry index per slot, -1 for empty. */
  private slots = new Int32Array(256).fill(-1);
  private hashes = new Uint32Array(128);
  private codes = new Int32Array(128);
  private keyStart = new Uint32Array(128);
  private keyLength = new Uint32Array(128);
  private keys = Buffer.allocUnsafe(4096);
  private keysUsed = 0;
  private count = 0;

  constructor(private readonly interner: Interner) {}

  /** The code of the string whose bytes are bytes[start, end); `ascii` says no byte is above 0x7f. */
  code(bytes: Buffer, start: number, end: number, ascii: boolean): number {
    let hash = 0x811c9dc5;
    for (let i = start; i < end; i++) hash = Math.imul(hash ^ bytes[i], 0x01000193);
    hash >>>= 0;
    const length = end - start;
    const mask = this.slots.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const entry = this.slots[slot];
      if (entry < 0) return this.insert(slot, hash, bytes, start, end, ascii);
      if (this.hashes[entry] === hash && this.keyLength[entry] === length && this.sameKey(entry, bytes, start, length)) return this.codes[entry];
    }
  }

  private sameKey(entry: number, bytes: Buffer, start: number, length: number): boolean {
    const keys = this.keys;
    const at = this.keyStart[entry];
    for (let i = 0; i < length; i++) if (keys[at + i] !== bytes[start + i]) return false;
    return true;
  }

  private insert(slot: number, hash: number, bytes: Buffer, start: number, end: number, ascii: boolean): number {
    const text = bytes.toString(ascii ? 'latin1' : 'utf8', start, end);
    const code = this.interner.fresh(text, ascii);
    const entry = this.count++;
    if (entry === this.hashes.length) this.growEntries();
    const length = end - start;
    if (this.keysUsed + length > this.keys.length) {
      const keys = Buffer.allocUnsafe(Math.max(this.keys.length * 2, this.keysUsed + length));
      this.keys.copy(keys, 0, 0, this.keysUsed);
      this.keys = keys;
    }
    // A plain loop: keys are short, and Buffer#copy costs more per call than the bytes.
    const keys = this.keys;
    for (let k = 0, at = this.keysUsed; k < length; k++) keys[at + k] = bytes[start + k];
    this.keyStart[entry] = this.keysUsed;
    this.keyLength[entry] = length;
    this.keysUsed += length;
    this.hashes[entry] = hash;
    this.codes[entry] = code;
    this.slots[slot] = entry;
    // Half full at most, so probe runs stay short.
    if (this.count * 2 > this.slots.length) this.rehash();
    return code;
  }

  private growEntries(): void {
    const size = this.hashes.length * 2;
    const grow = <T extends Uint32Array | Int32Array>(a: T): T => {
      const next = new (a.constructor as new (n: number) => T)(size);
      next.set(a);
      return next;
    };
    this.hashes = grow(this.hashes);
    this.codes = grow(this.codes);
    this.keyStart = grow(this.keyStart);
    this.keyLength = grow(this.keyLength);
  }

  private rehash(): void {
    const slots = new Int32Array(this.slots.length * 2).fill(-1);
    const mask = slots.length - 1;
    for (let entry = 0; entry < this.count; entry++) {
      let slot = this.hashes[entry] & mask;
      while (slots[slot] >= 0) slot = (slot + 1) & mask;
      slots[slot] = entry;
    }
    this.slots = slots;
  }
}
