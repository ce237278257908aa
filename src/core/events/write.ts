import * as fs from 'node:fs';
import { once } from 'node:events';

/** Text gathered before one write to the stream. */
const BATCH_CHARS = 1 << 20;

/**
 * Writes a big text file piece by piece with back-pressure: pieces are batched into
 * ~1 MiB writes, and a full stream is awaited. The text goes to `<file>.partial`
 * and is renamed into place on close, so a failed export leaves no half file.
 */
class TextFileWriter {
  private parts: string[] = [];
  private size = 0;
  private readonly partial: string;
  private readonly stream: fs.WriteStream;

  constructor(private readonly file: string) {
    this.partial = `${file}.partial`;
    this.stream = fs.createWriteStream(this.partial);
  }

  async write(text: string): Promise<void> {
    this.parts.push(text);
    this.size += text.length;
    if (this.size >= BATCH_CHARS) await this.flush();
  }

  async close(): Promise<void> {
    await this.flush();
    await new Promise<void>((resolve, reject) => {
      this.stream.once('error', reject);
      this.stream.end(resolve);
    });
    fs.renameSync(this.partial, this.file);
  }

  /** Drops what was written (after a failure). */
  abort(): void {
    this.stream.destroy();
    fs.rmSync(this.partial, { force: true });
  }

  private async flush(): Promise<void> {
    if (this.parts.length === 0) return;
    const chunk = this.parts.join('');
    this.parts = [];
    this.size = 0;
    // events.once rejects if the stream errors while we wait.
    if (!this.stream.write(chunk)) await once(this.stream, 'drain');
  }
}

/** Runs `body` with a writer for `file`, closing it on success and removing the partial file on failure. */
export async function writeTextFile(file: string, body: (w: TextFileWriter) => Promise<void>): Promise<void> {
  const writer = new TextFileWriter(file);
  try {
    await body(writer);
    await writer.close();
  } catch (err) {
    writer.abort();
    throw err;
  }
}
