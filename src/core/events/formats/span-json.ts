import type { SourceSink } from '../build';
import { forEachJsonValue } from '../lines';
import type { EventRecord } from '../record';

/**
 * What Jaeger's and Zipkin's JSON readers share: whole documents (an API answer or
 * a downloaded trace, often pretty-printed) whose spans are checked one by one, so
 * a wrongly typed span is skipped and reported and the rest is read.
 */

/** Calls `onDocument` with each top-level JSON value of the file, reporting text that is not JSON. */
export async function forEachDocument(file: string, what: string, sink: SourceSink, onDocument: (value: unknown, lineNo: number) => void): Promise<void> {
  await forEachJsonValue(
    file,
    'values',
    (text, lineNo) => {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (err) {
        sink.bad(lineNo, `not JSON (${(err as Error).message}); expected ${what}`);
        return;
      }
      onDocument(value, lineNo);
    },
    (text, lineNo) => sink.bad(lineNo, `not JSON: ${JSON.stringify(text.slice(0, 80))}; expected ${what}`),
  );
}

/** Spans that failed their check, counted with the first problem, reported once per document. */
export class SkippedSpans {
  private count = 0;
  private first: string | undefined;

  add(problem: string): void {
    this.count++;
    this.first ??= problem;
  }

  report(sink: SourceSink, lineNo: number, what: string): void {
    if (this.count > 0) sink.bad(lineNo, `${this.count} ${what} span(s) skipped, the rest read (${this.first})`);
  }
}

/** Adds the records of one document with ids by document line and position. */
export function addRecords(sink: SourceSink, records: EventRecord[], lineNo: number): void {
  records.forEach((record, k) => {
    const withId = { id: `${sink.label}:${lineNo}.${k + 1}`, ...record };
    sink.add(withId, JSON.stringify(withId), lineNo);
  });
}
