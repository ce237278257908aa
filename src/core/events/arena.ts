/** Bytes of the arena's own buffers, for texts that were not read from a file as they are. */
const OWN_BUFFER_BYTES = 1 << 20;

/** Texts the arena does not hold but can get on demand (an event file's lines, read back from the file). */
export interface PartSource {
  /** The text of bytes [start, end) of the source's part `part`. */
  text(part: number, start: number, end: number): string;
}

interface SourcePart {
  source: PartSource;
  part: number;
}

/**
 * Keeps every event's JSON text as UTF-8 bytes outside the JavaScript heap, or
 * knows where to get it: an event file's lines are read back from the file on
 * demand (a `PartSource` per file, a part per read chunk), so a load keeps no copy
 * of the file; texts made up by a converter (OTLP, text logs, router records) are
 * copied into buffers of the arena's own. A million lines kept as strings would
 * instead be a million heap objects that every garbage collection walks.
 */
export class TextArena {
  private readonly parts: (Buffer | SourcePart)[] = [];
  private own: Buffer | undefined;
  private ownIndex = -1;
  private ownUsed = 0;

  /** The index of `source`'s part `part`, for texts whose ranges are relative to it. */
  lazy(source: PartSource, part: number): number {
    this.parts.push({ source, part });
    return this.parts.length - 1;
  }

  /** Copies `text` in; returns its buffer index and byte range. */
  write(text: string): { buffer: number; start: number; end: number } {
    const bytes = Buffer.byteLength(text);
    if (this.own === undefined || this.ownUsed + bytes > this.own.length) {
      this.own = Buffer.allocUnsafe(Math.max(OWN_BUFFER_BYTES, bytes));
      this.parts.push(this.own);
      this.ownIndex = this.parts.length - 1;
      this.ownUsed = 0;
    }
    const start = this.ownUsed;
    this.ownUsed += this.own.write(text, start);
    return { buffer: this.ownIndex, start, end: this.ownUsed };
  }

  text(buffer: number, start: number, end: number): string {
    const part = this.parts[buffer];
    return Buffer.isBuffer(part) ? part.toString('utf8', start, end) : part.source.text(part.part, start, end);
  }
}
