/** Bytes of the arena's own buffers, for texts that were not read from a file as they are. */
const OWN_BUFFER_BYTES = 1 << 20;

/**
 * Keeps every event's JSON text as UTF-8 bytes outside the JavaScript heap. An
 * event file's lines stay in the very chunks the file was read in (no copy);
 * texts made up by a converter (OTLP, text logs, router records) are copied into
 * buffers of the arena's own. A million lines kept as strings would instead be a
 * million heap objects that every garbage collection walks.
 */
export class TextArena {
  readonly buffers: Buffer[] = [];
  private own: Buffer | undefined;
  private ownIndex = -1;
  private ownUsed = 0;

  /** The index of a buffer of texts (a file chunk); consecutive lines of one chunk share it. */
  chunk(buf: Buffer): number {
    if (this.buffers[this.buffers.length - 1] !== buf) this.buffers.push(buf);
    return this.buffers.length - 1;
  }

  /** Copies `text` in; returns its buffer index and byte range. */
  write(text: string): { buffer: number; start: number; end: number } {
    const bytes = Buffer.byteLength(text);
    if (this.own === undefined || this.ownUsed + bytes > this.own.length) {
      this.own = Buffer.allocUnsafe(Math.max(OWN_BUFFER_BYTES, bytes));
      this.buffers.push(this.own);
      this.ownIndex = this.buffers.length - 1;
      this.ownUsed = 0;
    }
    const start = this.ownUsed;
    this.ownUsed += this.own.write(text, start);
    return { buffer: this.ownIndex, start, end: this.ownUsed };
  }

  text(buffer: number, start: number, end: number): string {
    return this.buffers[buffer].toString('utf8', start, end);
  }
}
