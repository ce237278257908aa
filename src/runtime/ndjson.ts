import type { Readable } from 'node:stream';

/** Calls `onLine` for every complete newline-terminated line of `stream`; a final unterminated line is flushed at end. */
export function readLines(stream: Readable, onLine: (line: string) => void): void {
  let rest = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    const parts = (rest + chunk).split('\n');
    rest = parts.pop() ?? '';
    for (const part of parts) {
      const line = part.endsWith('\r') ? part.slice(0, -1) : part;
      if (line.length > 0) onLine(line);
    }
  });
  stream.on('end', () => {
    if (rest.length > 0) onLine(rest);
    rest = '';
  });
}
