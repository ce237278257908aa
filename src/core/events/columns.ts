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

  code(value: string): number {
    const values = this.values;
    // Node names are few and, parsed from JSON, usually internalized, so comparing is a pointer check.
    if (values.length <= SCAN_LIMIT) {
      for (let i = 0; i < values.length; i++) if (values[i] === value) return i;
    } else {
      const code = this.codes.get(value);
      if (code !== undefined) return code;
    }
    const code = values.length;
    this.codes.set(value, code);
    values.push(value);
    return code;
  }

  /** The code of a string already seen, or -1. */
  find(value: string): number {
    return this.codes.get(value) ?? -1;
  }

  get size(): number {
    return this.values.length;
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
