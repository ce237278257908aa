import * as fs from 'node:fs';
import type { SourceSink } from '../build';
import { forEachLineBytes } from '../lines';
import { isEventRecord, whyNotEventRecord } from '../record';
import { EventLineScanner } from '../scan';

/** Bytes per line guessed for sizing the columns up front; real lines are about this long. */
const TYPICAL_LINE_BYTES = 200;

/**
 * Reads an events JSONL file: the cluster's events.jsonl (numbered events) or a
 * node's raw runtime output (the same events without ids). Each line is kept as
 * the event's text; bad lines are reported with what was expected. Lines of the
 * usual shape are read from their bytes; the others are parsed and checked in full.
 */
export async function readEventsJsonl(file: string, sink: SourceSink): Promise<void> {
  sink.expect(Math.ceil(fs.statSync(file).size / TYPICAL_LINE_BYTES));
  const scanner = new EventLineScanner();
  await forEachLineBytes(file, (bytes, start, end, lineNo) => {
    if (scanner.scan(bytes, start, end)) {
      sink.addScanned(scanner, bytes, start, end, lineNo);
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
    if (isEventRecord(value)) sink.addLine(value, bytes, start, end, lineNo);
    else sink.bad(lineNo, whyNotEventRecord(value));
  });
}
