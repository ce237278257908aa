import type { SourceSink } from '../build';
import { FileText } from '../file-text';
import { forEachLineBytes } from '../lines';
import { isEventRecord, whyNotEventRecord } from '../record';
import { EventLineScanner } from '../scan';

/** Bytes per line guessed for sizing the columns up front; real lines are about this long. */
const TYPICAL_LINE_BYTES = 200;

/**
 * Reads an events JSONL file: the cluster's events.jsonl (numbered events) or a
 * node's raw runtime output (the same events without ids). Each event keeps where
 * its line is in the file, whose text is read back on demand (`FileText`); bad
 * lines are reported with what was expected. Lines of the usual shape are read from
 * their bytes; the others are parsed and checked in full.
 */
export async function readEventsJsonl(file: string, sink: SourceSink): Promise<void> {
  const text = new FileText(file);
  sink.expect(Math.ceil(text.size / TYPICAL_LINE_BYTES));
  const scanner = new EventLineScanner();
  let part = -1;
  await forEachLineBytes(
    text.fd,
    (bytes, start, end, lineNo) => {
      if (scanner.scan(bytes, start, end)) {
        sink.addScanned(scanner, bytes, part, start, end, lineNo);
        return;
      }
      const line = bytes.toString('utf8', start, end);
      if (line.charCodeAt(0) !== 0x7b && line.trim() === '') return;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch (err) {
        sink.bad(lineNo, `not JSON (${(err as Error).message}); expected one event object per line`);
        return;
      }
      if (isEventRecord(value)) sink.addLine(value, part, start, end, lineNo);
      else sink.bad(lineNo, whyNotEventRecord(value));
    },
    (bytes, position, length) => {
      part = sink.textPart(text, text.addPart(bytes, position, length));
    },
  );
}
