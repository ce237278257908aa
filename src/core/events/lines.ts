import * as fs from 'node:fs';

const NEWLINE = 0x0a;
const CHUNK_BYTES = 1 << 20;

/** A line's text, its 1-based number, and where its bytes are (to keep them without a copy). */
export type OnLine = (line: string, lineNo: number, bytes: Buffer, start: number, end: number) => void;

/** A line as bytes[start, end) (without its line break) and its 1-based number. */
export type OnLineBytes = (bytes: Buffer, start: number, end: number, lineNo: number) => void;

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * Calls `onLine` for every line of `file`. The file is read in 1 MiB chunks and
 * split on newline bytes, so a big log never becomes one string (a newline byte
 * never sits inside a multi-byte UTF-8 character, so each line decodes on its own).
 */
export function forEachLine(file: string, onLine: OnLine): Promise<void> {
  return forEachLineBytes(file, (bytes, start, end, lineNo) => onLine(bytes.toString('utf8', start, end), lineNo, bytes, start, end));
}

/**
 * The index of the first newline byte at or after `from`, or -1. A plain loop: lines
 * are short, and per line it costs less than calling Buffer#indexOf.
 */
function nextNewline(bytes: Buffer, from: number): number {
  for (let i = from, n = bytes.length; i < n; i++) if (bytes[i] === NEWLINE) return i;
  return -1;
}

/**
 * The file's bytes in fresh 1 MiB chunks (readers may keep them). Read on this thread
 * rather than the thread pool: the bytes then arrive in this core's cache, where the
 * line splitting reads them right away, which made a cold pass over each chunk about
 * twice as fast. Each chunk is one short read, and the event loop gets a turn between
 * chunks, as it did with a read stream.
 */
async function* readChunks(file: string): AsyncGenerator<Buffer> {
  const fd = fs.openSync(file, 'r');
  try {
    for (;;) {
      const chunk = Buffer.allocUnsafeSlow(CHUNK_BYTES);
      const read = fs.readSync(fd, chunk, 0, CHUNK_BYTES, null);
      if (read === 0) return;
      yield read < CHUNK_BYTES ? chunk.subarray(0, read) : chunk;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** As forEachLine, without decoding: for readers that look at the bytes first. */
export async function forEachLineBytes(file: string, onLine: OnLineBytes): Promise<void> {
  let lineNo = 0;
  let carry: Buffer[] = [];
  const emit = (buf: Buffer, start: number, end: number): void => {
    if (end > start && buf[end - 1] === 0x0d) end--;
    if (lineNo === 0 && buf.subarray(start, start + 3).equals(BOM)) start += 3;
    onLine(buf, start, end, ++lineNo);
  };
  for await (const chunk of readChunks(file)) {
    let start = 0;
    let nl = nextNewline(chunk, 0);
    if (carry.length > 0) {
      if (nl < 0) {
        carry.push(chunk);
        continue;
      }
      const joined = Buffer.concat([...carry, chunk.subarray(0, nl)]);
      carry = [];
      emit(joined, 0, joined.length);
      start = nl + 1;
      nl = nextNewline(chunk, start);
    }
    while (nl >= 0) {
      emit(chunk, start, nl);
      start = nl + 1;
      nl = nextNewline(chunk, start);
    }
    if (start < chunk.length) carry.push(chunk.subarray(start));
  }
  if (carry.length > 0) {
    const rest = Buffer.concat(carry);
    emit(rest, 0, rest.length);
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
