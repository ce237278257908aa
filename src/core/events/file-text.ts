import * as fs from 'node:fs';
import * as zlib from 'node:zlib';
import type { PartSource } from './arena';

/** Parts (read chunks, 64 KiB) kept read back at once: a scan in time order walks the file forwards, a look-up touches one or two. */
const CACHED_PARTS = 16;

/** Closes the file of a FileText nobody holds any more. */
const closer = new FinalizationRegistry<number>((fd) => {
  try {
    fs.closeSync(fd);
  } catch {
    // Already closed: nothing to release.
  }
});

/** zlib.crc32 arrived in Node 20.15; without it a changed file cannot be checked, so it is refused. */
const crc32: ((data: Uint8Array) => number) | undefined = typeof zlib.crc32 === 'function' ? (data) => zlib.crc32(data) : undefined;

interface CachedPart {
  part: number;
  bytes: Buffer;
}

/**
 * An event file's lines, read back from the file when someone needs a text, so a
 * load keeps no copy of the file's bytes. The file stays open (closed once the store
 * is collected), so a file deleted or replaced under the same name still reads as
 * it was loaded. A part is a read chunk's bytes [position, position + length), with
 * its CRC-32 taken at load; while the file's size and modification time are as they
 * were at load, a part is read back as it is, else it must match its CRC-32 (a file
 * that grew, as a running cluster's does, still reads its old lines) or reading it
 * throws rather than give another event's text.
 */
export class FileText implements PartSource {
  readonly fd: number;
  /** The file's size when it was opened. */
  readonly size: number;
  private readonly mtimeMs: number;
  private readonly position: number[] = [];
  private readonly length: number[] = [];
  private readonly crc: number[] = [];
  private readonly cache: CachedPart[] = [];

  constructor(readonly file: string) {
    this.fd = fs.openSync(file, 'r');
    const stat = fs.fstatSync(this.fd);
    this.size = stat.size;
    this.mtimeMs = stat.mtimeMs;
    closer.register(this, this.fd);
  }

  /** Records that bytes[0, length) are the file's bytes from `position`; returns the part's number. */
  addPart(bytes: Buffer, position: number, length: number): number {
    this.position.push(position);
    this.length.push(length);
    this.crc.push(crc32 === undefined ? 0 : crc32(bytes.subarray(0, length)));
    return this.position.length - 1;
  }

  text(part: number, start: number, end: number): string {
    return this.bytes(part).toString('utf8', start, end);
  }

  /** The part's bytes, from the cache or read back (the least recently used cached part makes room). */
  private bytes(part: number): Buffer {
    const cache = this.cache;
    for (let k = 0; k < cache.length; k++) {
      if (cache[k].part !== part) continue;
      const hit = cache[k];
      if (k > 0) {
        cache.splice(k, 1);
        cache.unshift(hit);
      }
      return hit.bytes;
    }
    const length = this.length[part];
    const reuse = cache.length === CACHED_PARTS ? cache.pop() : undefined;
    const buffer = reuse !== undefined && reuse.bytes.buffer.byteLength >= length ? Buffer.from(reuse.bytes.buffer, reuse.bytes.byteOffset, length) : Buffer.allocUnsafeSlow(length);
    let got = 0;
    while (got < length) {
      const read = fs.readSync(this.fd, buffer, got, length - got, this.position[part] + got);
      if (read === 0) break;
      got += read;
    }
    if (got < length || !this.unchanged(part, buffer)) {
      throw new Error(`${this.file} changed since it was loaded (its lines are read from it on demand): load it again`);
    }
    cache.unshift({ part, bytes: buffer });
    return buffer;
  }

  private unchanged(part: number, bytes: Buffer): boolean {
    const stat = fs.fstatSync(this.fd);
    if (stat.size === this.size && stat.mtimeMs === this.mtimeMs) return true;
    return crc32 !== undefined && crc32(bytes) === this.crc[part];
  }
}
