import * as fs from 'node:fs';
import * as path from 'node:path';
import { UserError } from '../errors';
import type { InputFormat } from './store';
import { isJaegerDocument } from './formats/jaeger';
import { isJaegerResult } from './formats/otlp';
import { isZipkinDocument } from './formats/zipkin';
import { guessShivizLayout } from './formats/shiviz';

/** How much of a file is looked at to tell its format. */
const HEAD_BYTES = 64 * 1024;

function head(file: string): string {
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.alloc(HEAD_BYTES);
    const n = fs.readSync(fd, buf, 0, HEAD_BYTES, 0);
    return buf.toString('utf8', 0, n).replace(/^\uFEFF/, '');
  } finally {
    fs.closeSync(fd);
  }
}

function formatOfJsonObject(value: Record<string, unknown>): InputFormat {
  if ('traceEvents' in value) return 'chrome';
  if (isJaegerDocument(value)) return 'jaeger';
  if ('resourceSpans' in value || 'resourceLogs' in value || 'resourceMetrics' in value || isJaegerResult(value)) return 'otlp';
  if ('action' in value && 'from' in value && 'to' in value && 'msgId' in value) return 'router';
  return 'events';
}

/**
 * A JSON array: Zipkin v2 (spans with traceId and id, or lists of them), Jaeger
 * (a list of traces), else Chrome's bare array of trace events. When the head does
 * not hold a whole first element, its first keys decide.
 */
function formatOfJsonArray(start: string): InputFormat {
  const firstElement = /^\[\s*(\[\s*)?(\{[\s\S]*?\n?\s*\})\s*[,\]]/.exec(start)?.[2];
  let value: unknown;
  try {
    value = JSON.parse(`[${firstElement ?? ''}]`);
  } catch {
    value = undefined;
  }
  if (Array.isArray(value) && value.length > 0) {
    if (isZipkinDocument(value)) return 'zipkin';
    if (isJaegerDocument(value)) return 'jaeger';
    return 'chrome';
  }
  if (/"traceId"\s*:/.test(start) && /"localEndpoint"\s*:|"timestamp"\s*:/.test(start) && !/"ph"\s*:/.test(start)) return 'zipkin';
  if (/"spans"\s*:/.test(start) && /"processes"\s*:/.test(start)) return 'jaeger';
  return 'chrome';
}

/**
 * Tells a file's format from its first bytes: JSON flavours by their first object's
 * keys, ShiViz logs by their header or by the default two-line layout, other text
 * only when the caller has a regex for it. With a regex the file is never taken for
 * JSON: only a ShiViz header still counts (its own regex yields to the caller's).
 */
export function detectFormat(file: string, haveRegex: boolean): InputFormat {
  const text = head(file);
  const start = text.trimStart();
  if (start === '') return 'events';
  const lines = text.split('\n').map((l) => l.replace(/\r$/, ''));
  const shivizHeader = /\(\?<host>/.test(lines[0]) && /\(\?<(event|ddbench)>/.test(lines[0]);
  // A regex means a text log: log lines often start with `[` or `{` (`[12:00:01] n1 ...`), which sniffing would take for JSON.
  if (haveRegex) return shivizHeader ? 'shiviz' : 'text';
  if (start.startsWith('[')) return formatOfJsonArray(start);
  if (start.startsWith('{')) {
    const firstLine = lines.find((l) => l.trim() !== '') ?? '';
    try {
      const value: unknown = JSON.parse(firstLine);
      if (typeof value === 'object' && value !== null && !Array.isArray(value)) return formatOfJsonObject(value as Record<string, unknown>);
    } catch {
      // Pretty-printed (or truncated): look for the keys instead.
      if (start.includes('"traceEvents"')) return 'chrome';
      if (start.includes('"resourceSpans"') || start.includes('"resourceLogs"') || start.includes('"resourceMetrics"')) return 'otlp';
      if (/"spans"\s*:/.test(start) && (start.includes('"processes"') || start.includes('"traceID"'))) return 'jaeger';
    }
    return 'events';
  }
  if (shivizHeader || guessShivizLayout(file) !== undefined) return 'shiviz';
  throw new UserError(
    `cannot tell the format of ${path.basename(file)}: it is not JSON (events, router records, OTLP, Chrome trace, Jaeger, Zipkin) and not a ShiViz log. ` +
      `For a plain-text log give a regex with named groups host, event and (for vector clocks) clock, e.g. ^(?<host>\\S+) (?<clock>\\{.*?\\}) (?<event>.*)$, or choose the format.`,
  );
}
