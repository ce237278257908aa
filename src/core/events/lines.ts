import * as fs from 'node:fs';

const NEWLINE = 0x0a;
/** Small enough that an events file's chunk is cheap to read back for one line (see FileText). */
const CHUNK_BYTES = 64 << 10;
/** The event loop gets a turn after about this many bytes. */
const YIELD_BYTES = 1 << 20;

/** A line's text, its 1-based number, and where its bytes are (valid only during the call: the buffer is reused). */
export type OnLine = (line: string, lineNo: number, bytes: Buffer, start: number, end: number) => void;

/** A line as bytes[start, end) (without its line break) and its 1-based number; the buffer is reused after the call. */
export type OnLineBytes = (bytes: Buffer, start: number, end: number, lineNo: number) => void;

/** Before a chunk's lines: bytes[0, length) are the file's bytes from `position` on. */
export type OnChunk = (bytes: Buffer, position: number, length: number) => void;

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * Calls `onLine` for every line of `file`. The file is read in 64 KiB chunks into one
 * reused buffer and split on newline bytes, so a big log never becomes one string (a
 * newline byte never sits inside a multi-byte UTF-8 character, so each line decodes
 * on its own).
 */
export function forEachLine(file: string, onLine: OnLine): Promise<void> {
  return forEachLineBytes(file, (bytes, start, end, lineNo) => onLine(bytes.toString('utf8', start, end), lineNo, bytes, start, end));
}

/**
 * As forEachLine, without decoding: for readers that look at the bytes first. `source`
 * is a path or a file descriptor open for reading (left open). The chunks go into one
 * buffer, read on this thread: fresh memory for every chunk made the kernel map a page
 * per 4 KiB read, which cost more than everything else, and a reused buffer stays in
 * this core's cache for the line splitting and the readers right after the read. A
 * line cut by a chunk's end is moved to the buffer's start and completed by the next
 * read (the buffer doubles for a line longer than it). The event loop gets a turn
 * after every MiB or so.
 */
export async function forEachLineBytes(source: string | number, onLine: OnLineBytes, onChunk?: OnChunk): Promise<void> {
  const fd = typeof source === 'number' ? source : fs.openSync(source, 'r');
  try {
    let buf = Buffer.allocUnsafeSlow(CHUNK_BYTES);
    let lineNo = 0;
    /** File position of buf[0], and how many bytes of buf hold a line not yet complete. */
    let base = 0;
    let kept = 0;
    let unyielded = 0;
    const emit = (start: number, end: number): void => {
      if (end > start && buf[end - 1] === 0x0d) end--;
      if (lineNo === 0 && end - start >= 3 && buf.compare(BOM, 0, 3, start, start + 3) === 0) start += 3;
      onLine(buf, start, end, ++lineNo);
    };
    for (;;) {
      if (kept === buf.length) {
        const bigger = Buffer.allocUnsafeSlow(buf.length * 2);
        buf.copy(bigger, 0, 0, kept);
        buf = bigger;
      }
      const read = fs.readSync(fd, buf, kept, buf.length - kept, null);
      const filled = kept + read;
      if (filled === 0) return;
      onChunk?.(buf, base, filled);
      let start = 0;
      // indexOf is native (memchr); a newline found past `filled` is a stale byte of an earlier chunk.
      for (let nl = buf.indexOf(NEWLINE, 0); nl >= 0 && nl < filled; nl = buf.indexOf(NEWLINE, start)) {
        emit(start, nl);
        start = nl + 1;
      }
      if (read === 0) {
        emit(start, filled);
        return;
      }
      kept = filled - start;
      if (start > 0) buf.copy(buf, 0, start, filled);
      base += start;
      unyielded += read;
      if (unyielded >= YIELD_BYTES) {
        unyielded = 0;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
  } finally {
    if (typeof source !== 'number') fs.closeSync(fd);
  }
}

/** Which JSON values to take: each top-level value, or the elements of top-level arrays. */
export type JsonScanMode = 'values' | 'array-elements';

const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * Streams the JSON objects and arrays of `file` without holding the file: in `values`
 * mode every top-level one (pretty-printed across lines or not); in `array-elements`
 * mode the elements of a top-level array, or of an array that is a member of the
 * top-level object (Chrome's `{"traceEvents": [...]}`). `onValue` gets each value's
 * text and the line it starts on. In `values` mode, other text between values is
 * passed to `onStray` line by line, so garbage is reported rather than skipped.
 */
export async function forEachJsonValue(
  file: string,
  mode: JsonScanMode,
  onValue: (text: string, lineNo: number) => void,
  onStray: (text: string, lineNo: number) => void,
): Promise<void> {
  const stack: number[] = [];
  let inString = false;
  let escaped = false;
  let lineNo = 1;
  let pieces: string[] = [];
  let valueDepth = -1;
  let valueLine = 0;
  let stray = '';
  const flushStray = (): void => {
    if (stray.trim() !== '') onStray(stray.trim(), lineNo);
    stray = '';
  };
  const atElementPosition = (): boolean => {
    if (mode === 'values') return stack.length === 0;
    if (stack.length === 1) return stack[0] === OPEN_ARRAY;
    return stack.length === 2 && stack[0] === OPEN_OBJECT && stack[1] === OPEN_ARRAY;
  };
  for await (const chunk of fs.createReadStream(file, { encoding: 'utf8', highWaterMark: CHUNK_BYTES }) as AsyncIterable<string>) {
    let valueStart = valueDepth >= 0 ? 0 : -1;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      const collecting = valueDepth < 0 && mode === 'values' && stack.length === 0;
      if (c === NEWLINE) {
        if (collecting) flushStray();
        lineNo++;
        continue;
      }
      if (inString) {
        if (escaped) escaped = false;
        else if (c === BACKSLASH) escaped = true;
        else if (c === QUOTE) inString = false;
        if (collecting) stray += chunk[i];
        continue;
      }
      if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
        if (valueDepth < 0 && atElementPosition()) {
          flushStray();
          valueDepth = stack.length;
          valueLine = lineNo;
          valueStart = i;
        }
        stack.push(c);
      } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
        stack.pop();
        if (stack.length === valueDepth) {
          pieces.push(chunk.slice(valueStart, i + 1));
          onValue(pieces.join(''), valueLine);
          pieces = [];
          valueDepth = -1;
          valueStart = -1;
        } else if (collecting) {
          stray += chunk[i];
        }
      } else {
        if (c === QUOTE) inString = true;
        if (collecting) stray += chunk[i];
      }
    }
    if (valueDepth >= 0) pieces.push(chunk.slice(valueStart));
  }
  if (valueDepth >= 0) onStray(`${pieces.join('').slice(0, 80)}… (the file ends inside this value)`, valueLine);
  flushStray();
}
